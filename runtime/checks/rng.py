"""Deterministic randomness for seeded generators.

Python only guarantees `random.random()` across versions (not `choice`, `randint` or
`shuffle`), and NumPy only its raw bit streams. Generators must produce byte-identical
items on every machine and Python release, so randomness here is counter-based: each draw
is sha256(seed, path, counter), turned into integers by rejection sampling. Nothing depends
on PYTHONHASHSEED, the clock or the platform.
"""

from __future__ import annotations

import hashlib
from decimal import Decimal
from typing import Sequence, TypeVar

T = TypeVar("T")


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
        data = hashlib.sha256(self._key + self._counter.to_bytes(8, "big")).digest()
        self._counter += 1
        return int.from_bytes(data[:8], "big")

    def below(self, n: int) -> int:
        """Uniform integer in [0, n)."""
        if n <= 0:
            raise ValueError("below() needs n > 0")
        limit = (1 << 64) - ((1 << 64) % n)
        while True:
            v = self._block()
            if v < limit:
                return v % n

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
