"""Cells, derived indices, the CSV/parquet artifacts and the rate card."""

from __future__ import annotations

import random
from decimal import Decimal

import polars as pl
import pytest

from lrc.runtime.report.aggregate import aggregate, derived, write_cells
from lrc.runtime.report.ratecard import rate_card_markdown, rate_card_text
from lrc.runtime.report.stats import jeffreys_p_at_least, wilson

WL = "triage.ap-inbox.v1"
DISCLAIMER = "Rates are measurements under this methodology, not quotes or guarantees."
FOOTER = "LedgerRate · methodology v1.0 · 2026-12-01"


def edition(**models: str) -> dict:
    return {
        "id": "2026.12-demo", "version": 1, "date": "2026-12-01", "brand": "LedgerRate",
        "footer": FOOTER, "disclaimer": DISCLAIMER, "qualifying_threshold": "0.80",
        "bootstrap_seed": "test-seed",
        "models": [{"id": m, "role": r} for m, r in models.items()],
        "workloads": {WL: {"job": "Sort 1,000 AP emails", "volume_units": 1000,
                           "units_per_item": 20, "unit": "email"}},
    }


ED = edition(**{"m/cand": "candidate", "m/flag": "flagship", "lrc/baseline": "baseline",
                "lrc/oracle": "infrastructure-check", "lrc/null": "floor-check"})


def run(model: str, i: int, verdict: str | None, cost: str, *, system: str = "single-shot",
        status: str = "graded", outcome: str | None = None, rep: int = 1,
        retries: int = 0) -> dict:
    graded = status == "graded"
    return {
        "workload": WL, "model": model, "system": system, "item": f"ap-batch-{i:02d}",
        "item_index": i, "repetition": rep, "status": status,
        "verdict": verdict if graded else None,
        "outcome": outcome or ("answered" if graded else "infra_error"),
        "usage": {"input": 1000, "cached_input": 100, "cache_write": 0, "output": 50,
                  "reasoning": 0, "calls": 1},
        "cost_usd": cost, "infra_retries": retries, "steps": 1,
    }


def cell_runs(model: str, passes: int, cost: str, n: int = 15, **kw) -> list[dict]:
    return [run(model, i, "pass" if i < passes else "fail", cost, **kw) for i in range(n)]


def one(cells: pl.DataFrame, model: str, system: str = "single-shot") -> dict:
    rows = cells.filter((pl.col("model") == model) & (pl.col("system") == system)).to_dicts()
    assert len(rows) == 1
    return rows[0]


def card(records: list[dict], ed: dict = ED) -> str:
    cells = aggregate(records, ed)
    return rate_card_markdown(cells, derived(cells, ed), ed)


# ---------------------------------------------------------------- cells

def test_columns_order_and_counts():
    records = (
        cell_runs("m/flag", 15, "0.01")
        + cell_runs("m/cand", 12, "0.001")
        + cell_runs("lrc/oracle", 15, "0")
        + [run("m/cand", 0, "fail", "0.002", system="agentic", outcome="step_cap"),
           run("m/cand", 1, "fail", "0.002", system="agentic", outcome="refusal"),
           run("m/cand", 2, None, "0.0005", system="agentic", status="infra_excluded", retries=3),
           run("m/cand", 3, "partial", "0.002", system="agentic", outcome="invalid_output",
               retries=1)]
    )
    cells = aggregate(records, ED)
    required = ["workload", "model", "system", "role", "n", "passes", "partials", "pass_rate",
                "wilson_low", "wilson_high", "infra_excluded", "infra_retries", "step_cap",
                "refusals", "invalid_output", "calls", "tokens_input", "tokens_cached_input",
                "tokens_output", "tokens_reasoning", "cost_usd", "cpo_usd", "cpo_low",
                "cpo_high", "qualifying"]
    assert set(required) <= set(cells.columns)
    keys = cells.select("workload", "model", "system").rows()
    assert keys == sorted(keys)
    for money in ("cost_usd", "cpo_usd", "cpo_low", "cpo_high", "infra_cost_usd"):
        assert cells.schema[money] == pl.String

    agentic = one(cells, "m/cand", "agentic")
    assert agentic["n"] == 3  # the infra-excluded run is not in n
    assert agentic["infra_excluded"] == 1 and agentic["infra_retries"] == 4
    assert agentic["step_cap"] == 1 and agentic["refusals"] == 1
    assert agentic["invalid_output"] == 1 and agentic["partials"] == 1
    assert agentic["passes"] == 0 and agentic["cpo_usd"] is None  # infinite
    assert agentic["cost_usd"] == "0.006"  # infra spend kept apart
    assert agentic["infra_cost_usd"] == "0.0005"
    assert agentic["calls"] == 3 and agentic["tokens_input"] == 3000

    cand = one(cells, "m/cand")
    assert cand["n"] == 15 and cand["passes"] == 12
    assert cand["pass_rate"] == pytest.approx(0.8)
    assert cand["qualifying"] is True  # 12/15 == 0.80 exactly
    assert cand["wilson_low"] == pytest.approx(0.5481, abs=5e-5)
    assert cand["cost_usd"] == "0.015"
    assert Decimal(cand["cpo_usd"]) == Decimal("0.00125")
    assert Decimal(cand["cpo_low"]) <= Decimal(cand["cpo_usd"]) <= Decimal(cand["cpo_high"])
    assert one(cells, "lrc/oracle")["role"] == "infrastructure-check"


