"""What a rubric asks a reviewer, and how a judgment (the judge's or a human's) becomes verdicts.

Two shapes exist (JUDGE-INTERFACE.md): a *criteria* rubric (variance-commentary) scores each
criterion on an integer scale and passes when every criterion reaches `pass_threshold`; a
*facts* rubric (board-brief) answers `{"facts": [{"id", "present", "evidence"}]}`, one entry
per checklist fact. A facts rubric is recognised by its answer schema having a `facts` array,
so a new rubric of either shape needs no code here.

Judge-human agreement is compared per *judgment row*: per run for a criteria rubric (pass iff
every criterion >= pass_threshold), per fact for a facts rubric. A judge record without a
valid judgment (an "invalid judgment") is never a pass and never finds a fact, the same rule
the grading applies, so a human who passes it disagrees with it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class RubricShape:
    ref: str
    text: str
    facts: bool  # one row per fact (board-brief) rather than one row per run
    criteria: tuple[str, ...]  # criterion ids (criteria rubrics)
    scale_min: int
    scale_max: int
    pass_threshold: int
    text_fields: tuple[str, ...]  # free-text answer fields (justification; evidence for facts)
    schema: dict[str, Any]


def shape(rubric_entry: dict[str, Any]) -> RubricShape:
    """The shape of a plan's rubric entry (`plan["rubrics"][ref]`: {"ref", "spec", ...})."""
    spec = rubric_entry["spec"]
    schema = spec["answer_format"]["schema"]
    props = schema.get("properties", {}) if isinstance(schema, dict) else {}
    facts_prop = props.get("facts")
    is_facts = isinstance(facts_prop, dict) and facts_prop.get("type") == "array"
    criteria = tuple(c["id"] for c in spec["criteria"])
    if is_facts:
        item_props = (facts_prop.get("items") or {}).get("properties", {})
        text_fields = tuple(k for k in sorted(item_props) if k not in ("id", "present")
                            and item_props[k].get("type") == "string")
    else:
        text_fields = tuple(k for k in sorted(props) if k not in criteria and props[k].get("type") == "string")
    return RubricShape(ref=rubric_entry["ref"], text=spec["text"], facts=is_facts, criteria=criteria,
                       scale_min=int(spec["scale"]["min"]), scale_max=int(spec["scale"]["max"]),
                       pass_threshold=int(spec["pass_threshold"]), text_fields=text_fields, schema=schema)


def _score(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def run_passes(judgment: Any, rubric: RubricShape) -> bool:
    """A criteria judgment's verdict: every criterion at or above the threshold (anything
    else -- None, an invalid judgment, a missing or non-integer score -- is not a pass)."""
    if not isinstance(judgment, dict):
        return False
    scores = [_score(judgment.get(c)) for c in rubric.criteria]
    return all(s is not None and s >= rubric.pass_threshold for s in scores)


def facts_present(judgment: Any) -> dict[str, bool]:
    """fact id -> present, from a facts judgment (malformed entries count as not present)."""
    found: dict[str, bool] = {}
    facts = judgment.get("facts") if isinstance(judgment, dict) else None
    if isinstance(facts, list):
        for entry in facts:
            if isinstance(entry, dict) and isinstance(entry.get("id"), str):
                found[entry["id"]] = entry.get("present") is True
    return found


def row_verdict(judgment: Any, rubric: RubricShape, fact_id: str | None) -> bool:
    """The verdict of one judgment row: the run's pass (criteria) or the fact's presence."""
    if rubric.facts:
        return facts_present(judgment).get(fact_id or "", False)
    return run_passes(judgment, rubric)


def judged_rubrics(plan: dict[str, Any]) -> dict[str, RubricShape]:
    """workload ref -> its rubric's shape, for every workload of the plan that has a judge step."""
    out: dict[str, RubricShape] = {}
    rubrics = plan.get("rubrics") or {}
    for wref, wl in sorted(plan["workloads"].items()):
        judge = wl["spec"].get("grading", {}).get("judge")
        if judge and judge.get("rubric") in rubrics:
            out[wref] = shape(rubrics[judge["rubric"]])
    return out
