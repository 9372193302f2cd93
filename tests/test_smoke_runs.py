"""Smoke runs: `lrc execute --models/--workloads/--limit/--shard` and the partial folders they fill.

The selection (runtime/selection.py) is tested on the demo plan's real run keys with stand-in
items (only an item's id and index make a run key); the command line through real subprocesses:
unknown ids stop before anything is written, a subset journals exactly the runs it names, its
folder reads "partial" in every output and in a later `lrc report`, and a full execute into it
completes it to the very outputs of a fresh full run. Partial-ness is read from the journal's
coverage, so none of this depends on the flags of the last execute.
"""

from __future__ import annotations

import csv
import json
import shutil
from pathlib import Path
from types import SimpleNamespace

import pytest

from helpers.folders import assert_same_outputs, outputs
from helpers.project import REPO, journal_records, run_lrc
from support import outputs_across_environments

from lrc.runtime import selection
from lrc.runtime.execute import plan_runs
from lrc.runtime.operate import OptionsError, RunOptions, from_request

LOCK = REPO / "generated" / "demo" / "plan.lock"
PLAN = json.loads(LOCK.read_bytes())["plan"]
N = PLAN["edition"]["spec"]["n_per_cell"]
MODELS = sorted(PLAN["models"])
WORKLOADS = sorted(PLAN["workloads"])
TRIAGE = next(w for w in WORKLOADS if w.startswith("triage."))
RECONCILE = next(w for w in WORKLOADS if w.startswith("reconcile."))
EXECUTE_WL = next(w for w in WORKLOADS if w.startswith("execute."))
PARTIAL_TEXT = "partial run"


def fake_runs(n: int = N, plan: dict = PLAN):
    """The plan's runs over stand-in items (a run key needs only the item's id and index)."""
    items = {w: [SimpleNamespace(item_id=f"{w.split('.')[1]}-{i:02d}", index=i) for i in range(n)] for w in plan["workloads"]}
    # A task (seed 000) has one item, its task id.
    items.update({ref: [SimpleNamespace(item_id=entry["spec"]["id"], index=0)] for ref, entry in (plan.get("tasks") or {}).items()})
    return plan_runs(plan, items)


RUNS = fake_runs()


def keys(runs) -> set[str]:
    return {r.key for r in runs}


# -- the selection ---------------------------------------------------------------------------

def test_a_task_is_selected_by_its_ref_or_id_like_a_workload():
    by_id = selection.select(PLAN, RUNS, RunOptions(workloads=("fa.fix-sign",)))
    by_ref = selection.select(PLAN, RUNS, RunOptions(workloads=("fa.fix-sign.v5",), models=("lrc/oracle",)))
    assert [(r.workload, r.model, r.system, r.item_id) for r in by_id] == [
        ("fa.fix-sign.v5", m, s, "fa.fix-sign") for m in MODELS for s in ("direct", "orchestrated")]
    assert [r.key for r in by_ref] == [f"fa.fix-sign.v5|lrc/oracle|{s}|fa.fix-sign|r1" for s in ("direct", "orchestrated")]


@pytest.mark.parametrize("models,workloads,limit", [
    (("lrc/null",), None, None),
    (None, (TRIAGE,), None),
    (None, None, 3),
    (("lrc/oracle", "lrc/baseline"), (TRIAGE, RECONCILE), 2),
    (("lrc/baseline",), (EXECUTE_WL,), 1),
    (None, (TRIAGE.rsplit(".v", 1)[0],), 4),  # a workload named by its id, not its ref
    (tuple(MODELS), tuple(WORKLOADS), N),  # everything named explicitly: every run
])
def test_selection_is_exactly_the_runs_named(models, workloads, limit):
    options = RunOptions(models=models, workloads=workloads, limit=limit)
    chosen = selection.select(PLAN, RUNS, options)
    wanted_workloads = None if workloads is None else {w if w in PLAN["workloads"] else next(r for r in WORKLOADS if r.startswith(w + ".v"))
                                                       for w in workloads}
    expected = [r for r in RUNS
                if (models is None or r.model in models)
                and (wanted_workloads is None or r.workload in wanted_workloads)
                and (limit is None or r.item_index < limit)]
    assert chosen == expected and expected, "the selection is not the runs named, in plan order"
    cells = {(r.workload, r.model, r.system) for r in chosen}
    for cell in cells:  # the first `limit` items of every selected cell, by index
        indexes = sorted(r.item_index for r in chosen if (r.workload, r.model, r.system) == cell)
        assert indexes == list(range(min(limit or N, N if cell[0] in PLAN["workloads"] else 1)))  # a task has one item


