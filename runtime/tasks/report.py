"""A task run's files in the run folder, its record for the cells, and the tasks' part of the
summary and the rate card — all rebuilt from the journal alone.

Why its own module: seed 000 asks for a run manifest, an execution trace (tool calls, file
mutations, stop decisions) and an evaluation record per run, and for results that always
carry their denominator and interval; a task is reported as its own cell (task × model ×
system), never folded into a workload's rate line (a task has no rate-card volume: it reports
a pass rate, cost and cost per success). Per run, in
OUT/runs/<task ref>/<model>/<system>/<task id>.r<N>/:

- `manifest.json`: task (ref, digest, task hash, split), system, model, prompt and tool-schema
  digests (the task prompt's as the run was sent it), the fingerprints of the generator(s),
  validators, system and analysis code, the run's budget (`budget`: the task's and the system's,
  the smaller of each) and the task's own (`task_budget`);
- `trace.json`: messages, calls (usage, attempts), loop events, every file mutation, the stop
  decision (outcome, budget used, the limit exceeded), the saved files' sha256;
- `evaluation.json`: every validator result, verdict, failure categories (the first is the
  primary one), final disposition, and the human-review rubric (not run in this release);
- `output/<file>`: the files as the run saved them (decoded from the journal).

No wall-clock figure is written: two executes of one plan write the same bytes.
"""

from __future__ import annotations

import hashlib
from decimal import Decimal
from pathlib import Path
from typing import Any, Callable

from lrc.runtime.lock import tasks as locktasks
from lrc.runtime.lock.canonical import digest
from lrc.runtime.pricing import call_cost, decimal_str, price_for
from lrc.runtime.failures import categorize
from lrc.runtime.report.aggregate import reliability_fields
from lrc.runtime.report.categories import evaluation_fields
from lrc.runtime.report.labels import model_label
from lrc.runtime.report.ratecard import pass_text
from lrc.runtime.tasks import grade as task_grade
from lrc.runtime.tasks import planning, runner
from lrc.runtime.tasks import reference as _reference  # noqa: F401 - the reference policies are in the analysis fingerprint too

DISPOSITION = {"pass": "passed", "partial": "partial (counts as not passed)", "fail": "failed"}


def is_task(plan: dict[str, Any], ref: str) -> bool:
    return ref in locktasks.tasks(plan)


def _sha(data: bytes) -> str:
    return "sha256:" + hashlib.sha256(data).hexdigest()


def prompt_digest(item: Any, system: dict[str, Any]) -> str:
    """The digest of the task messages a run on `system` is sent: they show the run's budget
    (`runner.effective_budget`), so it is the system's as well as the task's."""
    return digest("task-prompt", runner.task_messages(item, runner.effective_budget(item.context["budget"], system)))


def tool_schema_digest(item: Any) -> str:
    return digest("tool-schemas", runner.tool_schemas(item.context["permitted_tools"]))


def stage_prompt_digests(system: dict[str, Any]) -> dict[str, str]:
    """The orchestrated stages' template digests (as in the lock's release manifest)."""
    from lrc.runtime.lock.canonical import digest_text

    return {f"stage:{stage}": digest_text("prompt-template", entry["prompt"]) for stage, entry in sorted((system.get("workflow") or {}).items())}


