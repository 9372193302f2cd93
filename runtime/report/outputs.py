"""Everything a run folder holds after `lrc execute`, rebuilt from the journal alone.

For each run: a run manifest (what ran: task, system, model, prompt and tool-schema
digests, code fingerprints), an execution trace (messages, tool calls, per-call usage and
retries, the stop decision) and an evaluation record (every validator result, verdict,
failure categories). Then cells.csv/.parquet, the rate card, and summary.json. Outputs are
sorted and free of wall-clock data, so a resumed run writes the same bytes as an
uninterrupted one.

This module is the `lrc.analysis` code component: its fingerprint covers it and everything
it imports (grading, aggregation, statistics, paired comparisons, pricing, the rate card, the calibration check,
and for seed-000 tasks `lrc.runtime.tasks`: their prompt, runner, reference policies' tools,
validators and reports), the code that computes every published figure. An edition pins it (`analysis:`), the lock
records its fingerprint, and `lrc execute`/`lrc report` refuse to run with other code.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from decimal import Decimal
from importlib import metadata
from pathlib import Path
from types import ModuleType
from typing import Any

from lrc.runtime import boundedjson, filebytes, window
from lrc.runtime.failures import categorize
from lrc.runtime.grading import grade
from lrc.runtime.lock import judges as judge_models
from lrc.runtime.judging import judge_verdict, judged
from lrc.runtime.review.status import review_status
from lrc.runtime.lock.canonical import digest
from lrc.runtime.pricing import call_cost, decimal_str, price_for
from lrc.runtime.report import aggregate as agg
from lrc.runtime.report import calibration_text, paired as paired_report
from lrc.runtime.report import categories as failure_report
from lrc.runtime.report.labels import model_label
from lrc.runtime.report import html as html_page
from lrc.runtime.report import reliability
from lrc.runtime.report.ratecard import PARTIAL_NOTE, rate_card_markdown, reliability_section
from lrc.runtime.report.stats import CLUSTERED_METHOD
from lrc.runtime.tasks import grade as task_grade
from lrc.runtime.tasks import report as task_report
from lrc.runtime.tasks.grade_memo import GradeMemo

COMPONENT_ID = "lrc.analysis"
COMPONENT_VERSION = 77

TRACE_FORMAT = 1


@dataclass
class Summary:
    card: str
    where: str
    incomplete: int  # runs excluded after infrastructure failures (exit 3: a rerun resumes them)
    calibration: dict[str, Any] | None = None
    not_run: int = 0  # runs of the plan neither journaled nor excluded: the folder is partial
    planned: int = 0

    @property
    def partial(self) -> bool:
        return self.not_run > 0

    @property
    def calibration_failed(self) -> bool:
        return calibration_text.failed(self.calibration)

    def calibration_report(self) -> str:
        """The failing reference-check cells, one per line (empty when calibration holds)."""
        return calibration_text.report(self.calibration)


def _put(path: Path, data: bytes, fresh: bool = False) -> None:
    """Write `data` unless the file already holds it; through a temporary file and a rename, so
    a kill never leaves half a file (the journal stays the source: `lrc report` rewrites all).

    System calls are most of what a first report of a large journal spends on its three files a
    run, so each is made once, on descriptors (a Python file object adds an fstat, an ioctl and
    an lseek to every open): the file is opened, not looked up first, and read only when it is
    a regular file of the same size (`lrc.runtime.filebytes.holds`: a FIFO in its place is
    replaced, never waited on); the write is `filebytes.write_replacing` (the temporary file is
    created anew, never through a link or into a planted FIFO). About 6 calls a new file
    instead of ~24 (strace), the same bytes and the same guarantee.
    `fresh`: the folder was made just now (`_new_folder`), so there is nothing to compare with."""
    name = os.fspath(path)
    if not fresh and filebytes.holds(name, data):
        return
    filebytes.write_replacing(name, data)


def _dump(path: Path, value: Any) -> None:
    _put(path, (boundedjson.dumps(value, sort_keys=True, indent=2, ensure_ascii=False, default=str) + "\n").encode("utf-8"))


_COMPACT = json.JSONEncoder(sort_keys=True, ensure_ascii=False, default=str, separators=(", ", ": "))
"""One encoder for every value of every run file: `json.dumps` with options builds a new
encoder per call, ~40% of the encoding time of a report's 600,000 values (issue 11)."""


def _compact(value: Any) -> str:
    """`boundedjson.dumps(value, …)` of the same options, byte for byte; the bounded path only
    for a value the encoder cannot write (too deep, a cycle, a float it refuses)."""
    try:
        return _COMPACT.encode(value)
    except (ValueError, RecursionError, TypeError):
        return boundedjson.dumps(value, sort_keys=True, ensure_ascii=False, default=str, separators=(", ", ": "))


