"""`lrc estimate` forecasts the tasks' runs (seed 000) like every other run.

Before, the forecast dropped every task run without a word: the demo's estimate said "825
runs" and a total for the full edition while the plan has 865, and forecast-vs-actual left
the tasks' cost out of both columns. Now each task run is forecast from the first request
the task runner really sends (the task prompt and permitted tools; on an orchestrated system
the plan stage's prompt and tools), under the task's step cap and its token budget:

- every planned run is in the forecast, the task runs too, and the assumptions say how;
- the first request the forecast counts is the one a run sends, on both task systems (a run
  through the real runner, stopped at its first call);
- no level counts a step past the one whose reply takes the run over its `max_tokens`;
- forecast-vs-actual sets the tasks' cells beside what their runs cost, within low and high.
"""

from __future__ import annotations

import asyncio
import json
import math
from decimal import Decimal
from pathlib import Path

import pytest

from support import REPO

LOCK = REPO / "generated" / "demo" / "plan.lock"


@pytest.fixture(scope="module")
def demo_plan() -> tuple[dict, str, dict]:
    """(plan, root digest, items) of the committed demo lock."""
    from lrc.runtime import items as item_gen
    from lrc.runtime.execute import resolve_seed
    from lrc.runtime.lock import format as lockformat

    lock = lockformat.loads(LOCK.read_bytes())
    plan = lock["plan"]
    return plan, lock["root_digest"], item_gen.generate(plan, resolve_seed(plan, None))


def test_every_planned_run_is_forecast_the_tasks_too(demo_plan):
    from lrc.runtime import estimate
    from lrc.runtime.execute import plan_runs
    from lrc.runtime.lock import tasks as locktasks
    from lrc.runtime.tasks import planning

    plan, digest, items = demo_plan
    runs = plan_runs(plan, items)
    tasks = sorted(locktasks.tasks(plan))
    assert tasks, "the demo edition has tasks"
    fc = estimate.forecast(plan, digest, items)
    assert fc.runs == len(runs)
    assert {(r.workload, r.model, r.system) for r in runs} == set(fc.cells)
    systems = sorted(planning.task_systems(plan))
    assert systems == ["direct", "orchestrated"]
    for task in tasks:
        item = items[task][0]
        for system in systems:
            first = planning.first_request(plan, system, item)
            for model in plan["models"]:
                cell = fc.cells[(task, model, system)]
                assert cell.runs == 1
                counter = estimate.counter_for(plan["models"][model])
                # low: the first request and one tool call (a task ends with submit, never with text)
                assert cell.levels["low"].input_tokens == counter.prompt(first["messages"], first["tools"]) > 0
                assert cell.levels["low"].output_tokens == estimate.TOOL_CALL_TOKENS
                assert cell.levels["low"].cost <= cell.levels["expected"].cost <= cell.levels["high"].cost
    priced = [c for (w, _, _), c in fc.cells.items() if w in tasks and c.levels["high"].cost > 0]
    assert priced, "the demo's priced candidates run the tasks"
    total_cost = sum((c.levels["expected"].cost for c in fc.cells.values()), Decimal(0))
    assert fc.total["expected"].cost == total_cost
    notes = [a for a in fc.assumptions if a.startswith("task runs (seed 000)")]
    assert len(notes) == 2 and "on direct (4 tasks)" in notes[0] and "on orchestrated (4 tasks)" in notes[1], notes
    assert "max_tokens" in notes[0] and "plan stage prompt" in notes[1]
    assert f"{len(runs)} runs" in estimate.text(fc).splitlines()[0]


class _FirstCall(Exception):
    """Raised by the recording model at the run's first request: nothing more is needed."""


@pytest.mark.parametrize("system_id", ["direct", "orchestrated"])
def test_the_forecasts_first_task_request_is_the_one_a_run_sends(demo_plan, system_id, tmp_path):
    from lrc.runtime.execute import import_modules
    from lrc.runtime.lock import tasks as locktasks
    from lrc.runtime.tasks import planning
    from lrc.runtime.tasks import runner

    plan, _, items = demo_plan
    modules = import_modules(plan)
    system = planning.system_spec(plan, system_id)
    for n, task in enumerate(sorted(locktasks.tasks(plan))):
        item = items[task][0]
        sent: dict = {}

        async def call(step, messages, tools):
            sent.update(step=step, messages=json.loads(json.dumps(messages)), tools=json.loads(json.dumps(tools)))
            raise _FirstCall

        run = runner.TaskRun(item=item, system=system, loop=modules[system["implementation"]], call=call,
                             usage_of=lambda step: {}, earlier_latency=lambda step: None, work=tmp_path / f"w{n}")
        with pytest.raises(_FirstCall):
            asyncio.run(runner.run(run))
        first = planning.first_request(plan, system_id, item)
        assert sent["step"] == 1
        assert (sent["messages"], sent["tools"]) == (first["messages"], first["tools"]), task
        budget = item.context["budget"]
        assert first["max_steps"] == min(budget["max_steps"], system.get("max_steps", budget["max_steps"]))
        assert first["max_tokens"] == budget["max_tokens"]


