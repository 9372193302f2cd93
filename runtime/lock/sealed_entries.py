"""One folder of sealed entries in the user's cache: the storage the runtime's memos share.

Why one place: the memo of task grades (`lrc.runtime.tasks.grade_memo`) and the memo of the
page's charts (`lrc.runtime.report.chart_memo`) keep different things under different keys,
but the rules for the files are the same and must not drift apart:
- an entry is a JSON object `{"key": NAME, ...}` in `<cache>/<folder>/<NAME>.bin`, sealed with
  the per-user key (`sealing`); one that does not verify, names another key, is too large or
  does not parse is a miss, never trusted;
- it is written to a temporary file and renamed into place, so a reader never sees half an
  entry, and a write that fails (no space, no permission) is dropped: a memo only saves time;
- `LRC_NO_CACHE=1`, or no usable key, turns the folder off (every read a miss, no write).
"""

from __future__ import annotations

import json
import os
import tempfile
from importlib import metadata
from pathlib import Path
from typing import Any, Iterable

from lrc.runtime.lock import sealing


class SealedEntries:
    """The entries of `<cache>/<folder>/`; `enabled` False (or LRC_NO_CACHE) makes it inert."""

    def __init__(self, folder: str, max_bytes: int, enabled: bool = True):
        self.key = sealing.secret() if enabled and not os.environ.get("LRC_NO_CACHE") else None
        self.folder = sealing.cache_home() / folder
        self.max_bytes = max_bytes

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
        try:
            if path.stat().st_size > self.max_bytes:
                return None
            payload = sealing.unseal(self.key, path.read_bytes())
            if payload is None:
                return None
            entry = json.loads(payload)
        except (OSError, ValueError):
            return None
        if not isinstance(entry, dict) or entry.get("key") != name:
            return None
        return entry

    def write(self, name: str, entry: dict[str, Any]) -> None:
        """Store `{"key": name, **entry}`; too large, or anything the file system refuses: not stored."""
        if self.key is None:
            return
        payload = json.dumps({**entry, "key": name}, sort_keys=True, ensure_ascii=False).encode("utf-8")
        if len(payload) + sealing.SEAL > self.max_bytes:
            return
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