@pytest.mark.parametrize("limit", [N, N + 1, 10 * N, 10**9])
def test_a_limit_at_or_above_n_selects_every_item(limit):
    assert selection.select(PLAN, RUNS, RunOptions(limit=limit)) == RUNS


@pytest.mark.parametrize("field,value,unknown", [
    ("models", ("lrc/nope",), "lrc/nope"),
    ("models", ("lrc/oracle", "openai/gpt-nothing"), "openai/gpt-nothing"),
    ("models", ("LRC/ORACLE",), "LRC/ORACLE"),  # ids are exact
    ("workloads", ("triage.nope.v1",), "triage.nope.v1"),
    ("workloads", (TRIAGE.rsplit(".v", 1)[0] + ".v99",), ".v99"),  # a version the plan does not pin
    ("workloads", ("triage",), "triage"),  # a prefix is not an id
])
def test_unknown_ids_are_refused_naming_them(field, value, unknown):
    with pytest.raises(OptionsError) as err:
        selection.check(PLAN, RunOptions(**{field: value}))
    assert unknown in str(err.value) and "nothing was run" in str(err.value)
    assert MODELS[0] in str(err.value) or WORKLOADS[0] in str(err.value)  # says what exists


@pytest.mark.parametrize("count", [1, 2, 3, 5, 7, 16])
def test_shards_partition_the_runs(count):
    shards = [selection.select(PLAN, RUNS, RunOptions(shard=(i, count))) for i in range(1, count + 1)]
    seen: dict[str, int] = {}
    for i, shard in enumerate(shards, start=1):
        for r in shard:
            assert r.key not in seen, f"{r.key} is in shard {seen[r.key]} and shard {i}"
            seen[r.key] = i
    assert set(seen) == keys(RUNS), "some run is in no shard"
    if count <= 7:  # 865 runs: every shard gets a fair share
        assert all(len(s) > len(RUNS) / count / 2 for s in shards)


def test_shards_combine_with_a_subset_and_stay_a_partition():
    options = dict(workloads=(TRIAGE,), limit=5)
    whole = keys(selection.select(PLAN, RUNS, RunOptions(**options)))
    parts = [keys(selection.select(PLAN, RUNS, RunOptions(shard=(i, 3), **options))) for i in (1, 2, 3)]
    assert set().union(*parts) == whole and sum(map(len, parts)) == len(whole)


def test_shard_of_is_a_stable_digest_not_pythons_hash():
    # Golden values: a change here reshuffles every sharded execution in flight.
    assert [selection.shard_of(k, 7) for k in ("a", "triage.ap-inbox.v2|lrc/null|agentic|ap-batch-00|r1", "")] == [
        int.from_bytes(__import__("hashlib").sha256(k.encode()).digest()[:8], "big") % 7
        for k in ("a", "triage.ap-inbox.v2|lrc/null|agentic|ap-batch-00|r1", "")]
    script = ("import sys; from lrc.runtime.selection import shard_of; "
              "print([shard_of(f'k{i}|x', int(sys.argv[1])) for i in range(64)])")
    assert len(outputs_across_environments(script, ["5"], REPO)) == 1
    with pytest.raises(ValueError):
        selection.shard_of("a", 0)


@pytest.mark.parametrize("request_,message", [
    ({"limit": 0}, "--limit"), ({"limit": -3}, "--limit"), ({"limit": "2"}, "--limit"), ({"limit": True}, "--limit"),
    ({"shard": "0/3"}, "--shard"), ({"shard": "4/3"}, "--shard"), ({"shard": "1/0"}, "--shard"), ({"shard": "x"}, "--shard"),
    ({"shard": (2, 1)}, "--shard"), ({"models": []}, "--models"), ({"models": ["a", ""]}, "--models"),
    ({"workloads": ","}, "--workloads"),
])
def test_bad_selection_values_are_options_errors(request_, message):
    with pytest.raises(OptionsError, match=message):
        from_request(request_)


