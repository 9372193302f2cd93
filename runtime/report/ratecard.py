"""The rate card (seed §6): one line per workload, the quality bar, footer and disclaimer.

The headline keeps the seed's shape -- `Job — $X (Model A, cheapest qualifying) · $Y (Model B,
flagship)` -- and every rate shown is followed by the evidence behind it (s/n, Wilson 95%
interval, CPO with its bootstrap interval), because at n = 15 a qualifying call can flip by
chance (benchmark-method-anchors §7.4). Rates are recomputed exactly from the cell's summed
cost and successes, not from the rounded CPO string.

With repetitions, a pass rate is the mean over items with its item-clustered interval, and its
denominator reads "15 items × 3 repetitions", never "n = 45" (`stats.clustered_pass_rate`);
the reliability table gives pass^k, pass@k and outcome consistency with their denominators.
"""

from __future__ import annotations

from decimal import ROUND_HALF_UP, Decimal
from fractions import Fraction
from typing import TYPE_CHECKING, Any, Mapping

from lrc.runtime.pricing import format_usd
from lrc.runtime.report.aggregate import CELL_KEY, CHECK_ROLES, exact_cpo
from lrc.runtime.report.labels import model_label
from lrc.runtime.report.stats import MONEY_CONTEXT
from lrc.runtime.report.errata_card import section as errata_section
from lrc.runtime.window import rate_card_line as window_line

if TYPE_CHECKING:
    import polars as pl

METHODOLOGY = "1.0"
DEFAULT_DISCLAIMER = "Rates are measurements under this methodology, not quotes or guarantees."
_SYSTEM_ORDER = {"single-shot": 0, "agentic": 1}


def _esc(text: Any) -> str:
    return str(text).replace("|", "\\|")


def _decimal(value: Fraction) -> Decimal:
    return MONEY_CONTEXT.divide(Decimal(value.numerator), Decimal(value.denominator))


def _items_per_card(edition: Mapping[str, Any], workload: str) -> tuple[str, Fraction]:
    """The card's job text and how many items make up its volume (1,000 emails = 50 batches)."""
    spec = edition.get("workloads", {}).get(workload)
    if not spec:
        return f"{workload} (per item)", Fraction(1)
    volume = Fraction(str(spec["volume_units"])) / Fraction(str(spec.get("units_per_item", 1)))
    return str(spec["job"]), volume


def _usd(amount: Decimal) -> str:
    """Dollars with at least three significant digits (CPO of a cheap model is $0.000142,
    not $0.00); whole-cent amounts keep the usual two places."""
    places = 2 if amount.is_zero() else max(2, 2 - amount.adjusted())
    text = format_usd(amount, places)
    whole, _, frac = text.partition(".")
    # Extra places are for significance only: drop their trailing zeros ($0.750 -> $0.75).
    return f"{whole}.{frac[:2]}{frac[2:].rstrip('0')}" if frac else text


def repeated(cell: Mapping[str, Any]) -> bool:
    """True when some item of the cell has more than one graded repetition."""
    return (cell.get("reps_max") or 1) > 1


def denominator(cell: Mapping[str, Any]) -> str:
    """'15 items × 3 repetitions' (or '15 items × 2–3 repetitions' when some were excluded)."""
    lo, hi = cell.get("reps_min") or 1, cell.get("reps_max") or 1
    reps = f"{lo}" if lo == hi else f"{lo}–{hi}"
    items = f"{cell['items']} item{'' if cell['items'] == 1 else 's'}"
    return f"{items} × {reps} repetition{'s' if hi > 1 else ''}"


def pass_text(cell: Mapping[str, Any]) -> str:
    """passes/n with one repetition; the mean over items and its denominator with more."""
    if not cell["n"]:
        return f"n/a (0 graded; {cell['infra_excluded']} infra-excluded)"
    if not repeated(cell):
        return f"{cell['passes']}/{cell['n']}"
    return f"{cell['pass_rate']:.3f} over {denominator(cell)} ({cell['passes']} passing runs)"


