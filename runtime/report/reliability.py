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

What each figure means (every rate has its denominator and a Wilson 95% interval over runs):
- completion: pass / partial / fail of the graded runs (partial counts as not passed);
- financial correctness: runs whose every check of category `financial-incorrectness` passed;
- integrity: runs whose every check of category `artifact-integrity` passed;
- review burden: material issues (checks not passed) by severity, in total and per run;
- pass^k: all k repetitions of an item pass (the unbiased estimator over the declared
  repetitions, `stats.pass_hat_k`); "n/a" with fewer than k repetitions of every item;
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

from lrc.runtime.report.stats import pass_hat_k, wilson

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


def _rate(k: int, n: int) -> str:
    if n == 0:
        return "n/a (0 runs)"
    low, high = wilson(k, n)
    return f"{k}/{n} ({low:.2f}–{high:.2f})"


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
    for name, wanted in (("financial_correctness", FINANCIAL), ("integrity", INTEGRITY)):
        judged = [_all_pass(r["evaluation"].get("validators") or [], _categories(plan, r["task"]), wanted) for r in runs]
        decided = [j for j in judged if j is not None]
        out[name] = {"runs_all_pass": sum(decided), "runs": len(decided)}
    burden: dict[str, int] = {}
    for r in runs:
        for res in r["evaluation"].get("validators") or []:
            if res.get("status") != "pass":
                sev = str(res.get("severity", "error"))
                burden[sev] = burden.get(sev, 0) + 1
    out["review_burden"] = dict(sorted(burden.items()))
    per_item: dict[str, list[bool]] = {}
    for r in runs:
        per_item.setdefault(r["item"], []).append(r["evaluation"].get("verdict") == "pass")
    full = [v for v in per_item.values() if len(v) == repetitions]
    out["items"] = len(per_item)
    out["pass_hat_k"] = ({str(k + 1): round(v, 4) for k, v in enumerate(pass_hat_k([sum(v) for v in full], repetitions))}
                         if full and len(full) == len(per_item) else None)
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
            "verdict": evaluation.get("verdict"), "primary_category": evaluation.get("primary_failure_category"),
            "validator": None if failing is None else failing.get("id"),
            "location": None if failing is None else failing.get("location"),
            "message": None if failing is None else failing.get("message"),
            "trace_excerpt": str(excerpt or "")[:240]}


def data(plan: dict[str, Any], folder: Path | None, exclusions: list[dict[str, Any]] | None = None,
         not_made: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    """The report's content: from the lock alone (folder None: every result "not run") or from a run folder."""
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
        "important_failures": NOT_RUN if folder is None else examples,
        "exclusions": NOT_RUN if folder is None else (exclusions or []),
        "not_made": NOT_RUN if folder is None else (not_made or []),
        "missing_measurements": ["human review of task artifacts: not run in this release (the rubric is published with each task)"],
    }


def _cell_row(cell: dict[str, Any], k: int) -> str:
    head = f"| {cell['task']} | {cell['split']} | {cell['model']} | {cell['system']} |"
    r = cell["result"]
    if r == NOT_RUN:
        return head + " not run |" * 7
    graded = r["runs"]
    burden = ", ".join(f"{sev} {n}" for sev, n in r["review_burden"].items()) or "none"
    per_run = sum(r["review_burden"].values())
    phk = NOT_RUN if r["pass_hat_k"] is None else f"{r['pass_hat_k'][str(k)]:.2f} ({r['items']} items × {k})"
    fin, integ = r["financial_correctness"], r["integrity"]
    return (head + f" {r['pass']} / {r['partial']} / {r['fail']} of {graded} | {_rate(r['pass'], graded)} |"
            f" {_rate(fin['runs_all_pass'], fin['runs'])} | {_rate(integ['runs_all_pass'], integ['runs'])} |"
            f" {burden} ({per_run / graded:.2f} per run) | {phk} |"
            + (f" {r['efficiency']['tokens']} tok, {r['efficiency']['tool_calls']} tools, {r['efficiency']['retries']} retries, ${r['efficiency']['cost_usd']} |"
               if isinstance(r["efficiency"], dict) else f" {NOT_RUN} (efficiency not released) |"))


