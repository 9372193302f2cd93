"""A content-addressed speed-up cache for `lrc compile`, in the project's .lrc-cache/.

Keys are sha256 of the exact input bytes (a spec's text, a module's source), namespaced by
the lrc release and the Python minor version, so an entry can only ever describe the bytes
it was made from: a stale result is impossible, and deleting the folder is always safe. Only
clean results are cached (a spec load that produced no diagnostic). The runtime never reads
it: `lrc execute` recomputes every fingerprint it verifies.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

from lrc.runtime.lock.format import LRC_VERSION

FOLDER = ".lrc-cache"


def key_of(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


class Cache:
    def __init__(self, root: Path, enabled: bool = True):
        self.path = root / FOLDER / f"compile-lrc{LRC_VERSION}-py{sys.version_info[0]}.{sys.version_info[1]}.json"
        self.enabled = enabled and not os.environ.get("LRC_NO_CACHE")
        self.data: dict[str, dict[str, Any]] = {}
        self.dirty = False
        if self.enabled and self.path.is_file():
            try:
                loaded = json.loads(self.path.read_text(encoding="utf-8"))
                if isinstance(loaded, dict):
                    self.data = loaded
            except (OSError, ValueError):
                self.data = {}  # a damaged cache is just a cold cache

    def namespace(self, name: str) -> dict[str, Any]:
        return self.data.setdefault(name, {})

    def get(self, name: str, key: str) -> Any:
        return self.data.get(name, {}).get(key) if self.enabled else None

    def put(self, name: str, key: str, value: Any) -> None:
        if self.enabled:
            self.namespace(name)[key] = value
            self.dirty = True

    def save(self) -> None:
        if not (self.enabled and self.dirty):
            return
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            (self.path.parent / ".gitignore").write_text("*\n")
            fd, tmp = tempfile.mkstemp(dir=self.path.parent, suffix=".tmp")
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                json.dump(self.data, fh, separators=(",", ":"))
            os.replace(tmp, self.path)
        except OSError:
            pass  # a read-only checkout compiles just as well, only slower
