"""Seed-000 tasks end to end through `lrc execute` (real subprocesses, litellm's real path).

- the demo edition's tasks on the reference models under direct and orchestrated (two of
  them by default, conftest.py `task_subset_run`; all four in the shared full demo run,
  `demo_run`, under `--slow`): the oracle passes each, the null model fails, the baseline
  makes a partial job under direct and repairs it from the validate tool's report under
  orchestrated on the tasks where the failing check names a cell or slide; calibration holds
  over the task cells; every run has its manifest, trace (with the file mutations) and
  evaluation; the summary carries the split manifest and the task hashes;
- determinism: the tasks executed again into another folder give the same item bytes,
  evaluations, traces and saved files as the full demo run (slow); the report rebuilds the
  task results of the two-task folder from its journal alone (with the task-grade memo off;
  from a cold then a warm memo under `--slow`);
- a task run against the local stub server (tests/helpers/stub_server.py, behaviour `task`):
  hostile tool calls come back as tool errors, the scripted fix passes, only the permitted
  tools are offered; a resume repays nothing, and a run whose record was lost (killed after
  its calls were acknowledged) is made again from the journal without one request.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from helpers.project import STUB_MODEL, build_project, journal_records, lrc_env, run_lrc, tree
from helpers.shared import TASK_SUBSET
from lrc.runtime.lock.canonical import digest
from support import REPO

LOCK = REPO / "generated" / "demo" / "plan.lock"
TASKS = ("fa.extend-quarter.v5", "fa.fix-cash-flow.v5", "fa.fix-sign.v5", "fa.refresh-deck-table.v5")
VALIDATOR_KEYS = {"id", "version", "status", "severity", "observed", "expected", "location", "message"}


@pytest.fixture
def demo(demo_run):
    out, res = demo_run
    assert res.returncode == 0, res.stdout + res.stderr
    return out


@pytest.fixture
def subset(task_subset_run) -> Path:
    """Two of the demo's tasks executed into a folder of their own (conftest.py `task_subset_run`)."""
    out, res = task_subset_run
    assert res.returncode == 0, res.stdout + res.stderr
    return out


@pytest.fixture(params=["subset", pytest.param("full", marks=pytest.mark.slow)])
def task_run(request) -> tuple[Path, tuple[str, ...]]:
    """(out folder, the tasks it ran): two of the demo's tasks by default, all four of the full
    demo run under `--slow`."""
    if request.param == "full":
        return request.getfixturevalue("demo"), TASKS
    return request.getfixturevalue("subset"), tuple(t for t in TASKS if t.rsplit(".v", 1)[0] in TASK_SUBSET)


SYSTEMS = ("direct", "orchestrated")
REPAIRED = ("fa.fix-cash-flow.v5", "fa.fix-sign.v5", "fa.refresh-deck-table.v5")
"""The demo tasks lrc/baseline passes under orchestrated only: the validate tool's failing check
names the cell or slide to repair (fa.extend-quarter's last failing check names a defined
name, which the baseline cannot place: it stops after retries.max repairs)."""


def _cells(out: Path) -> dict[tuple[str, str, str], dict]:
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    return {(c["task"], c["model"], c["system"]): c for c in summary["tasks"]["cells"]}


def test_the_demo_runs_its_tasks_oracle_passes_null_fails_baseline_partial(task_run):
    demo, tasks = task_run
    cells = _cells(demo)
    assert sorted({t for t, _, _ in cells}) == list(tasks)
    assert {s for _, _, s in cells} == set(SYSTEMS)
    for task in tasks:
        for system in SYSTEMS:
            oracle, null, baseline = (cells[(task, m, system)] for m in ("lrc/oracle", "lrc/null", "lrc/baseline"))
            assert (oracle["passes"], oracle["n"]) == (1, 1), oracle
            assert null["passes"] == 0 and null["n"] == 1, null
            assert oracle["pass_rate"] == "1/1" and oracle["wilson_95"][0] < 1 and oracle["cost_usd"] == "0"
        direct, orchestrated = (cells[(task, "lrc/baseline", s)] for s in SYSTEMS)
        assert direct["passes"] == 0 and direct["partials"] == 1, direct
        assert orchestrated["passes"] == (1 if task in REPAIRED else 0), orchestrated
    summary = json.loads((demo / "summary.json").read_text(encoding="utf-8"))
    assert summary["calibration"]["ok"] and not summary["calibration"]["failures"]
    assert {f["workload"] for f in summary["calibration"]["failures"]} == set()
    assert summary["tasks"]["split_manifest"] == {t: "dev" for t in TASKS}
    assert summary["tasks"]["test_task_hashes"] == {}
    assert set(summary["tasks"]["task_hashes"]) == set(TASKS)  # the plan's, whatever a folder ran
    card = (demo / "rate-card.md").read_text(encoding="utf-8")
    assert "## Reliability tasks (seed 000)" in card and "| fa.fix-sign.v5 | dev | lrc/oracle" in card


