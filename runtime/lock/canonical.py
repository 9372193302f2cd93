"""Canonical JSON and domain-separated digests.

Digests are sha256 over the RFC 8785 (JCS) serialization of a value, prefixed with a
domain tag (`lrc:<kind>:v1\\0`) so that a digest of one kind of object can never be
mistaken for another. JCS, not `json.dumps(sort_keys=True)`: the two differ on floats,
-0, large integers and non-BMP key order, and the lock names the scheme it used.
"""

from __future__ import annotations

import hashlib
from typing import Any

import rfc8785

CANONICALIZATION = "jcs-rfc8785"
HASH = "sha256"


class CanonicalError(ValueError):
    """A value that has no canonical JSON form (NaN, huge integer, unsupported type)."""


def canonical_bytes(value: Any) -> bytes:
    """The JCS bytes of `value`; raises CanonicalError for values JCS refuses."""
    try:
        return rfc8785.dumps(value)
    except (rfc8785.CanonicalizationError, TypeError, ValueError) as exc:  # pragma: no cover - message path
        raise CanonicalError(str(exc)) from exc


def digest(kind: str, value: Any) -> str:
    """`sha256:<hex>` of the canonical form of `value`, separated by `kind`."""
    h = hashlib.sha256()
    h.update(f"lrc:{kind}:v1\0".encode())
    h.update(canonical_bytes(value))
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