_pass = pass_text


def interval_text(cell: Mapping[str, Any]) -> str:
    if cell["wilson_low"] is None:
        return "n/a"
    text = f"[{cell['wilson_low']:.3f}, {cell['wilson_high']:.3f}]"
    if repeated(cell):
        text += f" clustered by item, n_eff {cell['n_eff']:.1f}"
    return text


_wilson = interval_text


def _cpo(cell: Mapping[str, Any]) -> str:
    if not cell["n"]:
        return "n/a"
    if cell["cpo_usd"] is None:
        return f"∞ (no success; spent {_usd(Decimal(cell['cost_usd']))})"
    text = _usd(Decimal(cell["cpo_usd"]))
    if cell["cpo_low"] is not None:
        text += (
            f" (bootstrap 95% {_usd(Decimal(cell['cpo_low']))}–"
            f"{_usd(Decimal(cell['cpo_high']))}"
        )
        if cell["cpo_p_no_success"]:
            text += f"; P(no success) {cell['cpo_p_no_success']:.1%}"
        text += ")"
    return text


def _rate(cell: Mapping[str, Any], items: Fraction) -> str:
    """Rate = CPO x items in the card's volume, or the honest reason there is none."""
    if not cell["n"]:
        return "n/a (no graded runs)"
    value = exact_cpo(cell)
    if value is None:
        return f"∞ (no success; spent {_usd(Decimal(cell['cost_usd']))})"
    return format_usd(_decimal(value * items))


def _ratio(value: Decimal | None) -> str:
    if value is None:
        return "n/a"
    return f"×{value.quantize(Decimal('0.01'), rounding=ROUND_HALF_UP)}"


def _evidence(cell: Mapping[str, Any]) -> str:
    return f"  - {model_label(cell['model'])}: pass {_pass(cell)}, Wilson 95% {_wilson(cell)}; CPO {_cpo(cell)}"


def _quality_bar(cells: list[dict[str, Any]], threshold: str) -> str:
    ns = sorted({c["items"] for c in cells})
    if not ns:
        return f"Quality bar: pass rate ≥ {threshold} (no runs yet)."
    items = f"{ns[0]}" if len(ns) == 1 else f"{ns[0]}–{ns[-1]}"
    if not any(repeated(c) for c in cells):
        return (
            f"Quality bar: pass rate ≥ {threshold} on n = {items} items per cell. "
            "Intervals are Wilson 95% for pass rates and cluster-bootstrap 95% for CPO."
        )
    # Never "n = 45": with repetitions the sample is the items, each repeated.
    reps = sorted({r for c in cells for r in (c.get("reps_min") or 1, c.get("reps_max") or 1)})
    rep = f"{reps[0]}" if len(reps) == 1 else f"{reps[0]}–{reps[-1]}"
    return (
        f"Quality bar: pass rate ≥ {threshold} on {items} items × {rep} repetitions per cell; the pass rate is "
        "the mean of the items' pass fractions, never the runs counted as independent. Intervals are Wilson 95% "
        "clustered by item (on the effective sample n_eff from the between-item design effect) for pass rates and "
        "cluster-bootstrap 95% over items for CPO."
    )


