"""An edition's judges as callable model entries, and the family rule of seed 001 §5.4.

The lock keeps the judge where the edition declares it (`edition.judge`, priced in
`edition.pricing`); the runtime calls a judge exactly like a model (litellm, retries,
journal), so it needs the same entry shape as `plan["models"]`.

Family rule: a model's family is its declared `family`, else its provider prefix (`openai`
of `openai/gpt-4.1`). When a model under evaluation (a scored role) shares the judge's
family, or the edition lists it in `judge.same_family_as`, the report discloses it and a
second judge grades a seeded sample of that workload's judged runs. The embedded reference
judge `lrc/judge` is deterministic code that reads the answer key, not a model: it has no
family and can favour no one.
"""

from __future__ import annotations

from typing import Any, Mapping

REFERENCE_JUDGE = "lrc/judge"
JUDGED_KINDS = ("hybrid", "judged")
SCORED_ROLES = ("flagship", "candidate", "baseline")
ROLES = ("primary", "second")


def judged_workloads(plan: Mapping[str, Any]) -> list[str]:
    return sorted(ref for ref, wl in plan["workloads"].items() if wl["spec"]["grading"]["kind"] in JUDGED_KINDS)


def judge_block(plan: Mapping[str, Any]) -> dict[str, Any] | None:
    return plan["edition"]["spec"].get("judge")


def judges(plan: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """role ("primary", "second") -> a model entry like plan["models"]' (id, provider, reference, price, sampling, role)."""
    block = judge_block(plan)
    if not block:
        return {}
    pricing = plan["edition"]["spec"]["pricing"]
    out: dict[str, dict[str, Any]] = {}
    for role, field in (("primary", "model"), ("second", "second_model")):
        model_id = block.get(field)
        if not model_id:
            continue
        out[role] = {"id": model_id, "role": "judge", "provider": model_id.split("/", 1)[0],
                     "reference": model_id == REFERENCE_JUDGE, "price": pricing[model_id],
                     "sampling": dict(block.get("sampling") or {})}
    return out


def callable_models(plan: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """Every model an execute may call: the plan's models and its judges (one entry per id)."""
    out = dict(plan["models"])
    for entry in judges(plan).values():
        out.setdefault(entry["id"], entry)
    return out


def family(model_id: str, declared: str | None = None) -> str:
    return declared or model_id.split("/", 1)[0]


def same_family(plan: Mapping[str, Any]) -> list[str]:
    """Scored models of the primary judge's family (declared or by provider prefix), sorted."""
    block = judge_block(plan)
    if not block or str(block.get("model", "")).startswith("lrc/"):  # lrc/judge has no family; any other lrc/ id is refused (LRC3001)
        return []
    judge_family = family(block["model"], block.get("family"))
    declared = set(block.get("same_family_as") or [])
    out = []
    for m in plan["edition"]["spec"]["models"]:
        if m["role"] not in SCORED_ROLES:
            continue
        if m["id"] in declared or family(m["id"], m.get("family")) == judge_family:
            out.append(m["id"])
    return sorted(out)


def problems(plan: Mapping[str, Any]) -> list[str]:
    """Why this plan's judged workloads cannot be graded honestly (empty when they can)."""
    judged = judged_workloads(plan)
    if not judged:
        return []
    block = judge_block(plan)
    if not block or not block.get("model"):
        return [f"{', '.join(judged)} {'is' if len(judged) == 1 else 'are'} graded by a judge but the edition fixes no judge "
                f"(LRC6103): no result of {'it' if len(judged) == 1 else 'them'} could be a pass"]
    if same_family(plan) and not block.get("second_model"):
        return [f"the judge {block['model']} is of the family of {', '.join(same_family(plan))}, under evaluation, and the "
                f"edition fixes no second judge for the sensitivity check (seed §5.4, LRC6105)"]
    return []
