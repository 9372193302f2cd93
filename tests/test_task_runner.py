"""The task runner in-process (`lrc.runtime.tasks`): hostile tool arguments are tool errors,
the budget ends a run as a fail with its reason, every mutation reaches the record, and the
grade follows the validators. The loop is the edition's direct system itself (the agentic loop
under the task's prompt, tools and budget); the model is a
scripted `call`, so these run in a second and never touch litellm."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from lrc.runtime.failures import categorize
from lrc.runtime.lock import format as lockformat
from lrc.runtime.systems import direct
from lrc.runtime.systems.base import Turn
from lrc.runtime.tasks import grade, items, planning, runner
from support import REPO

CACHED_RECALCULATION = True  # tests/conftest.py: one recalculation per distinct workbook in this module

LOCK = REPO / "generated" / "demo" / "plan.lock"
TASK = "fa.fix-sign.v5"


@pytest.fixture(scope="module")
def plan() -> dict[str, Any]:
    return lockformat.loads(LOCK.read_bytes())["plan"]


@pytest.fixture(scope="module")
def item(plan):
    return items.build(plan, TASK, plan["tasks"][TASK], plan["seed"]["value"], 0)


def _turn(*calls: tuple[str, Any]) -> Turn:
    tool_calls = [{"id": f"c{n}", "type": "function",
                   "function": {"name": name, "arguments": args if isinstance(args, str) else json.dumps(args)}}
                  for n, (name, args) in enumerate(calls, 1)]
    return Turn({"role": "assistant", "content": None, "tool_calls": tool_calls}, "tool_calls")


def _run(plan, item, work: Path, turns: list[Turn], budget: dict[str, Any] | None = None, usage: int = 10,
         system_budget: dict[str, Any] | None = None, price: dict[str, Any] | None = None) -> dict[str, Any]:
    system = planning.system_spec(plan, "direct")
    if system_budget is not None:
        system = {**system, "budget": {**system.get("budget", {}), **system_budget}}
    if budget is not None:
        item = items.TaskItem(item.ref, item.index, item.item_id, {**item.context, "budget": {**item.context["budget"], **budget}},
                              item.answer_key, item.files, item.oracle, item.checks)
    sent: list[list[dict[str, Any]]] = []
    sent_messages: list[list[dict[str, Any]]] = []

    async def call(step, messages, tools):
        sent.append(tools)
        sent_messages.append(json.loads(json.dumps(messages)))
        return turns[step - 1] if step <= len(turns) else Turn({"role": "assistant", "content": "done"}, "stop")

    record = asyncio.run(runner.run(runner.TaskRun(
        item=item, system=system, loop=direct, call=call, price=price,
        usage_of=lambda step: {"input": usage, "output": 0}, earlier_latency=lambda step: None, work=work)))
    record["_first_request"] = sent_messages[0] if sent_messages else None
    record["_tools_sent"] = sent
    return record


def _oracle_turns(item) -> list[Turn]:
    from lrc.runtime.tasks.reference import TaskPolicies

    policy, messages, turns = TaskPolicies(item), [], []
    while True:
        reply = policy.oracle(messages, None)
        if not reply.tool_calls:
            return turns
        turns.append(_turn(*[(c.name, c.arguments) for c in reply.tool_calls]))
        messages.append({"role": "assistant"})


def test_hostile_tool_arguments_are_tool_errors_and_change_nothing(plan, item, tmp_path):
    hostile = _turn(
        ("read_range", {"file": "../../../etc/passwd", "sheet": "IS", "range": "A1"}),
        ("read_range", {"file": "/etc/passwd", "sheet": "IS", "range": "A1"}),
        ("write_cells", "{not json"),
        ("write_cells", "[1, 2]"),
        ("write_cells", {"file": "model.xlsx", "cells": [{"cell": "IS!A1", "value": "x" * 100_000}]}),
        ("write_cells", {"file": "model.xlsx", "cells": [{"cell": "ZZZ99999999", "value": 1}]}),
        ("insert_rows", {"file": "model.xlsx", "sheet": "IS", "before": 2, "count": 1}),  # not permitted in this task
        ("no_such_tool", {}),
        ("write_cells", {"file": "model.xlsx", "cells": [{"cell": "IS!A1", "formula": "=WEBSERVICE(\"http://x\")"}]}),
    )
    record = _run(plan, item, tmp_path / "work", [hostile, _turn(("submit", {}))])
    results = [m for m in record["transcript"] if m.get("role") == "tool"]
    assert len(results) == 10
    assert all(r["content"].startswith("error:") for r in results[:-1]), [r["content"][:80] for r in results]
    assert "not permitted" in results[6]["content"]
    assert record["outcome"] == "answered" and record["submitted"]
    assert [m for m in record["task"]["mutations"] if m["tool"] != "save"] == []
    assert sorted(p.name for p in (tmp_path / "work").iterdir()) == ["model.xlsx"]
    assert grade.outputs_of(record) == item.files  # the input, unchanged
    names = {t["function"]["name"] for t in record["_tools_sent"][0]}
    assert names == set(item.context["permitted_tools"]) | {"submit"}


def test_the_oracle_run_passes_and_records_every_mutation(plan, item, tmp_path):
    record = _run(plan, item, tmp_path / "work", _oracle_turns(item))
    assert record["outcome"] == "answered"
    cells = [m for m in record["task"]["mutations"] if m["tool"] == "write_cells"]
    assert cells and all(set(m) == {"tool", "file", "location", "old", "new"} for m in cells)
    assert record["task"]["mutations"][-1]["tool"] == "save"
    evaluation = grade.grade(item, record)
    assert evaluation["verdict"] == "pass", evaluation
    assert {r["id"] for r in evaluation["results"]} == {c["validator"] for c in item.checks}
    for r in evaluation["results"]:
        assert set(r) == {"id", "version", "status", "severity", "observed", "expected", "location", "message"}
    assert record["task"]["exceeded"] is None


def test_null_hands_back_the_input_and_fails(plan, item, tmp_path):
    record = _run(plan, item, tmp_path / "work", [_turn(("submit", {}))])
    evaluation = categorize(grade.grade(item, record), record, plan)
    assert evaluation["verdict"] in ("fail", "partial")
    assert evaluation["failure"]["primary"] in {c["failure_category"] for c in item.checks} | {"artifact-integrity"}


@pytest.mark.parametrize(("budget", "limit"), [
    ({"max_tool_calls": 2}, "max_tool_calls"),
    ({"max_tokens": 15}, "max_tokens"),
    ({"max_wall_seconds": 0}, "max_wall_seconds"),
])
def test_exceeding_the_budget_is_a_fail_with_its_reason(plan, item, tmp_path, budget, limit):
    turns = [_turn(("list_sheets", {"file": "model.xlsx"}))] * 5
    record = _run(plan, item, tmp_path / "work", turns, budget=budget)
    assert record["outcome"] == "budget_exceeded"
    assert record["task"]["exceeded"]["limit"] == limit
    evaluation = categorize(grade.grade(item, record), record, plan)
    assert evaluation["verdict"] == "fail"
    assert evaluation["failure"] == {"primary": "budget-exceeded", "secondary": [], "rule": "budget"}
    assert evaluation["results"][0]["id"] == "lrc.task-budget"


def test_the_step_cap_is_the_smaller_of_the_task_and_the_system(plan, item, tmp_path):
    turns = [_turn(("list_sheets", {"file": "model.xlsx"}))] * 30
    record = _run(plan, item, tmp_path / "work", turns, budget={"max_steps": 3})
    assert record["outcome"] == "step_cap" and record["steps"] == 3
    assert record["task"]["exceeded"]["limit"] == "max_steps"
    assert categorize(grade.grade(item, record), record, plan)["failure"]["primary"] == "budget-exceeded"


def test_a_systems_budget_binds_too_the_smaller_limit_of_the_two(plan, item, tmp_path):
    """The direct system's `budget` is part of the run's budget (each limit the smaller of the
    task's and the system's), and the prompt tells the model that budget. Before, a system's
    budget was locked and never applied: the run below went on to the step cap."""
    turns = [_turn(("list_sheets", {"file": "model.xlsx"}))] * 10
    record = _run(plan, item, tmp_path / "work", turns, budget={"max_tool_calls": 60}, system_budget={"max_tool_calls": 3})
    assert record["outcome"] == "budget_exceeded"
    assert record["task"]["exceeded"] == {"limit": "max_tool_calls", "observed": 4, "allowed": 3}
    user = record["_first_request"][1]["content"]
    assert "3 tool calls" in user and "60 tool calls" not in user
    # the task's limit binds where it is the smaller one
    record = _run(plan, item, tmp_path / "work2", turns, budget={"max_tool_calls": 2}, system_budget={"max_tool_calls": 30})
    assert record["task"]["exceeded"] == {"limit": "max_tool_calls", "observed": 3, "allowed": 2}


def test_max_cost_usd_stops_the_run_at_the_models_locked_price(plan, item, tmp_path):
    """`max_cost_usd` (task or system budget) is the replies' usage at the model's frozen price,
    exact Decimal, counted as each reply arrives; before, it was locked and never applied."""
    price = {"currency": "USD", "per_tokens": 1_000_000, "input": "3", "output": "15"}
    turns = [_turn(("list_sheets", {"file": "model.xlsx"}))] * 10
    # 1,000 input tokens a step at $3 / 1M = $0.003 a step: the 4th reply takes it to $0.012 > $0.01
    record = _run(plan, item, tmp_path / "work", turns, usage=1000, price=price, system_budget={"max_cost_usd": "0.01"})
    assert record["outcome"] == "budget_exceeded" and record["steps"] == 4
    assert record["task"]["exceeded"] == {"limit": "max_cost_usd", "observed": "$0.012", "allowed": "$0.01"}
    assert record["task"]["used"]["cost_usd"] == "0.012"
    assert "$0.01 of model spend" in record["_first_request"][1]["content"]
    evaluation = categorize(grade.grade(item, record), record, plan)
    assert evaluation["failure"]["primary"] == "budget-exceeded"
    # Without a spending cap the record is as before: no cost in `used`.
    free = _run(plan, item, tmp_path / "work2", turns[:2], usage=1000, price=price)
    assert "cost_usd" not in free["task"]["used"]


def test_the_effective_budget_takes_the_smaller_of_each_limit():
    eff = runner.effective_budget
    task = {"max_steps": 25, "max_tokens": 400000, "max_tool_calls": 60, "max_wall_seconds": 900, "max_cost_usd": "10"}
    system = {"max_steps": 20, "budget": {"max_tool_calls": 80, "max_wall_seconds": 600, "max_cost_usd": "9.5"}}
    assert eff(task, system) == {"max_steps": 20, "max_tool_calls": 60, "max_tokens": 400000, "max_wall_seconds": 600,
                                 "max_cost_usd": "9.5"}  # as numbers: "9.5" < "10", though not as text
    assert eff({"max_steps": 5, "max_tokens": 10, "max_wall_seconds": 1}, {"max_steps": 25}) == \
        {"max_steps": 5, "max_tokens": 10, "max_wall_seconds": 1}
    assert eff({"max_steps": 5, "max_tokens": 10, "max_wall_seconds": 1}, {"budget": {"max_cost_usd": "0.50"}})["max_cost_usd"] == "0.50"


def test_the_demo_tasks_are_told_the_budget_of_the_system_they_run_on(plan, item):
    """direct.v2 allows 50 tool calls and the task 60: a direct run is told (and held to) 50; an
    orchestrated run (80 allowed) the task's 60."""
    direct_user = planning.first_request(plan, "direct", item)["messages"][1]["content"]
    staged_user = planning.first_request(plan, "orchestrated", item)["messages"][1]["content"]
    assert item.context["budget"]["max_tool_calls"] == 60
    assert "50 tool calls" in direct_user and "60 tool calls" in staged_user


