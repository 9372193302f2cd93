"""The reliability report of a task edition (seed 000, "Empty reporting template", "Run procedure").

Why a page of its own, and why it is computed from the released run folders: seed 000 asks for
a report that another person can recompute from what is published (step 10). So every figure
here is read back from the files `lrc report` writes per task run (OUT/runs/<task>/<model>/
<system>/<item>.r<N>/{manifest,trace,evaluation}.json), never from the runtime's memory: what
the page says is what the traces say.

The same template is produced from the lock alone, before any run (`lrc preregister`): the
frozen task set with its hashes, the frozen systems, the declared repetitions, and every result
field reading "not run" -- the pre-registration page (release checklist: "publish the task
manifest before scored runs"; "replace every Not run field only with reproducible
measurements").

What each figure means (every rate has its denominator -- runs, and items × repetitions -- and
its 95% interval clustered by item, `stats.clustered_pass_rate`: repetitions of one item are
never counted as independent runs; with one repetition it is the Wilson interval):
- completion: pass / partial / fail of the graded runs (partial counts as not passed);
- financial correctness: runs whose every check of category `financial-incorrectness` passed;
- integrity: runs whose every check of category `artifact-integrity` passed;
- review burden: material issues by severity (the evaluation's `review_burden`: results not
  passed, info notes left out), in total and per run;
- failure categories: the runs' derived primary categories and, apart, those a reviewer
  assigned (`lrc categorize`), never one overwriting the other;
- pass^k: all k repetitions of an item pass, k = the declared repetitions (the unbiased
  estimator, `stats.pass_k_curves`, over the items with k graded repetitions; "not run" when no
  item has k);
- efficiency (tokens, tool calls, retries, cost): "not run" in the public report until the
  edition declares its measurement code and pricing released (`efficiency_reporting:
  released`), as the seed requires. Latency is never shown: lrc keeps the wall clock out of
  every output, so two reports of one journal are byte-identical.
Exclusions (infrastructure failures after retries), runs planned but not made and missing
measurements (human review not run) are listed with their reason (step 9).
"""

from __future__ import annotations

import json
from decimal import Decimal
from pathlib import Path
from typing import Any, Iterable

from lrc.runtime.report.stats import clustered_pass_rate, pass_k_curves
from lrc.runtime.report.labels import model_label
from lrc.runtime.report.mdtext import inline

NOT_RUN = "not run"
FINANCIAL = "financial-incorrectness"
INTEGRITY = "artifact-integrity"
EXAMPLES_PER_SYSTEM = 3


def efficiency_released(plan: dict[str, Any]) -> bool:
    return plan["edition"]["spec"].get("efficiency_reporting") == "released"


def _task_systems(plan: dict[str, Any]) -> list[str]:
    """The systems the edition runs its tasks under, by id (`tasks.planning` decides)."""
    from lrc.runtime.tasks import planning

    return list(planning.agentic_systems(plan))


def _rate(rate: dict[str, Any] | None) -> str:
    """`passes/runs (low–high)`, with `· items × k` when items repeat; "n/a" for no run."""
    if rate is None:
        return "n/a (0 runs)"
    shape = "" if rate["runs"] == rate["items"] else f" · {rate['items']} items × {rate['runs'] // rate['items'] if rate['runs'] % rate['items'] == 0 else 'k'}"
    return f"{rate['passes']}/{rate['runs']}{shape} ({rate['low']:.2f}–{rate['high']:.2f})"


def _clustered(per_item: dict[str, list[bool]]) -> dict[str, Any] | None:
    passes = [sum(v) for _, v in sorted(per_item.items())]
    runs = [len(v) for _, v in sorted(per_item.items())]
    rate = clustered_pass_rate(passes, runs)
    if rate is None:
        return None
    return {"passes": sum(passes), "runs": sum(runs), "items": len(runs), "estimate": round(float(rate["estimate"]), 4),
            "low": round(rate["low"], 4), "high": round(rate["high"], 4)}


def _read(path: Path) -> dict[str, Any] | None:
    try:
        value = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return value if isinstance(value, dict) else None


