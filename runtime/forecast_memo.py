"""A sealed, per-user memo of the forecast a report sets beside the actual cost.

Why: every `lrc execute`, `lrc report`, `lrc merge` and `lrc regrade` recomputes the forecast
of `lrc estimate` from the lock (forecast vs actual, issue 11 §2): it renders every planned
run's prompt and counts its tokens with litellm's offline counter. For a plan of real models
that means importing litellm (~2.7 s) in a report that makes no call, and ~0.6 ms of
tokenizing per run in every execute (1,050-run benchmark: ~0.6 s of its ~8.5 s). The forecast
is a pure function of the plan, the seed (the items and their prompts), the runs it covers,
the code (the lock pins it: `lrc execute`/`lrc report` refuse other code) and the token
counter's libraries, so it can be remembered under the digest of exactly those.

What keeps it honest (as the grade and chart memos, whose storage it shares,
`lrc.runtime.lock.sealed_entries`):
- *Keyed by what decides it*: the lock's root digest, the digest of the plan as used (an
  erratum's corrected prices are another plan), the digest of the seed (never the seed
  itself: a held-out seed stays out of the cache), the run keys, the lrc release, the Python
  version and the versions of litellm, tiktoken and tokenizers. Change any and it is a miss.
- *Exact*: an entry reads back to the very value computed (costs as the Decimal strings they
  were, token counts as integers, the same keys); a forecast that would not is never stored.
- *Sealed* and *disposable*: ~/.cache/lrc/forecasts/; an entry not sealed by this user is a
  miss; `LRC_NO_CACHE=1` turns it off, and `lrc verify` recomputes the forecast.
"""

from __future__ import annotations

import hashlib
import json
import sys
from decimal import Decimal
from typing import Any, Callable, Sequence

from lrc.runtime.lock.format import LRC_VERSION
from lrc.runtime.lock.sealed_entries import SealedEntries, library_versions

FORMAT = 1
#: the libraries whose versions decide a token count
LIBRARIES = ("litellm", "tiktoken", "tokenizers")
MAX_ENTRY_BYTES = 64 * 1024 * 1024



def _sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _figures(value: Any) -> dict[str, Any]:
    return {"input_tokens": value.input_tokens, "output_tokens": value.output_tokens, "cost": str(value.cost)}


def encode(report: dict[str, Any]) -> dict[str, Any]:
    """`estimate.for_report`'s value as plain JSON (tuple keys as lists, Decimals as their exact strings)."""
    return {"cells": [[list(key), {lv: (v if lv == "runs" else _figures(v)) for lv, v in cell.items()}]
                      for key, cell in report["cells"].items()],
            "per_run": [[list(key), {lv: _figures(v) for lv, v in levels.items()}] for key, levels in report["per_run"].items()],
            "assumptions": list(report["assumptions"]), "counting": dict(report["counting"])}


def decode(entry: dict[str, Any]) -> dict[str, Any]:
    """The value `encode` was given (ValueError, KeyError or TypeError for anything else)."""
    from lrc.runtime.estimate import Figures

    def figures(value: dict[str, Any]) -> Figures:
        tokens_in, tokens_out, cost = value["input_tokens"], value["output_tokens"], value["cost"]
        if type(tokens_in) is not int or type(tokens_out) is not int or not isinstance(cost, str):
            raise TypeError("a forecast figure is two integers and a decimal string")
        return Figures(tokens_in, tokens_out, Decimal(cost))

    return {"cells": {tuple(key): {lv: (v if lv == "runs" else figures(v)) for lv, v in cell.items()}
                      for key, cell in entry["cells"]},
            "per_run": {tuple(key): {lv: figures(v) for lv, v in levels.items()} for key, levels in entry["per_run"]},
            "assumptions": list(entry["assumptions"]), "counting": dict(entry["counting"])}


class ForecastMemo:
    """`for_report(lock, plan, seed, runs, compute)`: `compute()`'s forecast, from the memo when
    this user computed the same one before; `hits` and `misses` count it."""

    def __init__(self, enabled: bool = True):
        self.hits = 0
        self.misses = 0
        self._entries = SealedEntries("forecasts", MAX_ENTRY_BYTES, enabled)

    def key(self, lock: dict[str, Any], plan: dict[str, Any], seed: str | None, runs: Sequence[Any]) -> str | None:
        if seed is None:  # items drawn from a seed this memo was not told: never remembered
            return None
        try:
            plan_digest = _sha256(json.dumps(plan, sort_keys=True, ensure_ascii=False, default=str, allow_nan=False))
        except (TypeError, ValueError):
            return None
        material = {"format": FORMAT, "lrc": LRC_VERSION, "python": sys.version, "libraries": library_versions(LIBRARIES),
                    "root_digest": lock.get("root_digest"), "plan": plan_digest,
                    "seed": _sha256("lrc:forecast-memo-seed\0" + seed), "runs": _sha256("\n".join(r.key for r in runs))}
        return _sha256(json.dumps(material, sort_keys=True))

    def for_report(self, lock: dict[str, Any], plan: dict[str, Any], seed: str | None, runs: Sequence[Any],
                   compute: Callable[[], dict[str, Any]]) -> dict[str, Any]:
        name = self.key(lock, plan, seed, runs) if self._entries.enabled else None
        if name is not None:
            entry = self._entries.read(name)
            if entry is not None:
                try:
                    found = decode(entry["forecast"])
                except (KeyError, TypeError, ValueError, ArithmeticError):
                    found = None
                if found is not None:
                    self.hits += 1
                    return found
        self.misses += 1
        report = compute()
        if name is not None:
            try:
                stored = encode(report)
                again = decode(json.loads(json.dumps(stored)))
                exact = again == report and encode(again) == stored  # the same values, the same Decimal strings
            except (KeyError, TypeError, ValueError, ArithmeticError, AttributeError):
                exact = False
            if exact:
                self._entries.write(name, {"forecast": stored})
        return report
