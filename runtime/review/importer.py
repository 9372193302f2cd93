"""A graded workbook -> append-only `adjudication` records in the journal.

Refused, with nothing appended, when the workbook is of another plan, when its sample is not
the folder's current spot-check sample nor any cell's full regrade set, when a protected cell
was edited (named), or when a grade is missing or invalid (rows named). Otherwise one record
per run (JUDGE-INTERFACE.md), scope "spot-check" or "regrade", never touching a judge record.
A run that already holds an adjudication from the same workbook bytes and sample is skipped,
so importing the same file twice appends nothing the second time (and an import cut short
completes). A corrected workbook (other bytes) appends new grades: the latest counts.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from typing import Any

from lrc.runtime.review import sample as sampling
from lrc.runtime.review import workbook as wbk
from lrc.runtime.review.rubric import RubricShape
from lrc.runtime.review.sample import ReviewError, Sample

_SHOWN = 10  # rows named in a message before "and N more"


@dataclass
class ImportResult:
    scope: str
    sample_digest: str
    appended: int
    already: int  # runs that already held this workbook's grades
    runs: int


def match_sample(plan: dict[str, Any], journal, seed: str, meta: dict[str, str]) -> Sample:
    """The folder's sample the workbook was exported from, or ReviewError saying why not."""
    if meta.get("format") != str(wbk.WORKBOOK_FORMAT):
        raise ReviewError(f"workbook format {meta.get('format')!r} is not {wbk.WORKBOOK_FORMAT}; export it again")
    if meta.get("plan") != journal.plan_digest:
        raise ReviewError(f"this workbook belongs to another run: plan {meta.get('plan')}, but this folder ran plan "
                          f"{journal.plan_digest}")
    wanted = meta.get("sample")
    current = sampling.spot_check(plan, journal, seed)
    if current.digest == wanted:
        return current
    for cell in sampling.judged_runs(plan, journal):
        full = sampling.regrade(plan, journal, seed, cell)
        if full.digest == wanted:
            return full
    raise ReviewError(f"the workbook's sample ({wanted}) is not this folder's current sample ({current.digest}) nor a cell's "
                      f"full regrade set: runs were judged or added since the export. Export a new workbook")


def parse_grades(model: wbk.WorkbookModel, back: wbk.ReadBack) -> tuple[dict[str, dict[str, Any]], str | None, list[str]]:
    """(row id -> {field: value}, reviewer, problems) from the input cells."""
    grades: dict[str, dict[str, Any]] = {}
    reviewer: str | None = None
    problems: list[str] = []
    for sheet, inp in model.inputs():
        raw = back.cells.get(sheet.title, {}).get((inp.row, inp.col))
        if inp.kind == "name":
            reviewer = wbk.cell_text(raw).strip() or None if raw is not None else None
            continue
        value, problem = _value(inp, raw, sheet.rubric)
        if problem:
            problems.append(f"row {inp.row_id} ({sheet.title} row {inp.row}): {inp.name} {problem}")
        grades.setdefault(inp.row_id or "", {})[inp.name] = value
    return grades, reviewer, problems


def _value(inp: wbk.Input, raw: Any, rubric: RubricShape | None) -> tuple[Any, str | None]:
    if inp.kind == "text":
        return ("" if raw is None else wbk.cell_text(raw if isinstance(raw, str) else str(raw))), None
    if raw is None or (isinstance(raw, str) and not raw.strip()):
        return None, "is missing"
    if inp.kind == "yesno":
        if isinstance(raw, bool):
            return raw, None
        word = str(raw).strip().casefold()
        if word in ("yes", "no", "true", "false"):
            return word in ("yes", "true"), None
        return None, f"must be yes or no, not {wbk.cell_text(raw)[:40]!r}"
    assert rubric is not None
    score: int | None = None
    if isinstance(raw, int) and not isinstance(raw, bool):
        score = raw
    elif isinstance(raw, (float, str)) and not isinstance(raw, bool):
        text = str(raw).strip()
        try:
            # the whole text or nothing: cut to 40 characters first, "4" followed by 40 spaces and
            # "not sure, maybe 2" was read as 4, and so was 4.000...0001
            number = Decimal(text) if len(text) <= 40 else Decimal("NaN")
            # range first: int() of "1e999999" would build a million-digit integer
            if number.is_finite() and rubric.scale_min <= number <= rubric.scale_max and number == number.to_integral_value():
                score = int(number)
        except (InvalidOperation, ValueError):
            score = None
    if score is None or not rubric.scale_min <= score <= rubric.scale_max:
        return None, f"must be a whole number from {rubric.scale_min} to {rubric.scale_max}, not {wbk.cell_text(raw)[:40]!r}"
    return score, None


