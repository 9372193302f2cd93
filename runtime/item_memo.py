"""A sealed, per-user memo of generated items: the same generator, seed and index give one item, made once.

Why: every `lrc execute`, `lrc report`, `lrc merge`, `lrc regrade` and `lrc estimate` generates
every item of the plan from its seed before anything else (a report rebuilds its outputs from
the journal and the items). Generating is the larger part of a small report: PDFs drawn with
reportlab, SQLite books built and digested (the small demo's items ~0.4 s of CPU, the full
demo's ~1.9 s, each time). An item is a pure function of its generator's code (the lock pins
its fingerprint, and `lrc execute`/`lrc report` refuse other code), the seed, the index, the
generator's parameters and the libraries that write its files, so it can be remembered under
the digest of exactly those.

What keeps it honest (as the grade, chart and forecast memos, whose storage it shares,
`lrc.runtime.lock.sealed_entries`):
- *Keyed by what decides the bytes*: the generator's id and locked fingerprint, the digest of
  the seed (never the seed itself: a held-out seed stays out of the cache), the index, the
  parameters, the lrc release, the Python version, SQLite's and zlib's versions and the
  versions of reportlab, rl_accel and pypdf. Change any and it is a miss.
- *Exact*: the context and answer key are kept as the JSON text of exactly what the generator
  returned (key order included) and only when they are plain JSON (they read back equal, of
  the same types); an item of another shape (a subclass, odd types) is never remembered.
- *Files by content*: an item's files are stored once by sha256 under `items/blobs/`; a file
  whose bytes do not hash to the name the sealed entry gives is a miss, never used.
- *Sealed* and *disposable*: ~/.cache/lrc/items/; `LRC_NO_CACHE=1` turns it off, and `lrc
  verify` regenerates every item.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import sqlite3
import stat
import sys
import tempfile
import zlib
from typing import Any, Callable

from lrc.runtime.lock.format import LRC_VERSION
from lrc.runtime.filebytes import read_regular
from lrc.runtime.lock.sealed_entries import SealedEntries, library_versions, mark_used, plain
from lrc.runtime.workloads.base import Item

FORMAT = 1
#: the libraries the generators write their files (PDFs) with
LIBRARIES = ("reportlab", "rl_accel", "pypdf")
MAX_ENTRY_BYTES = 16 * 1024 * 1024
MAX_FILE_BYTES = 256 * 1024 * 1024
MAX_TOTAL_BYTES = 2 * 1024 * 1024 * 1024  # entries and files together, least recently used removed first


_HEX64 = re.compile(r"[0-9a-f]{64}")


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()



class ItemMemo:
    """`item(generator, index, params, compute)`: `compute()`'s item, from the memo when this
    user generated the same one before; `hits` and `misses` count it."""

    def __init__(self, plan: dict[str, Any], seed: str, enabled: bool = True):
        self.hits = 0
        self.misses = 0
        self._entries = SealedEntries("items", MAX_ENTRY_BYTES, enabled, MAX_TOTAL_BYTES)
        self._blobs = self._entries.folder / "blobs"
        self._code = plan.get("code") or {}
        self._namespace = {"format": FORMAT, "lrc": LRC_VERSION, "python": sys.version, "sqlite": sqlite3.sqlite_version,
                           "zlib": zlib.ZLIB_RUNTIME_VERSION, "libraries": library_versions(LIBRARIES),
                           "seed": _sha256(b"lrc:item-memo-seed\0" + seed.encode("utf-8"))} if self._entries.enabled else {}

    def key(self, generator: str, index: int, params: Any) -> str | None:
        fingerprint = (self._code.get(generator) or {}).get("fingerprint")
        if not isinstance(fingerprint, str):
            return None
        try:
            text = json.dumps({**self._namespace, "generator": generator, "fingerprint": fingerprint, "index": index,
                               "params": params}, sort_keys=True, ensure_ascii=False, allow_nan=False)
        except (TypeError, ValueError):
            return None
        return _sha256(text.encode("utf-8"))

    def item(self, generator: str, index: int, params: Any, compute: Callable[[], Item]) -> Item:
        name = self.key(generator, index, params) if self._entries.enabled else None
        if name is not None:
            found = self._read(name)
            if found is not None:
                self.hits += 1
                return found
        self.misses += 1
        made = compute()
        if name is not None:
            self._write(name, made)
        return made

    def _read(self, name: str) -> Item | None:
        entry = self._entries.read(name)
        if entry is None:
            return None
        try:
            files = {}
            for file_name, digest, size in entry["files"]:
                if not isinstance(file_name, str) or type(size) is not int or not 0 <= size <= MAX_FILE_BYTES:
                    return None
                data = read_regular(self._blobs / digest, size=size) if _HEX64.fullmatch(str(digest)) else None
                if data is None or _sha256(data) != digest:
                    return None
                mark_used(self._blobs / digest)
                files[file_name] = data
            item = Item(entry["index"], entry["item_id"], json.loads(entry["context"]), json.loads(entry["answer_key"]), files)
        except (OSError, KeyError, TypeError, ValueError):
            return None
        if type(item.index) is not int or not isinstance(item.item_id, str) or type(item.context) is not dict \
                or type(item.answer_key) is not dict:
            return None
        return item

    def _write(self, name: str, item: Any) -> None:
        if type(item) is not Item or type(item.index) is not int or type(item.item_id) is not str \
                or type(item.context) is not dict or type(item.answer_key) is not dict \
                or not plain(item.context) or not plain(item.answer_key) or type(item.files) is not dict \
                or not all(type(k) is str and type(v) is bytes and len(v) <= MAX_FILE_BYTES for k, v in item.files.items()):
            return
        files = []
        for file_name, data in item.files.items():
            digest = _sha256(data)
            if not self._put_blob(digest, data):
                return
            files.append([file_name, digest, len(data)])
        try:
            context = json.dumps(item.context, ensure_ascii=False, allow_nan=False)
            answer_key = json.dumps(item.answer_key, ensure_ascii=False, allow_nan=False)
        except (TypeError, ValueError):
            return
        self._entries.write(name, {"index": item.index, "item_id": item.item_id, "context": context,
                                   "answer_key": answer_key, "files": files})

    def _put_blob(self, digest: str, data: bytes) -> bool:
        """Store `data` under its sha256 (kept if a file of that size is already there: it is
        checked against its name whenever it is read); False when it cannot be stored."""
        path = self._blobs / digest
        try:
            st = path.lstat()
            if stat.S_ISREG(st.st_mode) and st.st_size == len(data):
                mark_used(path)
                return True
        except OSError:
            pass
        try:
            self._blobs.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(prefix=".blob-", dir=self._blobs)
            try:
                with os.fdopen(fd, "wb") as fh:
                    fh.write(data)
                os.replace(tmp, path)
            finally:
                if os.path.exists(tmp):
                    os.unlink(tmp)
        except OSError:
            return False
        return True