def _new_folder(folder: Path) -> bool:
    """Make `folder` (and its parents) if it is missing: True when this call made it -- nothing
    can be in it yet, so its files need no comparison (a first report of a large journal makes
    every run's folder: three failed opens a run saved) -- False when it was there already."""
    name = os.fspath(folder)
    try:
        os.mkdir(name)
    except FileExistsError:
        return False
    except FileNotFoundError:
        os.makedirs(os.path.dirname(name), exist_ok=True)
        try:
            os.mkdir(name)
        except FileExistsError:
            return False
    return True


def _dump_run(path: Path, value: dict[str, Any], fresh: bool = False) -> None:
    """A run's manifest, trace or evaluation: one line per top-level key, each value on its line.

    Why not `indent=2` like summary.json: Python encodes indented JSON in pure Python, and
    three files per run made it ~1 ms of CPU per run (issue 11 §4); compact values go through
    the C encoder. The file is still read a section per line (`jq` or any JSON tool
    re-indents it), and it is the same JSON document, keys sorted, byte-reproducible."""
    if not value or not all(isinstance(k, str) for k in value):
        return _dump(path, value)
    lines = ",\n".join(f"  {_compact(k)}: {_compact(v)}" for k, v in sorted(value.items()))
    _put(path, ("{\n" + lines + "\n}\n").encode("utf-8"), fresh)


def _task_exclusions(plan: dict[str, Any], runs: list, journal) -> tuple[list[dict[str, str]], list[dict[str, str]]]:
    """The task runs excluded by infrastructure failures (with the journaled reason and the last
    failure's message) and those planned but not made, for the reliability report (seed 000 step 9)."""
    excluded, not_made = [], []
    for spec in runs:
        if not task_report.is_task(plan, spec.workload) or spec.key in journal.runs:
            continue
        rec = journal.exhausted.get(spec.key)
        if rec is None:
            not_made.append({"run": spec.key, "reason": "not run yet (the folder is partial: `lrc execute` resumes it)"})
            continue
        last = (rec.get("failures") or [{}])[-1]
        detail = f"{last.get('kind', '?')}" + (f" {last['status']}" if last.get("status") is not None else "") + \
                 (f": {str(last.get('message'))[:200]}" if last.get("message") else "")
        excluded.append({"run": spec.key, "reason": f"{rec.get('reason', 'retries-exhausted')} after "
                                                   f"{len(rec.get('failures') or [])} attempt(s); last: {detail}"})
    return excluded, not_made


def _write_text(path: Path, text: str) -> None:
    _put(path, text.encode("utf-8"))


def coverage(runs: list, journal) -> dict[str, Any]:
    """How much of the plan the journal holds: per cell, runs planned and made (journaled or
    excluded). Runs neither journaled nor excluded make the folder partial -- read from the
    journal, never from the flags of the last execute, so `lrc report` and a completing execute
    agree."""
    cells: dict[tuple[str, str, str], list[int]] = {}
    not_run = 0
    for spec in runs:
        made = spec.key in journal.runs or spec.key in journal.exhausted
        not_run += not made
        counts = cells.setdefault((spec.workload, spec.model, spec.system), [0, 0])
        counts[0] += made
        counts[1] += 1
    return {"planned": len(runs), "not_run": not_run, "partial": not_run > 0,
            "cells": [{"workload": w, "model": m, "system": s, "made": made, "planned": planned}
                      for (w, m, s), (made, planned) in sorted(cells.items())]}


def slug(model: str) -> str:
    return model.replace("/", "__").replace(":", "_")


def _version(dist: str) -> str:
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:  # pragma: no cover
        return "not installed"


def edition_view(plan: dict[str, Any], lock: dict[str, Any]) -> dict[str, Any]:
    """The edition facts the metrics and the rate card need."""
    spec = plan["edition"]["spec"]
    return {
        "id": spec["id"], "version": spec["version"], "date": spec["date"], "brand": spec["brand"],
        "footer": spec["footer"], "disclaimer": spec["disclaimer"], "title": spec["title"],
        "qualifying_threshold": spec["qualifying"]["min_pass_rate"],
        "repetitions": int(spec.get("repetitions", 1)),
        "models": [{"id": m, "role": e["role"]} for m, e in sorted(plan["models"].items())],
        "workloads": {ref: {"job": wl["spec"]["rate_card"]["job"], "volume_units": wl["spec"]["rate_card"]["volume_units"],
                            "units_per_item": wl["spec"]["dataset"]["units_per_item"], "unit": wl["spec"]["dataset"]["unit"]}
                      for ref, wl in sorted(plan["workloads"].items())},
        "bootstrap_seed": lock["root_digest"],
        **({"errata": plan["errata"]} if plan.get("errata") else {}),  # a regraded folder (lrc.runtime.errata)
        **({"judge": {"label": judge_label(plan), "model": plan["edition"]["spec"]["judge"]["model"],
                      "second_model": plan["edition"]["spec"]["judge"].get("second_model"),
                      "same_family": judge_models.same_family(plan),
                      "workloads": judge_models.judged_workloads(plan),
                      "spot_check_rate": (spec.get("human_review") or {}).get("spot_check_rate"),
                      "disagreement_threshold": (spec.get("human_review") or {}).get("disagreement_threshold")}}
           if judge_models.judged_workloads(plan) and spec.get("judge") else {}),
    }


