"""OUT/report.html: the edition's page -- one self-contained file, read back from the run folder.

What it shows (seed §6, §2.2): the rate card (job · volume · cheapest qualifying rate · flagship
rate · quality bar · footer · disclaimer); per workload a Pareto chart of CPO vs pass rate
(`charts.py`), the cell table with denominators, the probability each model qualifies (the
Jeffreys posterior already in cells) and is the cheapest qualifier (computed here, below); the
agentic multiplier; failure examples linked to their trace files; the judge disclosures. Every
field without a measurement reads "not run" -- on the pre-registration page (the lock alone,
`preregistration_page`) that is every result.

It reads only what `lrc report` already wrote (summary.json, cells.parquet, runs/**/trace.json
and evaluation.json) and the verified lock, so the page can never say something the tables do
not. Same folder, same bytes: rows are sorted, no clock, charts are deterministic SVG.

No external asset, no script: the CSS is inline, the charts are inline SVG, and the only links
are relative ones to the folder's own trace files, so the page opens from disk and offline.
Every string that comes from a spec, a model's output or a trace is escaped (`html.escape`):
model output is hostile input, and a `<script>` in a trace renders as text.

P(cheapest qualifier): the CPO bootstrap's own resamples (`stats._resamples`, seeded by the
plan digest and the workload, the draws behind every CPO interval) are replayed over the items
of each workload × system: in each replicate every scored model's pass rate and CPO are
recomputed on the resampled items (paired: all models see the same items), the models whose
pass rate reaches the bar qualify, and the one with the lowest CPO (exact integer arithmetic;
ties to the lower model id, as in `aggregate.derived`) is the cheapest qualifier. The share of
replicates a model wins is its probability; the share with no qualifier is printed too.
"""

from __future__ import annotations

import html
import sys
import json
from decimal import Decimal
from fractions import Fraction
from pathlib import Path
from typing import Any, Mapping

from lrc.runtime.lock import judges as judge_models
from lrc.runtime.report import charts
from lrc.runtime.report.aggregate import CHECK_ROLES, DEFAULT_REPLICATES, SCORED_ROLES
from lrc.runtime.report.chart_memo import ChartMemo
from lrc.runtime.report.labels import model_label
from lrc.runtime.report.ratecard import DEFAULT_DISCLAIMER, PARTIAL_NOTE, _cpo, _items_per_card, _pass, _rate, _ratio, _usd, _wilson
from lrc.runtime.report.stats import _resamples

PAGE = "report.html"
NOT_RUN = "not run"
_SYSTEM_ORDER = {"single-shot": 0, "agentic": 1}
#: Failure examples per workload, and characters of model output quoted from a trace.
EXAMPLES_PER_WORKLOAD = 3
EXCERPT_CHARS = 600


def esc(value: Any) -> str:
    return html.escape(str(value), quote=True)


def _slug(model: str) -> str:  # outputs.slug (outputs imports this module)
    return model.replace("/", "__").replace(":", "_")


def footer(plan: Mapping[str, Any]) -> str:
    """The standard footer (seed §6): brand · methodology version · edition date, built from the
    standard and the edition in the lock (never the edition's free-text `footer`)."""
    edition = plan["edition"]["spec"]
    methodology = plan["standard"]["spec"]["methodology"]
    return f"{edition['brand']} · methodology v{methodology} · edition {edition['date']} ({edition['id']} v{edition['version']})"


def _systems(plan: Mapping[str, Any]) -> list[str]:
    ids = {plan["systems"][ref]["spec"]["id"] for ref in plan["edition"]["spec"]["systems"]}
    return sorted(ids, key=lambda s: (_SYSTEM_ORDER.get(s, 99), s))


def _planned(plan: Mapping[str, Any]) -> dict[str, dict[str, list[str]]]:
    """workload -> system -> models, as `execute.plan_runs` plans them."""
    systems = _systems(plan)
    models = sorted(m for m, e in plan["models"].items() if e["role"] in SCORED_ROLES + CHECK_ROLES)
    return {w: {s: models for s in systems if s in wl["spec"]["systems"]} for w, wl in sorted(plan["workloads"].items())}


def _role(plan: Mapping[str, Any], model: str) -> str:
    return plan["models"][model]["role"]