def test_money_sums_are_exact():
    # 0.1 + 0.2 style costs that float sums get wrong, plus sub-nano amounts.
    costs = ["0.1", "0.2", "0.000000000123", "0.7", "1.0000001"] * 3
    records = [run("m/flag", i, "pass", c) for i, c in enumerate(costs)]
    cells = aggregate(records, ED)
    expected = sum((Decimal(c) for c in costs), Decimal(0))
    assert Decimal(one(cells, "m/flag")["cost_usd"]) == expected
    assert one(cells, "m/flag")["cost_usd"] == "6.000000300369"


def test_shuffled_input_gives_identical_csv(tmp_path):
    records = (
        cell_runs("m/flag", 14, "0.0123")
        + cell_runs("m/cand", 13, "0.00042", system="agentic")
        + cell_runs("m/cand", 11, "0.0003")
        + cell_runs("lrc/null", 0, "0")
        + [run("lrc/baseline", i, None, "0", status="infra_excluded") for i in range(15)]
    )
    write_cells(aggregate(records, ED), tmp_path / "a")
    shuffled = list(records)
    random.Random(7).shuffle(shuffled)
    write_cells(aggregate(shuffled, ED), tmp_path / "b")
    a = (tmp_path / "a" / "cells.csv").read_bytes()
    b = (tmp_path / "b" / "cells.csv").read_bytes()
    assert a == b
    assert b"\r" not in a
    back = pl.read_parquet(tmp_path / "a" / "cells.parquet")
    assert back.equals(aggregate(records, ED))


def test_empty_denominator_is_na_never_100(tmp_path):
    records = [run("lrc/baseline", i, None, "0.001", status="infra_excluded") for i in range(3)]
    cells = aggregate(records, ED)
    c = one(cells, "lrc/baseline")
    assert c["n"] == 0 and c["infra_excluded"] == 3
    assert c["pass_rate"] is None and c["wilson_low"] is None and c["qualifying"] is False
    assert c["cpo_usd"] is None and c["cost_usd"] == "0"
    write_cells(cells, tmp_path)
    csv = (tmp_path / "cells.csv").read_text()
    row = dict(zip(*(line.split(",") for line in csv.splitlines())))
    assert row["pass_rate"] == "n/a" and row["wilson_low"] == "n/a" and row["cpo_usd"] == "n/a"
    text = card(records)
    assert "n/a" in text and "100%" not in text and "1.000" not in text


def test_csv_formats_floats_and_inf(tmp_path):
    cells = aggregate(cell_runs("m/flag", 0, "0.01") + cell_runs("m/cand", 15, "0.001"), ED)
    write_cells(cells, tmp_path)
    lines = (tmp_path / "cells.csv").read_text().splitlines()
    rows = [dict(zip(lines[0].split(","), line.split(","))) for line in lines[1:]]
    cand, flag = rows
    assert cand["pass_rate"] == "1.0000" and cand["wilson_low"] == "0.7961"
    assert cand["cpo_usd"] == "0.001"
    assert flag["cpo_usd"] == "inf" and flag["cost_usd"] == "0.15"


def test_empty_records():
    cells = aggregate([], ED)
    assert cells.height == 0 and "cpo_usd" in cells.columns
    assert derived(cells, ED)["workloads"] == {}