def _human_review(workload: dict[str, Any], evaluation: dict[str, Any], cell_review: Any) -> str:
    kind = workload["spec"]["grading"]["kind"]
    if kind not in judge_models.JUDGED_KINDS:
        return f"not required: {kind} grading"
    if evaluation.get("judge") == "human":
        return "regraded by a human reviewer (the cell's judge-human disagreement required it)"
    if evaluation.get("judge") != "judged" and evaluation.get("judge") != "invalid":
        return "not required: the deterministic checks failed, the judge was not called"
    if cell_review is None or cell_review.provisional:
        return "provisional: the cell's human spot-check is not imported yet (lrc review export / import)"
    if cell_review.regrade_required and not cell_review.regraded:
        return "manual regrade required: the cell's judge-human disagreement is above the edition's threshold"
    return "spot-checked: the cell's human spot-check is imported"


def _judge_trace(evaluation: dict[str, Any], journal, run_key: str, judges: dict[str, Any]) -> dict[str, Any]:
    """What the evaluation record says of the judge step: skipped, missing, invalid, or the judgments."""
    out: dict[str, Any] = {"step": evaluation.get("judge")}
    for role in judge_models.ROLES:
        rec = journal.judges.get((run_key, role))
        if rec is not None:
            out[role] = {"model": rec["model"], "rubric": rec["rubric"], "request_digest": rec["request"],
                         "judgment": rec.get("judgment"), "invalid_judgment": rec.get("invalid_judgment"),
                         "usage": rec["usage"], "attempts": rec["attempts"], "shown": rec.get("material")}
    return out


def _review_notes(plan: dict[str, Any], review: dict[tuple, Any], judged_workloads: set[str], runs: list, journal) -> dict[tuple, dict[str, Any]]:
    """Per judged cell: the judge and the human review's state, for the cells table."""
    judges = judge_models.judges(plan)
    kin = set(judge_models.same_family(plan))
    notes: dict[tuple, dict[str, Any]] = {}
    for spec in runs:
        if spec.workload not in judged_workloads:
            continue
        key = (spec.workload, spec.model, spec.system)
        if key in notes:
            continue
        r = review.get(key)
        if r is None or not r.sampled_runs:
            state = "provisional" if any((k.key, "primary") in journal.judges for k in runs if (k.workload, k.model, k.system) == key) \
                else "nothing judged"
        elif r.regraded:
            state = "regraded"
        elif r.provisional:
            state = "provisional"
        elif r.regrade_required:
            state = "manual regrade required"
        else:
            state = "spot-checked"
        notes[key] = {"judge": judges["primary"]["id"] if "primary" in judges else None,
                      "review": state,
                      "human_disagreement": None if r is None or r.disagreement_rate is None else f"{r.disagreements}/{r.imported}",
                      "review_note": None if r is None else r.note(),
                      "judge_family": spec.model in kin}
    return notes


def judge_summary(plan: dict[str, Any], cells, review: dict[tuple, Any]) -> dict[str, Any]:
    """summary.json's `judge`: who judged, what it cost apart from CPO, and the review's state per cell."""
    block = judge_models.judge_block(plan) or {}
    judged = judge_models.judged_workloads(plan)
    out_cells = []
    for c in cells.sort(*agg.CELL_KEY).iter_rows(named=True):
        if c["workload"] not in judged:
            continue
        r = review.get((c["workload"], c["model"], c["system"]))
        out_cells.append({
            "workload": c["workload"], "model": c["model"], "system": c["system"],
            "judge_calls": c["judge_calls"], "judge_skipped_after_deterministic_fail": c["judge_skipped"],
            "invalid_judgments": c["invalid_judgments"], "grading_cost_usd": c["grading_cost_usd"],
            "second_judge": {"graded": c["second_judged"], "agreed": c["judges_agree"]} if c["second_judged"] else None,
            "review": c["review"],
            "human_spot_check": None if r is None else r.as_json(),
            **({"methodology_note": r.note()} if r is not None and r.note() else {}),
        })
    return {
        "model": block.get("model"), "second_model": block.get("second_model"),
        "reference_judge": block.get("model") == judge_models.REFERENCE_JUDGE,
        "label": judge_label(plan),
        "same_family_models": judge_models.same_family(plan),
        "sampling": block.get("sampling"),
        "rubrics": {ref: plan["rubrics"][ref]["digest"] for ref in sorted(plan.get("rubrics") or {})},
        "human_review": plan["edition"]["spec"].get("human_review"),
        "cells": out_cells,
    }