def _rate_line(workload: str, system: str, info: Mapping[str, Any],
               by_key: Mapping[tuple, dict[str, Any]], edition: Mapping[str, Any],
               threshold: str) -> list[str]:
    job, items = _items_per_card(edition, workload)
    parts, evidence = [], []
    cheapest = info["cheapest_qualifying"]
    if cheapest:
        cell = by_key[(workload, cheapest["model"], system)]
        parts.append(f"{_rate(cell, items)} ({model_label(cheapest['model'])}, cheapest qualifying)")
        evidence.append(_evidence(cell))
    else:
        parts.append(f"no qualifying model at pass ≥ {threshold}")
    for flagship in info["flagships"]:
        cell = by_key.get((workload, flagship["model"], system))
        if cell is None:
            parts.append(f"flagship {model_label(flagship['model'])} not run")
            continue
        parts.append(f"{_rate(cell, items)} ({model_label(flagship['model'])}, flagship)")
        if not cheapest or cheapest["model"] != flagship["model"]:
            evidence.append(_evidence(cell))
        if cheapest:
            evidence.append(
                f"  - frontier premium (flagship CPO ÷ cheapest-qualifying CPO): "
                f"{_ratio(flagship['frontier_premium'])}"
            )
    states = {c.get("review") for k, c in by_key.items() if k[0] == workload and k[2] == system and c.get("judge")}
    if "manual regrade required" in states:
        parts.append("**manual regrade required** (judge–human disagreement above the threshold; see the cells)")
    elif "provisional" in states:
        parts.append("provisional: judged results await the human spot-check")
    return [f"- {job} — " + " · ".join(parts), *evidence]


PARTIAL_NOTE = "partial run: not a full measurement"


def _partial_banner(coverage: Mapping[str, Any]) -> list[str]:
    """What a partial folder's card says instead of rates: it is not a measurement, and which
    cells lack which runs."""
    lines = [
        f"**PARTIAL RUN — not a measurement.** {coverage['not_run']} of the plan's {coverage['planned']} runs "
        "are not in this folder's journal (a subset, a limit, a shard, or an execute that was stopped). "
        "A partial folder gives no rates, no cheapest qualifying model, no frontier premium and no "
        "agentic multiplier, and no cell is called qualifying; the cells below describe only the runs made. "
        "Complete the folder with `lrc execute` (no subset flags) or combine its shards with `lrc merge`.",
        "",
        "## Coverage (runs made of runs planned, cells short of the plan)",
        "",
    ]
    for c in coverage["cells"]:
        if c["made"] < c["planned"]:
            lines.append(f"- {c['workload']} · {model_label(c['model'])} · {c['system']}: {c['made']} of {c['planned']}")
    return lines + [""]