def _read_cells(out: Path) -> dict[tuple[str, str, str], dict[str, Any]]:
    path = out / "cells.parquet"
    if not path.exists():
        return {}
    import polars as pl

    return {(c["workload"], c["model"], c["system"]): c for c in pl.read_parquet(path).iter_rows(named=True)}


#: The runs of each cell read by the page being built: P(cheapest qualifier) and the failure
#: examples read a cell's files once (emptied at the start of every build: files may change).
_RUNS: dict[tuple[str, str, str, str], list[dict[str, Any]]] = {}


def _read_runs(out: Path, workload: str, model: str, system: str) -> list[dict[str, Any]]:
    key = (str(out), workload, model, system)
    if key not in _RUNS:
        _RUNS[key] = _load_runs(out, workload, model, system)
    return _RUNS[key]


def _load_runs(out: Path, workload: str, model: str, system: str) -> list[dict[str, Any]]:
    """The graded runs of a cell from its trace files: item, repetition, cost, verdict, paths."""
    folder = out / "runs" / workload / _slug(model) / system
    if not folder.is_dir():
        return []
    runs = []
    for run in sorted(folder.iterdir()):
        evaluation, trace = run / "evaluation.json", run / "trace.json"
        if not (evaluation.is_file() and trace.is_file()):
            continue
        item, _, rep = run.name.rpartition(".r")
        runs.append({"item": item, "repetition": rep, "dir": run, "evaluation": json.loads(evaluation.read_text(encoding="utf-8")),
                     "trace": json.loads(trace.read_text(encoding="utf-8"))})
    return runs


# -- P(cheapest qualifier) ---------------------------------------------------------------------

def cheapest_probabilities(per_model: Mapping[str, Mapping[str, tuple[Decimal, int, int]]], threshold: Fraction,
                           seed: str, replicates: int = DEFAULT_REPLICATES) -> dict[str, Any]:
    """{"models": {model: P(cheapest qualifier)}, "none": P(no model qualifies)} over paired
    bootstrap replicates; `per_model[model][item]` = (cost, passes, graded runs) of that item."""
    items = sorted({i for runs in per_model.values() for i in runs})
    models = sorted(per_model)
    if not items or not models:
        return {"models": {m: None for m in models}, "none": None}
    passes = {m: [per_model[m].get(i, (Decimal(0), 0, 0))[1] for i in items] for m in models}
    graded = {m: [per_model[m].get(i, (Decimal(0), 0, 0))[2] for i in items] for m in models}
    # One integer scale for every model's costs, so CPOs compare as exact fractions.
    scale = max([0, *(-v.as_tuple().exponent for m in models for v in (per_model[m][i][0] for i in per_model[m]))])
    costs = {m: [int(per_model[m].get(i, (Decimal(0), 0, 0))[0].scaleb(scale)) for i in items] for m in models}
    wins = dict.fromkeys(models, 0)
    none = 0
    # Exact integer comparisons, no Fraction per replicate (~0.1 s of a page per workload, issue
    # 9/11): p/g >= t is p * t.den >= t.num * g, and CPO c/p < c'/p' is c * p' < c' * p (p, p' > 0).
    # Models are visited in id order and only a strictly lower CPO replaces the best, so a tie goes
    # to the first id -- as the (CPO, model) tuple comparison it replaces did.
    num, den = threshold.numerator, threshold.denominator
    columns = [(m, passes[m].__getitem__, graded[m].__getitem__, costs[m].__getitem__) for m in models]
    for draw in _resamples(seed, len(items), replicates):
        best_model, best_cost, best_passes = None, 0, 1
        for m, pass_of, graded_of, cost_of in columns:
            p = sum(map(pass_of, draw))
            if not p:
                continue
            g = sum(map(graded_of, draw))
            if not g or p * den < num * g:
                continue
            c = sum(map(cost_of, draw))
            if best_model is None or c * best_passes < best_cost * p:
                best_model, best_cost, best_passes = m, c, p
        if best_model is None:
            none += 1
        else:
            wins[best_model] += 1
    return {"models": {m: wins[m] / replicates for m in models}, "none": none / replicates, "replicates": replicates}


# -- page pieces -------------------------------------------------------------------------------