def write_runs(lock: dict[str, Any], plan: dict[str, Any], runs: list, items: dict[str, list], journal, out: Path,
               calls_by_run: dict[str, list[dict[str, Any]]], common: dict[str, Any],
               put: Callable[[Path, dict[str, Any]], None], put_bytes: Callable[[Path, bytes], None],
               slug: Callable[[str], str]) -> tuple[list[dict[str, Any]], int]:
    """The records (for `aggregate`) of the task runs among `runs`, and how many are excluded
    (infrastructure); writes each graded run's files. `common`: software versions, folder
    coverage, the operation lookup, the failure tally, the journal and the task-grade memo
    (`{"software", "folder_coverage", "operation_of", "tally", "journal", "grades"}`)."""
    prices = {m: e["price"] for m, e in plan["models"].items()}
    records: list[dict[str, Any]] = []
    incomplete = 0
    for spec in runs:
        if not is_task(plan, spec.workload):
            continue
        entry = locktasks.tasks(plan)[spec.workload]
        item = items[spec.workload][spec.item_index]
        made = spec.key in journal.runs or spec.key in journal.exhausted
        calls = calls_by_run.get(spec.key, []) if made else []
        price = price_for(prices, spec.model)
        cost = sum((call_cost(dict(c["usage"]), price) for c in calls), Decimal(0))
        usage = {"input": 0, "cached_input": 0, "cache_write": 0, "output": 0, "reasoning": 0, "calls": len(calls)}
        for c in calls:
            for k in ("input", "cached_input", "cache_write", "output", "reasoning"):
                usage[k] += int(c["usage"].get(k, 0))
        billed, _judge = journal.billed_in_exclusions(spec.key)  # tasks are not judged
        if billed:  # failed attempts of calls that ran out of retries: paid, so in the run's cost
            cost += call_cost(billed, price)
            for k, n in billed.items():
                usage[k] += n
        retries = sum(max(0, c["attempts"] - 1) for c in calls) + sum(len(x["failures"]) for x in journal.exhaustions.get(spec.key, []))
        base = {"workload": spec.workload, "model": spec.model, "system": spec.system, "item": spec.item_id,
                "item_index": spec.item_index, "repetition": spec.repetition, "usage": usage, "cost_usd": decimal_str(cost),
                "infra_retries": retries}
        run = journal.runs.get(spec.key)
        if run is None:
            if spec.key in journal.exhausted:
                incomplete += 1
                records.append({**base, "status": "infra_excluded", "verdict": None, "outcome": "infra_error", "steps": len(calls)})
            continue
        system_spec = plan["systems"][planning.system_ref(plan, spec.system)]
        # What the run was offered: the task's permitted tools and the system's own stage tools
        # (orchestrated: record_plan, validate), so using the harness is never "unpermitted".
        offered = [*item.context["permitted_tools"], *sorted((system_spec["spec"].get("stage_tools") or {}))]
        outputs = task_grade.outputs_of(run)  # decoded once: for the grade and the run's files
        evaluation = categorize(common["grades"].grade(item, run, outputs), run, plan, system=system_spec, permitted_tools=offered)
        common["tally"].add((spec.workload, spec.model, spec.system), evaluation, journal, spec.key)
        records.append({**base, "status": "graded", "verdict": evaluation["verdict"], "outcome": evaluation["outcome"],
                        "steps": run["steps"], "budget_exceeded": int(bool((run.get("task") or {}).get("exceeded"))),
                        # For the paired comparison's categories removed/added (lrc.runtime.report.paired).
                        "failure_categories": list(evaluation.get("failure_categories") or []),
                        **({"failure": evaluation["failure"]} if evaluation.get("failure") else {})})
        folder = out / "runs" / spec.workload / slug(spec.model) / spec.system / f"{spec.item_id}.r{spec.repetition}"
        _write_run(lock, plan, entry, item, spec, run, outputs, calls, cost, evaluation, folder, common, put, put_bytes)
    return records, incomplete


def _write_run(lock, plan, entry, item, spec, run, outputs, calls, cost, evaluation, folder: Path, common, put, put_bytes) -> None:
    model = plan["models"][spec.model]
    system_ref = planning.system_ref(plan, spec.system)
    system = plan["systems"][system_ref]
    generators = sorted({i["generator"] for i in entry["inputs"] if i.get("origin") == "generated"})
    code_refs = sorted({*generators, entry["validators"]["ref"], system["spec"]["implementation"],
                        plan["edition"]["spec"]["analysis"], *([r for r in plan["code"] if r.startswith("lrc.reference-models.")]
                                                                  if model.get("reference") else [])})
    task_state = run.get("task") or {}
    put(folder / "manifest.json", {
        "trace_format": 1, "plan_digest": lock["root_digest"], "edition": plan["edition"]["ref"],
        "task_id": spec.item_id,
        "task": {"ref": entry["ref"], "digest": entry["digest"], "task_hash": entry["task_hash"], "split": entry["split"]},
        "repetition": spec.repetition,
        "system": {"ref": system_ref, "digest": system["digest"], "config": system["spec"]},
        "model": {"id": spec.model, "role": model["role"], "sampling": model.get("sampling", {}), "provider": model["provider"],
                  "api_version": sorted({c.get("response_model") or spec.model for c in calls})},
        "prompts": {"task": prompt_digest(item, system["spec"]), **stage_prompt_digests(system["spec"])},
        "tool_schema_digest": tool_schema_digest(item),
        "permitted_tools": item.context["permitted_tools"],
        "budget": runner.effective_budget(item.context["budget"], system["spec"]),
        "task_budget": item.context["budget"],
        "code": {ref: plan["code"][ref]["fingerprint"] for ref in code_refs if ref in plan["code"]},
        "validator_commit": entry["validators"],
        "seed_commitment": plan["seed"]["commitment"],
        "software": common["software"],
        "operation": common["operation_of"](spec.key),
        "folder_coverage": common["folder_coverage"],
    })
    put(folder / "trace.json", {
        "trace_format": 1,
        "messages": run["transcript"],
        "calls": [{"step": c["step"], "request_digest": c["request"], "finish_reason": c["response"]["finish_reason"],
                   "refusal": c["response"]["refusal"], "usage": c["usage"], "attempts": c["attempts"],
                   "infra_failures": c["infra_failures"]} for c in calls],
        "events": run["events"],
        "workflow": run.get("workflow"),
        "file_mutations": task_state.get("mutations", []),
        "stop": {"outcome": run["outcome"], "steps": run["steps"], "submitted_through_tool": run["submitted"],
                 "budget_used": task_state.get("used"), "budget_exceeded": task_state.get("exceeded")},
        "outputs": {name: {"sha256": _sha(data), "size": len(data)} for name, data in outputs.items()},
        "cost_usd": decimal_str(cost),
    })
    put(folder / "evaluation.json", {
        "trace_format": 1,
        "validators": evaluation["results"],
        "verdict": evaluation["verdict"],
        **evaluation_fields(evaluation, common["journal"], spec.key),
        "primary_failure_category": evaluation["failure"]["primary"] if evaluation["failure"] else None,
        "final_disposition": DISPOSITION[evaluation["verdict"]],
        "human_review": f"not run: the rubric {entry['spec']['review_rubric']} is published with the task; "
                        f"reviews of task artifacts are not part of this release",
    })
    for name, data in outputs.items():
        put_bytes(folder / "output" / name, data)