def judge_label(plan: dict[str, Any]) -> str:
    block = judge_models.judge_block(plan) or {}
    if block.get("model") == judge_models.REFERENCE_JUDGE:
        return ("lrc/judge — the embedded reference judge: deterministic code that scores from each item's answer key, "
                "not a language model; its judged pass rates check the harness, they measure no judge")
    return f"{block.get('model')} (a language model, temperature {(block.get('sampling') or {}).get('temperature', 'default')})"


def _usage_total(calls: list[dict[str, Any]]) -> dict[str, int]:
    total = {"input": 0, "cached_input": 0, "cache_write": 0, "output": 0, "reasoning": 0, "calls": len(calls)}
    for call in calls:
        for k in ("input", "cached_input", "cache_write", "output", "reasoning"):
            total[k] += int(call["usage"].get(k, 0))
    return total


def operation_of(journal, run_key: str) -> dict[str, Any] | None:
    """The operating settings of the execute that journaled `run_key` (None: journaled by an
    lrc that did not record them)."""
    index = getattr(journal, "run_session", {}).get(run_key)
    return None if index is None else journal.sessions[index]["operation"]


def operation_summary(journal) -> dict[str, Any]:
    """summary.json's `operation`: every distinct set of operating settings this folder's
    executes used, in the order first used, with the number of runs journaled under each.
    Identical settings are listed once, so a killed and resumed execute reads like an
    uninterrupted one. Kept apart from every result: set this key aside to compare results."""
    distinct: list[dict[str, Any]] = []
    keys: list[str] = []
    counts: dict[int, int] = {}
    for run_key, index in getattr(journal, "run_session", {}).items():
        counts[index] = counts.get(index, 0) + 1
    for index, session in enumerate(getattr(journal, "sessions", [])):
        key = json.dumps(session["operation"], sort_keys=True)
        if key not in keys:
            keys.append(key)
            distinct.append({"settings": session["operation"], "runs": 0})
        distinct[keys.index(key)]["runs"] += counts.get(index, 0)
    unrecorded = sum(1 for key in journal.runs if key not in getattr(journal, "run_session", {}))
    return {"about": "how the runs were operated (run profile, flags, LRC_* variables, defaults); never part of a "
                     "result or a digest", "sessions": distinct, "runs_without_record": unrecorded}


def _reused(call: dict[str, Any]) -> dict[str, Any] | None:
    """Where a reused response was paid (plan, edition, run, step) and what it cost there; None
    for a call made by this folder. The cache's time stamp is left out: no wall clock in traces."""
    origin = call.get("reused")
    if not origin:
        return None
    return {k: origin[k] for k in ("plan", "edition", "run", "step", "usage", "cost_usd")}


def forecast_vs_actual(records: list[dict[str, Any]], forecast: dict[str, Any]) -> dict[str, Any]:
    """Per cell, the forecast of `lrc estimate` (recomputed from the lock: `lrc.runtime.estimate.for_report`)
    beside what the journaled runs cost. `forecast_done` is the expected forecast of exactly the
    runs that have a result, so a partial folder compares like with like."""
    done: dict[tuple[str, str, str], dict[str, Any]] = {}
    for r in records:
        cell = done.setdefault((r["workload"], r["model"], r["system"]), {"runs": 0, "cost": Decimal(0), "in": 0, "out": 0,
                                                                         "f_cost": Decimal(0), "f_in": 0, "f_out": 0})
        u = r["usage"]
        cell["runs"] += 1
        cell["cost"] += Decimal(r["cost_usd"])
        cell["in"] += u["input"] + u["cached_input"] + u["cache_write"]
        cell["out"] += u["output"] + u["reasoning"]
        expected = forecast["per_run"][(r["workload"], r["model"], r["system"], r["item"])]["expected"]
        cell["f_cost"] += expected.cost
        cell["f_in"] += expected.input_tokens
        cell["f_out"] += expected.output_tokens
    rows = []
    totals = {"forecast_done": Decimal(0), "actual": Decimal(0), **{lv: Decimal(0) for lv in ("low", "expected", "high")}}
    for key, fc in sorted(forecast["cells"].items()):
        d = done.get(key, {"runs": 0, "cost": Decimal(0), "in": 0, "out": 0, "f_cost": Decimal(0), "f_in": 0, "f_out": 0})
        ratio = (d["cost"] / d["f_cost"]).quantize(Decimal("0.01")) if d["f_cost"] else None
        rows.append({"workload": key[0], "model": key[1], "system": key[2], "runs_planned": fc["runs"], "runs_done": d["runs"],
                     "forecast_usd": {lv: decimal_str(fc[lv].cost) for lv in ("low", "expected", "high")},
                     "forecast_done_usd": decimal_str(d["f_cost"]), "actual_usd": decimal_str(d["cost"]),
                     "actual_over_forecast": None if ratio is None else decimal_str(ratio),
                     "tokens": {"forecast_done": {"input": d["f_in"], "output": d["f_out"]}, "actual": {"input": d["in"], "output": d["out"]}}})
        for lv in ("low", "expected", "high"):
            totals[lv] += fc[lv].cost
        totals["forecast_done"] += d["f_cost"]
        totals["actual"] += d["cost"]
    return {"cells": rows, "total": {"forecast_usd": {lv: decimal_str(totals[lv]) for lv in ("low", "expected", "high")},
                                     "forecast_done_usd": decimal_str(totals["forecast_done"]), "actual_usd": decimal_str(totals["actual"])},
            "assumptions": list(forecast["assumptions"]), "token_counting": dict(sorted(forecast["counting"].items()))}