def markdown(report: dict[str, Any]) -> str:
    """The page, from `data(...)`."""
    k = report["repetitions"]
    pre = report["stage"] == "pre-registration"
    lines = [f"# Reliability report: edition {report['edition']}", ""]
    if pre:
        lines += ["Pre-registration: written from plan.lock before any run. Every result field reads \"not run\"; "
                  "each is replaced only by a reproducible measurement.", ""]
    lines += [f"Repetitions declared before execution: {k}. Every rate is runs passed / runs graded with a Wilson 95% interval; "
              "partial counts as not passed.", "",
              "## Frozen task set", "", "| task | split | task hash | title |", "|---|---|---|---|"]
    lines += [f"| {t['task']} | {t['split']} | `{t['task_hash']}` | {t['title']} |" for t in report["tasks"]]
    lines += ["", "## Frozen systems", "", "| system | mode | implementation | max steps | retries | spec digest |", "|---|---|---|---:|---|---|"]
    for ref, s in report["systems"].items():
        retries = "none" if not s["retries"] else f"max {s['retries'].get('max')} on {', '.join(s['retries'].get('on', []))}"
        lines.append(f"| {ref} | {s['mode']} | {s['implementation'] or 'n/a'} | {s['max_steps']} | {retries} | `{s['digest']}` |")
    lines += ["", "## Results per system and task", "",
              f"| task | split | model | system | pass / partial / fail | completion (pass) | financial correctness | integrity "
              f"| review burden (material issues) | pass^{k} | efficiency |",
              "|---|---|---|---|---|---|---|---|---|---|---|"]
    lines += [_cell_row(c, k) for c in report["cells"]]
    if report["efficiency_reporting"] != "released":
        lines += ["", "Efficiency (tokens, tool calls, retries, cost) reads \"not run\" until the edition declares its measurement "
                      "code and pricing released (`efficiency_reporting: released`). Latency is never published: no wall clock "
                      "enters lrc's outputs."]
    lines += ["", "## Important failures", ""]
    if report["important_failures"] == NOT_RUN:
        lines.append(NOT_RUN)
    elif not report["important_failures"]:
        lines.append("none: no scored run failed")
    else:
        for system, examples in sorted(report["important_failures"].items()):
            for e in examples:
                lines.append(f"- **{system}**, {e['task']} on {e['model']} ({e['verdict']}, {e['primary_category']}): "
                             f"{e['validator']} at {e['location'] or 'the artifact'} — {e['message']}. "
                             f"Trace: `{e['run']}`; last reply: “{e['trace_excerpt']}”")
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


def preregister_cli(lock_path: Path, out: Path | None) -> int:
    """`lrc preregister PLAN.lock [--out FILE]`: the reliability report's template from the lock
    alone, every result field "not run". The lock is verified first (a page of a tampered or
    stale lock would pre-register something else than what will run)."""
    from lrc.runtime.execute import EXIT_OK, EXIT_REFUSED, Refused, _say, load_verified

    try:
        lock = load_verified(lock_path)
    except Refused as exc:
        _say(f"lrc preregister: {exc}")
        return EXIT_REFUSED
    plan = lock["plan"]
    if not plan.get("tasks"):
        _say(f"lrc preregister: edition {plan['edition']['ref']} has no tasks: the reliability report covers seed-000 tasks")
        return EXIT_REFUSED
    page = markdown(data(plan, None)) + f"\nplan.lock root digest: `{lock['root_digest']}`\n"
    if out is None:
        print(page, end="")
        return EXIT_OK
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(page, encoding="utf-8")
    except OSError as exc:
        _say(f"lrc preregister: cannot write {out}: {exc.strerror or exc}")
        return EXIT_REFUSED
    print(f"pre-registration page written to {out}")
    return EXIT_OK