def judgments(sample: Sample, grades: dict[str, dict[str, Any]]) -> tuple[dict[str, dict[str, Any]], list[str]]:
    """run key -> the human judgment (the rubric's answer shape), and schema problems (rows named)."""
    import jsonschema

    out: dict[str, dict[str, Any]] = {}
    rows_of: dict[str, list[str]] = {}
    for row in sample.rows:
        rubric = sample.rubrics[row.workload]
        g = grades.get(row.row_id, {})
        rows_of.setdefault(row.run, []).append(row.row_id)
        if rubric.facts:
            fact = {"id": row.fact_id, "present": g.get("present")}
            fact.update({f: g.get(f, "") for f in rubric.text_fields})
            out.setdefault(row.run, {"facts": []})["facts"].append(fact)
        else:
            out[row.run] = {**{c: g.get(c) for c in rubric.criteria}, **{f: g.get(f, "") for f in rubric.text_fields}}
    problems = []
    workload_of = {row.run: row.workload for row in sample.rows}
    for run, judgment in sorted(out.items(), key=lambda kv: rows_of[kv[0]][0]):
        rubric = sample.rubrics[workload_of[run]]
        errors = sorted(jsonschema.Draft202012Validator(rubric.schema).iter_errors(judgment), key=lambda e: list(e.path))
        if errors:
            where = "/".join(str(p) for p in errors[0].path) or "(the judgment)"
            problems.append(f"row(s) {', '.join(rows_of[run])}: not a valid {rubric.ref} judgment at {where}: {errors[0].message[:200]}")
    return out, problems


def _shown(problems: list[str]) -> str:
    more = f"\n  … and {len(problems) - _SHOWN} more" if len(problems) > _SHOWN else ""
    return "\n  " + "\n  ".join(problems[:_SHOWN]) + more


def prepare(plan: dict[str, Any], journal, seed: str, data: bytes) -> tuple[Sample, list[dict[str, Any]]]:
    """Every check, then the records to append (not yet appended); ReviewError on any problem."""
    back = wbk.read(data)
    sample = match_sample(plan, journal, seed, back.meta)
    model = wbk.build(plan, journal, sample)
    edited = wbk.edited_cells(model, back)
    if edited:
        raise ReviewError(f"protected cells of the workbook were edited ({len(edited)}); nothing was imported:" + _shown(edited))
    grades, reviewer, problems = parse_grades(model, back)
    if problems:
        raise ReviewError(f"{len(problems)} grade(s) missing or invalid; nothing was imported:" + _shown(problems))
    human, problems = judgments(sample, grades)
    if problems:
        raise ReviewError(f"{len(problems)} judgment(s) invalid against the rubric; nothing was imported:" + _shown(problems))
    sha = wbk.workbook_sha256(data)
    records = []
    for run in sorted(human):
        rubric = sample.rubrics[journal.runs[run]["workload"]]
        records.append({"type": "adjudication", "run": run, "rubric": rubric.ref, "scope": sample.scope,
                        "sample_digest": sample.digest, "workbook_sha256": sha, "judgment": human[run], "reviewer": reviewer})
    return sample, records


def import_workbook(plan: dict[str, Any], journal, seed: str, data: bytes) -> ImportResult:
    """Check the workbook and append its grades (group commit: one fsync per batch)."""
    sample, records = prepare(plan, journal, seed, data)
    fresh = [r for r in records if not any(a.get("workbook_sha256") == r["workbook_sha256"] and a.get("sample_digest") == r["sample_digest"]
                                          and a.get("scope") == r["scope"] for a in journal.adjudications.get(r["run"], []))]
    if fresh:
        async def append_all() -> None:
            acks = [journal.submit(rec) for rec in fresh]
            await journal.drain()
            for ack in acks:
                await ack

        asyncio.run(append_all())
    return ImportResult(sample.scope, sample.digest, len(fresh), len(records) - len(fresh), len(records))