def read_runs(folder: Path, task_refs: Iterable[str]) -> list[dict[str, Any]]:
    """Every graded task run of the folder, as the files say (sorted by task, model, system, item, repetition)."""
    runs = []
    for ref in sorted(task_refs):
        for run_dir in sorted((folder / "runs" / ref).glob("*/*/*.r*")):
            manifest, trace, evaluation = (_read(run_dir / f"{n}.json") for n in ("manifest", "trace", "evaluation"))
            if manifest is None or evaluation is None:
                continue
            runs.append({"task": ref, "model": manifest["model"]["id"], "system": manifest["system"]["config"]["id"],
                         "item": manifest["task_id"], "repetition": int(manifest["repetition"]),
                         "path": run_dir.relative_to(folder).as_posix(), "manifest": manifest, "trace": trace or {},
                         "evaluation": evaluation})
    runs.sort(key=lambda r: (r["task"], r["model"], r["system"], r["item"], r["repetition"]))
    return runs


def _categories(plan: dict[str, Any], ref: str) -> list[str]:
    return [check["failure_category"] for check in plan["tasks"][ref]["spec"]["checks"]]


def _all_pass(results: list[dict[str, Any]], categories: list[str], wanted: str) -> bool | None:
    chosen = [r for r, c in zip(results, categories) if c == wanted]
    return None if not chosen else all(r.get("status") == "pass" for r in chosen)


def cell_figures(plan: dict[str, Any], runs: list[dict[str, Any]], repetitions: int) -> dict[str, Any]:
    """The figures of one task × model × system from its graded runs."""
    verdicts = [r["evaluation"].get("verdict") for r in runs]
    n = len(runs)
    out: dict[str, Any] = {"runs": n, "pass": verdicts.count("pass"), "partial": verdicts.count("partial"),
                           "fail": verdicts.count("fail")}
    completed: dict[str, list[bool]] = {}
    for r in runs:
        completed.setdefault(r["item"], []).append(r["evaluation"].get("verdict") == "pass")
    out["completion"] = _clustered(completed)
    for name, wanted in (("financial_correctness", FINANCIAL), ("integrity", INTEGRITY)):
        held: dict[str, list[bool]] = {}
        for r in runs:
            verdict = _all_pass(r["evaluation"].get("validators") or [], _categories(plan, r["task"]), wanted)
            if verdict is not None:
                held.setdefault(r["item"], []).append(verdict)
        out[name] = _clustered(held)
    burden: dict[str, int] = {}
    derived: dict[str, int] = {}
    assigned: dict[str, int] = {}
    for r in runs:
        evaluation = r["evaluation"]
        counted = evaluation.get("review_burden")
        if not isinstance(counted, dict):  # a record from before the taxonomy's count: material = not passed
            counted = {}
            for res in evaluation.get("validators") or []:
                if res.get("status") != "pass" and res.get("severity", "error") != "info":
                    counted[str(res.get("severity", "error"))] = counted.get(str(res.get("severity", "error")), 0) + 1
        for sev, n in counted.items():
            if int(n):
                burden[str(sev)] = burden.get(str(sev), 0) + int(n)
        primary = (evaluation.get("failure") or {}).get("primary") or evaluation.get("primary_failure_category")
        if primary:
            derived[primary] = derived.get(primary, 0) + 1
        reviewer = (evaluation.get("assigned_failure") or {}).get("primary")
        if reviewer:
            assigned[reviewer] = assigned.get(reviewer, 0) + 1
    out["review_burden"] = dict(sorted(burden.items()))
    out["failure_categories"] = {"derived": dict(sorted(derived.items())), "assigned": dict(sorted(assigned.items()))}
    out["items"] = len(completed)
    curve = pass_k_curves([sum(v) for _, v in sorted(completed.items())], [len(v) for _, v in sorted(completed.items())],
                          repetitions)
    out["pass_hat_k"] = {str(c["k"]): None if c["pass_hat"] is None else round(c["pass_hat"], 4) for c in curve}
    out["pass_hat_k_items"] = {str(c["k"]): c["items"] for c in curve}
    tokens = tool_calls = retries = 0
    cost = Decimal(0)
    for r in runs:
        for call in r["trace"].get("calls") or []:
            usage = call.get("usage") or {}
            tokens += int(usage.get("input", 0) or 0) + int(usage.get("output", 0) or 0)
            retries += max(0, int(call.get("attempts", 1) or 1) - 1)
        tool_calls += sum(1 for e in r["trace"].get("events") or [] if isinstance(e, dict) and e.get("event") == "tool_call")
        retries += sum(1 for e in r["trace"].get("events") or [] if isinstance(e, dict) and e.get("event") == "retry")
        cost += Decimal(str(r["trace"].get("cost_usd", "0")))
    out["efficiency"] = {"tokens": tokens, "tool_calls": tool_calls, "retries": retries, "cost_usd": str(cost)}
    return out


