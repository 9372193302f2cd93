"""A run folder with judged runs for the review tests and benchmarks/review_workbook.py.

The demo lock is real (compiled, verified); the hybrid workloads it does not hold yet are
added to a copy of its plan: generate.variance-commentary.v1 with the repository's rubric
specs/rubrics/variance-commentary.yaml (a criteria rubric), and synthesize.board-brief.v1 with
a facts rubric of the JUDGE-INTERFACE.md answer format. The journal holds synthetic run and
primary judge records in the interface's format.
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

from ruamel.yaml import YAML

from support import REPO

VARIANCE, BRIEF = "generate.variance-commentary.v1", "synthesize.board-brief.v1"
SYSTEM = "single-shot"
FACT_IDS = [f"F{n:02d}" for n in range(1, 21)]

BRIEF_RUBRIC = {
    "kind": "rubric", "id": "board-brief", "version": 1, "title": "Board brief — checklist facts",
    "audience": "judge-and-human",
    "text": "For each checklist fact, answer whether the executive brief states it (present) and quote the evidence.",
    "criteria": [{"id": "facts_present", "description": "Each checklist fact is stated in the brief."}],
    "scale": {"min": 0, "max": 1}, "pass_threshold": 1,
    "answer_format": {"invalid_bucket": "invalid", "schema": {
        "type": "object", "additionalProperties": False, "required": ["facts"],
        "properties": {"facts": {"type": "array", "minItems": 1, "items": {
            "type": "object", "additionalProperties": False, "required": ["id", "present", "evidence"],
            "properties": {"id": {"type": "string", "pattern": "^F[0-9]{2}$"}, "present": {"type": "boolean"},
                           "evidence": {"type": "string", "maxLength": 400}}}}}}},
}


def demo_lock() -> dict[str, Any]:
    from lrc.runtime.execute import load_verified

    return load_verified(REPO / "generated" / "demo" / "plan.lock")


def hybrid_lock(brief: bool = True, rate: str = "0.20", threshold: str = "0.10") -> dict[str, Any]:
    """The demo lock with the hybrid workloads, their rubrics and the edition's human_review added
    (and a root digest of its own: the journal of the test folder names it)."""
    lock = copy.deepcopy(demo_lock())
    plan = lock["plan"]
    variance = YAML(typ="safe", pure=True).load((REPO / "specs" / "rubrics" / "variance-commentary.yaml").read_text(encoding="utf-8"))
    plan["rubrics"] = {"variance-commentary.v1": {"ref": "variance-commentary.v1", "digest": "sha256:test", "source": "specs/rubrics/variance-commentary.yaml", "spec": variance}}
    plan["workloads"][VARIANCE] = {"ref": VARIANCE, "spec": {"grading": {"kind": "hybrid", "judge": {"rubric": "variance-commentary.v1", "params": {}}}}}
    if brief:
        plan["rubrics"]["board-brief.v1"] = {"ref": "board-brief.v1", "digest": "sha256:test", "source": "test", "spec": BRIEF_RUBRIC}
        plan["workloads"][BRIEF] = {"ref": BRIEF, "spec": {"grading": {"kind": "hybrid", "judge": {"rubric": "board-brief.v1",
                                                                                                    "params": {"min_fact_share": "0.90"}}}}}
    plan["edition"]["spec"]["human_review"] = {"spot_check_rate": rate, "disagreement_threshold": threshold}
    # The review folders hold the calibration models and the baseline (the counts below are
    # theirs); the demo's priced reference candidates add nothing to what review is about.
    for model in ("lrc/careful", "lrc/cheap"):
        plan["models"].pop(model, None)
        plan["edition"]["spec"]["models"] = [m for m in plan["edition"]["spec"]["models"] if m["id"] != model]
    lock["root_digest"] = "sha256:" + "5" * 64
    return lock


def variance_output(model: str, item: str) -> str:
    # hostile bits a workbook must keep as text: a formula, control characters, CR line ends
    return (f"Top drivers for {item}:\r\n1. Revenue +$120,000 (+8.0%): price increase per note 2.\r"
            f"2. COGS -$45,500: freight.\n=HYPERLINK(\"http://x\") \x07 tab\there _x0041_")


_WORDS = ("revenue", "margin", "freight", "budget", "variance", "favourable", "adverse", "timing", "volume", "price",
          "headcount", "accrual", "1,250", "(3.4%)", "$45.5k", "Q3", "supplier", "rebate", "FX", "forecast")


def _filler(name: str, chars: int) -> str:
    """`chars` characters of seeded prose-like text (compresses like real commentary, unlike "xxxx")."""
    from lrc.runtime.checks.rng import Stream

    stream, words, size = Stream("filler", name), [], 0
    while size < chars:
        word = stream.choice(_WORDS)
        words.append(word)
        size += len(word) + 1
    return (" " + " ".join(words))[:chars] if chars else ""


def build_folder(out: Path, lock: dict[str, Any], items: int = 15, models: list[str] | None = None,
                 brief_items: int = 5, judge_scores=None, long_output: int = 0, shuffle: str | None = None) -> dict[str, str]:
    """Write out/journal.jsonl: a run + primary judge record per (workload, model, item); run key -> model."""
    from lrc.runtime.journal import Journal, run_key

    plan = lock["plan"]
    models = models or sorted(m for m in plan["models"])
    journal = Journal(out / "journal.jsonl", lock["root_digest"], plan["edition"]["ref"])
    keys: dict[str, str] = {}
    records = []
    for workload, n in ((VARIANCE, items), (BRIEF, brief_items if BRIEF in plan["workloads"] else 0)):
        for model in models:
            for i in range(n):
                item = f"{workload.split('.')[1][:2]}-{i:03d}"
                key = run_key(workload, model, SYSTEM, item, 1)
                keys[key] = model
                records.append({"type": "run", "run": key, "workload": workload, "model": model, "system": SYSTEM, "item": item,
                                "item_index": i, "repetition": 1, "outcome": "answered", "steps": 1, "answer_text": "{}",
                                "answer": {}, "submitted": True, "transcript": [], "events": []})
                if workload == VARIANCE:
                    score = judge_scores(model, i) if judge_scores else (5 if i % 3 else 3)
                    judgment = {"clarity": score, "cause_attribution": score, "justification": "JUDGE-VERDICT-TEXT"}
                    output = variance_output(model, item) + _filler(f"{model}|{item}", long_output)
                    material = {"output": output, "source": f"line | budget | actual\nRevenue | 1,500,000 | 1,620,000 ({item})", "checks": []}
                else:
                    judgment = {"facts": [{"id": f, "present": (k + i) % 4 != 0, "evidence": "JUDGE-EVIDENCE-TEXT"} for k, f in enumerate(FACT_IDS)]}
                    material = {"output": f"Executive brief {item}: revenue up 8%.", "source": "",
                                "checks": [{"id": f, "text": f"The brief states fact {f} of the pack"} for f in FACT_IDS]}
                records.append({"type": "judge", "run": key, "role": "primary", "model": "lrc/judge", "rubric": plan["workloads"][workload]["spec"]["grading"]["judge"]["rubric"],
                                "request": "sha256:" + "0" * 64, "material": material,
                                "response": {"message": {"role": "assistant", "content": "{}"}, "finish_reason": "stop", "refusal": None, "invalid": None},
                                "judgment": judgment, "invalid_judgment": None, "usage": {}, "attempts": 1, "latency_ms": 1, "queue_ms": 0,
                                "infra_failures": []})

    if shuffle is not None:  # the same records in another journal order
        from lrc.runtime.checks.rng import Stream

        records = Stream(shuffle, "order").shuffled(records)

    import asyncio

    async def write_all() -> None:
        for rec in records:
            journal.submit(rec)
        await journal.drain()

    asyncio.run(write_all())
    journal.close()
    return keys