_CSS = """
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,"DejaVu Sans",sans-serif;color:#1d1d1f;margin:0;background:#fff}
main{max-width:1180px;margin:0 auto;padding:24px 28px 48px}
h1{font-size:24px;margin:0 0 4px}h2{font-size:19px;margin:34px 0 8px;border-bottom:1px solid #ddd;padding-bottom:4px}
h3{font-size:16px;margin:24px 0 6px}.meta{color:#555;font-size:13px}
table{border-collapse:collapse;margin:8px 0 12px;font-size:12.5px;width:100%}
th,td{border:1px solid #ddd;padding:4px 6px;text-align:left;vertical-align:top}th{background:#f6f6f6}
td.num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
.notrun{color:#8a6d00;font-style:italic}.banner{background:#fff4e5;border:1px solid #f0b45a;padding:10px 14px;margin:14px 0}
.bad{background:#fde8e8;border-color:#e07a7a}.ok{color:#166534}
figure.chart{margin:10px 0;padding:0;overflow-x:auto}figure.chart svg{display:block;height:auto;max-width:100%}
figcaption{font-size:12px;color:#555}
pre.excerpt{background:#f7f7f7;border:1px solid #e3e3e3;padding:8px;white-space:pre-wrap;word-break:break-word;font-size:12px;max-height:16em;overflow:auto}
footer.std{margin-top:40px;border-top:1px solid #ccc;padding-top:8px;font-size:12.5px;color:#444}
.card td:first-child{font-weight:600}.small{font-size:12px;color:#555}
"""


def _td(value: Any, cls: str = "") -> str:
    text = str(value)
    classes = " ".join(c for c in (cls, "notrun" if text in (NOT_RUN, "n/a") or text.startswith(("n/a", NOT_RUN)) else "") if c)
    return f"<td class=\"{classes}\">{esc(text)}</td>" if classes else f"<td>{esc(text)}</td>"


def _table(head: list[str], rows: list[list[Any]], cls: str = "", nums: tuple[int, ...] = ()) -> str:
    out = [f"<table class=\"{cls}\">" if cls else "<table>", "<thead><tr>" + "".join(f"<th>{esc(h)}</th>" for h in head) + "</tr></thead><tbody>"]
    for row in rows:
        out.append("<tr>" + "".join(_td(v, "num" if i in nums else "") for i, v in enumerate(row)) + "</tr>")
    return "\n".join(out + ["</tbody></table>"])


def _volume(plan: Mapping[str, Any], workload: str) -> str:
    spec = plan["workloads"][workload]["spec"]
    units = spec["rate_card"]["volume_units"]
    unit = spec["dataset"]["unit"]
    return f"{units:,} {unit if units == 1 else _plural(unit)} ({spec['dataset']['units_per_item']} per item)"


def _plural(noun: str) -> str:
    if noun.endswith("y") and noun[-2:-1] not in tuple("aeiou"):
        return noun[:-1] + "ies"
    return noun + ("es" if noun.endswith(("s", "x", "ch", "sh")) else "s")


