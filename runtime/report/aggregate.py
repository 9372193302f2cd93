"""Per-cell metrics (workload x model x system) and the derived indices of seed §2.2.

polars does the grouping, but two of its habits would break reproducible reports
(ecosystem-packages §2): `group_by` order is unspecified, so every frame is sorted by its
keys; float sums vary with the thread count, so money is summed as `pl.Decimal` with a scale
wide enough for every input (exact), and leaves this module as decimal strings, never floats.

Denominators follow DESIGN §5: n counts graded runs only, and `items` the items they cover.
With repetitions (K > 1) a cell is `items` clusters of correlated runs, never n = items x K
independent ones: `pass_rate` is the mean of the items' pass fractions, `wilson_low/high` the
item-clustered Wilson interval on the effective sample `n_eff` (`stats.clustered_pass_rate`;
with one repetition it is exactly Wilson on passes/n), and pass^k / pass@k (k = 1..declared
repetitions; null where no item has k graded repetitions) and outcome consistency describe
reliability across repetitions. Runs excluded for infrastructure
failure are counted in `infra_excluded` and their spend in `infra_cost_usd`, outside CPO
(infra failures are not model failures; seed §3). An empty denominator is null ("n/a"), never
100%, and a cell without a success has an infinite CPO (null here, "inf" in the CSV).
"""

from __future__ import annotations

import os
from decimal import ROUND_HALF_UP, Decimal, InvalidOperation
from fractions import Fraction
from pathlib import Path
from typing import Any, Iterable, Mapping

import polars as pl

from lrc.runtime.pricing import decimal_str
from lrc.runtime.report.stats import (
    MONEY_CONTEXT, bootstrap_cpo, clustered_pass_rate, consistency, cpo, jeffreys_p_at_least_real, pass_k_curves,
)

SINGLE_SHOT = "single-shot"
AGENTIC = "agentic"
#: Roles that compete on the rate card; the reference checks are never scored.
SCORED_ROLES: tuple[str, ...] = ("flagship", "candidate", "baseline")
CHECK_ROLES: tuple[str, ...] = ("infrastructure-check", "floor-check")
CELL_KEY: tuple[str, ...] = ("workload", "model", "system")
#: Places kept for CPO strings (a ratio, so not exact); rates are recomputed exactly from sums.
CPO_PLACES = 12
#: Places kept for ratios (frontier premium, agentic multiplier).
RATIO_PLACES = 6
#: Fixed places for rates and probabilities in the CSV, so no float noise reaches the file.
CSV_FLOAT_PLACES = 4
DEFAULT_REPLICATES = 2000

_STATUSES = ("graded", "infra_excluded")
_VERDICTS = ("pass", "partial", "fail")
_OUTCOMES = ("answered", "step_cap", "refusal", "no_answer", "invalid_output", "infra_error",
             "budget_exceeded")  # a task run over its budget (seed 000): tokens, tool calls or wall time
_TOKEN_KEYS = ("input", "cached_input", "cache_write", "output", "reasoning")
_COUNT_COLUMNS = (
    "passes", "partials", "infra_excluded", "infra_retries", "step_cap", "refusals", "no_answer",
    "invalid_output", "calls", "steps", "tokens_input", "tokens_cached_input",
    "tokens_cache_write", "tokens_output", "tokens_reasoning",
    # The judge step of hybrid/judged workloads (seed §5), over every run of the cell that
    # reached it: calls made, runs not shown to the judge because a deterministic check failed
    # (a saving), invalid judgments (fails), and the second judge's sample and agreement.
    "judge_calls", "judge_skipped", "invalid_judgments", "second_judged", "judges_agree",
)
#: Per-cell facts about its judge and human review (strings; null for deterministic workloads).
NOTE_COLUMNS: tuple[str, ...] = ("judge", "review", "human_disagreement", "review_note")