def _cell_table(cells: list[dict[str, Any]], threshold: str,
                reused: Mapping[tuple, tuple[int, Decimal]] | None = None) -> list[str]:
    lines = [
        f"| model | system | role | passes/n | Wilson 95% | P(p ≥ {threshold}) | cost | "
        "CPO | qualifying | notes |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for c in cells:
        is_check = c["role"] in CHECK_ROLES
        notes = [
            f"{c[k]} {label}" for k, label in (
                ("infra_excluded", "infra-excluded"), ("infra_retries", "infra retries"),
                ("step_cap", "step cap"), ("refusals", "refusals"),
                ("invalid_output", "invalid output"), ("no_answer", "no answer"),
            ) if c[k]
        ]
        if Decimal(c["infra_cost_usd"]):
            notes.append(f"infra spend {_usd(Decimal(c['infra_cost_usd']))} (not in CPO)")
        notes += _judge_notes(c)
        reused_here = (reused or {}).get(tuple(c[k] for k in CELL_KEY))
        if reused_here and reused_here[0]:
            notes.append(f"{reused_here[0]} reused responses (paid originally {_usd(reused_here[1])})")
        partial = bool(c.get("partial"))
        qualifying = "check (not scored)" if is_check else (PARTIAL_NOTE if partial else ("yes" if c["qualifying"] else "no"))
        p_q = PARTIAL_NOTE if partial else ("n/a" if c["p_qualifying"] is None else f"{c['p_qualifying']:.3f}")
        role = f"{c['role']} (check)" if is_check else c["role"]
        lines.append("| " + " | ".join(_esc(v) for v in (
            model_label(c["model"]), c["system"], role, _pass(c), _wilson(c), p_q,
            _usd(Decimal(c["cost_usd"])), _cpo(c), qualifying, "; ".join(notes) or "—",
        )) + " |")
    return lines


def _judge_notes(c: Mapping[str, Any]) -> list[str]:
    """A judged cell's judge and review facts (nothing for a deterministic workload)."""
    if not c.get("judge"):
        return []
    notes = []
    review = c.get("review")
    if review == "manual regrade required":
        notes.append(f"**MANUAL REGRADE REQUIRED** (judge–human disagreement {c.get('human_disagreement')})")
    elif review == "provisional":
        notes.append("judged results provisional: human spot-check not imported")
    elif review == "regraded":
        notes.append("regraded by human reviewers")
    elif review == "spot-checked":
        notes.append(f"human spot-check imported (disagreement {c.get('human_disagreement')})")
    notes.append(f"{c.get('judge_calls', 0)} judge calls, grading cost {_usd(Decimal(c.get('grading_cost_usd') or '0'))} (not in CPO)")
    if c.get("judge_skipped"):
        notes.append(f"{c['judge_skipped']} not judged after a deterministic fail")
    if c.get("invalid_judgments"):
        notes.append(f"{c['invalid_judgments']} invalid judgments (fails)")
    if c.get("second_judged"):
        notes.append(f"second judge agreed {c['judges_agree']}/{c['second_judged']}")
    if review in ("manual regrade required", "regraded") and c.get("review_note"):
        notes.append(str(c["review_note"]))
    return notes


def _judge_section(edition: Mapping[str, Any]) -> list[str]:
    judge = edition.get("judge")
    if not judge:
        return []
    out = ["## Judge", "",
           f"Judged workloads ({', '.join(judge['workloads'])}) run their deterministic checks first: a deterministic fail "
           f"is a fail and is not shown to the judge. The judge is {judge['label']}. It sees each output anonymized (model "
           f"identity, provider names and self-references removed) and the rubric verbatim; its tokens are grading cost, "
           f"never in CPO."]
    if judge.get("same_family"):
        out.append("")
        out.append(f"Disclosure: the judge is of the same family as {', '.join(judge['same_family'])}; a second judge "
                   f"({judge.get('second_model')}) grades a seeded sample of at least 20% of each judged workload's judged runs, "
                   f"and its agreement is shown per cell.")
    if judge.get("spot_check_rate"):
        out.append("")
        out.append(f"Human spot-check: {judge['spot_check_rate']} of each cell's judged runs; a judge–human disagreement above "
                   f"{judge['disagreement_threshold']} requires a manual regrade of the whole cell. Until its spot-check is "
                   f"imported, a cell's judged results are provisional.")
    return out + [""]


def rate_card_markdown(cells: pl.DataFrame, derived: Mapping[str, Any] | str,
                       edition: Mapping[str, Any], coverage: Mapping[str, Any] | None = None,
                       reused: Mapping[tuple, tuple[int, Decimal]] | None = None,
                       reuse_totals: tuple[int, int, Decimal, Decimal, Decimal] | None = None,
                       paired: Mapping[str, Any] | None = None, window: Mapping[str, Any] | None = None) -> str:
    """The rate card as Markdown: rates per system, multipliers, cell tables, footer.

    `coverage` (`outputs.coverage`) with runs not made marks the card partial: a banner and the
    cells short of the plan instead of rates and multipliers (`derived` is then unused).
    `reused` (cell key -> reused calls, what they cost where they were paid) and `reuse_totals`
    (reused calls, all calls, their cost at this edition's prices, at their origins' prices,
    this folder's own calls' cost) describe responses answered from a response cache.
    `paired` (`paired.compare`) adds the paired system comparisons; `window` (`window.summary`) a
    line saying whether the runs were made within the edition's window (seed §3)."""
    threshold = str(edition["qualifying_threshold"])
    rows = sorted(cells.iter_rows(named=True), key=lambda c: tuple(c[k] for k in CELL_KEY))
    by_key = {tuple(c[k] for k in CELL_KEY): c for c in rows}
    brand = edition.get("brand", "LedgerRate")
    partial = bool(coverage and coverage["not_run"])
    out = [
        f"# {brand} rate card — edition {edition.get('id', '?')} v{edition.get('version', '?')}"
        f" ({edition.get('date', 'undated')})" + (" — PARTIAL RUN, not a measurement" if partial else ""),
        "",
        _quality_bar([c for c in rows if c["role"] not in CHECK_ROLES], threshold),
        "",
    ]
    if partial:
        return "\n".join(out + _partial_banner(coverage) + _cells_and_footer(rows, threshold, edition, brand, reused, reuse_totals, window))
    workloads = derived["workloads"]
    systems = sorted({s for w in workloads.values() for s in w["systems"]},
                     key=lambda s: (_SYSTEM_ORDER.get(s, 99), s))
    for system in systems:
        out += [f"## Rates — {system}", ""]
        for workload, info in workloads.items():
            if system in info["systems"]:
                out += _rate_line(workload, system, info["systems"][system], by_key, edition,
                                  threshold)
        out.append("")
    out += reliability_section(rows, edition)
    out += paired_section(paired)
    multipliers = [(w, m, v) for w, info in workloads.items()
                   for m, v in info["agentic_multiplier"].items()]
    if multipliers:
        out += ["## Agentic multiplier (agentic CPO ÷ single-shot CPO)", ""]
        out += [f"- {_items_per_card(edition, w)[0]} · {model_label(m)}: {_ratio(v)}" for w, m, v in multipliers]
        out.append("")
    return "\n".join(out + _cells_and_footer(rows, threshold, edition, brand, reused, reuse_totals, window))


def _cells_and_footer(rows: list[dict[str, Any]], threshold: str, edition: Mapping[str, Any], brand: str,
                      reused: Mapping[tuple, tuple[int, Decimal]] | None = None,
                      reuse_totals: tuple[int, int, Decimal, Decimal, Decimal] | None = None,
                      window: Mapping[str, Any] | None = None) -> list[str]:
    out = ["## Cells", ""]
    for workload in sorted({c["workload"] for c in rows}):
        out += [f"### {workload}", ""]
        out += _cell_table([c for c in rows if c["workload"] == workload], threshold, reused)
        out.append("")
    out += _judge_section(edition)
    if reuse_totals and reuse_totals[0]:
        n, total, here, origin, paid = reuse_totals
        out += [
            f"Response cache: {n} of {total} calls were answered from responses paid by earlier runs "
            f"(listed in summary.json and marked in each trace). Their tokens are counted in cost and CPO at "
            f"this edition's frozen prices ({_usd(here)}; paid originally {_usd(origin)}). "
            f"Paid to providers by this run: {_usd(paid)}.",
            "",
        ]
    out += errata_section(rows, edition)  # a regraded folder: the corrections, loudly (lrc regrade)
    if window is not None:  # seed §3: were the runs made within the edition's window?
        out += [window_line(window), ""]
    out += [
        "Infrastructure-check and floor-check models are shown as checks of the harness; "
        "they are never rate-card candidates.",
        "",
        "---",
        "",
        str(edition.get("footer") or
            f"{brand} · methodology v{edition.get('methodology', METHODOLOGY)} · "
            f"{edition.get('date', 'undated')}"),
        "",
        str(edition.get("disclaimer") or DEFAULT_DISCLAIMER),
        "",
    ]
    return out


def rate_card_text(cells: pl.DataFrame, derived: Mapping[str, Any] | str,
                   edition: Mapping[str, Any], coverage: Mapping[str, Any] | None = None) -> str:
    """Terminal form: the Markdown reads fine as plain text."""
    return rate_card_markdown(cells, derived, edition, coverage)


def _share(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.3f}"


def reliability_section(rows: list[Mapping[str, Any]], edition: Mapping[str, Any], title: str = "workloads") -> list[str]:
    """pass^k, pass@k (k = 1..declared repetitions) and outcome consistency per cell, each with
    its denominator; one line when the edition ran each item once (nothing to invent)."""
    K = int(edition.get("repetitions", 1) or 1)
    if not rows:
        return []
    if K <= 1:
        return [f"Reliability ({title}): each item ran once (repetitions: 1), so pass^k and pass@k for k > 1 and "
                "outcome consistency are n/a; pass^1 = pass@1 = the pass rate.", ""]
    ks = range(1, K + 1)
    out = [f"## Reliability across repetitions — {title} (declared repetitions: {K})", "",
           "pass^k: share of items whose k repetitions all pass; pass@k: at least one of k passes (unbiased "
           "estimators over each item's graded repetitions, averaged over items with at least k of them). "
           "Consistency: items whose repetitions all agree (all pass or all fail), of the items repeated.", "",
           "| " + " | ".join(["task" if title == "tasks" else "workload", "model", "system", "items × repetitions",
                               *(f"pass^{k}" for k in ks), *(f"pass@{k}" for k in ks), "consistency"]) + " |",
           "|" + "---|" * (5 + 2 * K)]
    for c in rows:
        cells = [c["workload"], model_label(c["model"]), c["system"], denominator(c) if c["n"] else "n/a (0 graded)",
                 *(_share(c.get(f"pass_hat_{k}")) for k in ks), *(_share(c.get(f"pass_at_{k}")) for k in ks),
                 (f"{c['consistent_items']}/{c['repeated_items']} items ({c['consistency']:.3f})"
                  if c.get("repeated_items") else "n/a (no item repeated)")]
        out.append("| " + " | ".join(_esc(v) for v in cells) + " |")
    return out + [""]


def _signed(value: float | None) -> str:
    return "n/a" if value is None else f"{value:+.3f}"


def paired_section(paired: Mapping[str, Any] | None) -> list[str]:
    """The paired comparisons table: B − A per workload or task and overall, with the paired
    interval, cost and steps per outcome of each system, and the failure categories B removes
    or adds."""
    if not paired or not paired.get("pairs"):
        return []
    out = ["## Paired comparisons (same model, same items and repetitions)", "", f"Method: {paired['method']}", "",
           "| model | A → B | workload / task | items | pass A | pass B | B − A (95%) | sign test p | "
           "CPO A | CPO B | steps per run (per success) A | B | categories B removes | categories B adds |",
           "|---|---|---|---:|---:|---:|---|---:|---:|---:|---:|---:|---|---|"]
    for pair in paired["pairs"]:
        for row in [*pair["by_workload"], pair["overall"]]:
            a, b = row["a"], row["b"]
            interval = "n/a" if row["diff_low"] is None else f"[{row['diff_low']:+.3f}, {row['diff_high']:+.3f}]"
            diff = _signed(row["diff"])
            if row["diff"] is not None and row["diff_low"] is None and row["items"]:
                interval = ("n/a (no item differs)" if not row["diff"]
                            else "n/a (every item differs by the same amount; see the sign test)")
            out.append("| " + " | ".join(_esc(v) for v in (
                model_label(pair["model"]), f"{pair['a']} → {pair['b']}", row.get("workload", "**overall**"), row["items"],
                _share(a["pass_rate"]), _share(b["pass_rate"]), f"{diff} {interval}", f"{row['sign_test_p']:.3g}",
                _side_cpo(a), _side_cpo(b), _side_steps(a), _side_steps(b),
                ", ".join(row["categories"]["removed"]) or "—", ", ".join(row["categories"]["added"]) or "—",
            )) + " |")
    return out + [""]


def _side_cpo(side: Mapping[str, Any]) -> str:
    if not side["runs"]:
        return "n/a"
    if side["cpo_usd"] is None:
        return f"∞ (no success; spent {_usd(Decimal(side['cost_usd']))})"
    return _usd(Decimal(side["cpo_usd"]))


def _side_steps(side: Mapping[str, Any]) -> str:
    if not side["runs"]:
        return "n/a"
    per_success = "n/a" if side["steps_per_success"] is None else f"{Decimal(side['steps_per_success']):.2f}"
    return f"{Decimal(side['steps_per_run']):.2f} ({per_success})"