def _example(run: dict[str, Any]) -> dict[str, Any]:
    evaluation = run["evaluation"]
    failing = next((r for r in evaluation.get("validators") or [] if r.get("status") != "pass"), None)
    messages = [m for m in run["trace"].get("messages") or [] if isinstance(m, dict) and m.get("role") == "assistant"]
    last = messages[-1] if messages else {}
    excerpt = last.get("content") or ", ".join(
        f"{c.get('function', {}).get('name')}({str(c.get('function', {}).get('arguments'))[:80]})"
        for c in (last.get("tool_calls") or []) if isinstance(c, dict))
    return {"task": run["task"], "model": run["model"], "system": run["system"], "run": run["path"],
            "verdict": evaluation.get("verdict"),
            "primary_category": (evaluation.get("failure") or {}).get("primary") or evaluation.get("primary_failure_category"),
            "assigned_category": (evaluation.get("assigned_failure") or {}).get("primary"),
            "validator": None if failing is None else failing.get("id"),
            "location": None if failing is None else failing.get("location"),
            "message": None if failing is None else failing.get("message"),
            "trace_excerpt": str(excerpt or "")[:240]}


def task_pairs(plan: dict[str, Any], paired: Any) -> list[dict[str, Any]]:
    """The paired comparisons (`paired.compare`'s pairs) of systems on the edition's tasks."""
    tasks = plan.get("tasks", {})
    if not isinstance(paired, dict):
        return []
    return [p for p in paired.get("pairs", []) if p["by_workload"] and all(row["workload"] in tasks for row in p["by_workload"])]


def data(plan: dict[str, Any], folder: Path | None, exclusions: list[dict[str, Any]] | None = None,
         not_made: list[dict[str, Any]] | None = None, paired: Any = None) -> dict[str, Any]:
    """The report's content: from the lock alone (folder None: every result "not run") or from a
    run folder; `paired`: summary.json's paired comparisons, of which the tasks' are shown."""
    tasks = plan.get("tasks", {})
    repetitions = int(plan["edition"]["spec"].get("repetitions", 1))
    models = [m for m in plan["edition"]["spec"]["models"]]
    systems = _task_systems(plan)
    released = efficiency_released(plan)
    runs = read_runs(folder, tasks) if folder is not None else []
    cells = []
    for ref in sorted(tasks):
        for model in models:
            for system in systems:
                mine = [r for r in runs if r["task"] == ref and r["model"] == model["id"] and r["system"] == system]
                cell = {"task": ref, "split": tasks[ref]["split"], "model": model["id"], "role": model.get("role"), "system": system}
                if folder is None or not mine:
                    cell["result"] = NOT_RUN
                else:
                    figures = cell_figures(plan, mine, repetitions)
                    if not released:
                        figures["efficiency"] = NOT_RUN
                    cell["result"] = figures
                cells.append(cell)
    examples: dict[str, list[dict[str, Any]]] = {}
    for run in runs:
        if run["evaluation"].get("verdict") == "pass" or run["model"] not in {m["id"] for m in models if m.get("role") not in ("infrastructure-check", "floor-check")}:
            continue
        chosen = examples.setdefault(run["system"], [])
        if len(chosen) < EXAMPLES_PER_SYSTEM and all(e["task"] != run["task"] for e in chosen):
            chosen.append(_example(run))
    return {
        "edition": plan["edition"]["ref"],
        "stage": "pre-registration" if folder is None else "results",
        "repetitions": repetitions,
        "efficiency_reporting": "released" if released else "not-released",
        "tasks": [{"task": ref, "split": e["split"], "task_hash": e["task_hash"], "title": e["spec"].get("title"),
                   "validators": e["validators"]} for ref, e in sorted(tasks.items())],
        "systems": {ref: {"id": e["spec"]["id"], "mode": e["spec"].get("mode"), "digest": e["digest"],
                          "implementation": e["spec"].get("implementation"), "max_steps": e["spec"].get("max_steps"),
                          "retries": e["spec"].get("retries")}
                    for ref, e in sorted(plan["systems"].items()) if e["spec"]["id"] in systems},
        "cells": cells,
        "paired": NOT_RUN if folder is None else (paired if isinstance(paired, str) else task_pairs(plan, paired)),
        "paired_method": None if not isinstance(paired, dict) else paired.get("method"),
        "important_failures": NOT_RUN if folder is None else examples,
        "exclusions": NOT_RUN if folder is None else (exclusions or []),
        "not_made": NOT_RUN if folder is None else (not_made or []),
        "missing_measurements": ["human review of task artifacts: not run in this release (the rubric is published with each task)"],
    }