@pytest.mark.parametrize("mutate,match", [
    (lambda r: r.update(cost_usd=0.01), "decimal string"),
    (lambda r: r.update(model="m/unknown"), "not in the edition"),
    (lambda r: r.update(status="weird"), "status"),
    (lambda r: r.update(verdict=None), "verdict"),
    (lambda r: r["usage"].update(audio=3), "usage"),
])
def test_bad_records_are_errors(mutate, match):
    records = cell_runs("m/flag", 3, "0.01", n=3)
    mutate(records[1])
    with pytest.raises(ValueError, match=match):
        aggregate(records, ED)


def test_duplicate_runs_are_errors():
    records = cell_runs("m/flag", 3, "0.01", n=3)
    with pytest.raises(ValueError, match="duplicate"):
        aggregate(records + [dict(records[0])], ED)


def test_repetitions_cluster_by_item():
    records = [run("m/flag", i, "pass" if (i + r) % 2 else "fail", "0.01", rep=r)
               for i in range(5) for r in (1, 2, 3)]
    c = one(aggregate(records, ED), "m/flag")
    assert c["n"] == 15 and c["items"] == 5 and c["passes"] == 8


# ---------------------------------------------------------------- derived

def test_infrastructure_check_never_cheapest_qualifying():
    records = (
        cell_runs("lrc/oracle", 15, "0")          # 100%, free
        + cell_runs("lrc/null", 15, "0")          # (pretend) floor check also passes
        + cell_runs("m/cand", 13, "0.002")
        + cell_runs("m/flag", 15, "0.03")
    )
    d = derived(aggregate(records, ED), ED)
    single = d["workloads"][WL]["systems"]["single-shot"]
    assert single["cheapest_qualifying"]["model"] == "m/cand"
    assert single["cheapest_qualifying"]["cpo_usd"] == Decimal("0.002307692308")
    flag = single["flagships"][0]
    assert flag["model"] == "m/flag" and flag["cpo_usd"] == Decimal("0.03")
    # premium = 0.03 / (0.03/13) = 13 exactly
    assert flag["frontier_premium"] == Decimal("13")
    text = card(records)
    assert "(lrc/oracle, cheapest qualifying)" not in text
    assert "check (not scored)" in text


def test_only_checks_qualify_means_no_qualifying_model():
    records = cell_runs("lrc/oracle", 15, "0") + cell_runs("m/flag", 5, "0.03")
    d = derived(aggregate(records, ED), ED)
    assert d["workloads"][WL]["systems"]["single-shot"]["cheapest_qualifying"] is None


def test_cheapest_tie_breaks_on_model_id():
    ed = edition(**{"m/b": "candidate", "m/a": "candidate"})
    records = cell_runs("m/b", 15, "0.01") + cell_runs("m/a", 15, "0.01")
    d = derived(aggregate(records, ed), ed)
    assert d["workloads"][WL]["systems"]["single-shot"]["cheapest_qualifying"]["model"] == "m/a"


def test_agentic_multiplier():
    records = (
        cell_runs("m/flag", 15, "0.01")
        + cell_runs("m/flag", 12, "0.04", system="agentic")
        + cell_runs("m/cand", 10, "0.01")
        + cell_runs("m/cand", 0, "0.05", system="agentic")
        + cell_runs("lrc/oracle", 15, "0.01")
        + cell_runs("lrc/oracle", 15, "0.01", system="agentic")
    )
    d = derived(aggregate(records, ED), ED)
    am = d["workloads"][WL]["agentic_multiplier"]
    # (0.60/12) / (0.15/15) = 0.05 / 0.01 = 5
    assert am["m/flag"] == Decimal("5")
    assert am["m/cand"] is None  # agentic never succeeded: undefined, not a number
    assert "lrc/oracle" not in am  # checks are never scored
    assert list(d["workloads"][WL]["systems"]) == ["agentic", "single-shot"]


def test_derived_is_deterministic_under_shuffle():
    records = cell_runs("m/flag", 15, "0.01") + cell_runs("m/cand", 14, "0.001")
    shuffled = list(records)
    random.Random(3).shuffle(shuffled)
    assert derived(aggregate(records, ED), ED) == derived(aggregate(shuffled, ED), ED)


# ---------------------------------------------------------------- rate card

def test_rate_card_qualifying_candidate_and_flagship():
    records = cell_runs("m/cand", 13, "0.002") + cell_runs("m/flag", 15, "0.03")
    text = card(records)
    # 50 items of 20 emails: candidate 0.03/13*50 = $0.12, flagship 0.45/15*50 = $1.50
    assert "- Sort 1,000 AP emails — $0.12 (m/cand, cheapest qualifying) · $1.50 (m/flag, flagship)" in text
    assert "Quality bar: pass rate ≥ 0.80 on n = 15 items" in text
    assert "pass 13/15, Wilson 95% [0.621, 0.963]" in text
    assert "pass 15/15, Wilson 95% [0.796, 1.000]" in text
    assert "frontier premium" in text and "×13.00" in text
    assert FOOTER in text and DISCLAIMER in text
    assert "| m/cand | single-shot | candidate | 13/15 |" in text
    assert rate_card_text(aggregate(records, ED), derived(aggregate(records, ED), ED), ED) == text


