"""Failure categories and review burden in the report: per run (evaluation.json) and per cell (summary.json).

Derived categories come from the taxonomy's rules (lrc.runtime.failures) at every report;
assigned ones are the latest `lrc categorize` record of the run (lrc.runtime.review.categorize).
Both are shown side by side, never merged: an assignment does not change the derived counts.
"""

from __future__ import annotations

from typing import Any, Mapping

from lrc.runtime.review.categorize import latest


def evaluation_fields(evaluation: Mapping[str, Any], journal, run_key: str) -> dict[str, Any]:
    """The evaluation record's failure fields: derived (`failure`), assigned, review burden."""
    return {"failure_categories": evaluation["failure_categories"], "failure": evaluation["failure"],
            "assigned_failure": latest(journal, run_key), "review_burden": evaluation["review_burden"]}


class Tally:
    """Per cell (workload or task × model × system): runs by derived and by assigned primary category, and review burden."""

    def __init__(self) -> None:
        self.cells: dict[tuple[str, str, str], dict[str, Any]] = {}

    def add(self, cell: tuple[str, str, str], evaluation: Mapping[str, Any], journal, run_key: str) -> None:
        c = self.cells.setdefault(cell, {"derived": {}, "assigned": {}, "review_burden": {"error": 0, "warning": 0}, "runs": 0})
        c["runs"] += 1
        if evaluation.get("failure"):
            primary = evaluation["failure"]["primary"]
            c["derived"][primary] = c["derived"].get(primary, 0) + 1
        assigned = latest(journal, run_key)
        if assigned:
            c["assigned"][assigned["primary"]] = c["assigned"].get(assigned["primary"], 0) + 1
        for severity, n in (evaluation.get("review_burden") or {}).items():
            c["review_burden"][severity] = c["review_burden"].get(severity, 0) + n

    def summary(self) -> list[dict[str, Any]]:
        return [{"workload": w, "model": m, "system": s, "runs": c["runs"],
                 "derived": dict(sorted(c["derived"].items())), "assigned": dict(sorted(c["assigned"].items())),
                 "review_burden": dict(sorted(c["review_burden"].items()))}
                for (w, m, s), c in sorted(self.cells.items())]
