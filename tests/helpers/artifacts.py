"""Shared, cached pieces of the artifact tests (tests/test_artifacts_*.py).

Why: generating a task and recalculating a workbook are deterministic and pure (the same
kind and seed give the same bytes; the same bytes, overrides and limits give the same
values), and they are what those tests spend their time on. So, within one test process:

- `task(kind, seed)` makes each task once (`tasks.make`, lru-cached); the same `Task`
  object is shared, so callers must not mutate it (they copy before editing, as they did);
- `cached_recalculate` (installed by tests/conftest.py for the artifact tests that do not test
  the engine itself) recalculates each distinct (bytes, overrides, limits) once and hands out
  a fresh copy of the result, so a caller that edits it cannot poison the cache.

`kinds()` parametrizes a test over every task kind with one representative per family in the
default run and the others marked `slow` (`python3 dev.py test --slow` and CI run them all).
"""

from __future__ import annotations

import copy
import functools
import hashlib
from typing import Any

import pytest

from lrc.runtime.artifacts import recalc, recalc_worker, tasks

# One kind per family, kept in the default run: a statement repair, a schedule roll-forward,
# a DCF (its new sheet) and a deck kind (a restored slide with a new chart; refresh-deck-table,
# the other deck kind, is what the toolbox, validator, mutant and agentic-loop tests use).
REPRESENTATIVE = ("fix-cash-flow", "roll-debt-forward", "build-dcf", "add-required-slide")
# The two kinds the toolbox's add_slide / add_chart and the differ's style matching exist for.
NEWLY_COVERED = ("build-dcf", "add-required-slide")
assert set(REPRESENTATIVE) <= set(tasks.KINDS)


def kinds(keep: tuple[str, ...] = REPRESENTATIVE) -> list[Any]:
    """Every task kind as a pytest param; those not in `keep` are marked slow."""
    return [kind if kind in keep else pytest.param(kind, marks=pytest.mark.slow) for kind in tasks.KINDS]


@functools.lru_cache(maxsize=None)
def task(kind: str, seed: str) -> tasks.Task:
    """`tasks.make(kind, seed)`, made once per process (deterministic: the same bytes every time)."""
    return tasks.make(kind, seed)


_REAL_RECALCULATE = recalc.recalculate
_RECALCULATED: dict[tuple, recalc.Recalc] = {}


def cached_recalculate(data: bytes, wb=None, overrides: dict[tuple[str, str], Any] | None = None,
                       limits: recalc_worker.Limits = recalc_worker.LIMITS) -> recalc.Recalc:
    """`recalc.recalculate`, computed once per (bytes, whether a workbook was given, overrides,
    limits). `wb` is the workbook of the same bytes, so it adds nothing to the key but whether
    it was passed (without it the unsupported-function and size scans do not run)."""
    key = (hashlib.sha256(data).digest(), wb is not None, tuple(sorted((overrides or {}).items())), limits)
    if key not in _RECALCULATED:
        _RECALCULATED[key] = _REAL_RECALCULATE(data, wb, overrides, limits)
    return copy.deepcopy(_RECALCULATED[key])