def _rate_card(plan: Mapping[str, Any], cells: Mapping[tuple, dict[str, Any]], derived: Any, partial: bool,
               threshold: str) -> str:
    edition = plan["edition"]["spec"]
    view = {"workloads": {w: {"job": wl["spec"]["rate_card"]["job"], "volume_units": wl["spec"]["rate_card"]["volume_units"],
                              "units_per_item": wl["spec"]["dataset"]["units_per_item"]} for w, wl in plan["workloads"].items()}}
    flagships = sorted(m for m, e in plan["models"].items() if e["role"] == "flagship")
    out, evidence = [], []
    for system in _systems(plan):
        rows = []
        for workload, systems in _planned(plan).items():
            if system not in systems:
                continue
            job, items = _items_per_card(view, workload)
            info = (derived or {}).get("workloads", {}).get(workload, {}).get("systems", {}).get(system) if isinstance(derived, dict) else None
            if not cells:
                cheapest, flag = NOT_RUN, (NOT_RUN if flagships else "no flagship in this edition")
            elif partial:
                cheapest = flag = PARTIAL_NOTE
            elif info is None:
                cheapest, flag = NOT_RUN, NOT_RUN
            else:
                best = info["cheapest_qualifying"]
                best_cell = cells.get((workload, best["model"], system)) if best else None
                cheapest = (f"{_rate(best_cell, items)} ({model_label(best['model'])}, cheapest qualifying){_zero_note(plan, best['model'])}"
                            if best_cell is not None
                            else f"{model_label(best['model'])}: {NOT_RUN}" if best else f"no qualifying model at pass ≥ {threshold}")
                if best_cell is not None:
                    evidence.append(_evidence(best_cell))
                parts = []
                for f in info["flagships"] or [{"model": m, "run": False} for m in flagships]:
                    cell = cells.get((workload, f["model"], system))
                    if cell is None:
                        parts.append(f"{model_label(f['model'])}: {NOT_RUN}")
                    else:
                        premium = f" · frontier premium {_ratio(_dec(f.get('frontier_premium')))}" if best else ""
                        parts.append(f"{_rate(cell, items)} ({model_label(f['model'])}, flagship){_zero_note(plan, f['model'])}{premium}")
                        if not best or best["model"] != f["model"]:
                            evidence.append(_evidence(cell))
                flag = "; ".join(parts) or "no flagship in this edition"
            rows.append([job, _volume(plan, workload), cheapest, flag, "; ".join(evidence) or ("—" if cells else NOT_RUN)])
            evidence = []
        if not rows:  # a system that runs only the edition's tasks (direct, orchestrated): no job has a rate
            continue
        out.append(f"<h3>Rates — {esc(system)}</h3>")
        out.append(_table(["job", "volume", "cheapest qualifying rate", "flagship rate", "evidence (passes/n, Wilson 95%, CPO)"],
                          rows, cls="card"))
    out.append(f"<p><strong>Quality bar:</strong> pass rate ≥ {esc(threshold)} on n = {esc(edition['n_per_cell'])} items per cell"
               f"{'' if edition.get('repetitions', 1) == 1 else ' × ' + esc(edition['repetitions']) + ' repetitions'}. "
               "Rate = CPO × the card's volume. Intervals: Wilson 95% for pass rates, cluster bootstrap 95% over items for CPO.</p>")
    out.append(f"<p class=\"std-footer\"><strong>{esc(footer(plan))}</strong><br>{esc(edition.get('disclaimer') or DEFAULT_DISCLAIMER)}</p>")
    return "\n".join(out)


def _zero_priced(plan: Mapping[str, Any], model: str) -> bool:
    price = plan["models"][model]["price"]
    return all(Decimal(str(price.get(k, "0"))) == 0 for k in ("input", "cached_input", "cache_write", "output", "reasoning"))


def _zero_note(plan: Mapping[str, Any], model: str) -> str:
    """A $0 rate of a model the edition prices at $0 says so: it is no measurement of a cost."""
    return " — $0 price: not billed (see Frozen prices)" if _zero_priced(plan, model) else ""


def _evidence(cell: Mapping[str, Any]) -> str:
    return f"{model_label(cell['model'])}: {_pass(cell)}, Wilson {_wilson(cell)}, CPO {_cpo(cell)}"


def _dec(value: Any) -> Decimal | None:
    return None if value is None else Decimal(str(value))


def _multipliers(plan: Mapping[str, Any], derived: Any, cells: Mapping[tuple, Any], partial: bool) -> str:
    rows = []
    for workload, systems in _planned(plan).items():
        if not {"single-shot", "agentic"} <= set(systems):
            continue
        for model in systems["agentic"]:
            if _role(plan, model) not in SCORED_ROLES:
                continue
            if not cells or (workload, model, "agentic") not in cells or (workload, model, "single-shot") not in cells:
                value = NOT_RUN
            elif partial:
                value = PARTIAL_NOTE
            else:
                raw = derived["workloads"].get(workload, {}).get("agentic_multiplier", {}).get(model)
                value = _ratio(_dec(raw))
                if raw is None:
                    a, s = cells[(workload, model, "agentic")], cells[(workload, model, "single-shot")]
                    value = "n/a (" + ("no single-shot success" if not s["passes"] else "no agentic success" if not a["passes"]
                                       else "single-shot CPO is $0.00") + ")"
            rows.append([plan["workloads"][workload]["spec"]["rate_card"]["job"], workload, model_label(model), value])
    if not rows:
        return "<p>No workload of this edition runs both systems.</p>"
    return _table(["job", "workload", "model", "agentic CPO ÷ single-shot CPO"], rows)


def _point(cell: Mapping[str, Any]) -> dict[str, Any]:
    return {"model": cell["model"], "check": cell["role"] in CHECK_ROLES, "pass_rate": cell["pass_rate"],
            "wilson_low": cell["wilson_low"], "wilson_high": cell["wilson_high"],
            "cpo": None if cell["cpo_usd"] is None else float(cell["cpo_usd"]),
            "cpo_low": None if cell["cpo_low"] is None else float(cell["cpo_low"]),
            "cpo_high": None if cell["cpo_high"] is None else float(cell["cpo_high"])}