def test_a_task_without_a_tool_using_system_or_with_an_unknown_tool_is_refused(plan):
    no_agentic = {**plan, "edition": {**plan["edition"], "spec": {**plan["edition"]["spec"], "systems": ["single-shot.v2"]}}}
    assert any("no system to run them on" in p for p in planning.problems(no_agentic))
    entry = plan["tasks"][TASK]
    odd = {**plan, "tasks": {**plan["tasks"], TASK: {**entry, "spec": {**entry["spec"], "permitted_tools": ["recalculate"]}}}}
    assert any("recalculate" in p for p in planning.problems(odd))
    assert planning.problems(plan) == []


def test_the_prompt_shows_the_objective_and_files_never_the_expected_artifact(item):
    from lrc.runtime.tasks import prompt

    text = json.dumps(prompt.messages(item.context))
    assert item.context["objective"][:40] in text and "model.xlsx" in text
    assert item.answer_key["expected"]["sha256"] not in text
    assert "Inputs!" not in text  # no seeded check parameter (the formula the oracle writes)


def test_a_saved_file_that_does_not_decode_is_a_missing_file_and_fails(item):
    record = {"outcome": "answered", "steps": 1, "task": {"outputs": {"model.xlsx": "not base64 !!!"}}}
    evaluation = grade.grade(item, record)
    assert evaluation["verdict"] == "fail"
    assert all(r["status"] != "pass" for r in evaluation["results"])