def _cell_row(cell: dict[str, Any], k: int) -> str:
    head = f"| {cell['task']} | {cell['split']} | {model_label(cell['model'])} | {cell['system']} |"
    r = cell["result"]
    if r == NOT_RUN:
        return head + " not run |" * 8
    graded = r["runs"]
    burden = ", ".join(f"{sev} {n}" for sev, n in r["review_burden"].items()) or "none"
    per_run = sum(r["review_burden"].values())
    value = r["pass_hat_k"].get(str(k))
    phk = NOT_RUN if value is None else f"{value:.2f} ({r['pass_hat_k_items'][str(k)]} items × {k})"
    return (head + f" {r['pass']} / {r['partial']} / {r['fail']} of {graded} | {_rate(r['completion'])} |"
            f" {_rate(r['financial_correctness'])} | {_rate(r['integrity'])} |"
            f" {burden} ({per_run / graded:.2f} per run) | {_categories_text(r['failure_categories'])} | {phk} |"
            + (f" {r['efficiency']['tokens']} tok, {r['efficiency']['tool_calls']} tools, {r['efficiency']['retries']} retries, ${r['efficiency']['cost_usd']} |"
               if isinstance(r["efficiency"], dict) else f" {NOT_RUN} (efficiency not released) |"))


def _categories_text(categories: dict[str, dict[str, int]]) -> str:
    derived = ", ".join(f"{c} {n}" for c, n in categories["derived"].items()) or "none"
    assigned = ", ".join(f"{c} {n}" for c, n in categories["assigned"].items()) or "none assigned"
    return f"{derived}; reviewer: {assigned}"