def _cell_notes(c: Mapping[str, Any]) -> str:
    notes = [f"{c[k]} {label}" for k, label in (("infra_excluded", "infra-excluded"), ("infra_retries", "infra retries"),
                                                ("step_cap", "step cap"), ("refusals", "refusals"), ("invalid_output", "invalid output"),
                                                ("no_answer", "no answer")) if c.get(k)]
    if c.get("judge"):
        notes.append(f"judge {c['judge']}: {c.get('review')}")
    return "; ".join(notes) or "—"


def _workload_section(plan: Mapping[str, Any], out: Path | None, workload: str, systems: Mapping[str, list[str]],
                      cells: Mapping[tuple, dict[str, Any]], partial: bool, threshold: str, seed: str,
                      memo: ChartMemo) -> str:
    spec = plan["workloads"][workload]["spec"]
    job = spec["rate_card"]["job"]
    parts = [f"<h2 id=\"wl-{esc(charts._ident(workload))}\">{esc(job)} <span class=\"meta\">({esc(workload)})</span></h2>"]
    panels, unplotted = [], []
    for system, models in systems.items():
        points = []
        for m in models:
            c = cells.get((workload, m, system))
            if c is None:
                unplotted.append(f"{m} · {system}: {NOT_RUN}")
            elif not c["n"]:
                unplotted.append(f"{m} · {system}: n/a (0 graded runs; {c['infra_excluded']} infra-excluded)")
            else:
                points.append(_point(c))
        if points:
            panels.append({"system": system, "points": points})
    key = workload
    if panels:
        svg = memo.svg(charts.pareto_svg, key, f"{job}: CPO vs pass rate", panels, footer(plan), float(threshold))
        parts.append(f"<figure class=\"chart\" id=\"chart-{esc(charts._ident(key))}\" data-chart=\"{esc(workload)}\">{svg}"
                     f"<figcaption>Pareto chart: each model's CPO (x, bootstrap 95%) against its pass rate (y, Wilson 95%); "
                     f"the dashed line is the quality bar {esc(threshold)}; a model with no success is drawn in the grey "
                     f"“no success” band, never at $0. Grey squares are checks of the harness, never candidates."
                     f"<br>{esc(footer(plan))}</figcaption></figure>")
    else:
        parts.append(f"<p class=\"notrun\">Chart: {NOT_RUN} (no graded runs).</p><p class=\"small\">{esc(footer(plan))}</p>")
    if unplotted and cells:
        parts.append("<p class=\"small\">Not in the chart: " + "; ".join(esc(u) for u in unplotted) + "</p>")
    # The cells, with P(cheapest qualifier) per system.
    rows = []
    for system, models in systems.items():
        probs = {"models": {}, "none": None}
        if cells and not partial and out is not None:
            per_model = {}
            for m in models:
                if _role(plan, m) in SCORED_ROLES and (workload, m, system) in cells:
                    per_item: dict[str, tuple[Decimal, int, int]] = {}
                    for r in _read_runs(out, workload, m, system):
                        cost, p, g = per_item.get(r["item"], (Decimal(0), 0, 0))
                        per_item[r["item"]] = (cost + Decimal(r["trace"]["cost_usd"]), p + (r["evaluation"]["verdict"] == "pass"), g + 1)
                    per_model[m] = per_item
            probs = cheapest_probabilities(per_model, Fraction(threshold), f"{seed}/{workload}")
        for m in models:
            c = cells.get((workload, m, system))
            role = _role(plan, m)
            check = role in CHECK_ROLES
            if c is None:
                rows.append([model_label(m), system, role, NOT_RUN, NOT_RUN, NOT_RUN, NOT_RUN, NOT_RUN, NOT_RUN, NOT_RUN, "—"])
                continue
            p_q = PARTIAL_NOTE if partial else ("n/a" if c["p_qualifying"] is None else f"{c['p_qualifying']:.3f}")
            if check:
                p_c, qual = "check (not scored)", "check (not scored)"
            elif partial:
                p_c, qual = PARTIAL_NOTE, PARTIAL_NOTE
            else:
                v = probs["models"].get(m)
                p_c = "n/a" if v is None else f"{v:.3f}"
                qual = "yes" if c["qualifying"] else "no"
            rows.append([model_label(m), system, role + (" (check)" if check else ""), _pass(c), _wilson(c), p_q, p_c,
                         _usd(Decimal(c["cost_usd"])), _cpo(c), qual, _cell_notes(c)])
        if probs.get("none") is not None:
            rows.append(["(no model qualifies)", system, "—", "", "", "", f"{probs['none']:.3f}", "", "", "", "share of bootstrap replicates"])
    parts.append(_table(["model", "system", "role", "passes/n", "Wilson 95%", f"P(p ≥ {threshold})", "P(cheapest qualifier)",
                         "cost", "CPO (bootstrap 95%)", "qualifying", "notes"], rows, nums=(3, 5, 6, 7)))
    parts.append(_failures(out, workload, systems, cells))
    return "\n".join(parts)