def test_rate_card_nothing_qualifies():
    records = cell_runs("m/cand", 11, "0.002") + cell_runs("m/flag", 9, "0.03")
    text = card(records)
    assert "Sort 1,000 AP emails — no qualifying model at pass ≥ 0.80 · $2.50 (m/flag, flagship)" in text
    assert "pass 9/15" in text


def test_rate_card_flagship_without_success():
    records = cell_runs("m/cand", 15, "0.002") + cell_runs("m/flag", 0, "0.03")
    text = card(records)
    assert "∞ (no success; spent $0.45) (m/flag, flagship)" in text
    assert "$0.10 (m/cand, cheapest qualifying)" in text  # 0.03/15 * 50 items


def test_rate_card_per_system_and_tiny_costs():
    records = (
        cell_runs("m/cand", 15, "0.0000021")
        + cell_runs("m/cand", 15, "0.00001", system="agentic")
        + cell_runs("m/flag", 15, "0.03")
    )
    text = card(records)
    assert "## Rates — single-shot" in text and "## Rates — agentic" in text
    assert text.index("## Rates — single-shot") < text.index("## Rates — agentic")
    # 0.0000021 * 50 = 0.000105: a real cost never prints as $0.00
    assert "$0.00011 (m/cand, cheapest qualifying)" in text
    assert "flagship m/flag not run" in text  # no agentic flagship cell
    assert "## Agentic multiplier" in text


def test_rate_card_without_edition_disclaimer_still_has_one():
    ed = dict(ED)
    ed.pop("disclaimer")
    ed.pop("footer")
    text = card(cell_runs("m/flag", 15, "0.03"), ed)
    assert DISCLAIMER in text
    assert "LedgerRate · methodology v1.0 · 2026-12-01" in text


# ---------------------------------------------------------------- repetitions (issue 14)

from lrc.runtime.report.aggregate import reliability_summary  # noqa: E402

ED3 = {**ED, "repetitions": 3}


def repeated_runs(model: str, outcomes: list[str], cost: str = "0.01", **kw) -> list[dict]:
    """One item per string of 'p'/'f' (a pass or a fail per repetition)."""
    return [run(model, i, "pass" if o == "p" else "fail", cost, rep=r, **kw)
            for i, reps in enumerate(outcomes) for r, o in enumerate(reps, start=1)]


# 15 items x 3 repetitions: 10 always pass, 2 always fail, 3 pass twice of three.
MIXED = ["ppp"] * 10 + ["fff"] * 2 + ["ppf"] * 3


def test_three_repetitions_never_read_n_45(tmp_path):
    records = repeated_runs("m/flag", MIXED) + repeated_runs("m/cand", ["ppp"] * 15, "0.001")
    cells = aggregate(records, ED3)
    flag = one(cells, "m/flag")
    assert flag["n"] == 45 and flag["items"] == 15  # n stays the graded runs; the rate is over items
    assert (flag["repetitions"], flag["reps_min"], flag["reps_max"]) == (3, 3, 3)
    assert flag["pass_rate"] == pytest.approx((10 + 3 * 2 / 3) / 15)
    text = card(records, ED3)
    assert "n = 45" not in text and "45 graded runs" not in text and "/45" not in text
    assert "15 items × 3 repetitions" in text
    assert "Quality bar: pass rate ≥ 0.80 on 15 items × 3 repetitions per cell" in text
    assert "clustered by item" in text
    # The candidate passes all 45 runs: its interval is that of 15 items, not of 45 runs.
    cand = one(cells, "m/cand")
    assert cand["wilson_low"] == pytest.approx(0.7961, abs=5e-5) and cand["n_eff"] == 15.0
    assert "pass 1.000 over 15 items × 3 repetitions (45 passing runs), Wilson 95% [0.796, 1.000] clustered by item, n_eff 15.0" in text
    write_cells(cells, tmp_path)
    header = (tmp_path / "cells.csv").read_text().splitlines()[0].split(",")
    for column in ("pass_hat_1", "pass_hat_2", "pass_hat_3", "pass_at_1", "pass_at_2", "pass_at_3",
                   "consistency", "consistent_items", "repeated_items", "n_eff", "design_effect", "repetitions"):
        assert column in header