def test_request_fills_the_run_options():
    options = from_request({"models": ["lrc/null", "lrc/oracle", "lrc/null"], "workloads": "a.b.v1,c.d",
                            "limit": 3, "shard": "2/5"})
    assert options.models == ("lrc/null", "lrc/oracle") and options.workloads == ("a.b.v1", "c.d")
    assert options.limit == 3 and options.shard == (2, 5) and options.partial
    assert not from_request({}).partial


# -- the command line ------------------------------------------------------------------------

@pytest.mark.parametrize("flags,named", [
    (["--models", "lrc/oracle,lrc/nobody"], "lrc/nobody"),
    (["--workloads", "triage.nope.v1"], "triage.nope.v1"),
    (["--models", "lrc/null", "--workloads", "nowhere", "--limit", "1"], "nowhere"),
])
def test_unknown_ids_exit_1_and_write_nothing(tmp_path, flags, named):
    out = tmp_path / "out"
    res = run_lrc("execute", LOCK, "--out", out, "--no-progress", *flags)
    assert res.returncode == 1, res.stderr
    assert named in res.stderr and "nothing was run" in res.stderr and "Traceback" not in res.stderr
    assert not out.exists(), "a refused selection must not create the output folder"


@pytest.mark.parametrize("flags", [["--limit", "0"], ["--limit", "two"], ["--shard", "4/3"], ["--shard", "0/2"],
                                   ["--shard", "1-3"], ["--models", "a,,b"]])
def test_malformed_selection_flags_are_usage_errors(tmp_path, flags):
    res = run_lrc("execute", LOCK, "--out", tmp_path / "out", *flags)
    assert res.returncode == 2 and "Traceback" not in res.stderr, res.stderr
    assert not (tmp_path / "out").exists()


def read_csv(out: Path) -> list[dict[str, str]]:
    with open(out / "cells.csv", newline="", encoding="utf-8") as fh:
        return list(csv.DictReader(fh))


def journaled(out: Path) -> set[str]:
    return {r["run"] for r in journal_records(out) if r["type"] == "run"}


def assert_partial_everywhere(out: Path, not_run: int) -> None:
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    assert summary["partial"] is True and summary["runs_not_run"] == not_run
    assert isinstance(summary["derived"], str) and PARTIAL_TEXT in summary["derived"], "a partial folder derived indices"
    assert summary["coverage"] and all(c["made"] < c["planned"] for c in summary["coverage"])
    card = (out / "rate-card.md").read_text(encoding="utf-8")
    assert "PARTIAL RUN" in card.splitlines()[0]
    for verdict in ("## Rates", "cheapest qualifying)", "qualifying model at pass", "flagship)", "frontier premium (",
                    "## Agentic multiplier", "| yes |", "| no |"):
        assert verdict not in card, f"a partial rate card shows {verdict!r}"
    rows = read_csv(out)
    assert rows and all(r["partial"] == "true" and r["qualifying"] == PARTIAL_TEXT and r["p_qualifying"] == PARTIAL_TEXT
                        for r in rows)
    import polars as pl

    cells = pl.read_parquet(out / "cells.parquet")
    assert cells["partial"].to_list() == [True] * cells.height
    assert cells["qualifying"].null_count() == cells.height and cells["p_qualifying"].null_count() == cells.height
    manifests = sorted((out / "runs").rglob("manifest.json"))
    assert manifests
    for path in manifests:
        coverage = json.loads(path.read_text(encoding="utf-8"))["folder_coverage"]
        assert coverage == {"partial": True, "runs_planned": summary["runs_planned"], "runs_not_run": not_run}


