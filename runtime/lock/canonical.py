"""Canonical JSON and domain-separated digests.

Digests are sha256 over the RFC 8785 (JCS) serialization of a value, prefixed with a
domain tag (`lrc:<kind>:v1\\0`) so that a digest of one kind of object can never be
mistaken for another. JCS, not `json.dumps(sort_keys=True)`: the two differ on floats,
-0, large integers and non-BMP key order, and the lock names the scheme it used.
"""

from __future__ import annotations

import hashlib
import json
import re
from typing import Any

import rfc8785

CANONICALIZATION = "jcs-rfc8785"
HASH = "sha256"


class CanonicalError(ValueError):
    """A value that has no canonical JSON form (NaN, huge integer, unsupported type)."""


_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|[-0-9][-+.0-9eE]*')
_STRING = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"')
_NOT_SHORT_INT = re.compile(r"[0-9][.eE]|[0-9]{16}")
"""Outside string literals (where digits occur only in number tokens), a float (`repr` always
writes a `.` or an exponent after a digit) or an integer of 16 digits or more: the tokens
that need the exact per-token check. Without one, every number token is `-?d{1,15}`."""
_SAFE_INT = re.compile(r"-?(?:0|[1-9][0-9]{0,15})")
_NON_BMP = re.compile("[\U00010000-\U0010ffff]")
_MAX_SAFE = 2**53 - 1


def _fast(value: Any, integers_only: bool = False) -> bytes | None:
    """Sorted, compact `json.dumps` when it provably equals RFC 8785, else None.

    The two differ only in number formatting (floats, integers beyond 2^53, which JCS
    refuses) and in key order for characters outside the Basic Multilingual Plane (JCS sorts
    UTF-16 code units, Python code points); string escaping is the same. So when the output
    holds no non-BMP character and every number token is a safe integer, the bytes are JCS,
    produced by the C encoder instead of rfc8785's pure-Python one (which dominated compile
    time on large plans).

    `integers_only`: the caller guarantees that every number in `value` is an int of
    magnitude below 2^53 (a serialized syntax tree: floats and larger ints are strings there),
    so the number check is skipped; the non-BMP and encoding checks still apply.
    """
    try:
        text = json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
        data = text.encode("utf-8")
    except (TypeError, ValueError, UnicodeEncodeError):
        return None
    if _NON_BMP.search(text):
        return None
    if integers_only or not _NOT_SHORT_INT.search(_STRING.sub("", text)):
        return data  # every number token is -?d{1,15}: a safe integer (json.dumps writes no leading zeros)
    for match in _TOKEN.finditer(text):
        token = match.group()
        if token[0] != '"' and (not _SAFE_INT.fullmatch(token) or abs(int(token)) > _MAX_SAFE):
            return None
    return data


def canonical_bytes(value: Any, *, integers_only: bool = False) -> bytes:
    """The JCS bytes of `value`; raises CanonicalError for values JCS refuses.

    `integers_only` is a promise about `value` (see `_fast`) that saves scanning its text."""
    fast = _fast(value, integers_only)
    if fast is not None:
        return fast
    try:
        return rfc8785.dumps(value)
    except (rfc8785.CanonicalizationError, TypeError, ValueError) as exc:  # pragma: no cover - message path
        raise CanonicalError(str(exc)) from exc


def digest(kind: str, value: Any, *, integers_only: bool = False) -> str:
    """`sha256:<hex>` of the canonical form of `value`, separated by `kind`."""
    h = hashlib.sha256()
    h.update(f"lrc:{kind}:v1\0".encode())
    h.update(canonical_bytes(value, integers_only=integers_only))
    return "sha256:" + h.hexdigest()


def digest_bytes(kind: str, data: bytes) -> str:
    """`sha256:<hex>` of raw bytes (files, rendered prompts), separated by `kind`."""
    h = hashlib.sha256()
    h.update(f"lrc:{kind}:v1\0".encode())
    h.update(data)
    return "sha256:" + h.hexdigest()


def digest_text(kind: str, text: str) -> str:
    """Digest of text after normalizing line endings to LF (so CRLF checkouts agree)."""
    return digest_bytes(kind, normalize_newlines(text).encode("utf-8"))


def normalize_newlines(text: str) -> str:
    return text.replace("\r\n", "\n").replace("\r", "\n")