def test_pass_k_and_consistency_in_cells():
    c = one(aggregate(repeated_runs("m/flag", MIXED), ED3), "m/flag")
    # pass^k = (10 + 3 C(2,k)/C(3,k)) / 15; pass@k = (10 + 3 (1 - C(1,k)/C(3,k))) / 15.
    assert c["pass_hat_1"] == pytest.approx(12 / 15)
    assert c["pass_hat_2"] == pytest.approx((10 + 3 * 1 / 3) / 15)
    assert c["pass_hat_3"] == pytest.approx(10 / 15)
    assert c["pass_at_1"] == pytest.approx(12 / 15)
    assert c["pass_at_2"] == pytest.approx(13 / 15) and c["pass_at_3"] == pytest.approx(13 / 15)
    assert (c["consistent_items"], c["repeated_items"]) == (12, 15) and c["consistency"] == pytest.approx(0.8)
    assert 1 < c["design_effect"] < 3 and 15 < c["n_eff"] < 45
    assert c["p_qualifying"] is not None and c["qualifying"] is True  # 12/15 = 0.80 over items


def test_one_repetition_keeps_todays_figures(tmp_path):
    records = cell_runs("m/flag", 13, "0.01")
    c = one(aggregate(records, ED), "m/flag")
    assert c["pass_rate"] == 13 / 15 and (c["wilson_low"], c["wilson_high"]) == wilson(13, 15)
    assert c["p_qualifying"] == jeffreys_p_at_least(13, 15, 0.80)
    assert c["pass_hat_1"] == pytest.approx(13 / 15) and "pass_hat_2" not in c
    assert c["consistency"] is None and c["repeated_items"] == 0
    text = card(records)
    assert "pass 13/15, Wilson 95% [0.621, 0.963]" in text
    assert "pass^k and pass@k for k > 1 and outcome consistency are n/a" in text


def test_declared_repetitions_not_made_are_na(tmp_path):
    # The edition declares 3 repetitions; only the first was graded (the others infra-excluded).
    records = [run("m/flag", i, "pass", "0.01") for i in range(5)]
    records += [run("m/flag", i, None, "0.01", status="infra_excluded", rep=r) for i in range(5) for r in (2, 3)]
    cells = aggregate(records, ED3)
    c = one(cells, "m/flag")
    assert c["pass_hat_1"] == 1.0 and c["pass_hat_2"] is None and c["pass_at_3"] is None
    write_cells(cells, tmp_path)
    lines = (tmp_path / "cells.csv").read_text().splitlines()
    row = dict(zip(lines[0].split(","), lines[1].split(",")))
    assert row["pass_hat_2"] == "n/a" and row["pass_at_3"] == "n/a" and row["consistency"] == "n/a"
    block = reliability_summary(cells)[0]
    assert block["pass_hat_k"] == {"1": 1.0, "2": None, "3": None}
    assert block["items"] == 5 and block["repetitions"] == 3 and block["graded_repetitions_per_item"] == [1, 1]
    assert "| m/flag | single-shot | 5 items × 1 repetition | 1.000 | n/a | n/a |" in card(records, ED3)


def test_reliability_summary_fields():
    cells = aggregate(repeated_runs("m/flag", MIXED), ED3)
    block = reliability_summary(cells)
    assert len(block) == 1
    row = block[0]
    assert row["workload"] == WL and row["n_runs"] == 45 and row["items"] == 15 and row["repetitions"] == 3
    assert row["pass_rate_over_items"] == 0.8 and row["pass_hat_k"]["3"] == round(10 / 15, 6)
    assert row["consistency"] == {"items_repeated": 15, "items_consistent": 12, "share": 0.8}
    low, high = row["pass_rate_95"]
    assert low < 0.8 < high


def test_repetitions_shuffled_give_identical_csv(tmp_path):
    records = repeated_runs("m/flag", MIXED) + repeated_runs("m/cand", ["pfp"] * 15, "0.002", system="agentic")
    write_cells(aggregate(records, ED3), tmp_path / "a")
    shuffled = list(records)
    random.Random(3).shuffle(shuffled)
    write_cells(aggregate(shuffled, ED3), tmp_path / "b")
    assert (tmp_path / "a" / "cells.csv").read_bytes() == (tmp_path / "b" / "cells.csv").read_bytes()
    assert card(records, ED3) == card(shuffled, ED3)