@pytest.fixture(scope="module")
def small(small_demo_run) -> SimpleNamespace:
    """The small demo (every workload, system and model at n_per_cell 2, conftest.py
    `small_demo_run`): its lock, its runs over stand-in items, n, and its finished full run."""
    lock, out, res = small_demo_run
    assert res.returncode == 0, res.stderr
    plan = json.loads(lock.read_bytes())["plan"]
    n = plan["edition"]["spec"]["n_per_cell"]
    return SimpleNamespace(lock=lock, runs=fake_runs(n, plan), n=n, full=out)


@pytest.fixture(scope="module")
def full(small) -> Path:
    return small.full


def test_a_subset_is_partial_everywhere_then_a_full_execute_completes_it(tmp_path, small):
    LOCK, RUNS, N, full = small.lock, small.runs, small.n, small.full
    out = tmp_path / "smoke"
    # 1. two workloads of one model, the first two items of each cell.
    res = run_lrc("execute", LOCK, "--out", out, "--no-progress", "--models", "lrc/null",
                  "--workloads", f"{TRIAGE},{RECONCILE.rsplit('.v', 1)[0]}", "--limit", "2")
    assert res.returncode == 0, res.stderr  # a partial execute that did all it was asked exits 0
    # (RUNS has stand-in item ids: compare by cell and item index)
    expected = {(r.workload, r.model, r.system, r.item_index) for r in RUNS
                if r.model == "lrc/null" and r.workload in (TRIAGE, RECONCILE) and r.item_index < 2}
    made = [r for r in journal_records(out) if r["type"] == "run"]
    assert {(r["workload"], r["model"], r["system"], r["item_index"]) for r in made} == expected
    assert len(made) == len(expected) == 8
    planned = len(RUNS)
    assert_partial_everywhere(out, planned - 8)
    assert "partial run" in res.stderr and f"{planned - 8} of the plan's {planned} runs" in res.stderr
    assert res.stdout.startswith((out / "rate-card.md").read_text(encoding="utf-8"))

    # 2. `lrc report` of the folder later reads the journal, not the flags: still partial, same bytes.
    before = outputs(out)
    rep = run_lrc("report", LOCK, "--out", out)
    assert rep.returncode == 0 and "partial run" in rep.stderr, rep.stderr
    assert outputs(out) == before

    # 3. A limit above n adds every item of the cells it names; the folder stays partial.
    res = run_lrc("execute", LOCK, "--out", out, "--no-progress", "--models", "lrc/oracle", "--workloads", TRIAGE,
                  "--limit", str(N + 5))
    assert res.returncode == 0, res.stderr
    triage_oracle = [r for r in journal_records(out) if r["type"] == "run" and r["model"] == "lrc/oracle"]
    assert len(triage_oracle) == 2 * N and {r["workload"] for r in triage_oracle} == {TRIAGE}
    rows = {(r["model"], r["system"]): r for r in read_csv(out) if r["workload"] == TRIAGE}
    assert {rows[("lrc/oracle", s)]["n"] for s in ("single-shot", "agentic")} == {str(N)}
    assert_partial_everywhere(out, planned - 8 - 2 * N)

    # 4. A full execute completes it: the very outputs of a fresh full run, exit 0, not partial.
    res = run_lrc("execute", LOCK, "--out", out, "--no-progress", timeout=600)
    assert res.returncode == 0, res.stderr
    assert f"resuming: {8 + 2 * N} of {planned} runs already journaled" in res.stderr
    assert "partial run" not in res.stderr
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    assert summary["partial"] is False and summary["runs_not_run"] == 0 and summary["coverage"] == []
    assert isinstance(summary["derived"], dict)
    assert_same_outputs(out, full)


def test_a_full_folder_is_marked_complete(full):
    summary = json.loads((full / "summary.json").read_text(encoding="utf-8"))
    assert summary["partial"] is False and summary["runs_not_run"] == 0
    card = (full / "rate-card.md").read_text(encoding="utf-8")
    assert "PARTIAL" not in card and "## Rates" in card and "cheapest qualifying" in card  # a verdict, not a partial card
    assert {r["partial"] for r in read_csv(full)} == {"false"}
    assert {r["qualifying"] for r in read_csv(full)} <= {"true", "false"}
    manifest = next((full / "runs").rglob("manifest.json"))
    assert json.loads(manifest.read_text(encoding="utf-8"))["folder_coverage"]["partial"] is False