def _excerpt(trace: Mapping[str, Any]) -> str:
    """The last thing the model said (its answer, or its last tool call), cut to EXCERPT_CHARS."""
    for message in reversed(trace.get("messages") or []):
        if message.get("role") != "assistant":
            continue
        content = message.get("content")
        if not content and message.get("tool_calls"):
            content = json.dumps(message["tool_calls"], ensure_ascii=False, sort_keys=True)
        if content:
            text = content if isinstance(content, str) else json.dumps(content, ensure_ascii=False, sort_keys=True)
            return text if len(text) <= EXCERPT_CHARS else text[:EXCERPT_CHARS] + f" … [{len(text) - EXCERPT_CHARS} more characters in the trace]"
    return "(the model said nothing)"


def _failures(out: Path | None, workload: str, systems: Mapping[str, list[str]], cells: Mapping[tuple, Any]) -> str:
    head = "<h3>Failure examples</h3>"
    if out is None or not cells:
        return head + f"<p class=\"notrun\">{NOT_RUN}</p>"
    examples = []
    for system, models in systems.items():
        for m in models:
            c = cells.get((workload, m, system))
            if c is None or c["role"] == "infrastructure-check":
                continue
            for r in _read_runs(out, workload, m, system):
                if r["evaluation"].get("verdict") == "pass":
                    continue
                failed = [v for v in r["evaluation"].get("validators", []) if v.get("status") == "fail"]
                check = next((v for v in failed if v.get("severity") == "error"), failed[0] if failed else None)
                examples.append((c["role"] == "floor-check", system, m, r, check))
                break  # one example per cell, the first failing item
    if not examples:
        return head + "<p>No failed run.</p>"
    examples.sort(key=lambda e: (e[0], _SYSTEM_ORDER.get(e[1], 99), e[2]))
    parts = [head]
    for _, system, m, r, check in examples[:EXAMPLES_PER_WORKLOAD]:
        rel = r["dir"].relative_to(out).as_posix()
        where = check.get("location") if check else None
        loc = where if isinstance(where, str) else "—" if where is None else json.dumps(where, ensure_ascii=False, sort_keys=True)
        parts.append(
            f"<div class=\"failure\"><p><strong>{esc(model_label(m))}</strong> · {esc(system)} · item {esc(r['item'])} "
            f"(repetition {esc(r['repetition'])}): {esc(r['evaluation'].get('final_disposition', r['evaluation'].get('verdict')))}; "
            f"categories {esc(', '.join(r['evaluation'].get('failure_categories') or []) or '—')}<br>"
            f"failing check <code>{esc(check['id'] if check else 'none recorded')}</code> at <code>{esc(loc)}</code>: "
            f"{esc(str((check or {}).get('message', ''))[:800])}<br>"
            f"<a href=\"{esc(rel)}/trace.json\">trace.json</a> · <a href=\"{esc(rel)}/evaluation.json\">evaluation.json</a> · "
            f"<a href=\"{esc(rel)}/manifest.json\">manifest.json</a></p>"
            f"<pre class=\"excerpt\">{esc(_excerpt(r['trace']))}</pre></div>")
    return "\n".join(parts)