def test_every_task_run_has_its_manifest_trace_and_evaluation(task_run):
    demo, tasks = task_run
    lock = json.loads(LOCK.read_bytes())
    for task in tasks:
        entry = lock["plan"]["tasks"][task]
        for model, system in ((m, s) for m in ("lrc__oracle", "lrc__null", "lrc__baseline") for s in SYSTEMS):
            folder = demo / "runs" / task / model / system / f"{entry['spec']['id']}.r1"
            manifest = json.loads((folder / "manifest.json").read_text(encoding="utf-8"))
            trace = json.loads((folder / "trace.json").read_text(encoding="utf-8"))
            evaluation = json.loads((folder / "evaluation.json").read_text(encoding="utf-8"))
            assert manifest["task"]["task_hash"] == entry["task_hash"]
            assert manifest["validator_commit"] == entry["validators"]
            assert manifest["prompts"]["task"].startswith("sha256:") and manifest["tool_schema_digest"].startswith("sha256:")
            # The manifest digests the task messages the run was sent (they show the run's budget: the
            # task's and the system's, the smaller of each -- direct.v2 allows 50 of the task's 60 tool calls).
            assert manifest["prompts"]["task"] == digest("task-prompt", trace["messages"][:2])
            spec_system = next(v["spec"] for v in lock["plan"]["systems"].values() if v["spec"]["id"] == system)
            assert manifest["task_budget"] == entry["spec"]["budget"]
            assert manifest["budget"]["max_tool_calls"] == min(entry["spec"]["budget"]["max_tool_calls"],
                                                               spec_system["budget"]["max_tool_calls"])
            assert f"{manifest['budget']['max_tool_calls']} tool calls" in trace["messages"][1]["content"]
            assert evaluation["validators"] and all(set(r) == VALIDATOR_KEYS for r in evaluation["validators"])
            passes = model == "lrc__oracle" or (system, model) == ("orchestrated", "lrc__baseline") and task in REPAIRED
            assert (evaluation["verdict"] == "pass") == passes
            assert trace["stop"]["submitted_through_tool"] is ((system, model) != ("orchestrated", "lrc__null"))
            assert (trace["workflow"] is None) == (system == "direct")
            saved = {p.name: p.read_bytes() for p in (folder / "output").iterdir()}
            assert {n: f"sha256:{__import__('hashlib').sha256(b).hexdigest()}" for n, b in saved.items()} == \
                {n: o["sha256"] for n, o in trace["outputs"].items()}
            if model != "lrc__null":
                assert [m for m in trace["file_mutations"] if m["tool"] != "save"], "the trace holds the mutations"
            else:
                assert trace["file_mutations"] == [] and evaluation["primary_failure_category"]
    assert not (demo / "work").exists(), "scratch copies are removed once journaled"


@pytest.mark.slow  # compares with the full demo run
def test_two_executes_give_identical_task_items_and_results(demo, subset):
    out = subset
    for sub in ("items/fa.fix-sign.v5", "items/fa.refresh-deck-table.v5", "runs/fa.fix-sign.v5", "runs/fa.refresh-deck-table.v5"):
        again, first = tree(out / sub), tree(demo / sub)
        assert again and again.keys() == first.keys(), sub
        differing = sorted(k for k in again if again[k] != first[k] and not k.endswith("manifest.json"))
        assert differing == [], differing  # a manifest's folder coverage differs: this folder is partial
    for name, data in tree(out / "items" / "blobs").items():
        assert (demo / "items" / "blobs" / name).read_bytes() == data


@pytest.mark.parametrize("grades", ["no memo", pytest.param("cold memo then warm memo", marks=pytest.mark.slow)])
def test_report_rebuilds_the_task_results_from_the_journal_alone(subset, tmp_path, grades):
    """With the task-grade memo off, or from a private memo first cold (it fills) then warm (every
    grade a hit): the same bytes as the execute wrote (lrc.runtime.tasks.grade_memo)."""
    if grades == "no memo":
        envs = [lrc_env(LRC_NO_CACHE="1")]
    else:
        cache = tmp_path / "user-cache"
        envs = [lrc_env(XDG_CACHE_HOME=str(cache), LRC_CACHE_KEY_FILE=str(cache / "lrc" / "cache.key"))] * 2
    for n, env in enumerate(envs):
        out = tmp_path / f"rebuilt-{n}"
        out.mkdir()
        shutil.copy(subset / "journal.jsonl", out / "journal.jsonl")
        res = run_lrc("report", LOCK, "--out", out, env=env)
        assert res.returncode == 0, res.stdout + res.stderr
        assert tree(out / "runs") == tree(subset / "runs")
        for name in ("summary.json", "rate-card.md"):
            assert (out / name).read_bytes() == (subset / name).read_bytes(), name
    if grades != "no memo":
        assert list((cache / "lrc" / "task-grades").glob("*.bin")), "the cold report filled the memo"


# -- against the local stub server ---------------------------------------------------------

TASK_EDITION = "fa.fix-sign.v5"
KEY = "sk-lrc-test-task-3c1d9e7a"