# -- the wall budget counts the run's own time, not its waits for the artifact lock ----------------

def test_a_wait_for_the_artifact_lock_is_not_the_runs_wall_time(plan, item, tmp_path):
    """Another run of the execute holds the artifact lock for 3 s (a long recalculation) while
    this run, with 2 s of wall budget, makes its tool calls: it waits, and finishes as it would
    alone. Counted, the wait ended it as budget_exceeded (found: an honest 30 s run stopped at
    110.8 s behind a hostile run's recalculations)."""
    import threading
    import time

    held = threading.Event()

    def other_run() -> None:
        with runner.ARTIFACT_LOCK:
            held.set()
            time.sleep(3)

    hog = threading.Thread(target=other_run)
    hog.start()
    held.wait()
    try:
        turns = [_turn(("list_sheets", {"file": "model.xlsx"}))] * 2
        started = time.monotonic()
        record = _run(plan, item, tmp_path / "work", turns, budget={"max_wall_seconds": 2})
        waited = time.monotonic() - started
    finally:
        hog.join()
    assert waited >= 2.5  # it did wait behind the other run
    assert record["outcome"] == "answered" and record["task"]["exceeded"] is None, record["events"]


def test_the_runs_own_time_still_ends_it_when_a_model_call_hangs(plan, item, tmp_path):
    import time

    system = planning.system_spec(plan, "direct")
    budgeted = items.TaskItem(item.ref, item.index, item.item_id, {**item.context, "budget": {**item.context["budget"], "max_wall_seconds": 1}},
                              item.answer_key, item.files, item.oracle, item.checks)

    async def hangs(step, messages, tools):
        await asyncio.sleep(30)

    started = time.monotonic()
    record = asyncio.run(runner.run(runner.TaskRun(item=budgeted, system=system, loop=direct, call=hangs,
                                                   usage_of=lambda step: {"input": 0, "output": 0},
                                                   earlier_latency=lambda step: None, work=tmp_path / "w")))
    assert time.monotonic() - started < 10
    assert record["outcome"] == "budget_exceeded" and record["task"]["exceeded"]["limit"] == "max_wall_seconds"


def test_the_meter_leaves_out_waits_finished_and_under_way():
    now = [100.0]
    meter = runner.Meter({"max_wall_seconds": 10}, clock=lambda: now[0])
    now[0] = 103.0
    assert meter.wall() == 3.0
    meter.waiting_since = 103.0  # a wait begins
    now[0] = 150.0
    assert meter.wall() == 3.0
    meter.waited, meter.waiting_since = 47.0, None  # it ended
    now[0] = 151.0
    assert meter.wall() == 4.0
    meter.check_wall()


def test_max_tokens_counts_every_token_class_of_a_reply(plan, item, tmp_path):
    # cached input and cache writes are input; separately priced reasoning is output
    meter = runner.Meter({"max_tokens": 1_000, "max_wall_seconds": 10})
    turn = _turn(("list_sheets", {"file": "model.xlsx"}))
    meter.after_turn(turn, {"input": 5, "cached_input": 400, "cache_write": 100, "output": 10, "reasoning": 300})
    assert meter.tokens == 815
    with pytest.raises(runner.Exceeded) as exceeded:
        meter.after_turn(turn, {"input": 5, "cached_input": 400, "output": 10})
    assert exceeded.value.limit == "max_tokens" and exceeded.value.observed == 1_230
