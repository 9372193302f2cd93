"""Stage 6: write generated/ (or, with --check, compare without writing).

Outputs are computed in memory first as {project-relative path: bytes}. Writing is
write-if-changed and atomic (temp file + os.replace), so an unchanged file keeps its mtime
and a crash never leaves half a lock. Check mode reports every missing, stale and
unexpected file and writes nothing.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

from lrc.compiler.diagnostics import Diagnostics
from lrc.compiler.load import read_regular

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


def _existing(root: Path, edition_dirs: set[str]) -> set[str]:
    """Files under generated/<edition>/ for every edition folder lrc manages."""
    found: set[str] = set()
    base = root / MANAGED_TOP
    if not base.is_dir():
        return found
    for child in sorted(base.iterdir()):
        if child.name == "ledger" or child.name.startswith("."):
            continue
        if child.is_dir() and (child.name in edition_dirs or (child / "plan.lock").exists()):
            for f in child.rglob("*"):
                if f.is_file():
                    found.add(f.relative_to(root).as_posix())
    return found


def check(root: Path, outputs: dict[str, bytes], edition_dirs: set[str], diags: Diagnostics) -> None:
    """Compare generated/ with `outputs`. One differing file is one diagnostic at that file;
    several are one LRC7001 ("generated/ is stale") listing them in its notes, because they
    have one cause and one fix, and a pull request should get one annotation, not one per file."""
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
    """Write changed outputs, delete stale generated files; return what changed."""
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