def _judge(plan: Mapping[str, Any], summary: Mapping[str, Any] | None) -> str:
    block = judge_models.judge_block(plan)
    judged = judge_models.judged_workloads(plan)
    if not judged or not block:
        return "<p>No judged workload in this edition: every verdict is deterministic.</p>"
    js = (summary or {}).get("judge") or {}
    label = js.get("label") or (f"{block.get('model')} (reference judge: deterministic code, not a language model)"
                                if block.get("model") == judge_models.REFERENCE_JUDGE else str(block.get("model")))
    parts = [f"<p>Judged workloads: {esc(', '.join(judged))}. Deterministic checks run first; a deterministic fail is a fail and is "
             f"not shown to the judge. Judge: {esc(label)}. It sees anonymized outputs and the rubric verbatim; its tokens are "
             f"grading cost, never in CPO.</p>"]
    kin = js.get("same_family_models", judge_models.same_family(plan))
    if kin:
        parts.append(f"<p class=\"banner\"><strong>Disclosure:</strong> the judge is of the same family as {esc(', '.join(kin))}; "
                     f"a second judge ({esc(block.get('second_model'))}) grades a seeded sample.</p>")
    review = plan["edition"]["spec"].get("human_review") or {}
    if review:
        parts.append(f"<p>Human spot-check: {esc(review.get('spot_check_rate'))} of each cell's judged runs; a judge–human "
                     f"disagreement above {esc(review.get('disagreement_threshold'))} requires a manual regrade of the cell.</p>")
    rows = []
    done = {(c["workload"], c["model"], c["system"]): c for c in js.get("cells", [])}
    for workload in judged:
        for system, models in _planned(plan).get(workload, {}).items():
            for m in models:
                c = done.get((workload, m, system))
                if c is None:
                    rows.append([workload, model_label(m), system, NOT_RUN, NOT_RUN, NOT_RUN, NOT_RUN, NOT_RUN])
                    continue
                spot = c.get("human_spot_check") or {}
                second = c.get("second_judge")
                rows.append([workload, model_label(m), system, c["judge_calls"], c["judge_skipped_after_deterministic_fail"],
                             _usd(Decimal(c["grading_cost_usd"])),
                             f"{second['agreed']}/{second['graded']} agreed" if second else "not sampled",
                             c.get("methodology_note") or c.get("review") or (spot and spot.get("note")) or "—"])
    parts.append(_table(["workload", "model", "system", "judge calls", "skipped after a deterministic fail", "grading cost (not in CPO)",
                         "second judge", "human review"], rows, nums=(3, 4, 5)))
    return "\n".join(parts)


def _header(plan: Mapping[str, Any], lock: Mapping[str, Any], summary: Mapping[str, Any] | None, prereg: bool) -> str:
    edition = plan["edition"]["spec"]
    parts = [f"<h1>{esc(edition['brand'])} — {esc(edition['title'])}</h1>",
             f"<p class=\"meta\">edition {esc(edition['id'])} v{esc(edition['version'])} · {esc(edition['date'])} · standard "
             f"{esc(plan['standard']['ref'])} (methodology v{esc(plan['standard']['spec']['methodology'])}) · plan "
             f"<code>{esc(lock['root_digest'])}</code></p>"]
    if prereg:
        parts.append("<p class=\"banner\"><strong>Pre-registration.</strong> This page is built from the plan.lock alone, before any "
                     f"run: it fixes what will be measured. Every result reads “{NOT_RUN}”.</p>")
        return "\n".join(parts)
    s = summary or {}
    if s.get("partial"):
        parts.append(f"<p class=\"banner bad\"><strong>PARTIAL RUN — not a measurement.</strong> {esc(s.get('runs_not_run'))} of "
                     f"{esc(s.get('runs_planned'))} planned runs are not in this folder: no rates, qualifying verdicts, "
                     "frontier premiums or agentic multipliers.</p>")
    cal = s.get("calibration") or {}
    if cal:
        parts.append(f"<p class=\"{'ok' if cal.get('ok') else 'banner bad'}\">Calibration (oracle n/n, null 0/n): "
                     f"{'holds' if cal.get('ok') else 'FAILS'} in {esc(cal.get('cells_checked'))} cells"
                     + "".join(f"<br>{esc(f['workload'])} · {esc(f['model'])} · {esc(f['system'])}: {esc(f['message'])}"
                               for f in cal.get("failures", [])) + "</p>")
    parts.append(f"<p class=\"meta\">runs planned {esc(s.get('runs_planned'))} · graded {esc(s.get('runs_graded'))} · "
                 f"infra-excluded {esc(s.get('runs_incomplete'))}</p>")
    return "\n".join(parts)


