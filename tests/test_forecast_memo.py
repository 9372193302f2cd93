"""The sealed per-user memo of the report's forecast (lrc.runtime.forecast_memo).

It may only ever save time: a hit is exactly the forecast `lrc.runtime.estimate` computes
(the same keys, integers and Decimal strings); anything that decides it -- the plan as used
(an erratum's corrected price), the lock, the seed, the runs, the token counter's libraries --
is in the key; an entry not sealed by this user or not of the forecast's shape is recomputed;
a held-out seed never reaches the cache; off (LRC_NO_CACHE, `lrc verify`) it neither reads
nor writes.
"""

from __future__ import annotations

import copy
import json
from decimal import Decimal
from pathlib import Path

import pytest

from lrc.runtime import estimate
from lrc.runtime.forecast_memo import ForecastMemo, decode, encode
from lrc.runtime.lock import sealing

from helpers.memos import SEAL_DAMAGE, bump_library_version, damage_entry, entries, private_user_cache


@pytest.fixture(scope="module")
def planned(small_demo_run):
    """(lock, plan, seed, runs, items) of the small demo, and its forecast as `_write_outputs` computes it."""
    from lrc.runtime import items as item_gen
    from lrc.runtime.execute import plan_runs, resolve_seed

    lock_path, _, res = small_demo_run
    assert res.returncode == 0, res.stderr
    lock = json.loads(lock_path.read_text(encoding="utf-8"))
    plan = lock["plan"]
    seed = resolve_seed(plan, None)
    items = item_gen.generate(plan, seed)
    runs = [r for r in plan_runs(plan, items) if r.workload in plan["workloads"]]
    return lock, plan, seed, runs, items


class Counting:
    def __init__(self, lock, plan, runs, items):
        self.calls = 0
        self.args = (plan, lock["root_digest"], items, runs)

    def __call__(self):
        self.calls += 1
        return estimate.for_report(estimate.forecast(*self.args))


@pytest.fixture
def user_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    return private_user_cache(tmp_path, monkeypatch, "forecasts")


def test_a_second_report_of_the_same_plan_is_a_hit_and_exactly_the_forecast(planned, user_cache):
    lock, plan, seed, runs, items = planned
    compute = Counting(lock, plan, runs, items)
    first = ForecastMemo().for_report(lock, plan, seed, runs, compute)
    memo = ForecastMemo()  # another process, the same user
    again = memo.for_report(lock, plan, seed, runs, compute)
    assert compute.calls == 1 and (memo.hits, memo.misses) == (1, 0)
    fresh = compute()
    assert again == first == fresh
    assert len(again["per_run"]) == len({(r.workload, r.model, r.system, r.item_id) for r in runs}) > 0
    for key, levels in fresh["per_run"].items():  # the same Decimal strings, not only equal numbers
        assert {lv: str(f.cost) for lv, f in again["per_run"][key].items()} == {lv: str(f.cost) for lv, f in levels.items()}
    assert len(entries(user_cache)) == 1


def test_encoding_is_exact_for_every_decimal_form():
    fig = estimate.Figures
    report = {"cells": {("w.v1", "m/a", "single-shot"): {"low": fig(1, 2, Decimal("0.10")), "expected": fig(3, 4, Decimal("1E-7")),
                                                          "high": fig(5, 6, Decimal("0")), "runs": 15}},
              "per_run": {("w.v1", "m/a", "single-shot", "item-000"): {"low": fig(1, 2, Decimal("0.0100")),
                                                                       "expected": fig(0, 0, Decimal("0E-8")),
                                                                       "high": fig(7, 8, Decimal("12.5"))}},
              "assumptions": ["an assumption"], "counting": {"m/a": "a rule"}}
    back = decode(json.loads(json.dumps(encode(report))))
    assert back == report
    assert [str(f.cost) for f in back["per_run"][("w.v1", "m/a", "single-shot", "item-000")].values()] == ["0.0100", "0E-8", "12.5"]
    assert str(back["cells"][("w.v1", "m/a", "single-shot")]["expected"].cost) == "1E-7"


