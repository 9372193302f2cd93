"""Stage 6: write generated/ (or, with --check, compare without writing).

Outputs are computed in memory first as {project-relative path: bytes}. Writing is
write-if-changed and atomic (temp file + os.replace), so an unchanged file keeps its mtime
and a crash never leaves half a lock. Check mode reports every missing, stale and
unexpected file and writes nothing.

Nothing is written or removed through a symlink: generated/ is committed, so a pull request
can make `generated`, `generated/<edition>` or one of its folders a link to anywhere, after
which a write would land (and the removal of "stale" files would happen) outside the project.
A symlink anywhere in generated/ is an error (LRC7005, `refuse_symlinks`), reported before
anything is written; `write` itself refuses one too (`LinkedOutput`).
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

from lrc.compiler.diagnostics import Diagnostics
from lrc.compiler.load import linked_folder, read_regular

MANAGED_TOP = "generated"
KEEP = {"generated/ledger.jsonl"}


def _atomic_write(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


class LinkedOutput(OSError):
    """generated/ holds a symlink; nothing was written (the pipeline reports LRC7005 first)."""


def symlinks(root: Path) -> list[str]:
    """Project-relative paths of `generated` if it is a symlink, else of every symlink below it
    (symlinked folders are not entered)."""
    base = root / MANAGED_TOP
    if base.is_symlink():
        return [MANAGED_TOP]
    found: list[str] = []
    pending = [base]
    while pending:
        try:
            entries = sorted(os.scandir(pending.pop()), key=lambda e: e.name)
        except OSError:
            continue
        for entry in entries:
            if entry.is_symlink():
                found.append(Path(entry.path).relative_to(root).as_posix())
            elif entry.is_dir(follow_symlinks=False):
                pending.append(Path(entry.path))
    return sorted(found)


def refuse_symlinks(root: Path, diags: Diagnostics) -> bool:
    """One LRC7005 error per symlink in generated/; True when there was none."""
    links = symlinks(root)
    for rel in links:
        diags.error("LRC7005", f"{rel} is a symlink; lrc writes generated files only into real folders", path=rel,
                    hint=f"remove the link (`rm {rel}`, which leaves its target alone) and run `lrc compile`")
    return not links


def _existing(root: Path, edition_dirs: set[str]) -> set[str]:
    """Files under generated/<edition>/ for every edition folder lrc manages (a symlink counts
    as a file, never as a folder to enter)."""
    found: set[str] = set()
    base = root / MANAGED_TOP
    if base.is_symlink() or not base.is_dir():
        return found
    for child in sorted(base.iterdir()):
        if child.name == "ledger" or child.name.startswith(".") or child.is_symlink():
            continue
        if child.is_dir() and (child.name in edition_dirs or (child / "plan.lock").exists()):
            for folder, dirs, files in os.walk(child):  # never follows a symlinked folder
                for name in files + [d for d in dirs if os.path.islink(os.path.join(folder, d))]:
                    found.add(Path(folder, name).relative_to(root).as_posix())
    return found


def check(root: Path, outputs: dict[str, bytes], edition_dirs: set[str], diags: Diagnostics) -> None:
    """Compare generated/ with `outputs`. One differing file is one diagnostic at that file;
    several are one LRC7001 ("generated/ is stale") listing them in its notes, because they
    have one cause and one fix, and a pull request should get one annotation, not one per file."""
    if not refuse_symlinks(root, diags):
        return
    problems: list[tuple[str, str, str, str, str]] = []  # (code, rel, summary, note, hint)
    again = "run `lrc compile` and commit generated/"
    for rel, data in sorted(outputs.items()):
        path = root / rel
        ledger = rel.startswith("generated/ledger")
        if not path.exists() and not path.is_symlink():
            problems.append(("LRC7004" if ledger else "LRC7002", rel, f"{rel} is missing", f"missing: {rel}", again))
        elif read_regular(path) != data:  # a symlink, FIFO or folder in its place is never up to date
            problems.append(("LRC7004" if ledger else "LRC7001", rel, f"{rel} is out of date", f"out of date: {rel}", again))
    for rel in sorted(_existing(root, edition_dirs) - set(outputs)):
        problems.append(("LRC7003", rel, f"{rel} would not be produced by `lrc compile`",
                         f"not produced by `lrc compile` (it removes it): {rel}",
                         "run `lrc compile` (it removes stale generated files) and commit"))
    if len(problems) == 1:
        code, rel, summary, _, hint = problems[0]
        diags.error(code, summary, path=rel, hint=hint)
    elif problems:
        codes = {code for code, *_ in problems}  # one kind of problem keeps its code (LRC7004: the ledger)
        diags.error(codes.pop() if len(codes) == 1 else "LRC7001", f"generated/ is stale: run `lrc compile` ({len(problems)} generated files differ from what it writes)",
                    notes=tuple(note for *_, note, _ in problems),
                    hint="run `lrc compile` and commit generated/ (it writes the missing and changed files and removes the others)")


def write(root: Path, outputs: dict[str, bytes], edition_dirs: set[str]) -> list[str]:
    """Write changed outputs, delete stale generated files; return what changed. Refuses
    (LinkedOutput, before any write) when generated/ holds a symlink."""
    links = symlinks(root) + [rel for rel in outputs if linked_folder(root, root / rel) is not None]
    if links:
        raise LinkedOutput(f"{links[0]} is a symlink (or below one); nothing was written")
    changed: list[str] = []
    for rel, data in sorted(outputs.items()):
        path = root / rel
        if read_regular(path) == data:
            continue
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path)  # a folder where a generated file belongs: lrc's own output replaces it
        _atomic_write(path, data)
        changed.append(rel)
    for rel in sorted(_existing(root, edition_dirs) - set(outputs)):
        (root / rel).unlink()
        changed.append(f"{rel} (removed)")
    return changed
