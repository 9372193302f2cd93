"""One folder of sealed entries in the user's cache: the storage the runtime's memos share.

Why one place: the memo of task grades (`lrc.runtime.tasks.grade_memo`) and the memo of the
page's charts (`lrc.runtime.report.chart_memo`) keep different things under different keys,
but the rules for the files are the same and must not drift apart:
- an entry is a JSON object `{"key": NAME, ...}` in `<cache>/<folder>/<NAME>.bin`, sealed with
  the per-user key (`sealing`); one that does not verify, names another key, is too large or
  does not parse is a miss, never trusted;
- it is written to a temporary file and renamed into place, so a reader never sees half an
  entry, and a write that fails (no space, no permission) is dropped: a memo only saves time;
- `LRC_NO_CACHE=1`, or no usable key, turns the folder off (every read a miss, no write);
- a file is read without blocking and only when it is a regular file within its size limit (a
  FIFO or a device planted in the cache is a miss, never waited on);
- the folder is bounded: a read marks its entry used (its mtime), and the first write of a
  process that finds the folder (its subfolders included) above its total size removes the
  least recently used files down to three quarters of it. Seeds, plans and code change over a
  project's life, so without a bound a memo would only grow.
"""

from __future__ import annotations

import json
import os
import tempfile
from importlib import metadata
from pathlib import Path
from typing import Any, Iterable

from lrc.runtime.filebytes import read_regular
from lrc.runtime.lock import sealing


def mark_used(path: Path) -> None:
    """Record a use of a cache file (its mtime), so the bound keeps what is used."""
    try:
        os.utime(path)
    except OSError:
        pass


class SealedEntries:
    """The entries of `<cache>/<folder>/`; `enabled` False (or LRC_NO_CACHE) makes it inert.
    `max_bytes`: one entry's limit; `max_total_bytes`: the folder's (subfolders included)."""

    def __init__(self, folder: str, max_bytes: int, enabled: bool = True, max_total_bytes: int = 256 * 1024 * 1024):
        self.key = sealing.secret() if enabled and not os.environ.get("LRC_NO_CACHE") else None
        self.folder = sealing.cache_home() / folder
        self.max_bytes = max_bytes
        self.max_total_bytes = max_total_bytes
        self._bounded = False

    @property
    def enabled(self) -> bool:
        return self.key is not None

    def path(self, name: str) -> Path:
        return self.folder / f"{name}.bin"

    def read(self, name: str) -> dict[str, Any] | None:
        """The entry stored under `name`, or None (absent, not sealed by this user, damaged, too large)."""
        if self.key is None:
            return None
        path = self.path(name)
        data = read_regular(path, limit=self.max_bytes)
        if data is None:
            return None
        payload = sealing.unseal(self.key, data)
        if payload is None:
            return None
        try:
            entry = json.loads(payload)
        except ValueError:
            return None
        if not isinstance(entry, dict) or entry.get("key") != name:
            return None
        mark_used(path)
        return entry

    def bound(self) -> None:
        """Once per process: above `max_total_bytes`, remove the least recently used files (of the
        folder and its subfolders) until three quarters of it are left."""
        if self._bounded:
            return
        self._bounded = True
        files, total = [], 0
        folders = [self.folder]
        while folders:
            try:
                listing = os.scandir(folders.pop())
            except OSError:
                continue
            with listing:
                for found in listing:
                    try:
                        if found.is_dir(follow_symlinks=False):
                            if len(folders) < 64:
                                folders.append(Path(found.path))
                            continue
                        st = found.stat(follow_symlinks=False)
                    except OSError:
                        continue
                    files.append((st.st_mtime_ns, found.path, st.st_size))
                    total += st.st_size
        if total <= self.max_total_bytes:
            return
        for _, path, size in sorted(files):
            if total <= self.max_total_bytes * 3 // 4:
                break
            try:
                os.unlink(path)
                total -= size
            except OSError:
                pass

    def write(self, name: str, entry: dict[str, Any]) -> None:
        """Store `{"key": name, **entry}`; too large, or anything the file system refuses: not stored."""
        if self.key is None:
            return
        payload = json.dumps({**entry, "key": name}, sort_keys=True, ensure_ascii=False).encode("utf-8")
        if len(payload) + sealing.SEAL > self.max_bytes:
            return
        self.bound()
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(prefix=".entry-", dir=self.folder)
            try:
                with os.fdopen(fd, "wb") as fh:
                    fh.write(sealing.seal(self.key, payload))
                os.replace(tmp, self.path(name))
            finally:
                if os.path.exists(tmp):
                    os.unlink(tmp)
        except OSError:
            return  # a cache that cannot be written only costs time


def library_versions(names: Iterable[str]) -> dict[str, str]:
    """The installed version of each distribution ("absent" if it is not installed): what a memo
    keys on for the libraries that decide its values."""
    found = {}
    for name in names:
        try:
            found[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            found[name] = "absent"
    return found


def plain(value: Any) -> bool:
    """Whether `value` is made of JSON's own types only (so it reads back exactly as it is)."""
    stack = [value]
    while stack:
        v = stack.pop()
        if v is None or isinstance(v, (bool, str)):
            continue
        if type(v) is int:
            continue
        if type(v) is float:
            if v != v or v in (float("inf"), float("-inf")):
                return False
            continue
        if type(v) is list:
            stack.extend(v)
            continue
        if type(v) is dict and all(type(k) is str for k in v):
            stack.extend(v.values())
            continue
        return False
    return True