def markdown(report: dict[str, Any]) -> str:
    """The page, from `data(...)`."""
    k = report["repetitions"]
    pre = report["stage"] == "pre-registration"
    lines = [f"# Reliability report: edition {report['edition']}", ""]
    if pre:
        lines += ["Pre-registration: written from plan.lock before any run. Every result field reads \"not run\"; "
                  "each is replaced only by a reproducible measurement.", ""]
    lines += [f"Repetitions declared before execution: {k}. Every rate is runs passed / runs graded (items × repetitions) "
              "with a 95% interval clustered by item (Wilson on the effective sample; exactly Wilson at one repetition); "
              "partial counts as not passed.", "",
              "## Frozen task set", "", "| task | split | task hash | title |", "|---|---|---|---|"]
    lines += [f"| {t['task']} | {t['split']} | `{t['task_hash']}` | {t['title']} |" for t in report["tasks"]]
    lines += ["", "## Frozen systems", "", "| system | mode | implementation | max steps | retries | spec digest |", "|---|---|---|---:|---|---|"]
    for ref, s in report["systems"].items():
        retries = "none" if not s["retries"] else f"max {s['retries'].get('max')} on {', '.join(s['retries'].get('on', []))}"
        lines.append(f"| {ref} | {s['mode']} | {s['implementation'] or 'n/a'} | {s['max_steps']} | {retries} | `{s['digest']}` |")
    lines += ["", "## Results per system and task", "",
              f"| task | split | model | system | pass / partial / fail | completion (pass) | financial correctness | integrity "
              f"| review burden (material issues) | primary failure categories (derived; reviewer) | pass^{k} | efficiency |",
              "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    lines += [_cell_row(c, k) for c in report["cells"]]
    if report["efficiency_reporting"] != "released":
        lines += ["", "Efficiency (tokens, tool calls, retries, cost) reads \"not run\" until the edition declares its measurement "
                      "code and pricing released (`efficiency_reporting: released`). Latency is never published: no wall clock "
                      "enters lrc's outputs."]
    lines += ["", "## Paired comparison (same model, same tasks and repetitions)", ""]
    if report["paired"] == NOT_RUN:
        lines.append(f"{NOT_RUN} (every pair of the edition's task systems on each scored model, B − A)")
    elif isinstance(report["paired"], str):
        lines.append(report["paired"])
    elif not report["paired"]:
        lines.append("none: no two systems ran the same tasks on one scored model")
    else:
        lines += [f"Method: {report['paired_method']}", "",
                  "| model | A → B | task | A passes | B passes | B − A (95%) | sign test p | CPO A / B | steps per run A / B | categories removed / added |",
                  "|---|---|---|---|---|---|---:|---|---|---|"]
        for pair in report["paired"]:
            rows = [*pair["by_workload"], *([{**pair["overall"], "workload": "**overall**"}] if len(pair["by_workload"]) > 1 else [])]
            for row in rows:
                interval = "n/a" if row["diff_low"] is None else f"{row['diff_low']:+.2f}…{row['diff_high']:+.2f}"
                cpo = " / ".join("∞ (no success)" if row[x]["cpo_usd"] is None else f"${row[x]['cpo_usd']}" for x in ("a", "b"))
                removed = ", ".join(row["categories"]["removed"]) or "none"
                added = ", ".join(row["categories"]["added"]) or "none"
                lines.append(f"| {model_label(pair['model'])} | {pair['a']} → {pair['b']} | {row['workload']} | {row['a']['passes']}/{row['a']['runs']} |"
                             f" {row['b']['passes']}/{row['b']['runs']} | {row['diff']:+.2f} ({interval}) | {row['sign_test_p']:.3g} | {cpo} |"
                             f" {row['a']['steps_per_run']} / {row['b']['steps_per_run']} | {removed} / {added} |")
    lines += ["", "## Important failures", ""]
    if report["important_failures"] == NOT_RUN:
        lines.append(NOT_RUN)
    elif not report["important_failures"]:
        lines.append("none: no scored run failed")
    else:
        for system, examples in sorted(report["important_failures"].items()):
            for e in examples:
                reviewer = f"; reviewer: {e['assigned_category']}" if e.get("assigned_category") else ""
                # the location, the message and the reply quote what the model wrote: inert text
                where = inline(e["location"]) if e["location"] else "the artifact"
                lines.append(f"- **{system}**, {e['task']} on {model_label(e['model'])} ({e['verdict']}, {e['primary_category']}{reviewer}): "
                             f"{e['validator']} at {where} — {inline(e['message'])}. "
                             f"Trace: `{e['run']}`; last reply: “{inline(e['trace_excerpt'])}”")
    lines += ["", "## Exclusions, crashes and missing measurements", ""]
    for title, key in (("Excluded (infrastructure failures after retries)", "exclusions"), ("Planned but not made", "not_made")):
        value = report[key]
        if value == NOT_RUN:
            lines.append(f"- {title}: {NOT_RUN}")
        elif not value:
            lines.append(f"- {title}: none")
        else:
            lines.append(f"- {title}: {len(value)}")
            lines += [f"  - {v['run']}: {v['reason']}" for v in value]
    lines += [f"- Missing: {m}" for m in report["missing_measurements"]]
    lines.append("")
    return "\n".join(lines)