def forecast_markdown(table: dict[str, Any]) -> str:
    lines = ["# Forecast vs actual", "",
             "The forecast is `lrc estimate`'s, recomputed from the lock; *forecast (done)* is its expected figure for exactly "
             "the runs that have a result, set beside what they cost.", "",
             "| workload | model | system | runs done | forecast low / expected / high (cell) | forecast (done) | actual | "
             "actual / forecast | tokens in: forecast / actual | tokens out: forecast / actual |",
             "|---|---|---|---:|---:|---:|---:|---:|---:|---:|"]
    for r in table["cells"]:
        f, t = r["forecast_usd"], r["tokens"]
        lines.append(f"| {r['workload']} | {model_label(r['model'])} | {r['system']} | {r['runs_done']}/{r['runs_planned']} | "
                     f"${f['low']} / ${f['expected']} / ${f['high']} | ${r['forecast_done_usd']} | ${r['actual_usd']} | "
                     f"{r['actual_over_forecast'] or 'n/a'} | {t['forecast_done']['input']:,} / {t['actual']['input']:,} | "
                     f"{t['forecast_done']['output']:,} / {t['actual']['output']:,} |")
    tot = table["total"]
    lines += [f"| **total** | | | | ${tot['forecast_usd']['low']} / ${tot['forecast_usd']['expected']} / "
              f"${tot['forecast_usd']['high']} | ${tot['forecast_done_usd']} | ${tot['actual_usd']} | | | |", "", "Assumptions:", ""]
    lines += [f"- {a}" for a in table["assumptions"]]
    lines += ["", "Token counting:", ""] + [f"- {model_label(m)}: {rule}" for m, rule in table["token_counting"].items()]
    return "\n".join(lines) + "\n"


def _joined_calibration(workloads: dict[str, Any], tasks: dict[str, Any]) -> dict[str, Any]:
    """One calibration verdict over the workload cells and the task cells (a task cell's
    `workload` is its task ref): oracle n/n and null 0/n in every one of them."""
    return {"ok": workloads["ok"] and tasks["ok"], "cells_checked": workloads["cells_checked"] + tasks["cells_checked"],
            "failures": workloads["failures"] + tasks["failures"], "unjudged": workloads["unjudged"] + tasks["unjudged"]}


