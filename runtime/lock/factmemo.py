"""A sealed, per-user memo of what code fingerprinting derives from each source file's bytes.

Why: `lrc execute` and `lrc report` verify every code component of the lock against the code
that runs, before anything else -- even a resume with nothing to do. That means parsing and
serializing ~60 runtime modules, ~2 s of CPU on every command (issue 11 §4 asks a finished
10,000-run folder to resume in under 1 s). What fingerprinting derives from a file (its
digest, its import list, its component declaration) is a pure function of the file's bytes,
so it can be remembered under the sha256 of those bytes: an edit -- any byte -- is a miss and
is recomputed, so a changed component is refused exactly as before.

What keeps it honest:
- *Namespaced*: by the lrc release, the Python version and the bytes of the fingerprinting
  code itself (codeprint, canonical JSON, this module); change any and the memo is cold.
- *Sealed*: the file carries an HMAC-SHA256 under the per-user key (`sealing`), checked before
  its content is read; a planted, copied or damaged memo is a cold memo, never trusted.
- *Disposable*: it lives in the user's cache folder (~/.cache/lrc/), never in a project or run
  folder; any problem reading or writing it only costs time. `LRC_NO_CACHE=1` turns it off.
"""

from __future__ import annotations

import hashlib
import marshal
import os
import sys
import tempfile
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator

from lrc.runtime.lock import codeprint, sealing
from lrc.runtime.lock.format import LRC_VERSION

_CODE = ("codeprint.py", "canonical.py", "factmemo.py")
MAX_BYTES = 16 * 1024 * 1024  # a memo past this is ignored (and rewritten smaller)


class _Tracked(dict):
    """The memo's entries, remembering which were read or written in this process, so the
    file keeps only what the current code needs instead of every version ever verified."""

    def __init__(self, *args: Any):
        super().__init__(*args)
        self.used: set[str] = set()
        self.added = False

    def __contains__(self, key: object) -> bool:
        found = super().__contains__(key)
        if found:
            self.used.add(key)  # type: ignore[arg-type]
        return found

    def __getitem__(self, key: str) -> Any:
        self.used.add(key)
        return super().__getitem__(key)

    def __setitem__(self, key: str, value: Any) -> None:
        self.used.add(key)
        self.added = True
        super().__setitem__(key, value)


def namespace() -> str:
    here = Path(__file__).resolve().parent
    h = hashlib.sha256(f"{LRC_VERSION}\x1f{sys.version}\x1f{sys.implementation.cache_tag}".encode("utf-8"))
    for name in _CODE:
        h.update(b"\x1f" + (here / name).read_bytes())
    return h.hexdigest()[:32]


def memo_path() -> Path:
    return sealing.cache_home() / f"fingerprints-{namespace()}.bin"


def _load(key: bytes, path: Path) -> dict[str, Any]:
    try:
        if path.stat().st_size > MAX_BYTES:
            return {}
        payload = sealing.unseal(key, path.read_bytes())
    except OSError:
        return {}
    if payload is None:
        return {}
    try:
        value = marshal.loads(payload)  # sealed by this user's lrc: data it wrote itself
    except (ValueError, EOFError, TypeError):
        return {}
    return value if isinstance(value, dict) else {}


def _save(key: bytes, path: Path, entries: dict[str, Any]) -> None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=".fingerprints-", dir=path.parent)
        try:
            with os.fdopen(fd, "wb") as fh:
                fh.write(sealing.seal(key, marshal.dumps(entries)))
            os.replace(tmp, path)
        finally:
            if os.path.exists(tmp):
                os.unlink(tmp)
    except (OSError, ValueError):
        pass  # a read-only or full cache folder: the next command recomputes


@contextmanager
def remembered() -> Iterator[None]:
    """Run fingerprinting with the memo as `codeprint.SOURCE_DIGESTS`; store what it added.

    A no-op when the memo is off (LRC_NO_CACHE), when there is no usable key, or when a caller
    (the compiler, with its own cache) already supplies SOURCE_DIGESTS."""
    key = None if os.environ.get("LRC_NO_CACHE") or codeprint.SOURCE_DIGESTS is not None else sealing.secret()
    if key is None:
        yield
        return
    try:
        path = memo_path()
    except OSError:
        yield
        return
    entries = _Tracked(_load(key, path))
    loaded = len(entries)
    codeprint.SOURCE_DIGESTS = entries
    try:
        yield
    finally:
        codeprint.SOURCE_DIGESTS = None
    if entries.added or len(entries.used) < loaded:
        _save(key, path, {k: v for k, v in entries.items() if k in entries.used})