def test_no_level_counts_a_step_past_the_token_budget():
    """The runner stops a task run after the first reply that takes its input plus output past
    `max_tokens`; the forecast stops there too, at every level, and without a budget it is the
    closed form (step k re-sends the first request and k-1 call + result pairs)."""
    from lrc.runtime import estimate

    price = {"input": "1", "output": "4", "per_tokens": 1_000_000, "currency": "USD"}
    first, steps, chars = 1000, 25, 20_000
    call, result = 3 * estimate.TOOL_CALL_TOKENS, math.ceil(chars / 4)
    free = estimate.run_figures(first, None, steps, True, chars, None, price)["high"]
    assert free.input_tokens == steps * first + steps * (steps - 1) // 2 * (call + result)
    assert free.output_tokens == steps * call  # every step a tool call, the last one submit
    capped = estimate.run_figures(first, None, steps, True, chars, None, price, token_budget=5000)
    # step 1: 1,000 in + 180 out = 1,180; step 2 re-sends 1,000 + 180 + 5,000 = 6,180 -> past 5,000: stop
    assert (capped["high"].input_tokens, capped["high"].output_tokens) == (1000 + 6180, 2 * call)
    assert capped["high"].cost == (Decimal(7180) * 1 + Decimal(2 * call) * 4) / 1_000_000
    # expected (5 steps, 400-token results) stops at its 4th: 1,060 + 1,520 + 1,980 + 2,440 > 5,000
    expected = capped["expected"]
    small = estimate.TOOL_CALL_TOKENS + estimate.TOOL_RESULT_TOKENS
    ins, outs, k = 0, 0, 0
    while k < estimate.TYPICAL_STEPS:
        k += 1
        ins, outs = ins + first + (k - 1) * small, outs + estimate.TOOL_CALL_TOKENS
        if ins + outs > 5000:
            break
    assert (expected.input_tokens, expected.output_tokens) == (ins, outs) and k < estimate.TYPICAL_STEPS
    # max_cost_usd stops it the same way: at $1 / 1M input and $4 / 1M output step 1 costs $0.00172
    # (within $0.002) and step 2 takes the run to $0.00862 (7,180 in, 360 out): high counts 2 steps
    spent = estimate.run_figures(first, None, steps, True, chars, None, price, cost_budget=Decimal("0.002"))["high"]
    assert (spent.input_tokens, spent.output_tokens) == (1000 + 6180, 2 * call)
    assert estimate.run_figures(first, None, steps, True, chars, None, price, cost_budget=Decimal("1000"))["high"] == free
    # A run with a text answer keeps its answer on the last step (the workloads' agentic runs).
    answer = estimate.Answer(key=100, oracle=80)
    text_run = estimate.run_figures(first, answer, steps, True, chars, None, price)["expected"]
    assert text_run.output_tokens == (estimate.TYPICAL_STEPS - 1) * estimate.TOOL_CALL_TOKENS + answer.at("expected")


def test_forecast_vs_actual_holds_the_tasks_cells(task_subset_run):
    """The default suite's task run (two of the demo's tasks, every model, both task systems):
    its forecast-vs-actual has the tasks' cells, the run ones with their actual cost, and a
    priced cell's actual cost lies between its forecast low and high."""
    out, res = task_subset_run
    assert res.returncode == 0, res.stdout + res.stderr
    table = json.loads((out / "summary.json").read_text(encoding="utf-8"))["forecast_vs_actual"]
    done = [row for row in table["cells"] if row["workload"].startswith("fa.") and row["runs_done"]]
    assert {row["system"] for row in done} == {"direct", "orchestrated"}
    priced = [row for row in done if Decimal(row["forecast_usd"]["high"]) > 0]
    assert len(priced) >= 4, done
    for row in priced:
        low, high = Decimal(row["forecast_usd"]["low"]), Decimal(row["forecast_usd"]["high"])
        assert 0 < low <= Decimal(row["actual_usd"]) <= high, row
        assert row["tokens"]["actual"]["input"] > 0 and row["tokens"]["forecast_done"]["input"] > 0, row
    assert sum(Decimal(row["actual_usd"]) for row in table["cells"]) == Decimal(table["total"]["actual_usd"])
    md = (Path(out) / "forecast-vs-actual.md").read_text(encoding="utf-8")
    assert "| fa." in md and "task runs (seed 000) on direct" in md