def write_all(lock: dict[str, Any], plan: dict[str, Any], runs: list, items: dict[str, list], modules: dict[str, ModuleType],
              journal, out: Path, forecast: dict[str, Any] | None = None, seed: str | None = None, memo: bool = True) -> Summary:
    """`forecast`: `lrc.runtime.estimate.for_report` of the plan, set beside the actual cost (None: none).
    `seed`: the edition's seed, which draws the human spot-check sample of judged runs.
    `memo`: task grades and the page's charts may come from the per-user memos
    (`lrc.runtime.tasks.grade_memo`, `lrc.runtime.report.chart_memo`); False recomputes every one."""
    judged_workloads = set(judge_models.judged_workloads(plan))
    judges = judge_models.judges(plan)
    judge_prices = {j["id"]: j["price"] for j in judges.values()}
    review = review_status(plan, journal, seed) if judged_workloads and seed is not None else {}
    calls_by_run: dict[str, list[dict[str, Any]]] = {}
    for (key, _step), call in sorted(journal.calls.items(), key=lambda kv: (kv[0][0], kv[0][1])):
        calls_by_run.setdefault(key, []).append(call)
    versions = {"lrc": lock["lrc_version"], "litellm": _version("litellm"), "polars": _version("polars"), "jsonschema-rs": _version("jsonschema-rs")}
    records: list[dict[str, Any]] = []
    incomplete = 0
    tally = failure_report.Tally()  # derived and assigned failure categories, review burden, per cell
    covered = coverage(runs, journal)
    folder_coverage = {"partial": covered["partial"], "runs_planned": covered["planned"], "runs_not_run": covered["not_run"]}
    # The response cache (`lrc execute --cache`): a reused call counts in cost and CPO like a
    # call made here (its origin's tokens at this lock's prices); these say what was reused,
    # what it cost where it was paid, and what this folder paid to providers.
    reuse = {"reused_calls": 0, "reused_cost": Decimal(0), "reused_origin_cost": Decimal(0), "paid_calls": 0,
             "paid_cost": Decimal(0), "origins": {}}
    reuse_by_cell: dict[tuple[str, str, str], list] = {}
    for spec in runs:
        if spec.workload not in plan["workloads"]:  # a task run (seed 000): task_report below
            continue
        workload = plan["workloads"][spec.workload]
        model = plan["models"][spec.model]
        calls = [c for c in calls_by_run.get(spec.key, []) if spec.key in journal.runs or spec.key in journal.exhausted]
        price = price_for({m: e["price"] for m, e in plan["models"].items()}, spec.model)
        cost = Decimal(0)
        for c in calls:
            call_usd = call_cost({k: v for k, v in c["usage"].items()}, price)
            cost += call_usd
            origin = _reused(c)
            if origin is None:
                reuse["paid_calls"] += 1
                reuse["paid_cost"] += call_usd
                continue
            reuse["reused_calls"] += 1
            reuse["reused_cost"] += call_usd
            reuse["reused_origin_cost"] += Decimal(origin["cost_usd"])
            source = reuse["origins"].setdefault((origin["plan"], origin["edition"]), [0, Decimal(0)])
            source[0] += 1
            source[1] += Decimal(origin["cost_usd"])
            cell = reuse_by_cell.setdefault((spec.workload, spec.model, spec.system), [0, Decimal(0)])
            cell[0] += 1
            cell[1] += Decimal(origin["cost_usd"])
        # Failed attempts of a call that ran out of retries never became a call record; they
        # are in the run's exhaustion records, and they count too. (A reused call made no attempt.)
        retries = sum(max(0, c["attempts"] - 1) for c in calls) + sum(len(x["failures"]) for x in journal.exhaustions.get(spec.key, []))
        usage = _usage_total(calls)
        billed, judge_billed = journal.billed_in_exclusions(spec.key)
        if billed:  # failed attempts of calls that ran out of retries: paid, so in the run's cost
            cost += call_cost(billed, price)
            for cls, n in billed.items():
                usage[cls] += n
        run = journal.runs.get(spec.key)
        base = {"workload": spec.workload, "model": spec.model, "system": spec.system, "item": spec.item_id,
                "item_index": spec.item_index, "repetition": spec.repetition, "usage": usage,
                "cost_usd": decimal_str(cost), "infra_retries": retries}
        if run is None:
            if spec.key in journal.exhausted:
                incomplete += 1
                records.append({**base, "status": "infra_excluded", "verdict": None, "outcome": "infra_error", "steps": len(calls)})
            continue
        item = items[spec.workload][spec.item_index]
        evaluation = grade(workload, run, item.answer_key, modules, item)
        judging: dict[str, Any] = {}
        if spec.workload in judged_workloads:
            cell_review = review.get((spec.workload, spec.model, spec.system))
            human = cell_review.human_judgments.get(spec.key) if cell_review is not None and cell_review.regraded else None
            primary, second = journal.judges.get((spec.key, "primary")), journal.judges.get((spec.key, "second"))
            evaluation = judged(evaluation, workload, plan, modules, item, primary, human)
            judge_calls = [j for j in (primary, second) if j is not None]
            grading_cost = sum((call_cost(j["usage"], price_for(judge_prices, j["model"])) for j in judge_calls), Decimal(0))
            grading_cost += sum((call_cost(b, judges[role]["price"]) for role, b in sorted(judge_billed.items()) if role in judges),
                                Decimal(0))
            first = judge_verdict(primary, workload, plan, modules, item)
            other = judge_verdict(second, workload, plan, modules, item)
            judging = {"judge_calls": len(judge_calls), "grading_cost_usd": decimal_str(grading_cost),
                       "judge_skipped": int(evaluation["judge"] == "skipped"),
                       "invalid_judgments": int(evaluation["judge"] == "invalid"),
                       "second_judged": int(first is not None and other is not None),
                       "judges_agree": int(first is not None and other is not None and first == other)}
            if evaluation["judge"] == "missing":
                # Not judged yet: never a pass, held out like an infrastructure exclusion until a resume judges it.
                incomplete += 1
                records.append({**base, **judging, "status": "infra_excluded", "verdict": None, "outcome": "infra_error",
                                "steps": run["steps"]})
                continue
        system_ref = workload["spec"]["systems"][spec.system]["system"]
        evaluation = categorize(evaluation, run, plan, system=plan["systems"][system_ref])
        tally.add((spec.workload, spec.model, spec.system), evaluation, journal, spec.key)
        records.append({**base, **judging, "status": "graded", "verdict": evaluation["verdict"], "outcome": evaluation["outcome"],
                        "steps": run["steps"], "failure_categories": list(evaluation.get("failure_categories") or []),
                        **({"failure": evaluation["failure"]} if evaluation.get("failure") else {})})
        folder = out / "runs" / spec.workload / slug(spec.model) / spec.system / f"{spec.item_id}.r{spec.repetition}"
        use = workload["spec"]["systems"][spec.system]
        code_refs = sorted({workload["spec"]["dataset"]["generator"], plan["systems"][system_ref]["spec"]["implementation"],
                            *(c["check"] for c in workload["spec"]["grading"]["checks"]),
                            *([use["tools"]["implementation"]] if use.get("tools") else [])})
        fresh = _new_folder(folder)
        _dump_run(folder / "manifest.json", {
            "trace_format": TRACE_FORMAT,
            "plan_digest": lock["root_digest"], "edition": plan["edition"]["ref"],
            "task_id": spec.item_id, "workload": {"ref": spec.workload, "digest": workload["digest"]},
            "repetition": spec.repetition,
            "system": {"ref": system_ref, "digest": plan["systems"][system_ref]["digest"], "config": plan["systems"][system_ref]["spec"]},
            "model": {"id": spec.model, "role": model["role"], "sampling": model.get("sampling", {}), "provider": model["provider"],
                      "api_version": sorted({c.get("response_model") or spec.model for c in calls})},
            "prompts": {role: p["template_digest"] for role, p in workload["prompts"][spec.system].items()},
            "tool_schema_digest": digest("tool-schemas", workload["tools"].get(spec.system, [])),
            "code": {ref: plan["code"][ref]["fingerprint"] for ref in code_refs},
            "seed_commitment": plan["seed"]["commitment"],
            "software": versions,
            # How the execute that made this run was operated (never part of a result).
            "operation": operation_of(journal, spec.key),
            # The folder this run belongs to: a partial folder is not a full measurement.
            "folder_coverage": folder_coverage,
            **({"reused_from": sorted({(o["plan"], o["edition"], o["run"]): {"plan": o["plan"], "edition": o["edition"], "run": o["run"]}
                                       for o in map(_reused, calls) if o}.values(), key=lambda o: (o["plan"], o["run"]))}
               if any(c.get("reused") for c in calls) else {}),
        }, fresh)
        _dump_run(folder / "trace.json", {
            "trace_format": TRACE_FORMAT,
            "messages": run["transcript"],
            "calls": [{"step": c["step"], "request_digest": c["request"], "finish_reason": c["response"]["finish_reason"],
                       "refusal": c["response"]["refusal"], "usage": c["usage"], "attempts": c["attempts"],
                       "infra_failures": c["infra_failures"], **({"reused": _reused(c)} if c.get("reused") else {})}
                      for c in calls],
            "events": run["events"],
            "stop": {"outcome": run["outcome"], "steps": run["steps"], "submitted_through_tool": run["submitted"]},
            "cost_usd": decimal_str(cost),
        }, fresh)
        _dump_run(folder / "evaluation.json", {
            "trace_format": TRACE_FORMAT,
            "validators": evaluation["results"],
            "verdict": evaluation["verdict"],
            **failure_report.evaluation_fields(evaluation, journal, spec.key),
            "final_disposition": {"pass": "passed", "partial": "partial (counts as not passed)", "fail": "failed"}[evaluation["verdict"]],
            "human_review": _human_review(workload, evaluation, review.get((spec.workload, spec.model, spec.system))),
            **({"judge": _judge_trace(evaluation, journal, spec.key, judges)} if spec.workload in judged_workloads else {}),
        }, fresh)
    task_records, task_incomplete = task_report.write_runs(
        lock, plan, runs, items, journal, out, calls_by_run,
        {"software": versions, "folder_coverage": folder_coverage, "operation_of": lambda key: operation_of(journal, key),
         "tally": tally, "journal": journal, "grades": GradeMemo(plan, task_grade.grade, enabled=memo)},
        _dump_run, _put, slug)
    incomplete += task_incomplete
    edition = edition_view(plan, lock)
    partial = covered["partial"]
    cells = agg.aggregate(records, edition, partial=partial, notes=_review_notes(plan, review, judged_workloads, runs, journal))
    # Tasks are their own cells (task × model × system): never in a workload's rate line or in cells.csv.
    task_cells = agg.aggregate(task_records, edition, partial=partial)
    tasks_block = task_report.summary_block(plan, task_cells, task_records) if task_report.locktasks.tasks(plan) else None
    # A partial folder derives nothing: no cheapest qualifier, frontier premium or multiplier.
    derived = (f"{PARTIAL_NOTE} ({covered['not_run']} of {covered['planned']} planned runs not run): "
               f"no rates, qualifying verdicts, frontier premiums or agentic multipliers") if partial else agg.derived(cells, edition)
    agg.write_cells(cells, out)
    calibration = _joined_calibration(agg.calibration(cells), agg.calibration(task_cells))
    reused_notes = {key: (n, origin) for key, (n, origin) in reuse_by_cell.items()}
    # Paired system comparisons (same model, same items): only for a full measurement.
    paired = None if partial else paired_report.compare(records + task_records, edition)
    if tasks_block is not None:  # seed 000's reliability report, read back from the run files just written
        page = reliability.data(plan, out, *_task_exclusions(plan, runs, journal),
                                paired=paired if paired is not None else f"{PARTIAL_NOTE}: no paired comparisons")
        tasks_block["reliability_report"] = page
        _write_text(out / "reliability-report.md", reliability.markdown(page))
    window_summary = window.summary(plan, journal)
    card = rate_card_markdown(cells, derived, edition, covered, reused=reused_notes, paired=paired, window=window_summary,
                              reuse_totals=(reuse["reused_calls"], reuse["reused_calls"] + reuse["paid_calls"],
                                            reuse["reused_cost"], reuse["reused_origin_cost"], reuse["paid_cost"]))
    if tasks_block is not None:  # the tasks' table goes above the footer
        head, rule, footer = card.rpartition("\n---\n")
        section = task_report.rate_card_section(tasks_block)
        section += "\n".join(["", *reliability_section(list(task_cells.sort(*agg.CELL_KEY).iter_rows(named=True)),
                                                         edition, "tasks")])
        card = head + section + rule + footer if rule else card + section
    _write_text(out / "rate-card.md", card)
    compared = forecast_vs_actual(records + task_records, forecast) if forecast is not None else None
    if compared is not None:
        _write_text(out / "forecast-vs-actual.md", forecast_markdown(compared))
    _dump(out / "summary.json", {
        "plan_digest": lock["root_digest"], "edition": plan["edition"]["ref"], "runs_planned": len(runs),
        "runs_graded": sum(1 for r in records if r["status"] == "graded"), "runs_incomplete": incomplete,
        "partial": partial, "runs_not_run": covered["not_run"],
        "coverage": [c for c in covered["cells"] if c["made"] < c["planned"]],
        "derived": json.loads(json.dumps(derived, default=str)), "calibration": calibration, "software": versions,
        "operation": operation_summary(journal),
        "window": window_summary,
        "failure_categories": tally.summary(),
        **({"judge": judge_summary(plan, cells, review)} if judged_workloads else {}),
        **({"tasks": tasks_block} if tasks_block is not None else {}),
        # Repetitions (DESIGN §5): per cell, the pass rate over items with its clustered
        # interval, pass^k, pass@k and outcome consistency, each with its denominator.
        "reliability": {"method": CLUSTERED_METHOD, "repetitions": edition["repetitions"],
                        "cells": agg.reliability_summary(cells),
                        **({"tasks": agg.reliability_summary(task_cells, "task")} if tasks_block is not None else {})},
        "paired": paired if paired is not None else f"{PARTIAL_NOTE}: no paired comparisons",
        "response_cache": {
            "reused_calls": reuse["reused_calls"],
            "reused_cost_usd": decimal_str(reuse["reused_cost"]),  # at this lock's prices: in cost and CPO
            "reused_origin_cost_usd": decimal_str(reuse["reused_origin_cost"]),  # as paid where they were paid
            "paid_calls": reuse["paid_calls"],
            "paid_cost_usd": decimal_str(reuse["paid_cost"]),  # what this folder's own calls cost
            "reused_from": [{"plan": plan_digest, "edition": ed, "calls": n, "origin_cost_usd": decimal_str(c)}
                            for (plan_digest, ed), (n, c) in sorted(reuse["origins"].items())],
        },
        **({"forecast_vs_actual": compared} if compared is not None else {}),
    })
    _put(out / html_page.PAGE, html_page.build_page(lock, out, memo=memo).encode("utf-8"))  # read back from the files just written
    where = (f"\nOutputs in {out}:\n"
             f"  rate card       {out / 'rate-card.md'}\n"
             f"  cells           {out / 'cells.csv'} (and cells.parquet)\n"
             f"  summary         {out / 'summary.json'}\n"
             f"  page            {out / 'report.html'} (self-contained HTML: rate card, charts, cells)\n"
             + (f"  reliability     {out / 'reliability-report.md'}\n" if tasks_block is not None else "")
             + (f"  forecast        {out / 'forecast-vs-actual.md'}\n" if compared is not None else "") +
             f"  traces          {out / 'runs'}/<workload>/<model>/<system>/<item>.r<N>/{{manifest,trace,evaluation}}.json\n"
             f"  items           {out / 'items'}/<workload>/<item>/ (item.json, answer_key.json)\n"
             f"  journal         {out / 'journal.jsonl'}")
    return Summary(card=card, where=where, incomplete=incomplete, calibration=calibration,
                   not_run=covered["not_run"], planned=covered["planned"])