def _changed(planned, change):
    lock, plan, seed, runs, items = planned
    if change == "a price (an erratum's plan)":
        plan = copy.deepcopy(plan)
        model = sorted(plan["models"])[0]
        plan["models"][model]["price"]["input"] = "1234.5"
    elif change == "the lock":
        lock = {**lock, "root_digest": "sha256:" + "0" * 64}
    elif change == "the seed":
        seed = seed + "-another"
    elif change == "the runs":
        runs = runs[:-1]
    return lock, plan, seed, runs, items


@pytest.mark.parametrize("change", ["a price (an erratum's plan)", "the lock", "the seed", "the runs", "litellm's version"])
def test_anything_that_decides_the_forecast_is_in_the_key(planned, user_cache, monkeypatch, change):
    lock, plan, seed, runs, items = planned
    ForecastMemo().for_report(lock, plan, seed, runs, lambda: {"cells": {}, "per_run": {}, "assumptions": [], "counting": {}})
    if change == "litellm's version":
        bump_library_version(monkeypatch, "litellm")
    lock, plan, seed, runs, items = _changed(planned, change)
    compute = Counting(lock, plan, runs, items)
    memo = ForecastMemo()
    assert memo.for_report(lock, plan, seed, runs, compute) == compute()
    assert compute.calls == 2 and memo.misses == 1 and memo.hits == 0


@pytest.mark.parametrize("damage", ["flipped byte", "another user's key", "truncated", "a figure of the wrong type", "no forecast"])
def test_an_entry_not_sealed_by_this_user_or_not_a_forecast_is_recomputed(planned, user_cache, damage):
    lock, plan, seed, runs, items = planned
    compute = Counting(lock, plan, runs, items)
    ForecastMemo().for_report(lock, plan, seed, runs, compute)
    [path] = entries(user_cache)
    entry = json.loads(sealing.unseal(sealing.secret(), path.read_bytes()))
    if damage in SEAL_DAMAGE:
        damage_entry(path, damage, entry)
    elif damage == "a figure of the wrong type":
        entry["forecast"]["per_run"][0][1]["expected"]["input_tokens"] = "many"
        path.write_bytes(sealing.seal(sealing.secret(), json.dumps(entry).encode()))
    else:
        del entry["forecast"]
        path.write_bytes(sealing.seal(sealing.secret(), json.dumps(entry).encode()))
    memo = ForecastMemo()
    assert memo.for_report(lock, plan, seed, runs, compute) == compute()
    assert memo.hits == 0 and compute.calls == 3


def test_a_held_out_seed_never_reaches_the_cache(planned, user_cache):
    lock, plan, _, runs, items = planned
    secret_seed = "held-out-seed-8f3a1c0e9d"
    ForecastMemo().for_report(lock, plan, secret_seed, runs, Counting(lock, plan, runs, items))
    [path] = entries(user_cache)
    assert secret_seed.encode() not in path.read_bytes()
    assert secret_seed not in path.name


@pytest.mark.parametrize("off", ["LRC_NO_CACHE", "enabled=False", "no seed"])
def test_off_the_memo_neither_reads_nor_writes(planned, user_cache, monkeypatch, off):
    lock, plan, seed, runs, items = planned
    compute = Counting(lock, plan, runs, items)
    ForecastMemo().for_report(lock, plan, seed, runs, compute)
    [path] = entries(user_cache)
    if off == "LRC_NO_CACHE":
        monkeypatch.setenv("LRC_NO_CACHE", "1")
    memo = ForecastMemo(enabled=off != "enabled=False")
    for _ in range(2):
        memo.for_report(lock, plan, None if off == "no seed" else seed, runs, compute)
    assert compute.calls == 3 and memo.hits == 0
    assert entries(user_cache) == [path]
