"""An output folder is written only where it is a folder of its own: no link leads out of it.

Why: run folders travel -- a shard made on another machine is merged, a colleague's folder is
reported again to check its numbers -- and a folder can hold what its maker put there. Found by a
probe (2026-12-07): with `runs/<workload>` (or `runs/`, `items/`, one run's folder) a symbolic
link to a folder elsewhere, `lrc merge` into that folder wrote 60-330 files there; with
`.lrc-execute.lock` a link to a file elsewhere, opening the lock truncated that file to 0 bytes,
and with the lock a FIFO the command waited forever. So the lock is opened without following a
link and without waiting, and must be a regular file; and before anything is written, a folder
holding a link anywhere in it is refused (exit 6, naming the link), never written through.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path
from typing import IO

LOCK_NAME = ".lrc-execute.lock"
OUTPUT_FILES = ("cells.csv", "cells.parquet", "erratum.json", "forecast-vs-actual.md", "rate-card.md",
                "reliability-report.md", "report.html", "summary.json")
"""The top-level files of a run folder that lrc writes as outputs (`lrc report`, `lrc regrade`),
beside journal.jsonl, items/ and runs/: what `lrc package` packs of the top level, and what
`lrc execute --out` will not overwrite in a folder that holds no journal."""
_LOCK_FLAGS = (os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
               | getattr(os, "O_CLOEXEC", 0))


class UnsafeFolder(Exception):
    """The output folder holds something lrc must not write through (a link, a lock that is not a file)."""


def open_lock(out: Path) -> IO[bytes]:
    """The folder's lock file, opened for flock: never through a link, never waiting on a FIFO,
    never truncating what is there (UnsafeFolder if it is not a regular file; OSError otherwise)."""
    path = out / LOCK_NAME
    try:
        fd = os.open(path, _LOCK_FLAGS, 0o644)
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.EMLINK):
            raise UnsafeFolder(f"{path} is a symbolic link; lrc never writes through a link in an output folder: "
                               f"remove it") from None
        raise
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            raise UnsafeFolder(f"{path} is not a regular file (a FIFO, a device or a folder); remove it")
        return os.fdopen(fd, "rb+")
    except BaseException:
        os.close(fd)
        raise


def first_link(out: Path) -> str | None:
    """The first symbolic link inside `out` (a path relative to it), or None. One walk of the
    tree by `os.scandir`, whose entries say whether they are links without a `stat` each: ~30,000
    entries for a 10,000-run folder in well under 0.1 s."""
    stack = [os.fspath(out)]
    root = len(stack[0]) + 1
    while stack:
        folder = stack.pop()
        try:
            entries = list(os.scandir(folder))
        except FileNotFoundError:
            continue
        for entry in entries:
            if entry.is_symlink():
                return entry.path[root:]
            if entry.is_dir(follow_symlinks=False):
                stack.append(entry.path)
    return None


def check_no_links(out: Path) -> None:
    """UnsafeFolder if `out` holds a link anywhere (see the module's docstring)."""
    found = first_link(out)
    if found is not None:
        raise UnsafeFolder(f"{out} holds a symbolic link ({found}); lrc never writes through a link in an output "
                           f"folder -- it could lead anywhere on this machine: remove it (or use a new --out folder)")