def summary_block(plan: dict[str, Any], cells, records: list[dict[str, Any]]) -> dict[str, Any]:
    """summary.json's `tasks`: the split manifest, the test tasks' hashes, and one cell per
    task × model × system (passes/n with its Wilson interval, cost, cost per success)."""
    budget = {}
    for r in records:
        key = (r["workload"], r["model"], r["system"])
        budget[key] = budget.get(key, 0) + int(r.get("budget_exceeded", 0))
    out_cells = []
    for c in cells.iter_rows(named=True):
        key = (c["workload"], c["model"], c["system"])
        out_cells.append({
            "task": c["workload"], "model": c["model"], "system": c["system"], "role": c["role"],
            "n": c["n"], "passes": c["passes"], "partials": c["partials"], "pass_rate": pass_text(c) if c["n"] else "n/a",
            "wilson_95": None if c["wilson_low"] is None else [round(c["wilson_low"], 4), round(c["wilson_high"], 4)],
            "budget_exceeded": budget.get(key, 0), "infra_excluded": c["infra_excluded"],
            "cost_usd": c["cost_usd"], "cost_per_success_usd": c["cpo_usd"],
            # Repetitions: pass rate over items (clustered interval), pass^k, pass@k, consistency.
            "reliability": reliability_fields(c),
        })
    manifest = locktasks.split_manifest(plan)
    return {"split_manifest": manifest["tasks"], "test_task_hashes": manifest["test_hashes"],
            "task_hashes": {ref: e["task_hash"] for ref, e in sorted(locktasks.tasks(plan).items())},
            "systems": planning.task_systems(plan), "cells": out_cells}


def rate_card_section(block: dict[str, Any]) -> str:
    """The rate card's tasks table: every cell with its denominator and interval (seed 000's
    reporting template; the tasks have no rate-card volume, so no rate line)."""
    if not block["cells"]:
        return ""
    lines = ["", "## Reliability tasks (seed 000)", "",
             "| task | split | model | system | passes | Wilson 95% | partial | over budget | cost | cost per success |",
             "|---|---|---|---|---:|---|---:|---:|---:|---:|"]
    for c in block["cells"]:
        wilson = "n/a" if c["wilson_95"] is None else f"{c['wilson_95'][0]:.2f}–{c['wilson_95'][1]:.2f}"
        cps = f"${c['cost_per_success_usd']}" if c["cost_per_success_usd"] is not None else f"∞ (no success; spent ${c['cost_usd']})"
        role = "" if c["role"] not in ("infrastructure-check", "floor-check") else f" ({c['role']})"
        lines.append(f"| {c['task']} | {block['split_manifest'].get(c['task'], '?')} | {model_label(c['model'])}{role} | {c['system']} | "
                     f"{c['pass_rate']} | {wilson} | {c['partials']} | {c['budget_exceeded']} | ${c['cost_usd']} | {cps} |")
    lines.append("")
    return "\n".join(lines) + "\n"
