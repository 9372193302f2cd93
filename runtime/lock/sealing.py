"""The per-user sealing key of lrc's speed-up caches, and sealing with it.

Why a key: what a cache holds arrives from disk, and a project folder arrives in pull requests.
Every cache file carries an HMAC-SHA256 under a key kept outside the project
(~/.cache/lrc/cache.key, mode 0600; `LRC_CACHE_KEY_FILE` names another file), so a cache file
that was not written by this user's lrc -- planted, copied from elsewhere, damaged -- is
simply a cold cache. Shared by the compiler's cache (`lrc.compiler.cache`) and the runtime's
memo of code fingerprints (`lrc.runtime.lock.factmemo`); each keeps its own files.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import secrets
from pathlib import Path

SEAL = 32  # bytes of HMAC-SHA256 in front of every sealed file


def cache_home() -> Path:
    """$XDG_CACHE_HOME/lrc, or ~/.cache/lrc."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "lrc"


def key_file() -> Path:
    explicit = os.environ.get("LRC_CACHE_KEY_FILE")
    if explicit:
        return Path(explicit)
    return cache_home() / "cache.key"


KEY_BYTES = 32
_READ_LIMIT = 4096  # a key file is 32 bytes; `LRC_CACHE_KEY_FILE=/dev/zero` is no key, not a MemoryError


def _read_key(path: Path) -> bytes | None:
    """The key file's bytes, read without blocking and from a regular file only: a FIFO named by
    `LRC_CACHE_KEY_FILE` hung `lrc compile` (waiting for a writer), /dev/zero ran out of memory."""
    from lrc.runtime import filebytes

    try:
        data = filebytes.read_whole(path, _READ_LIMIT)
    except OSError:  # missing, unreadable, not a regular file, over the limit
        return None
    return data if len(data) >= KEY_BYTES else None


def secret() -> bytes | None:
    """The per-user sealing key, created on first use (0600); None if it cannot be had (the
    caches are then cold, never wrong)."""
    path = key_file()
    if (data := _read_key(path)) is not None:
        return data
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "wb") as fh:
            fh.write(secrets.token_bytes(KEY_BYTES))
    except FileExistsError:
        pass  # another process made it first (or something that is not a key file is there): read it
    except OSError:
        return None
    return _read_key(path)


def seal(key: bytes, payload: bytes) -> bytes:
    return hmac.new(key, payload, hashlib.sha256).digest() + payload


def unseal(key: bytes, data: bytes) -> bytes | None:
    """The payload of a sealed file, or None when its seal does not verify under `key`."""
    if len(data) < SEAL:
        return None
    tag, payload = data[:SEAL], data[SEAL:]
    if not hmac.compare_digest(tag, hmac.new(key, payload, hashlib.sha256).digest()):
        return None
    return payload