CELL_SCHEMA: dict[str, Any] = {
    "workload": pl.String, "model": pl.String, "system": pl.String, "role": pl.String,
    "n": pl.Int64, "items": pl.Int64, "passes": pl.Int64, "partials": pl.Int64,
    "pass_rate": pl.Float64, "wilson_low": pl.Float64, "wilson_high": pl.Float64,
    "p_qualifying": pl.Float64,
    "infra_excluded": pl.Int64, "infra_retries": pl.Int64, "step_cap": pl.Int64,
    "refusals": pl.Int64, "no_answer": pl.Int64, "invalid_output": pl.Int64,
    "calls": pl.Int64, "steps": pl.Int64,
    "judge_calls": pl.Int64, "judge_skipped": pl.Int64, "invalid_judgments": pl.Int64,
    "second_judged": pl.Int64, "judges_agree": pl.Int64,
    # Judge tokens are grading cost: never in cost_usd, never in CPO (seed §5 via DESIGN §5).
    "grading_cost_usd": pl.String,
    "judge": pl.String, "review": pl.String, "human_disagreement": pl.String, "review_note": pl.String,
    "tokens_input": pl.Int64, "tokens_cached_input": pl.Int64, "tokens_cache_write": pl.Int64,
    "tokens_output": pl.Int64, "tokens_reasoning": pl.Int64,
    "cost_usd": pl.String, "infra_cost_usd": pl.String,
    "cpo_usd": pl.String, "cpo_low": pl.String, "cpo_high": pl.String,
    "cpo_p_no_success": pl.Float64, "qualifying": pl.Boolean,
    # The folder is a partial run (a subset, a limit, a shard, a stopped execute): not a full
    # measurement, so `qualifying` and `p_qualifying` are null ("partial run" in the CSV).
    "partial": pl.Boolean,
    # Repetitions (DESIGN §5): declared per item, graded per item (fewest, most), the clustered
    # interval's effective sample and design effect, and outcome consistency over the items
    # with two or more graded repetitions. pass_hat_<k> / pass_at_<k> follow, k = 1..repetitions.
    "repetitions": pl.Int64, "reps_min": pl.Int64, "reps_max": pl.Int64,
    "n_eff": pl.Float64, "design_effect": pl.Float64,
    "repeated_items": pl.Int64, "consistent_items": pl.Int64, "consistency": pl.Float64,
}
#: What a partial folder's qualifying fields read in the CSV (null in the parquet file).
PARTIAL_CSV = "partial run"


def cell_schema(repetitions: int = 1) -> dict[str, Any]:
    """CELL_SCHEMA plus pass_hat_<k> and pass_at_<k> for k = 1..repetitions (the edition's
    declared repetitions, so every cell of an edition has the same columns)."""
    extra = {f"pass_{kind}_{k}": pl.Float64 for kind in ("hat", "at") for k in range(1, repetitions + 1)}
    return {**CELL_SCHEMA, **extra}


def declared_repetitions(edition: Mapping[str, Any], rows: Iterable[Mapping[str, Any]] = ()) -> int:
    """The edition's declared repetitions (at least the most any record shows)."""
    declared = int(edition.get("repetitions", 1) or 1)
    return max([declared, *(int(r["repetition"]) for r in rows)])


def _money(value: Any, where: str) -> Decimal:
    """A money value from a record: decimal string (or Decimal/int), never float."""
    if isinstance(value, (float, bool)) or not isinstance(value, (str, int, Decimal)):
        raise ValueError(f"{where}: money must be a decimal string, got {value!r}")
    try:
        amount = Decimal(value)
    except InvalidOperation:
        raise ValueError(f"{where}: not a decimal amount: {value!r}") from None
    if not amount.is_finite() or amount < 0:
        raise ValueError(f"{where}: money must be finite and non-negative, got {value!r}")
    return amount