def _execute_stub(lock: Path, out: Path):
    """Only the stub model's run of the task (the folder is partial: exit 0)."""
    return run_lrc("execute", lock, "--out", out, "--workloads", "fa.fix-sign", "--models", STUB_MODEL, env=lrc_env(KEY))


@pytest.fixture(scope="module")
def task_lock(stub, tmp_path_factory) -> Path:
    """A project whose local edition lists the fix-sign task beside triage (2 items a cell)."""
    return build_project(tmp_path_factory.mktemp("task-project"), stub.api_base, n_per_cell=2,
                         edition_extra=f"tasks:\n  dev:\n    - {TASK_EDITION}\n")


def _scripted_turns() -> list[list[dict]]:
    """A hostile first turn, then the oracle's fix (computed here, as a model would find it)."""
    from lrc.runtime.lock import format as lockformat
    from lrc.runtime.tasks import items
    from lrc.runtime.tasks.reference import TaskPolicies

    plan = lockformat.loads(LOCK.read_bytes())["plan"]
    item = items.build(plan, TASK_EDITION, plan["tasks"][TASK_EDITION], plan["seed"]["value"], 0)
    hostile = [
        {"name": "read_range", "arguments": {"file": "../../journal.jsonl", "sheet": "IS", "range": "A1"}},
        {"name": "write_cells", "raw_arguments": "{\"file\": \"model.xlsx\", \"cells\": [{"},
        {"name": "insert_rows", "arguments": {"file": "model.xlsx", "sheet": "IS", "before": 2, "count": 1}},
        {"name": "write_cells", "arguments": {"file": "model.xlsx", "cells": [{"cell": "IS!A1", "value": "x" * 50_000}]}},
    ]
    policy, turns, messages = TaskPolicies(item), [hostile], [{"role": "assistant"}]
    while (reply := policy.oracle(messages[1:], None)).tool_calls:
        turns.append([{"name": c.name, "arguments": c.arguments} for c in reply.tool_calls])
        messages.append({"role": "assistant"})
    return turns


@pytest.fixture(scope="module")
def stub_task_run(stub, task_lock, tmp_path_factory):
    stub.reset(behaviour="task", task_turns=_scripted_turns())
    out = tmp_path_factory.mktemp("stub-task") / "out"
    res = _execute_stub(task_lock, out)
    return out, res, stub.snapshot()


def _stub_run_folder(out: Path) -> Path:
    return out / "runs" / TASK_EDITION / "openai__stub-model" / "agentic" / "fa.fix-sign.r1"


def test_a_task_run_against_the_stub_server_passes_through_hostile_calls(stub_task_run):
    out, res, requests = stub_task_run
    assert res.returncode == 0, res.stdout + res.stderr
    folder = _stub_run_folder(out)
    evaluation = json.loads((folder / "evaluation.json").read_text(encoding="utf-8"))
    trace = json.loads((folder / "trace.json").read_text(encoding="utf-8"))
    assert evaluation["verdict"] == "pass", evaluation
    tool_results = [m["content"] for m in trace["messages"] if m.get("role") == "tool"]
    assert all(t.startswith("error:") for t in tool_results[:4]), tool_results[:4]
    assert "not permitted" in tool_results[2]
    assert [e["error"] for e in trace["events"] if e["event"] == "tool_call"][:4] == [True] * 4
    offered = {t["function"]["name"] for t in requests[0].body["tools"]}
    lock = json.loads(LOCK.read_bytes())
    assert offered == set(lock["plan"]["tasks"][TASK_EDITION]["spec"]["permitted_tools"]) | {"submit"}
    assert "journal" not in json.dumps([m for m in trace["file_mutations"]])
    calls = [r for r in journal_records(out) if r["type"] == "call"]
    assert len(calls) == len(requests) == len(_scripted_turns())


def test_a_resumed_task_run_repays_nothing(stub, stub_task_run, task_lock, tmp_path):
    out0, res0, _ = stub_task_run
    out = tmp_path / "out"
    shutil.copytree(out0, out)
    before = (_stub_run_folder(out) / "evaluation.json").read_bytes()
    # A kill after every call was acknowledged but before the run's record: drop that record.
    journal = out / "journal.jsonl"
    lines = journal.read_text(encoding="utf-8").splitlines(keepends=True)
    kept = [ln for ln in lines if not (json.loads(ln).get("type") == "run" and json.loads(ln)["workload"] == TASK_EDITION)]
    assert len(kept) == len(lines) - 1
    journal.write_text("".join(kept), encoding="utf-8")
    (out / ".lrc-outputs.json").unlink(missing_ok=True)
    stub.reset(behaviour="task", task_turns=[])  # a request now would get no fix: the run would fail
    res = _execute_stub(task_lock, out)
    assert res.returncode == 0, res.stdout + res.stderr
    assert stub.count == 0, "a journaled call was made again"
    assert (_stub_run_folder(out) / "evaluation.json").read_bytes() == before
    again = _execute_stub(task_lock, out)
    assert again.returncode == 0 and stub.count == 0
