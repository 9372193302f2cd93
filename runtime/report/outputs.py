"""Everything a run folder holds after `lrc execute`, rebuilt from the journal alone.

For each run: a run manifest (what ran: task, system, model, prompt and tool-schema
digests, code fingerprints), an execution trace (messages, tool calls, per-call usage and
retries, the stop decision) and an evaluation record (every validator result, verdict,
failure categories). Then cells.csv/.parquet, the rate card, and summary.json. Outputs are
sorted and free of wall-clock data, so a resumed run writes the same bytes as an
uninterrupted one.

This module is the `lrc.analysis` code component: its fingerprint covers it and everything
it imports (grading, aggregation, statistics, pricing, the rate card, the calibration check),
the code that computes every published figure. An edition pins it (`analysis:`), the lock
records its fingerprint, and `lrc execute`/`lrc report` refuse to run with other code.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from decimal import Decimal
from importlib import metadata
from pathlib import Path
from types import ModuleType
from typing import Any

from lrc.runtime import boundedjson
from lrc.runtime.grading import grade
from lrc.runtime.lock.canonical import digest
from lrc.runtime.pricing import call_cost, decimal_str, price_for
from lrc.runtime.report import aggregate as agg
from lrc.runtime.report.ratecard import rate_card_markdown

COMPONENT_ID = "lrc.analysis"
COMPONENT_VERSION = 2

TRACE_FORMAT = 1


@dataclass
class Summary:
    card: str
    where: str
    incomplete: int
    calibration: dict[str, Any] | None = None

    @property
    def calibration_failed(self) -> bool:
        return bool(self.calibration and not self.calibration["ok"])

    def calibration_report(self) -> str:
        """The failing reference-check cells, one per line (empty when calibration holds)."""
        if not self.calibration_failed:
            return ""
        lines = [f"calibration failed in {len(self.calibration['failures'])} cell(s): the workload or the harness is broken"]
        for f in self.calibration["failures"]:
            lines.append(f"  {f['workload']} / {f['model']} / {f['system']}: {f['message']}")
        return "\n".join(lines)


def _dump(path: Path, value: Any) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    data = (boundedjson.dumps(value, sort_keys=True, indent=2, ensure_ascii=False, default=str) + "\n").encode("utf-8")
    if not path.exists() or path.read_bytes() != data:
        path.write_bytes(data)


def _write_text(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    data = text.encode("utf-8")
    if not path.exists() or path.read_bytes() != data:
        path.write_bytes(data)


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
        "models": [{"id": m, "role": e["role"]} for m, e in sorted(plan["models"].items())],
        "workloads": {ref: {"job": wl["spec"]["rate_card"]["job"], "volume_units": wl["spec"]["rate_card"]["volume_units"],
                            "units_per_item": wl["spec"]["dataset"]["units_per_item"], "unit": wl["spec"]["dataset"]["unit"]}
                      for ref, wl in sorted(plan["workloads"].items())},
        "bootstrap_seed": lock["root_digest"],
    }


def _usage_total(calls: list[dict[str, Any]]) -> dict[str, int]:
    total = {"input": 0, "cached_input": 0, "cache_write": 0, "output": 0, "reasoning": 0, "calls": len(calls)}
    for call in calls:
        for k in ("input", "cached_input", "cache_write", "output", "reasoning"):
            total[k] += int(call["usage"].get(k, 0))
    return total


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
        lines.append(f"| {r['workload']} | {r['model']} | {r['system']} | {r['runs_done']}/{r['runs_planned']} | "
                     f"${f['low']} / ${f['expected']} / ${f['high']} | ${r['forecast_done_usd']} | ${r['actual_usd']} | "
                     f"{r['actual_over_forecast'] or 'n/a'} | {t['forecast_done']['input']:,} / {t['actual']['input']:,} | "
                     f"{t['forecast_done']['output']:,} / {t['actual']['output']:,} |")
    tot = table["total"]
    lines += [f"| **total** | | | | ${tot['forecast_usd']['low']} / ${tot['forecast_usd']['expected']} / "
              f"${tot['forecast_usd']['high']} | ${tot['forecast_done_usd']} | ${tot['actual_usd']} | | | |", "", "Assumptions:", ""]
    lines += [f"- {a}" for a in table["assumptions"]]
    lines += ["", "Token counting:", ""] + [f"- {m}: {rule}" for m, rule in table["token_counting"].items()]
    return "\n".join(lines) + "\n"


def write_all(lock: dict[str, Any], plan: dict[str, Any], runs: list, items: dict[str, list], modules: dict[str, ModuleType],
              journal, out: Path, forecast: dict[str, Any] | None = None) -> Summary:
    """`forecast`: `lrc.runtime.estimate.for_report` of the plan, set beside the actual cost (None: none)."""
    calls_by_run: dict[str, list[dict[str, Any]]] = {}
    for (key, _step), call in sorted(journal.calls.items(), key=lambda kv: (kv[0][0], kv[0][1])):
        calls_by_run.setdefault(key, []).append(call)
    versions = {"lrc": lock["lrc_version"], "litellm": _version("litellm"), "polars": _version("polars"), "jsonschema-rs": _version("jsonschema-rs")}
    records: list[dict[str, Any]] = []
    incomplete = 0
    for spec in runs:
        workload = plan["workloads"][spec.workload]
        model = plan["models"][spec.model]
        calls = [c for c in calls_by_run.get(spec.key, []) if spec.key in journal.runs or spec.key in journal.exhausted]
        price = price_for({m: e["price"] for m, e in plan["models"].items()}, spec.model)
        cost = sum((call_cost({k: v for k, v in c["usage"].items()}, price) for c in calls), Decimal(0))
        # Failed attempts of a call that ran out of retries never became a call record; they
        # are in the run's exhaustion records, and they count too.
        retries = sum(c["attempts"] - 1 for c in calls) + sum(len(x["failures"]) for x in journal.exhaustions.get(spec.key, []))
        usage = _usage_total(calls)
        run = journal.runs.get(spec.key)
        base = {"workload": spec.workload, "model": spec.model, "system": spec.system, "item": spec.item_id,
                "item_index": spec.item_index, "repetition": spec.repetition, "usage": usage,
                "cost_usd": decimal_str(cost), "infra_retries": retries}
        if run is None:
            incomplete += 1
            if spec.key in journal.exhausted:
                records.append({**base, "status": "infra_excluded", "verdict": None, "outcome": "infra_error", "steps": len(calls)})
            continue
        item = items[spec.workload][spec.item_index]
        evaluation = grade(workload, run, item.answer_key, modules, item)
        records.append({**base, "status": "graded", "verdict": evaluation["verdict"], "outcome": evaluation["outcome"], "steps": run["steps"]})
        folder = out / "runs" / spec.workload / slug(spec.model) / spec.system / f"{spec.item_id}.r{spec.repetition}"
        system_ref = workload["spec"]["systems"][spec.system]["system"]
        use = workload["spec"]["systems"][spec.system]
        code_refs = sorted({workload["spec"]["dataset"]["generator"], plan["systems"][system_ref]["spec"]["implementation"],
                            *(c["check"] for c in workload["spec"]["grading"]["checks"]),
                            *([use["tools"]["implementation"]] if use.get("tools") else [])})
        _dump(folder / "manifest.json", {
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
        })
        _dump(folder / "trace.json", {
            "trace_format": TRACE_FORMAT,
            "messages": run["transcript"],
            "calls": [{"step": c["step"], "request_digest": c["request"], "finish_reason": c["response"]["finish_reason"],
                       "refusal": c["response"]["refusal"], "usage": c["usage"], "attempts": c["attempts"],
                       "infra_failures": c["infra_failures"]} for c in calls],
            "events": run["events"],
            "stop": {"outcome": run["outcome"], "steps": run["steps"], "submitted_through_tool": run["submitted"]},
            "cost_usd": decimal_str(cost),
        })
        _dump(folder / "evaluation.json", {
            "trace_format": TRACE_FORMAT,
            "validators": evaluation["results"],
            "verdict": evaluation["verdict"],
            "failure_categories": evaluation["failure_categories"],
            "final_disposition": {"pass": "passed", "partial": "partial (counts as not passed)", "fail": "failed"}[evaluation["verdict"]],
            "human_review": "not required: " + workload["spec"]["grading"]["kind"] + " grading",
        })
    edition = edition_view(plan, lock)
    cells = agg.aggregate(records, edition)
    derived = agg.derived(cells, edition)
    agg.write_cells(cells, out)
    calibration = agg.calibration(cells)
    card = rate_card_markdown(cells, derived, edition)
    _write_text(out / "rate-card.md", card)
    compared = forecast_vs_actual(records, forecast) if forecast is not None else None
    if compared is not None:
        _write_text(out / "forecast-vs-actual.md", forecast_markdown(compared))
    _dump(out / "summary.json", {
        "plan_digest": lock["root_digest"], "edition": plan["edition"]["ref"], "runs_planned": len(runs),
        "runs_graded": sum(1 for r in records if r["status"] == "graded"), "runs_incomplete": incomplete,
        "derived": json.loads(json.dumps(derived, default=str)), "calibration": calibration, "software": versions,
        **({"forecast_vs_actual": compared} if compared is not None else {}),
    })
    where = (f"\nOutputs in {out}:\n"
             f"  rate card       {out / 'rate-card.md'}\n"
             f"  cells           {out / 'cells.csv'} (and cells.parquet)\n"
             f"  summary         {out / 'summary.json'}\n"
             + (f"  forecast        {out / 'forecast-vs-actual.md'}\n" if compared is not None else "") +
             f"  traces          {out / 'runs'}/<workload>/<model>/<system>/<item>.r<N>/{{manifest,trace,evaluation}}.json\n"
             f"  items           {out / 'items'}/<workload>/<item>/ (item.json, answer_key.json)\n"
             f"  journal         {out / 'journal.jsonl'}")
    return Summary(card=card, where=where, incomplete=incomplete, calibration=calibration)
