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


def secret() -> bytes | None:
    """The per-user sealing key, created on first use (0600); None if it cannot be had."""
    path = key_file()
    try:
        data = path.read_bytes()
        if len(data) >= 32:
            return data
    except OSError:
        pass
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "wb") as fh:
            fh.write(secrets.token_bytes(32))
    except FileExistsError:
        pass  # another process made it first: read theirs
    except OSError:
        return None
    try:
        data = path.read_bytes()
    except OSError:
        return None
    return data if len(data) >= 32 else None


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
