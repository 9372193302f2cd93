"""One walk of specs/: which spec files there are, and which files may be referenced.

A single `os.scandir` pass (never following a symlinked folder) yields both the spec files
of each kind folder, in the order `sorted(Path.rglob(...))` would give them, and the set of
regular files reachable without a symlink. The second set is what makes a cached spec safe
to reuse: a referenced file is only trusted if it is still a regular file inside specs/,
reached through no symlink, exactly the rule the resolver enforces when it reads one.

The scan also looks at the two folders lrc writes into, since they arrive in pull requests
too: a symlink in generated/ is an error (LRC7005; emit.py would otherwise write and remove
files through it), a symlinked .lrc-cache/ a warning (cache.py compiles without it). Both are
reported here, before anything is compiled, for every command that reads the project.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass, field
from pathlib import Path

from lrc.compiler import emit
from lrc.compiler.cache import FOLDER as CACHE_FOLDER
from lrc.compiler.diagnostics import Diagnostics
from lrc.compiler.validate import KINDS

SPEC_SUFFIXES = (".yaml", ".yml")


@dataclass
class SpecFile:
    kind: str
    abspath: str
    rel: str  # project-relative POSIX path
    symlink: bool

    @property
    def path(self) -> Path:
        return Path(self.abspath)


@dataclass
class SpecTree:
    root: Path
    files: list[SpecFile] = field(default_factory=list)
    regular: set[str] = field(default_factory=set)  # project-relative paths of plain files under specs/


def _walk(folder: str, rel: str, regular: list[tuple[str, str]], links: list[tuple[str, str]]) -> None:
    """Append (rel, abspath) of every plain file below `folder` to `regular`, of every symlink
    to `links`; symlinked folders are not entered. A loop over a stack, not recursion: a tree
    nested a thousand folders deep (it arrives in a pull request) must not exhaust Python's
    recursion limit."""
    pending = [(folder, rel)]
    while pending:
        here, here_rel = pending.pop()
        try:
            it = os.scandir(here)
        except OSError:
            continue
        folders: list[tuple[str, str]] = []
        with it:
            for entry in it:
                child = here_rel + "/" + entry.name
                try:
                    if entry.is_dir(follow_symlinks=False):
                        folders.append((entry.path, child))
                    elif entry.is_symlink():
                        links.append((child, entry.path))
                    elif entry.is_file(follow_symlinks=False):
                        regular.append((child, entry.path))
                except OSError:
                    continue
        pending.extend(reversed(folders))


def _points_to_file(path: str) -> bool:
    try:
        return stat.S_ISREG(os.stat(path).st_mode)
    except (OSError, ValueError):
        return False


def _order(rel: str) -> str:
    """Sort key equal to comparing path components, as sorted(Path.rglob(...)) does."""
    return rel.replace("/", "\0")


def scan(root: Path, diags: Diagnostics) -> SpecTree:
    """The spec tree of `root`; YAML files outside a kind folder are reported, and so are
    symlinks where lrc writes (generated/, .lrc-cache/)."""
    tree = SpecTree(root)
    emit.refuse_symlinks(root, diags)
    if (root / CACHE_FOLDER).is_symlink():
        diags.warning("LRC7005", f"{CACHE_FOLDER} is a symlink; compiling without the compile cache", path=CACHE_FOLDER,
                      hint=f"remove the link (`rm {CACHE_FOLDER}`, which leaves its target alone); lrc makes a real folder")
    specs = root / "specs"
    try:
        top = sorted(os.scandir(specs), key=lambda e: e.name)
    except OSError:
        return tree
    for entry in top:
        try:
            is_dir = entry.is_dir()  # a symlinked kind folder counts as a folder, as before
        except OSError:
            is_dir = False
        if not is_dir:
            if os.path.splitext(entry.name)[1] in SPEC_SUFFIXES:
                diags.error("LRC1008", "spec files live in a kind folder (standard/, systems/, workloads/, editions/)",
                            path=f"specs/{entry.name}")
            elif not entry.is_symlink():
                tree.regular.add(f"specs/{entry.name}")
            continue
        regular: list[tuple[str, str]] = []
        links: list[tuple[str, str]] = []
        _walk(entry.path, f"specs/{entry.name}", regular, links)
        if entry.is_symlink():  # reached through a symlink: nothing in it is a plain file of specs/
            links, regular = links + regular, []
        tree.regular.update(rel for rel, _ in regular)
        candidates = [(rel, path, True) for rel, path in regular if rel.endswith(SPEC_SUFFIXES)]
        candidates += [(rel, path, False) for rel, path in links if rel.endswith(SPEC_SUFFIXES) and _points_to_file(path)]
        candidates.sort(key=lambda c: _order(c[0]))
        kind = KINDS.get(entry.name)
        if kind is None:
            for rel, _, _ in candidates:
                diags.warning("LRC1008", f"specs/{entry.name}/ is not a spec folder; file ignored",
                              path=rel, hint=f"spec folders: {', '.join(sorted(KINDS))}")
            continue
        for rel, abspath, plain in candidates:
            tree.files.append(SpecFile(kind, abspath, rel, symlink=not plain))
    return tree
