"""Per cell, the state of its human review, from the plan and the journal alone (the report's input).

For each judged cell: the spot-check sample's judgment rows, how many hold a human grade, how
many of those the human graded differently from the primary judge (per run for a criteria
rubric, per fact for a facts rubric: see `rubric`), the disagreement rate, and the flags:

- provisional: some sampled run has no human grade yet, so the cell's judged results are
  provisional on the rate card;
- regrade_required: disagreement rate > the edition's `human_review.disagreement_threshold`;
- regraded: every judged run of the cell has a "regrade" adjudication; `human_judgments`
  then holds, per run, the latest human judgment, which replaces the judge's (the integrator
  turns it into a verdict with the workload's `judge_results`, like the judge's).

The human grade of a sampled run is its latest "spot-check" adjudication, else its latest
"regrade" one (a regrade covers the sample too).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from lrc.runtime.review import sample as sampling
from lrc.runtime.review.rubric import RubricShape, row_verdict
from lrc.runtime.review.sample import Cell

METHODOLOGY_NOTE = (
    "Manual regrade required: in the human spot-check of this cell, reviewers disagreed with the judge on "
    "{disagreements} of {imported} sampled judgments ({rate}), above the edition's disagreement threshold of "
    "{threshold}. Under the LedgerRate methodology (seed §5.3) the judge's grades for this cell are not trusted: "
    "every judged run of the cell is regraded by a human (`lrc review export --all \"{cell}\"`, then `lrc review "
    "import`), and the human grades replace the judge's.")
REGRADED_NOTE = (
    "Regraded by humans: the spot-check found {disagreements} of {imported} judgments ({rate}) in disagreement with "
    "the judge, above the threshold of {threshold}; every judged run of this cell was then graded by a human and "
    "those grades replace the judge's.")
PROVISIONAL_NOTE = ("Provisional: the human spot-check of this cell's judged runs ({sampled} of {judged} runs) is not "
                    "imported yet.")


@dataclass
class CellReview:
    cell: Cell
    rubric: str
    judged: int  # judged runs of the cell
    sampled_runs: int
    sampled_judgments: int  # judgment rows of the sample (runs, or facts)
    imported: int  # of those, rows with a human grade
    disagreements: int
    disagreement_rate: Decimal | None  # None while nothing is imported
    threshold: Decimal
    provisional: bool
    regrade_required: bool
    regraded: bool
    human_judgments: dict[str, dict[str, Any]] = field(default_factory=dict)

    def note(self) -> str | None:
        """The methodology note the rate card shows for this cell (None when nothing is to be said)."""
        values = {"disagreements": self.disagreements, "imported": self.imported, "threshold": _pct(self.threshold),
                  "rate": _pct(self.disagreement_rate) if self.disagreement_rate is not None else "n/a",
                  "cell": "|".join(self.cell), "sampled": self.sampled_runs, "judged": self.judged}
        if self.regraded and self.regrade_required:
            return REGRADED_NOTE.format(**values)
        if self.regrade_required:
            return METHODOLOGY_NOTE.format(**values)
        if self.provisional:
            return PROVISIONAL_NOTE.format(**values)
        return None

    def as_json(self) -> dict[str, Any]:
        """For summary.json (Decimals as strings, no judgments)."""
        return {"workload": self.cell[0], "model": self.cell[1], "system": self.cell[2], "rubric": self.rubric,
                "judged_runs": self.judged, "sampled_runs": self.sampled_runs, "sampled_judgments": self.sampled_judgments,
                "imported": self.imported, "disagreements": self.disagreements,
                "disagreement_rate": None if self.disagreement_rate is None else str(self.disagreement_rate),
                "disagreement_threshold": str(self.threshold), "provisional": self.provisional,
                "regrade_required": self.regrade_required, "regraded": self.regraded, "note": self.note()}


def _pct(value: Decimal) -> str:
    return f"{(value * 100).quantize(Decimal('0.1'))}%"


def human_grade(journal, run: str) -> dict[str, Any] | None:
    """The adjudication that stands for a sampled run: latest spot-check, else latest regrade."""
    records = journal.adjudications.get(run, [])
    for scope in (sampling.SPOT_CHECK, sampling.REGRADE):
        scoped = [a for a in records if a.get("scope") == scope]
        if scoped:
            return scoped[-1]
    return None


def recorded_adjudication_problem(plan: dict[str, Any], journal) -> str | None:
    """Why an `adjudication` record in the journal could not have been written by `lrc review
    import` for this plan (None: every one could). A regrade's human judgments stand for the
    judge's in the published verdicts: a judgment the rubric's answer schema refuses (a missing
    justification, a list where text goes) was counted as a human pass, and a cell's
    calibration and pass rate changed without a word. The import checks each judgment against
    the schema; a record in the journal is checked again here, with its run and its rubric."""
    if not journal.adjudications:
        return None
    import jsonschema

    from lrc.runtime.review.rubric import judged_rubrics

    rubrics = judged_rubrics(plan)
    validators: dict[str, Any] = {}
    for run, made in sorted(journal.adjudications.items()):
        what = f"the adjudication of run {run[:200]!r}"
        graded = journal.runs.get(run)
        rubric = rubrics.get(graded.get("workload")) if graded is not None else None
        if rubric is None:
            return f"{what}: this folder holds no judged run of that key"
        validator = validators.get(rubric.ref)
        if validator is None:
            validator = validators[rubric.ref] = jsonschema.Draft202012Validator(rubric.schema)
        for rec in made:
            if rec.get("rubric") != rubric.ref:
                return f"{what} names rubric {str(rec.get('rubric'))[:80]!r}; the run's workload is judged with {rubric.ref!r}"
            try:
                error = jsonschema.exceptions.best_match(validator.iter_errors(rec["judgment"]))
            except RecursionError:
                return f"{what} holds a judgment nested too deeply to be one of {rubric.ref}"
            if error is not None:
                where = "/".join(str(p) for p in error.path) or "(the judgment)"
                return f"{what} is not a valid {rubric.ref} judgment at {where}: {error.message[:200]}"
    return None


def review_status(plan: dict[str, Any], journal, seed: str) -> dict[Cell, CellReview]:
    """cell -> its review state, for every cell with judged runs ({} for an edition with no judge step)."""
    judged = sampling.judged_runs(plan, journal)
    if not judged:
        return {}
    spot = sampling.spot_check(plan, journal, seed)
    threshold = Decimal(plan["edition"]["spec"]["human_review"]["disagreement_threshold"])
    rows_of: dict[str, list] = {}
    for row in spot.rows:
        rows_of.setdefault(row.run, []).append(row)
    out: dict[Cell, CellReview] = {}
    for cell, runs in judged.items():
        rubric: RubricShape = spot.rubrics[cell[0]]
        sampled = spot.cells.get(cell, [])
        rows = [r for run in sampled for r in rows_of.get(run, [])]
        imported = disagreements = 0
        graded_runs = 0
        for run in sampled:
            grade = human_grade(journal, run)
            run_rows = rows_of.get(run, [])
            if grade is None:
                continue
            graded_runs += 1
            judge = journal.judges[(run, "primary")].get("judgment")
            for row in run_rows:
                imported += 1
                if row_verdict(grade.get("judgment"), rubric, row.fact_id) != row_verdict(judge, rubric, row.fact_id):
                    disagreements += 1
        rate = Decimal(disagreements) / Decimal(imported) if imported else None
        regrades = {run: [a for a in journal.adjudications.get(run, []) if a.get("scope") == sampling.REGRADE] for run in runs}
        regraded = all(regrades[run] for run in runs)
        out[cell] = CellReview(
            cell=cell, rubric=rubric.ref, judged=len(runs), sampled_runs=len(sampled), sampled_judgments=len(rows),
            imported=imported, disagreements=disagreements, disagreement_rate=rate, threshold=threshold,
            # (a sampled run with no row -- a facts run shown no checklist -- has nothing to grade)
            provisional=graded_runs < sum(1 for run in sampled if rows_of.get(run, [])), regrade_required=rate is not None and rate > threshold,
            regraded=regraded, human_judgments={run: regrades[run][-1]["judgment"] for run in runs} if regraded else {})
    return out