def _count(value: Any, where: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ValueError(f"{where}: expected a non-negative int, got {value!r}")
    return value


def _run_row(record: Mapping[str, Any]) -> dict[str, Any]:
    """One validated per-run row; graded and excluded runs keep their costs apart."""
    key = tuple(record.get(k) for k in (*CELL_KEY, "item", "repetition"))
    where = "run " + "/".join(str(k) for k in key)
    for field in (*CELL_KEY, "item"):
        if not isinstance(record.get(field), str) or not record[field]:
            raise ValueError(f"{where}: {field!r} must be a non-empty string")
    status, verdict, outcome = record.get("status"), record.get("verdict"), record.get("outcome")
    if status not in _STATUSES:
        raise ValueError(f"{where}: unknown status {status!r}")
    graded = status == "graded"
    if graded and verdict not in _VERDICTS:
        raise ValueError(f"{where}: a graded run needs a verdict in {_VERDICTS}, got {verdict!r}")
    if not graded and verdict is not None:
        raise ValueError(f"{where}: an infra-excluded run has no verdict, got {verdict!r}")
    if outcome not in _OUTCOMES:
        raise ValueError(f"{where}: unknown outcome {outcome!r}")
    usage = record.get("usage") or {}
    unknown = sorted(set(usage) - {*_TOKEN_KEYS, "calls"})
    if unknown:
        raise ValueError(f"{where}: unknown usage keys {unknown}")
    cost = _money(record.get("cost_usd"), f"{where}: cost_usd")
    g = int(graded)
    row: dict[str, Any] = {
        "workload": record["workload"], "model": record["model"], "system": record["system"],
        "item": record["item"],
        "item_index": _count(record.get("item_index"), f"{where}: item_index"),
        "repetition": _count(record.get("repetition"), f"{where}: repetition"),
        "graded": g,
        "passes": int(graded and verdict == "pass"),
        "partials": int(graded and verdict == "partial"),
        "infra_excluded": 1 - g,
        "infra_retries": _count(record.get("infra_retries", 0), f"{where}: infra_retries"),
        "step_cap": int(graded and outcome == "step_cap"),
        "refusals": int(graded and outcome == "refusal"),
        "no_answer": int(graded and outcome == "no_answer"),
        "invalid_output": int(graded and outcome == "invalid_output"),
        # Effort columns describe the graded runs, the same runs whose cost is in CPO.
        "calls": g * _count(usage.get("calls", 0), f"{where}: usage.calls"),
        "steps": g * _count(record.get("steps", 0), f"{where}: steps"),
        "cost": cost if graded else Decimal(0),
        "infra_cost": Decimal(0) if graded else cost,
        "grading_cost": _money(record.get("grading_cost_usd", "0"), f"{where}: grading_cost_usd"),
    }
    for k in ("judge_calls", "judge_skipped", "invalid_judgments", "second_judged", "judges_agree"):
        row[k] = _count(record.get(k, 0), f"{where}: {k}")
    for k in _TOKEN_KEYS:
        row[f"tokens_{k}"] = g * _count(usage.get(k, 0), f"{where}: usage.{k}")
    return row


def _decimal_dtype(amounts: Iterable[Decimal], rows: int) -> pl.Decimal:
    """A Decimal dtype whose scale holds every amount exactly (polars rounds silently)."""
    scale, digits = 0, 1
    for a in amounts:
        scale = max(scale, -a.as_tuple().exponent)
        digits = max(digits, a.adjusted() + 1)
    if digits + scale + len(str(rows)) > 38:
        raise ValueError("money amounts need more than 38 digits; cannot sum them exactly")
    return pl.Decimal(38, scale)


def _runs_frame(rows: list[dict[str, Any]]) -> pl.DataFrame:
    money = _decimal_dtype((a for r in rows for a in (r["cost"], r["infra_cost"], r["grading_cost"])), len(rows))
    schema: dict[str, Any] = {k: pl.Int64 for k in rows[0]}
    schema.update({k: pl.String for k in (*CELL_KEY, "item")})
    schema.update(cost=money, infra_cost=money, grading_cost=money)
    return pl.DataFrame(rows, schema=schema)


def _quantize(value: Decimal | None, places: int) -> Decimal | None:
    if value is None:
        return None
    return value.quantize(Decimal(1).scaleb(-places), rounding=ROUND_HALF_UP, context=MONEY_CONTEXT)


def _roles(edition: Mapping[str, Any]) -> dict[str, str]:
    roles = {m["id"]: m["role"] for m in edition.get("models", [])}
    for model, role in roles.items():
        if role not in SCORED_ROLES + CHECK_ROLES:
            raise ValueError(f"model {model!r} has unknown role {role!r}")
    return roles


def calibration(cells: pl.DataFrame) -> dict[str, Any]:
    """The reference checks (seed §3 via DESIGN §5): in every cell the infrastructure-check
    model passes n/n and the floor-check model 0/n, or the workload or the harness is broken.

    Judged on graded runs only: a run excluded for infrastructure failure has no verdict (the
    run is incomplete, exit 3, and a resume grades it). Failures among the graded runs stand
    whatever the missing runs would do, so they are reported even while runs are missing; a
    cell with no graded run at all is not judged (`unjudged`)."""
    failures: list[dict[str, Any]] = []
    unjudged: list[dict[str, Any]] = []
    checked = 0
    for c in cells.sort(*CELL_KEY).iter_rows(named=True):
        role = c["role"]
        if role not in CHECK_ROLES:
            continue
        where = {k: c[k] for k in CELL_KEY}
        n, passes = int(c["n"]), int(c["passes"])
        if n == 0:
            unjudged.append({**where, "role": role, "infra_excluded": int(c["infra_excluded"])})
            continue
        checked += 1
        expected = n if role == "infrastructure-check" else 0
        if passes != expected:
            failures.append({**where, "role": role, "passes": passes, "n": n, "expected_passes": expected,
                             "infra_excluded": int(c["infra_excluded"]),
                             "message": f"{role} model passed {passes}/{n}, must pass {expected}/{n}"})
    return {"ok": not failures, "cells_checked": checked, "failures": failures, "unjudged": unjudged}


def aggregate(records: list[Mapping[str, Any]], edition: Mapping[str, Any], partial: bool = False,
              notes: Mapping[tuple, Mapping[str, Any]] | None = None) -> pl.DataFrame:
    """One row per cell, sorted by workload, model, system (see CELL_SCHEMA for the columns).

    `partial`: the records are not every run of the plan (the folder is partial): no cell then
    carries a qualifying verdict or its probability; they are null and `partial` is true.
    `notes`: per cell key, the NOTE_COLUMNS of a judged cell (its judge and review state)."""
    if not records:
        return pl.DataFrame(schema=cell_schema(declared_repetitions(edition)))
    rows = [_run_row(r) for r in records]
    K = declared_repetitions(edition, rows)
    seen: set[tuple] = set()
    for r in rows:
        key = (r["workload"], r["model"], r["system"], r["item"], r["repetition"])
        if key in seen:
            raise ValueError(f"duplicate run {'/'.join(map(str, key))}: would be counted twice")
        seen.add(key)
    roles = _roles(edition)
    threshold = Fraction(str(edition["qualifying_threshold"]))
    seed = str(edition["bootstrap_seed"])
    replicates = int(edition.get("bootstrap_replicates", DEFAULT_REPLICATES))
    runs = _runs_frame(rows)
    cells = (
        runs.group_by(*CELL_KEY)
        .agg(
            pl.col("graded").sum().alias("n"),
            pl.col("item").filter(pl.col("graded") == 1).n_unique().alias("items"),
            *(pl.col(c).sum() for c in _COUNT_COLUMNS),
            pl.col("cost").sum(),
            pl.col("infra_cost").sum(),
            pl.col("grading_cost").sum(),
        )
        .sort(*CELL_KEY)
    )
    # Per-item sums for the cluster bootstrap, in item order so the draws are reproducible.
    per_item = (
        runs.filter(pl.col("graded") == 1)
        .group_by(*CELL_KEY, "item_index", "item")
        .agg(pl.col("cost").sum(), pl.col("passes").sum(), pl.len().alias("runs"))
        .sort(*CELL_KEY, "item_index", "item")
    )
    items: dict[tuple, tuple[list[Decimal], list[int], list[int]]] = {}
    for r in per_item.iter_rows(named=True):
        costs, passes, graded = items.setdefault((r["workload"], r["model"], r["system"]), ([], [], []))
        costs.append(r["cost"])
        passes.append(r["passes"])
        graded.append(r["runs"])

    out: list[dict[str, Any]] = []
    for c in cells.iter_rows(named=True):
        key = (c["workload"], c["model"], c["system"])
        if c["model"] not in roles:
            raise ValueError(f"model {c['model']!r} has runs but is not in the edition")
        n, passes = c["n"], c["passes"]
        costs, item_passes, item_runs = items.get(key, ([], [], []))
        interval = clustered_pass_rate(item_passes, item_runs)
        agree = consistency(item_passes, item_runs)
        curves = pass_k_curves(item_passes, item_runs, K)
        boot = bootstrap_cpo(costs, item_passes, f"{seed}/{c['workload']}", replicates)
        cell_cpo = cpo(c["cost"], passes)
        row = {k: c[k] for k in (*CELL_KEY, "n", "items", *_COUNT_COLUMNS)}
        row.update(
            role=roles[c["model"]],
            pass_rate=float(interval["estimate"]) if interval else None,
            wilson_low=interval["low"] if interval else None,
            wilson_high=interval["high"] if interval else None,
            p_qualifying=None if partial or not interval else jeffreys_p_at_least_real(
                interval["estimate"], interval["n_eff"], float(threshold)),
            cost_usd=decimal_str(c["cost"]),
            infra_cost_usd=decimal_str(c["infra_cost"]),
            cpo_usd=_money_str(_quantize(cell_cpo, CPO_PLACES)),
            cpo_low=_money_str(_quantize(boot["low"], CPO_PLACES)),
            cpo_high=_money_str(_quantize(boot["high"], CPO_PLACES)),
            cpo_p_no_success=boot["p_no_success"] if n else None,
            # Exact: 12/15 >= 0.80 must not hinge on float rounding; an empty cell never qualifies.
            qualifying=None if partial else bool(interval) and interval["estimate"] >= threshold,
            partial=partial,
            grading_cost_usd=decimal_str(c["grading_cost"]),
            **{k: (notes or {}).get(key, {}).get(k) for k in NOTE_COLUMNS},
            repetitions=K,
            reps_min=min(item_runs) if item_runs else None, reps_max=max(item_runs) if item_runs else None,
            n_eff=float(interval["n_eff"]) if interval else None,
            design_effect=float(interval["design_effect"]) if interval else None,
            repeated_items=agree["items"], consistent_items=agree["consistent"], consistency=agree["share"],
            **{f"pass_hat_{c['k']}": c["pass_hat"] for c in curves},
            **{f"pass_at_{c['k']}": c["pass_at"] for c in curves},
        )
        out.append(row)
    return pl.DataFrame(out, schema=cell_schema(K))


def _money_str(value: Decimal | None) -> str | None:
    return None if value is None else decimal_str(value)


def _ratio(num: Fraction | None, den: Fraction | None) -> Decimal | None:
    """num/den as a Decimal; None when either side is infinite/undefined or den is zero."""
    if num is None or den is None or den == 0:
        return None
    q = num / den
    exact = MONEY_CONTEXT.divide(Decimal(q.numerator), Decimal(q.denominator))
    return _quantize(exact, RATIO_PLACES)


def exact_cpo(cell: Mapping[str, Any]) -> Fraction | None:
    """A cell's CPO as an exact fraction (cost / passes); None when infinite or undefined."""
    if not cell["passes"]:
        return None
    return Fraction(Decimal(cell["cost_usd"])) / cell["passes"]


def derived(cells: pl.DataFrame, edition: Mapping[str, Any]) -> dict[str, Any]:
    """Seed §2.2 indices, keyed workload -> system (and workload -> model for the multiplier).

    Only flagship/candidate/baseline models compete; infrastructure and floor checks never
    do, whatever they score. Ties on CPO go to the lower model id so the answer is stable.
    Money and ratios are Decimals; None means infinite or undefined.
    """
    roles = _roles(edition)
    flagship_ids = sorted(m for m, r in roles.items() if r == "flagship")
    by_key = {(c["workload"], c["model"], c["system"]): c for c in cells.iter_rows(named=True)}
    workloads: dict[str, Any] = {}
    for workload in sorted({k[0] for k in by_key}):
        systems: dict[str, Any] = {}
        for system in sorted({k[2] for k in by_key if k[0] == workload}):
            scored = [
                c for (w, _, s), c in sorted(by_key.items())
                if w == workload and s == system and c["role"] in SCORED_ROLES
            ]
            qualifying = [(exact_cpo(c), c["model"]) for c in scored if c["qualifying"]]
            qualifying = [(v, m) for v, m in qualifying if v is not None]
            best = min(qualifying) if qualifying else None
            cheapest = None
            if best is not None:
                cheapest = {"model": best[1], "cpo_usd": _cpo_decimal(best[0])}
            flagships = []
            for model in flagship_ids:
                cell = by_key.get((workload, model, system))
                value = exact_cpo(cell) if cell else None
                flagships.append({
                    "model": model,
                    "run": cell is not None,
                    "cpo_usd": _cpo_decimal(value),
                    "frontier_premium": _ratio(value, best[0] if best else None),
                })
            systems[system] = {"cheapest_qualifying": cheapest, "flagships": flagships}
        multiplier: dict[str, Decimal | None] = {}
        for model in sorted({k[1] for k in by_key if k[0] == workload}):
            if roles.get(model) not in SCORED_ROLES:
                continue
            agentic = by_key.get((workload, model, AGENTIC))
            single = by_key.get((workload, model, SINGLE_SHOT))
            if agentic and single:
                multiplier[model] = _ratio(exact_cpo(agentic), exact_cpo(single))
        workloads[workload] = {"systems": systems, "agentic_multiplier": multiplier}
    return {"qualifying_threshold": str(edition["qualifying_threshold"]), "workloads": workloads}


def _cpo_decimal(value: Fraction | None) -> Decimal | None:
    if value is None:
        return None
    exact = MONEY_CONTEXT.divide(Decimal(value.numerator), Decimal(value.denominator))
    return _quantize(exact, CPO_PLACES)


def _csv_frame(cells: pl.DataFrame) -> pl.DataFrame:
    """All-string copy for the CSV: fixed places for floats, 'n/a' for empty denominators,
    'inf' for a CPO without a success."""
    columns: dict[str, list[Any]] = {}
    partial = cells["partial"].to_list() if "partial" in cells.columns else [False] * cells.height
    for name in cells.columns:
        values = cells[name].to_list()
        if name == "qualifying":
            values = [PARTIAL_CSV if part else ("true" if v else "false") for v, part in zip(values, partial)]
        elif name == "p_qualifying":
            values = [PARTIAL_CSV if part else ("n/a" if v is None else f"{v:.{CSV_FLOAT_PLACES}f}")
                      for v, part in zip(values, partial)]
        elif cells.schema[name] == pl.Float64:
            values = ["n/a" if v is None else f"{v:.{CSV_FLOAT_PLACES}f}" for v in values]
        elif name == "cpo_usd":
            values = [
                v if v is not None else ("inf" if n else "n/a") for v, n in zip(values, cells["n"])
            ]
        elif name in ("cpo_low", "cpo_high"):
            values = ["n/a" if v is None else v for v in values]
        columns[name] = values
    return pl.DataFrame(columns, schema={k: (pl.String if v == pl.Float64 or k == "qualifying" else v)
                                         for k, v in cells.schema.items()})


def write_cells(cells: pl.DataFrame, out_dir: str | Path) -> tuple[Path, Path]:
    """Write cells.csv (byte-identical for identical input) and cells.parquet."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    cells = cells.sort(*CELL_KEY)
    csv_path, parquet_path = out / "cells.csv", out / "cells.parquet"
    # Each through a temporary file and a rename: a kill never leaves half a table.
    tmp_csv, tmp_parquet = (p.with_name(f".{p.name}.{os.getpid()}.tmp") for p in (csv_path, parquet_path))
    try:
        tmp_csv.write_bytes(_csv_frame(cells).write_csv(line_terminator="\n").encode("utf-8"))
        os.replace(tmp_csv, csv_path)
        cells.write_parquet(tmp_parquet)
        os.replace(tmp_parquet, parquet_path)
    finally:
        for tmp in (tmp_csv, tmp_parquet):
            tmp.unlink(missing_ok=True)
    return csv_path, parquet_path


def reliability_fields(cell: Mapping[str, Any]) -> dict[str, Any]:
    """A cell's repetition-aware figures for summary.json, with their denominators: the pass
    rate over items and its clustered interval, pass^k and pass@k (k = 1..repetitions; null
    where no item has k graded repetitions), and outcome consistency."""
    K = int(cell.get("repetitions") or 1)
    return {
        "items": cell["items"], "repetitions": K,
        "graded_repetitions_per_item": None if cell.get("reps_min") is None else [cell["reps_min"], cell["reps_max"]],
        "pass_rate_over_items": _rounded(cell["pass_rate"]),
        "pass_rate_95": None if cell["wilson_low"] is None else [_rounded(cell["wilson_low"]), _rounded(cell["wilson_high"])],
        "n_eff": _rounded(cell.get("n_eff")), "design_effect": _rounded(cell.get("design_effect")),
        "pass_hat_k": {str(k): _rounded(cell.get(f"pass_hat_{k}")) for k in range(1, K + 1)},
        "pass_at_k": {str(k): _rounded(cell.get(f"pass_at_{k}")) for k in range(1, K + 1)},
        "consistency": {"items_repeated": cell.get("repeated_items", 0), "items_consistent": cell.get("consistent_items", 0),
                        "share": _rounded(cell.get("consistency"))},
    }


def _rounded(value: float | None) -> float | None:
    """Fixed places for summary.json (the cells' parquet keeps full precision)."""
    return None if value is None else round(value, 6)


def reliability_summary(cells: pl.DataFrame, kind: str = "workload") -> list[dict[str, Any]]:
    """summary.json's per-cell reliability rows, sorted by cell key."""
    return [{kind: c["workload"], "model": c["model"], "system": c["system"], "role": c["role"], "n_runs": c["n"],
             **reliability_fields(c)} for c in cells.sort(*CELL_KEY).iter_rows(named=True)]
