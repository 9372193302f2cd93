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
- *Bounded, not pruned to one command*: entries this process used are kept, and of the others
  the most recent, up to `KEEP` entries in all. (It used to keep only what the last
  fingerprinting used, so `lrc execute` -- which verifies the lock, then discovers the running
  code again to import it -- pruned it to the declarations and re-parsed every module on every
  execute; and two editions of other code, or an edited file and its original, evicted each other.)
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
#: Entries kept at most: what this process used, then the most recent others. ~3 per module
#: (digest, imports, declarations) of ~180 modules is ~550 per version of the code.
KEEP = 6000


class _Tracked(dict):
    """The memo's entries, remembering which were read or written in this process, so the
    file keeps what the current code needs first when it must drop some (`_kept`)."""

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


def _kept(entries: _Tracked) -> dict[str, Any]:
    """What is saved: every entry this process used (last: the newest), and before them the most
    recent of the others, up to KEEP in all (a memo only grows by new code versions)."""
    pairs = list(entries.items())  # dict.items: reading them marks nothing used
    used = [(k, v) for k, v in pairs if k in entries.used]
    others = [(k, v) for k, v in pairs if k not in entries.used]
    room = KEEP - len(used)
    return dict((others[-room:] if room > 0 else []) + used)


def _stat(path: Path) -> tuple[int, int, int] | None:
    try:
        st = path.stat()
    except OSError:
        return None
    return st.st_size, st.st_mtime_ns, st.st_ino


#: This process's memo: (path, key, the file's stat when read or written, entries). Every
#: fingerprinting of one command shares it (what one used, the next keeps); a file changed on
#: disk since (another command saved) is read again.
_OPEN: tuple[Path, bytes, tuple[int, int, int] | None, _Tracked] | None = None


@contextmanager
def remembered() -> Iterator[None]:
    """Run fingerprinting with the memo as `codeprint.SOURCE_DIGESTS`; store what it added.

    A no-op when the memo is off (LRC_NO_CACHE), when there is no usable key, or when a caller
    (the compiler, with its own cache) already supplies SOURCE_DIGESTS."""
    global _OPEN
    key = None if os.environ.get("LRC_NO_CACHE") or codeprint.SOURCE_DIGESTS is not None else sealing.secret()
    if key is None:
        yield
        return
    try:
        path = memo_path()
    except OSError:
        yield
        return
    stat = _stat(path)
    if _OPEN is not None and _OPEN[:3] == (path, key, stat):
        entries = _OPEN[3]
    else:
        entries = _Tracked(_load(key, path))
        if _OPEN is not None and _OPEN[:2] == (path, key):
            entries.used |= _OPEN[3].used & entries.keys()  # what this process used stays first
    codeprint.SOURCE_DIGESTS = entries
    try:
        yield
    finally:
        codeprint.SOURCE_DIGESTS = None
    if entries.added or len(entries) > KEEP:
        entries.added = False
        _save(key, path, _kept(entries))
        stat = _stat(path)
    _OPEN = (path, key, stat, entries)