def test_a_stopped_execute_reads_partial_in_report(tmp_path, full, small):
    """A folder whose execute was killed before every run finished is partial too (coverage),
    not 'incomplete' (that is for infrastructure exclusions, exit 3)."""
    out = tmp_path / "cut"
    shutil.copytree(full, out)
    (out / ".lrc-execute.lock").unlink(missing_ok=True)
    lines = (out / "journal.jsonl").read_text(encoding="utf-8").splitlines(keepends=True)
    dropped = [json.loads(line)["run"] for line in lines[1:] if json.loads(line)["type"] == "run"][-3:]
    (out / "journal.jsonl").write_text("".join(line for line in lines
                                               if not (json.loads(line).get("type") == "run" and json.loads(line)["run"] in dropped)),
                                       encoding="utf-8")
    rep = run_lrc("report", small.lock, "--out", out)
    assert rep.returncode == 0, rep.stderr
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    assert summary["partial"] is True and summary["runs_not_run"] == 3 and summary["runs_incomplete"] == 0


# -- the partial rate card and cells, in process ---------------------------------------------

def _records(model: str, passes: int, n: int, system: str = "single-shot") -> list[dict]:
    return [{"workload": TRIAGE, "model": model, "system": system, "item": f"ap-batch-{i:02d}", "item_index": i,
             "repetition": 1, "status": "graded", "verdict": "pass" if i < passes else "fail", "outcome": "answered",
             "usage": {"input": 100, "output": 10, "calls": 1}, "cost_usd": "0.001", "infra_retries": 0, "steps": 1}
            for i in range(n)]


EDITION = {"id": "demo", "version": 1, "date": "2026-12-01", "brand": "LedgerRate", "footer": "F", "disclaimer": "D",
           "qualifying_threshold": "0.80", "bootstrap_seed": "s",
           "models": [{"id": "m/flag", "role": "flagship"}, {"id": "m/cand", "role": "candidate"}],
           "workloads": {TRIAGE: {"job": "Sort 1,000 AP emails", "volume_units": 1000, "units_per_item": 20, "unit": "email"}}}


@pytest.mark.parametrize("not_run", [1, 7, 100])
def test_a_partial_card_has_no_rates_or_verdicts_however_little_is_missing(not_run):
    from lrc.runtime.report.aggregate import aggregate, derived
    from lrc.runtime.report.ratecard import rate_card_markdown

    records = _records("m/flag", 15, 15) + _records("m/cand", 14, 15)  # both would qualify
    full_cells = aggregate(records, EDITION)
    full_card = rate_card_markdown(full_cells, derived(full_cells, EDITION), EDITION,
                                   {"planned": 30, "not_run": 0, "cells": []})
    assert "cheapest qualifying" in full_card and "frontier premium" in full_card and "PARTIAL" not in full_card
    assert full_card == rate_card_markdown(full_cells, derived(full_cells, EDITION), EDITION)  # no coverage: as before

    cells = aggregate(records, EDITION, partial=True)
    assert cells["qualifying"].to_list() == [None, None] and cells["partial"].to_list() == [True, True]
    assert cells["p_qualifying"].to_list() == [None, None]
    coverage = {"planned": 30 + not_run, "not_run": not_run,
                "cells": [{"workload": TRIAGE, "model": "m/cand", "system": "agentic", "made": 0, "planned": not_run}]}
    card = rate_card_markdown(cells, "partial", EDITION, coverage)
    assert card.splitlines()[0].endswith("PARTIAL RUN, not a measurement")
    assert f"{not_run} of the plan's {30 + not_run} runs" in card
    assert f"{TRIAGE} · m/cand · agentic: 0 of {not_run}" in card
    for verdict in ("## Rates", "cheapest qualifying)", "flagship)", "frontier premium (", "| yes |", "| no |", "Sort 1,000 AP emails —"):
        assert verdict not in card
    assert "14/15" in card and "15/15" in card  # what the runs made measured is still shown
