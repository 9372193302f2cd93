"""Which judgments a human reviews: the seeded spot-check sample, or a whole cell for a regrade.

Per cell (workload, model, system) the spot-check takes ceil(rate x judged runs) of the cell's
judged runs (a judged run has a primary judge record), rate = the edition's
`human_review.spot_check_rate`. The draw is a seeded `Stream` named by the edition's seed and
the cell, over the cell's run keys *sorted*: the sample depends on the seed and on which runs
were judged, never on journal order, the hash seed or the clock. Rows are then shuffled (also
seeded) across cells and numbered R0001...: the row id is opaque and rows of one model are not
grouped, so the reviewer cannot tell which model wrote an output (the run key names it).

The sample digest covers the plan digest, the scope, the sorted run keys and the rows (row id
-> run, fact): the import recomputes it from the folder and refuses a workbook whose sample is
not the folder's current one (e.g. more runs were judged after the export).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from decimal import ROUND_CEILING, Decimal
from typing import Any

from lrc.runtime.checks.rng import Stream
from lrc.runtime.review.rubric import RubricShape, judged_rubrics

Cell = tuple[str, str, str]  # (workload ref, model id, system key)
SPOT_CHECK, REGRADE = "spot-check", "regrade"


class ReviewError(Exception):
    """The folder, the plan or a workbook cannot be used for review; nothing was written."""


@dataclass(frozen=True)
class Row:
    """One judgment a human grades: a run (criteria rubric) or one fact of a run (facts rubric)."""

    row_id: str
    run: str
    workload: str
    item: str
    fact_id: str | None


@dataclass
class Sample:
    scope: str  # SPOT_CHECK or REGRADE
    plan_digest: str
    cells: dict[Cell, list[str]]  # cell -> sampled run keys, sorted
    rows: list[Row]
    digest: str = ""
    rubrics: dict[str, RubricShape] = field(default_factory=dict)  # workload ref -> rubric shape

    @property
    def runs(self) -> list[str]:
        return sorted(k for keys in self.cells.values() for k in keys)


def parse_cell(text: str) -> Cell:
    """CELL on the command line: "WORKLOAD|MODEL|SYSTEM", e.g.
    "generate.variance-commentary.v1|openai/gpt-4o|single-shot" (the first three fields of a run key)."""
    parts = text.split("|")
    if len(parts) != 3 or not all(p.strip() for p in parts):
        raise ReviewError(f"CELL is WORKLOAD|MODEL|SYSTEM (e.g. generate.variance-commentary.v1|openai/gpt-4o|single-shot), got {text!r}")
    return parts[0].strip(), parts[1].strip(), parts[2].strip()


def judged_runs(plan: dict[str, Any], journal) -> dict[Cell, list[str]]:
    """cell -> its judged run keys (sorted), for the plan's workloads that have a judge step."""
    rubrics = judged_rubrics(plan)
    cells: dict[Cell, list[str]] = {}
    for (run, role) in journal.judges:
        if role != "primary":
            continue
        rec = journal.runs.get(run)
        if rec is None or rec.get("workload") not in rubrics:
            continue
        cells.setdefault((rec["workload"], rec["model"], rec["system"]), []).append(run)
    return {cell: sorted(keys) for cell, keys in sorted(cells.items())}


def spot_check_rate(plan: dict[str, Any]) -> Decimal:
    review = plan["edition"]["spec"].get("human_review")
    if not review:
        raise ReviewError(f"edition {plan['edition']['ref']} sets no human_review.spot_check_rate (the compiler requires one "
                          f"for judged workloads: LRC6104)")
    return Decimal(review["spot_check_rate"])


def sample_size(rate: Decimal, judged: int) -> int:
    """ceil(rate x judged), exact (Decimal)."""
    return int((rate * judged).to_integral_value(rounding=ROUND_CEILING))


def spot_check(plan: dict[str, Any], journal, seed: str) -> Sample:
    """The spot-check sample of the folder as its journal is now."""
    rate = spot_check_rate(plan) if judged_rubrics(plan) else Decimal(0)
    chosen = {}
    for cell, keys in judged_runs(plan, journal).items():
        stream = Stream(seed, "lrc.review", SPOT_CHECK, *cell)
        chosen[cell] = sorted(stream.sample(keys, sample_size(rate, len(keys))))
    return _finish(SPOT_CHECK, plan, journal, seed, chosen)


def regrade(plan: dict[str, Any], journal, seed: str, cell: Cell) -> Sample:
    """Every judged run of one cell (`lrc review export --all CELL`)."""
    cells = judged_runs(plan, journal)
    if cell not in cells:
        known = "\n  ".join("|".join(c) for c in cells) or "(none: no run of this folder has a judge record)"
        raise ReviewError(f"no judged runs in cell {'|'.join(cell)}; the folder's judged cells are:\n  {known}")
    return _finish(REGRADE, plan, journal, seed, {cell: cells[cell]})


def _finish(scope: str, plan: dict[str, Any], journal, seed: str, chosen: dict[Cell, list[str]]) -> Sample:
    rubrics = judged_rubrics(plan)
    keys = sorted(k for ks in chosen.values() for k in ks)
    order = Stream(seed, "lrc.review", "rows", scope).shuffled(keys)
    rows: list[Row] = []
    width = max(4, len(str(_row_count(order, journal, rubrics))))
    for run in order:
        rec = journal.runs[run]
        rubric = rubrics[rec["workload"]]
        fact_ids: list[str | None] = fact_ids_of(journal.judges[(run, "primary")]) if rubric.facts else [None]
        for fact in fact_ids:
            rows.append(Row(f"R{len(rows) + 1:0{width}d}", run, rec["workload"], str(rec.get("item", "")), fact))
    sample = Sample(scope, journal.plan_digest, {c: ks for c, ks in chosen.items() if ks}, rows, rubrics=rubrics)
    sample.digest = sample_digest(sample)
    return sample


def _row_count(order: list[str], journal, rubrics: dict[str, RubricShape]) -> int:
    return sum(len(fact_ids_of(journal.judges[(run, "primary")])) if rubrics[journal.runs[run]["workload"]].facts else 1
               for run in order)


def fact_ids_of(judge_record: dict[str, Any]) -> list[str | None]:
    """The checklist fact ids the judge was shown (material.checks), in order, unique."""
    material = judge_record.get("material")
    checks = material.get("checks") if isinstance(material, dict) else None
    ids: list[str | None] = []
    for check in checks if isinstance(checks, list) else []:
        if isinstance(check, dict) and isinstance(check.get("id"), str) and check["id"] not in ids:
            ids.append(check["id"])
    return ids


def _sha(kind: str, value: Any) -> str:
    data = json.dumps(value, sort_keys=True, ensure_ascii=True, separators=(",", ":")).encode("ascii")
    return "sha256:" + hashlib.sha256(f"lrc:{kind}:v1\0".encode() + data).hexdigest()


def sample_digest(sample: Sample) -> str:
    return _sha("review-sample", {"plan": sample.plan_digest, "scope": sample.scope, "runs": sample.runs,
                                  "rows": [[r.row_id, r.run, r.fact_id] for r in sample.rows]})
