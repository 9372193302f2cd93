"""The edition's window: every run starts within `window_hours` of the folder's first execute.

Seed §3 (run protocol): "Edition window: all runs within 72 hours. Pricing frozen at window
open". Models behind an API change without notice, so the runs of one measurement are made
together; a folder resumed a week later would mix two models under one name. The window opens
when the folder's first execute journals its first session record (`opened`, UTC, to the
second: the earliest over merged shards) and closes `window_hours` later (the edition's spec).

What lrc does with it (runtime/execute.py): an execute with runs left refuses to start once the
window has closed (exit 8), and while it runs no run starts after the close -- the runs in
flight finish and are journaled, the execute ends with exit 8. `--outside-window` makes the
runs anyway; each run started after the close is journaled with `"outside_window": true`, and
the report says how many there are (summary.json `window`, a line of the rate card). The report
also counts as outside every run of an execute that began after the close: shards executed
apart and merged (`lrc merge`), each of which only knew its own window. A run journaled by an
lrc that did not date its sessions cannot be placed: it is counted as undated, never as inside.

Only the journal holds wall-clock times; the outputs hold counts, so two executes of one plan
still write the same bytes.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any

SEED_HOURS = 72  # seed §3; an edition states its own (schemas/edition.schema.json `window_hours`)


def now() -> float:
    """The wall clock (seconds since the epoch): the window is about calendar time, not a monotonic one."""
    return time.time()


def stamp(t: float) -> str:
    """`t` as the journal writes it: UTC, to the second (2026-12-07T03:50:12Z)."""
    return datetime.fromtimestamp(int(t), tz=timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def parse(value: Any) -> float | None:
    """A journaled stamp back to seconds; None for anything else (a journal is read, not trusted)."""
    if not isinstance(value, str) or len(value) != 20:
        return None
    try:
        return datetime.strptime(value, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=timezone.utc).timestamp()
    except ValueError:
        return None


def hours_of(plan: dict[str, Any]) -> float:
    """The edition's window in hours (its spec's `window_hours`; the seed's 72 if it has none)."""
    value = ((plan.get("edition") or {}).get("spec") or {}).get("window_hours", SEED_HOURS)
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) and value > 0 else float(SEED_HOURS)


@dataclass(frozen=True)
class Window:
    """When the folder's window opened (None: no dated session yet) and how long it lasts."""

    opened: float | None
    hours: float

    @property
    def close(self) -> float | None:
        return None if self.opened is None else self.opened + self.hours * 3600

    def closed(self, at: float) -> bool:
        return self.close is not None and at >= self.close

    def describe(self) -> str:
        if self.opened is None:
            return f"{_hours(self.hours)} h from the first execute"
        return f"{_hours(self.hours)} h from {stamp(self.opened)}, closed at {stamp(self.close or 0)}"


def _hours(hours: float) -> str:
    return str(int(hours)) if float(hours).is_integer() else f"{hours:g}"


def of(plan: dict[str, Any], journal: Any) -> Window:
    """The folder's window: opened at its earliest dated session (merged shards included)."""
    opened = [t for t in (parse(s.get("opened")) for s in getattr(journal, "sessions", []) if isinstance(s, dict)) if t is not None]
    return Window(min(opened) if opened else None, hours_of(plan))


def summary(plan: dict[str, Any], journal: Any) -> dict[str, Any]:
    """summary.json's `window`: counts only (no time: the outputs of two executes are the same bytes).
    `kept` is true when every run was started inside the window, false when some were not, and
    null when some runs cannot be placed (journaled by an lrc that did not date its sessions)."""
    runs = getattr(journal, "runs", {})
    sessions = getattr(journal, "sessions", [])
    run_session = getattr(journal, "run_session", {})
    win = of(plan, journal)
    dated = outside = 0
    for key, rec in runs.items():
        opened = parse(sessions[run_session[key]].get("opened")) if key in run_session else None
        dated += opened is not None
        # Journaled as started after the close (--outside-window), or made by an execute that began
        # after it: a shard run days after the others, merged (each shard's own execute saw only its
        # own window).
        outside += rec.get("outside_window") is True or (opened is not None and win.closed(opened))
    kept = False if outside else (True if dated == len(runs) else None)
    return {"about": "seed §3: every run starts within the edition's window, opened by the folder's first execute",
            "hours": int(hours_of(plan)) if hours_of(plan).is_integer() else hours_of(plan),
            "runs": len(runs), "runs_dated": dated, "runs_outside": outside, "kept": kept}


def rate_card_line(window: dict[str, Any]) -> str:
    """One line for the rate card's footer."""
    hours, runs = window["hours"], window["runs"]
    if not runs:
        return f"Window: no run journaled yet; the edition's runs start within {hours} hours of the first (seed §3)."
    if window["kept"] is True:
        return f"Window: all {runs:,} runs started within the edition's {hours}-hour window (seed §3)."
    if window["kept"] is False:
        return (f"Window: **{window['runs_outside']:,} of {runs:,} runs started after the edition's {hours}-hour window "
                f"closed** (`--outside-window`): these results do not follow the run protocol (seed §3).")
    return (f"Window: {runs - window['runs_dated']:,} of {runs:,} runs were journaled without a date (an earlier lrc); "
            f"that every run started within the {hours}-hour window (seed §3) cannot be shown.")