def _prices(plan: Mapping[str, Any]) -> str:
    rows = []
    for m, e in sorted(plan["models"].items()):
        p = e["price"]
        zero = _zero_priced(plan, m)
        rows.append([model_label(m), e["role"], f"${p.get('input')} / ${p.get('output')} per {p.get('per_tokens'):,} tokens"
                     + (" — $0: this model is not billed, so its costs and CPO are $0.00" if zero else ""),
                     p.get("as_of"), p.get("source", "—")])
    return _table(["model", "role", "frozen price (input / output)", "as of", "source"], rows)


def _page(plan: Mapping[str, Any], lock: Mapping[str, Any], out: Path | None, summary: Mapping[str, Any] | None,
          cells: Mapping[tuple, dict[str, Any]], memo: ChartMemo) -> str:
    edition = plan["edition"]["spec"]
    threshold = str(edition["qualifying"]["min_pass_rate"])
    partial = bool((summary or {}).get("partial"))
    derived = (summary or {}).get("derived")
    prereg = out is None
    body = [_header(plan, lock, summary, prereg), "<h2 id=\"rate-card\">Rate card</h2>",
            _rate_card(plan, cells, derived, partial, threshold), "<h2>Agentic multiplier</h2>",
            _multipliers(plan, derived, cells, partial)]
    for workload, systems in _planned(plan).items():
        body.append(_workload_section(plan, out, workload, systems, cells, partial, threshold, lock["root_digest"], memo))
    body += ["<h2>Judge</h2>", _judge(plan, summary), "<h2>Frozen prices</h2>", _prices(plan)]
    if plan.get("tasks"):
        body.append("<h2>Reliability tasks</h2>")
        body.append("<p><a href=\"reliability-report.md\">reliability-report.md</a>: the seed-000 task report of this folder.</p>"
                    if out is not None and (out / "reliability-report.md").exists() else f"<p class=\"notrun\">{NOT_RUN}</p>")
    body.append(f"<footer class=\"std\"><strong>{esc(footer(plan))}</strong><br>{esc(edition.get('disclaimer') or DEFAULT_DISCLAIMER)}"
                "</footer>")
    title = f"{edition['brand']} — {edition['id']} v{edition['version']}" + (" (pre-registration)" if prereg else "")
    return ("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
            "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
            f"<title>{esc(title)}</title>\n<style>{_CSS}</style>\n</head>\n<body>\n<main>\n" + "\n".join(body) + "\n</main>\n</body>\n</html>\n")


def build_page(lock: Mapping[str, Any], out: Path, memo: bool = True) -> str:
    """The page of run folder `out` (its summary.json and cells already written); `outputs.write_all`
    writes it to OUT/report.html. `memo`: charts drawn before by this user under the same code may
    come from the per-user memo (`lrc.runtime.report.chart_memo`); `lrc verify` draws every one."""
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    _RUNS.clear()
    try:
        return _page(lock["plan"], lock, out, summary, _read_cells(out), ChartMemo(enabled=memo))
    finally:
        _RUNS.clear()


def preregistration_page(lock: Mapping[str, Any]) -> str:
    """The page from the lock alone: every result "not run"."""
    return _page(lock["plan"], lock, None, None, {}, ChartMemo(enabled=False))


def preregister_cli(lock_path: Path, html_out: Path | None) -> int:
    """`lrc report PLAN.lock --html [--html-out FILE]`: the pre-registration page from the
    verified lock alone (a stale or tampered lock would pre-register something else), every
    result "not run"; printed to stdout, or written to FILE (its path printed)."""
    from lrc.runtime.execute import EXIT_OK, EXIT_REFUSED, EXIT_UNUSABLE, Refused, _say, load_verified

    try:
        lock = load_verified(lock_path)
    except Refused as exc:
        _say(f"lrc report: {exc}")
        return EXIT_REFUSED
    page = preregistration_page(lock)
    if html_out is None:
        sys.stdout.write(page)
        return EXIT_OK
    from lrc.runtime import filebytes

    try:
        filebytes.put_output(html_out, page.encode("utf-8"), inputs=(lock_path,))
    except OSError as exc:
        _say(f"lrc report: cannot write {html_out}: {exc.strerror or exc}")
        return EXIT_UNUSABLE
    print(f"pre-registration page: {html_out}")
    return EXIT_OK
