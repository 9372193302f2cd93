"""CPO trendlines across editions (seed §2.2 "per workload version, across editions"; §7 "scores
are never compared across workload versions; trendlines break and restart, annotated").

Per (workload id, model, system) the CPO of each published edition, ordered by edition date
(then edition id), split into segments of consecutive editions with the same workload version.
Two versions are never in one segment: where the version changes the line ends, and the next
segment starts with the annotation "workload v4 → v5: not comparable". A version that comes
back after another (v4, v5, v4) starts a segment of its own too: the editions in between
measured something else.

Pure functions of the history rows: the same history gives the same trend, and the chart and
the page draw exactly this structure (they never join two segments).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any, Iterable, Mapping

SCORED_ROLES: tuple[str, ...] = ("flagship", "candidate", "baseline")


@dataclass(frozen=True)
class Point:
    edition_id: str
    edition_date: str
    plan_digest: str
    workload_version: int
    passes: int
    n: int
    cpo: Decimal | None  # None: no success (infinite CPO), never $0
    cpo_low: Decimal | None
    cpo_high: Decimal | None
    cost: Decimal
    qualifying: bool | None


@dataclass(frozen=True)
class Segment:
    workload_version: int
    points: tuple[Point, ...]
    #: "workload v4 → v5: not comparable" when this segment restarts the line; None for the first.
    annotation: str | None = None


@dataclass(frozen=True)
class Series:
    workload_id: str
    model: str
    system: str
    role: str
    segments: tuple[Segment, ...]


@dataclass(frozen=True)
class Break:
    """Where a workload's version changes between two consecutive editions (for the chart and table)."""

    after_edition: str
    before_edition: str
    old_version: int
    new_version: int

    @property
    def annotation(self) -> str:
        return annotation(self.old_version, self.new_version)


@dataclass(frozen=True)
class WorkloadTrend:
    workload_id: str
    job: str
    #: every edition that published this workload, ordered by date: (edition id, date, version)
    editions: tuple[tuple[str, str, int], ...]
    breaks: tuple[Break, ...]
    series: tuple[Series, ...] = field(default_factory=tuple)


def annotation(old: int, new: int) -> str:
    return f"workload v{old} → v{new}: not comparable"


def _dec(value: Any) -> Decimal | None:
    return None if value is None else Decimal(str(value))


def segments(points: Iterable[Point]) -> tuple[Segment, ...]:
    """Consecutive points (already ordered by edition date) grouped by workload version; each
    segment after the first carries the annotation of the version change that starts it."""
    out: list[Segment] = []
    current: list[Point] = []
    for p in points:
        if current and p.workload_version != current[-1].workload_version:
            out.append(Segment(current[0].workload_version, tuple(current),
                               annotation(out[-1].workload_version, current[0].workload_version) if out else None))
            current = []
        current.append(p)
    if current:
        out.append(Segment(current[0].workload_version, tuple(current),
                           annotation(out[-1].workload_version, current[0].workload_version) if out else None))
    return tuple(out)


def _order(row: Mapping[str, Any]) -> tuple[str, str]:
    return (row["edition_date"], row["edition_id"])


def trends(rows: Iterable[Mapping[str, Any]], workload_ids: Iterable[str] | None = None) -> list[WorkloadTrend]:
    """Per workload id (sorted), its editions, version breaks and per (model, system) series of
    the scored models; `rows` are history rows (`history.read(...).iter_rows(named=True)`).
    `workload_ids`: only these workloads (default: every workload in the rows)."""
    wanted = None if workload_ids is None else set(workload_ids)
    by_workload: dict[str, list[Mapping[str, Any]]] = {}
    for r in rows:
        if wanted is None or r["workload_id"] in wanted:
            by_workload.setdefault(r["workload_id"], []).append(r)
    out = []
    for wid in sorted(by_workload):
        wrows = sorted(by_workload[wid], key=lambda r: (*_order(r), r["model"], r["system"]))
        editions: dict[tuple[str, str], tuple[str, str, int]] = {}
        for r in wrows:
            editions.setdefault(_order(r), (r["edition_id"], r["edition_date"], int(r["workload_version"])))
        ordered = [editions[k] for k in sorted(editions)]
        breaks = tuple(Break(a[0], b[0], a[2], b[2]) for a, b in zip(ordered, ordered[1:]) if a[2] != b[2])
        series: dict[tuple[str, str], list[Mapping[str, Any]]] = {}
        for r in wrows:
            if r["role"] in SCORED_ROLES:
                series.setdefault((r["model"], r["system"]), []).append(r)
        built = []
        for (model, system), srows in sorted(series.items()):
            points = [Point(r["edition_id"], r["edition_date"], r["plan_digest"], int(r["workload_version"]), int(r["passes"]),
                            int(r["n"]), _dec(r["cpo_usd"]), _dec(r["cpo_low"]), _dec(r["cpo_high"]), Decimal(r["cost_usd"]),
                            r["qualifying"]) for r in sorted(srows, key=_order)]
            built.append(Series(wid, model, system, srows[-1]["role"], segments(points)))
        latest = max(wrows, key=_order)  # the latest edition's job names the chart
        out.append(WorkloadTrend(wid, latest["job"], tuple(ordered), breaks, tuple(built)))
    return out
