"""Deterministic randomness for seeded generators.

Python only guarantees `random.random()` across versions (not `choice`, `randint` or
`shuffle`), and NumPy only its raw bit streams. Generators must produce byte-identical
items on every machine and Python release, so randomness here is counter-based: each draw
is sha256(seed, path, counter), turned into integers by rejection sampling. Nothing depends
on PYTHONHASHSEED, the clock or the platform.
"""

from __future__ import annotations

import hashlib
import struct
from decimal import Decimal
from typing import Sequence, TypeVar

try:  # CPython's own SHA-256: the same digest as OpenSSL's, with half the per-call overhead on short inputs
    from _sha256 import sha256 as _sha256
except ImportError:  # pragma: no cover - another Python
    _sha256 = hashlib.sha256

T = TypeVar("T")
_COUNTER = struct.Struct(">Q").pack
_FIRST_8 = struct.Struct(">Q").unpack_from


class Stream:
    """An independent, reproducible stream of random draws named by (seed, *path)."""

    def __init__(self, seed: str, *path: str | int):
        material = "\x1f".join([seed, *(str(p) for p in path)])
        self._key = hashlib.sha256(material.encode("utf-8")).digest()
        self._counter = 0

    def child(self, *path: str | int) -> "Stream":
        """A sub-stream whose draws do not shift when this stream's usage changes."""
        return Stream(self._key.hex(), *path)

    def _block(self) -> int:
        """The first 8 bytes (big-endian) of sha256(key || counter as 8 big-endian bytes)."""
        value = _FIRST_8(_sha256(self._key + _COUNTER(self._counter)).digest())[0]
        self._counter += 1
        return value

    def below(self, n: int) -> int:
        """Uniform integer in [0, n)."""
        if n <= 0:
            raise ValueError("below() needs n > 0")
        limit = (1 << 64) - ((1 << 64) % n)
        while True:
            v = _FIRST_8(_sha256(self._key + _COUNTER(self._counter)).digest())[0]  # self._block(), inlined
            self._counter += 1
            if v < limit:
                return v % n

    def below_many(self, n: int, count: int) -> list[int]:
        """`[self.below(n) for _ in range(count)]`, the same draws in one loop (bootstrap resampling)."""
        if n <= 0:
            raise ValueError("below() needs n > 0")
        limit = (1 << 64) - ((1 << 64) % n)
        key, counter, out = self._key, self._counter, []
        append, sha, pack, first = out.append, _sha256, _COUNTER, _FIRST_8
        while len(out) < count:
            value = first(sha(key + pack(counter)).digest())[0]
            counter += 1
            if value < limit:
                append(value % n)
        self._counter = counter
        return out

    def between(self, lo: int, hi: int) -> int:
        """Uniform integer in [lo, hi] (both inclusive)."""
        return lo + self.below(hi - lo + 1)

    def chance(self, numerator: int, denominator: int) -> bool:
        """True with probability numerator/denominator (exact, no floats)."""
        return self.below(denominator) < numerator

    def choice(self, seq: Sequence[T]) -> T:
        if not seq:
            raise ValueError("choice() from an empty sequence")
        return seq[self.below(len(seq))]

    def weighted(self, options: Sequence[tuple[T, int]]) -> T:
        """Pick from (value, integer weight) pairs."""
        total = sum(w for _, w in options)
        r = self.below(total)
        for value, w in options:
            if r < w:
                return value
            r -= w
        raise AssertionError("unreachable")

    def shuffled(self, seq: Sequence[T]) -> list[T]:
        """A Fisher-Yates shuffled copy."""
        out = list(seq)
        for i in range(len(out) - 1, 0, -1):
            j = self.below(i + 1)
            out[i], out[j] = out[j], out[i]
        return out

    def sample(self, seq: Sequence[T], k: int) -> list[T]:
        return self.shuffled(seq)[:k]

    def money(self, lo_cents: int, hi_cents: int) -> Decimal:
        """A Decimal amount with two places, uniform over [lo_cents, hi_cents] cents."""
        return (Decimal(self.between(lo_cents, hi_cents)) / 100).quantize(Decimal("0.01"))
