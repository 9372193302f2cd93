"""One task run: a private copy of the inputs, the permitted tools, the system's loop under the
task's budget, and what the run leaves for grading and the trace.

Why it wraps the edition's system instead of having a loop of its own: a task is measured
under the loop of the system it runs on (`lrc.system.direct`, `lrc.system.orchestrated`, or
in an edition without those the agentic loop of the workloads). What a task adds is
enforced around it, the same for every system — so a paired comparison of direct and
orchestrated differs only in the harness:

- the toolbox (`ArtifactToolbox`) over a copy of the inputs in the run's own scratch folder
  (OUT/work/<task>/<model>/<system>/<id>.r<N>/, rewritten from the item at every attempt, so a
  resumed run replays its journaled calls on the same files, and removed once the run is
  journaled), **restricted** to the spec's
  `permitted_tools` plus `submit`: only those schemas are sent, and a call of any other tool is
  an error result the model sees, never run;
- the **budget** (seed 000: a maximum execution budget per task): the run's budget is the task's
  and the system's together, each limit the smaller of the two where both set it
  (`effective_budget`; the prompt shows the model that budget). `max_steps` is the loop's step
  cap; `max_tool_calls`, `max_tokens` (input + output, every request of the run) and
  `max_cost_usd` (the replies' usage at the model's locked price, exact Decimal) are counted as
  each reply arrives, before any of its tool calls runs; `max_wall_seconds` is checked before
  every request and tool call and enforced by a hard timeout around the loop (`within_wall`);
  a wait for the artifact lock while another run holds it is not the run's time. Before
  2026-12-06 a system's `budget` and a `max_cost_usd` anywhere were locked but never applied.
  Exceeding one ends the run as a fail with its reason
  (`budget_exceeded`, or `step_cap` for steps); a model failure is never retried. Wall time is
  this execute's plus the journaled latency of calls an earlier execute made, and it is never
  written to a trace (it would make outputs differ between two executes);
- for a staged system (orchestrated), the `Workflow`: the stage prompts (the system spec's
  locked templates, rendered with the task's prompt context), the tools of each stage, and
  the `validate` hook — the task's own checks over the files as saved, reported as each
  failing check's id, status, location and rule, and nothing else (never the validator's
  message, observed or expected values: they hold the answer key);
- the record: the files as saved (base64: `lrc report` grades from the journal alone), every
  mutation the toolbox recorded, and the budget as used.

Tool arguments are the model's, hence hostile: the loop parses them with limits and the
toolbox checks each one; a bad argument is a tool error, never an exception into the run.
"""

from __future__ import annotations

import asyncio
import base64
import shutil
import threading
import time
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path
from typing import Any, Awaitable, Callable

from lrc.runtime.artifacts.toolbox import ArtifactToolbox, ToolOutcome
from lrc.runtime.systems.base import RunContext, Turn

TERMINAL = "submit"


class Exceeded(Exception):
    """The run went over one limit of its task budget."""

    def __init__(self, limit: str, observed: Any, allowed: Any):
        super().__init__(f"{limit}: {observed} > {allowed}")
        self.limit, self.observed, self.allowed = limit, observed, allowed


ARTIFACT_LOCK = threading.Lock()
"""Held by every toolbox call and validation of a task run in this process. Why: the validators
(and `read_range` with computed values) recalculate in a forked child (`recalc_worker`), and a
fork copies the locks other threads hold at that instant: a thread half-way through importing
the recalculation engine leaves the child waiting on that import forever (until the worker's
wall-clock limit turns the check into an error — a result that would depend on timing). With
one artifact operation at a time no other thread is inside artifact code when one forks; the
work is CPU-bound under the GIL anyway, so concurrent runs lose little."""


def known_tools() -> list[str]:
    """Every tool the artifact toolbox has, in its fixed order."""
    return [s["function"]["name"] for s in ArtifactToolbox.tools()]


def tool_schemas(permitted: list[str]) -> list[dict[str, Any]]:
    """The schemas a run is sent: the permitted tools and submit, in the toolbox's order."""
    allowed = set(permitted) | {TERMINAL}
    return [s for s in ArtifactToolbox.tools() if s["function"]["name"] in allowed]


#: The limits a task budget or a system budget may set; the smaller one binds.
BUDGET_LIMITS = ("max_steps", "max_tool_calls", "max_tokens", "max_wall_seconds", "max_cost_usd")


def effective_budget(task_budget: dict[str, Any], system: dict[str, Any]) -> dict[str, Any]:
    """The budget a task run has on `system`: each limit the smaller of the task's and the
    system's where both set it (the system's `max_steps` is its step cap; a system's `budget`
    holds the others), else the one that is set. `max_cost_usd` stays a decimal string."""
    theirs = {**(system.get("budget") or {}), **({"max_steps": system["max_steps"]} if "max_steps" in system else {})}
    out: dict[str, Any] = {}
    for key in BUDGET_LIMITS:
        values = [v for v in (task_budget.get(key), theirs.get(key)) if v is not None]
        if values:
            out[key] = min(values, key=Decimal) if key == "max_cost_usd" else min(int(v) for v in values)
    return out


class Meter:
    """What the run has used of its budget. `price`: the model's locked price, for `max_cost_usd`."""

    def __init__(self, budget: dict[str, Any], clock: Callable[[], float] = time.monotonic, price: dict[str, Any] | None = None):
        self.budget = budget
        self.clock = clock
        self.price = price
        self.started = clock()
        self.earlier_seconds = 0.0  # journaled latency of calls an earlier execute made
        self.waited = 0.0  # seconds spent waiting for ARTIFACT_LOCK while other runs held it
        self.waiting_since: float | None = None  # set while a wait is under way (another thread)
        self.steps = self.tool_calls = self.tokens = 0
        self.cost = Decimal(0)

    def wall(self) -> float:
        """The run's own wall time: this execute's, less its waits for the artifact lock, plus
        the journaled latency of an earlier execute's calls."""
        now = self.clock()
        since = self.waiting_since
        waiting = now - since if since is not None else 0.0
        return now - self.started - self.waited - waiting + self.earlier_seconds

    def holding(self, fn: Callable[..., Any], *args: Any) -> Any:
        """`fn(*args)` under ARTIFACT_LOCK, the wait for it not counted as the run's time.

        Why: the lock serializes every task run's artifact work in the process, so while one
        run's tool call recalculates for a minute, every other run waits. Counted, that wait
        ended honest runs as `budget_exceeded` on `max_wall_seconds` (measured: a 30 s run
        stopped at 110.8 s behind another run's recalculations): a result that depended on what
        the other runs of the execute did. Like the wait for a model's concurrency slot, it is
        the harness's queue, not the run's work."""
        started = self.clock()
        self.waiting_since = started
        try:
            ARTIFACT_LOCK.acquire()
        finally:
            self.waited += self.clock() - started
            self.waiting_since = None
        try:
            return fn(*args)
        finally:
            ARTIFACT_LOCK.release()

    def check_wall(self) -> None:
        if self.wall() > self.budget["max_wall_seconds"]:
            raise Exceeded("max_wall_seconds", f"{self.wall():.1f} s", f"{self.budget['max_wall_seconds']} s")

    def after_turn(self, turn: Turn, usage: dict[str, Any]) -> None:
        self.steps += 1
        # Every class: cached input and cache writes are input, separately priced reasoning is
        # output (counting only `input` + `output` made the budget depend on the provider's
        # cache hits: five turns of 160,015 tokens, mostly cached, counted as 75).
        self.tokens += sum(int(usage.get(cls, 0) or 0) for cls in ("input", "cached_input", "cache_write", "output", "reasoning"))
        self.tool_calls += len(turn.message.get("tool_calls") or [])
        if self.tokens > self.budget["max_tokens"]:
            raise Exceeded("max_tokens", self.tokens, self.budget["max_tokens"])
        cap = self.budget.get("max_tool_calls")
        if cap is not None and self.tool_calls > cap:
            raise Exceeded("max_tool_calls", self.tool_calls, cap)
        spend = self.budget.get("max_cost_usd")
        if spend is not None:
            from lrc.runtime.pricing import call_cost, decimal_str

            if self.price is None:  # never reached through lrc execute: every planned model has a price
                raise ValueError("a task budget with max_cost_usd needs the model's price")
            self.cost += call_cost(dict(usage), self.price)  # as the report prices the run's calls
            if self.cost > Decimal(spend):
                raise Exceeded("max_cost_usd", f"${decimal_str(self.cost)}", f"${spend}")

    def used(self) -> dict[str, Any]:
        used: dict[str, Any] = {"steps": self.steps, "tool_calls": self.tool_calls, "tokens": self.tokens}
        if "max_cost_usd" in self.budget:
            from lrc.runtime.pricing import decimal_str

            used["cost_usd"] = decimal_str(self.cost)
        return used


class PermittedToolbox:
    """The toolbox as a task's model may use it: its permitted tools and submit, under the wall budget."""

    def __init__(self, inner: ArtifactToolbox, permitted: list[str], meter: Meter):
        self.inner = inner
        self.permitted = sorted(set(permitted) | {TERMINAL})
        self.meter = meter

    def call(self, name: Any, arguments: Any) -> ToolOutcome:
        if name not in self.permitted:
            return ToolOutcome(f"error: tool {str(name)[:60]!r} is not permitted in this task; permitted: "
                               f"{', '.join(self.permitted)}", is_error=True)
        self.meter.check_wall()
        return self.meter.holding(self.inner.call, name, arguments)


@dataclass
class TaskRun:
    """What the runtime hands one task run."""

    item: Any  # tasks.items.TaskItem
    system: dict[str, Any]  # the agentic system's locked spec
    loop: Any  # its implementation module (`run(RunContext) -> RunOutcome`)
    call: Callable[[int, list[dict[str, Any]], list[dict[str, Any]] | None], Awaitable[Turn]]
    usage_of: Callable[[int], dict[str, Any]]  # the journaled usage of step N (after the call returned)
    earlier_latency: Callable[[int], float | None]  # seconds, when step N was journaled by an earlier execute
    work: Path  # the run's private folder
    price: dict[str, Any] | None = None  # the model's locked price (for a budget's max_cost_usd)


READ_ONLY = ("list_files", "list_sheets", "read_range", "list_slides", "read_slide")


class Workflow:
    """What the orchestrated loop needs of a task: stage prompts, stage tools, validation."""

    def __init__(self, item: Any, system: dict[str, Any], toolbox: "PermittedToolbox", inner: ArtifactToolbox):
        from lrc.runtime.lock.templating import make_environment

        self.item, self.system, self.toolbox, self.inner = item, system, toolbox, inner
        env = make_environment()
        self.templates = {stage: env.from_string(entry["prompt"]) for stage, entry in sorted(system["workflow"].items())}
        own = [{"type": "function", "function": {"name": name, "description": t["description"], "parameters": t["parameters"]}}
               for name, t in sorted(system["stage_tools"].items())]
        permitted = [s for s in tool_schemas(item.context["permitted_tools"]) if s["function"]["name"] != TERMINAL]
        submit = [s for s in tool_schemas([]) if s["function"]["name"] == TERMINAL]
        plan_tool = [t for t in own if t["function"]["name"] == "record_plan"]
        self.stage_tools = {
            "plan": [s for s in permitted if s["function"]["name"] in READ_ONLY] + plan_tool,
            "act": permitted + own,
            "repair": permitted + own,
            "report": submit,
        }

    def prompt(self, stage: str, view: dict[str, Any]) -> str:
        from lrc.runtime.lock.templating import render

        entry = self.system["workflow"][stage]
        return render(entry["prompt"], {"task": self.item.context, "workflow": view}, template=self.templates[stage])

    def tools(self, stage: str) -> list[dict[str, Any]]:
        return [dict(t) for t in self.stage_tools[stage]]

    def validate(self) -> dict[str, Any]:
        """The task's checks over the files as saved (changed files are saved first)."""
        from lrc.runtime.artifacts.validators import run_all
        from lrc.runtime.artifacts.views import Submission

        self.toolbox.meter.check_wall()

        def checked() -> list[dict[str, Any]]:
            for name in sorted(self.inner.outputs()):
                self.inner.call("save", {"file": name})
            return run_all(self.item.checks, Submission(inputs=dict(self.item.files), outputs=self.inner.outputs()))

        return failing_report(self.toolbox.meter.holding(checked))


def failing_report(results: list[dict[str, Any]]) -> dict[str, Any]:
    """What `validate` shows: each check that did not pass, by its id, status, location and a
    message that is the check's rule (the family's one line in `validators.FAMILIES`).

    Never the validator's own message: it quotes what it observed and expected ("IS!D7 is
    =Inputs!D6, not of the shape =-Inputs!D6", "the model computes 455.86"), so showing it
    handed the orchestrated system the answer key, one repair at a time (found 2026-12-07 by
    calling `validate` on each untouched input)."""
    from lrc.runtime.artifacts.validators import FAMILIES

    failing = []
    for r in results:
        if r["status"] == "pass":
            continue
        rule = FAMILIES[r["id"]][2] if r["id"] in FAMILIES else "a declared check"
        said = f"not met: {rule}" if r["status"] == "fail" else f"could not be decided on the saved files: {rule}"
        failing.append({"check": r["id"], "status": r["status"], "message": said, "location": r.get("location")})
    return {"passed": not failing and bool(results), "checks": len(results), "failing": failing}


async def within_wall(work: Awaitable[Any], meter: Meter, limit: float) -> Any:
    """`work`'s result, or TimeoutError once the run's own wall time (`meter.wall()`: waits
    for the artifact lock not counted) passes `limit`; `work` is cancelled then. The hard stop
    behind the checks before each request and tool call: a model call or a tool that hangs."""
    task = asyncio.ensure_future(work)
    try:
        while True:
            remaining = limit - meter.wall()
            if remaining <= 0:
                raise TimeoutError(f"the run's wall time passed {limit:g} s")
            done, _ = await asyncio.wait({task}, timeout=remaining)
            if done:
                return task.result()
    finally:
        if not task.done():
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)


def _locked(fn: Callable[..., Any], *args: Any) -> Any:
    with ARTIFACT_LOCK:
        return fn(*args)


def _encoded(files: dict[str, bytes]) -> dict[str, str]:
    return {name: base64.b64encode(data).decode("ascii") for name, data in sorted(files.items())}


async def run(task: TaskRun) -> dict[str, Any]:
    """The run's journal fields (outcome, steps, transcript, events, answer, and `task`)."""
    item = task.item
    budget = effective_budget(item.context["budget"], task.system)
    meter = Meter(budget, price=task.price)
    inner = await asyncio.to_thread(meter.holding, ArtifactToolbox, task.work, item.files)
    toolbox = PermittedToolbox(inner, item.context["permitted_tools"], meter)
    seen: dict[str, Any] = {"messages": None, "turn": None}

    async def metered(step: int, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None) -> Turn:
        seen["messages"], seen["turn"] = messages, None
        earlier = task.earlier_latency(step)
        if earlier is None:
            meter.check_wall()
        turn = await task.call(step, messages, tools)
        if earlier is not None:
            meter.earlier_seconds += earlier
        seen["turn"] = turn
        meter.after_turn(turn, task.usage_of(step))
        return turn

    max_steps = int(budget["max_steps"])
    common = dict(messages=[dict(m) for m in task_messages(item, budget)], tools=tool_schemas(item.context["permitted_tools"]),
                  terminal_tools=[TERMINAL], max_steps=max_steps, call=metered, toolbox=toolbox)
    if task.system.get("mode") == "orchestrated":
        from lrc.runtime.systems.orchestrated import StagedContext

        ctx: RunContext = StagedContext(**common, system=task.system, workflow=Workflow(item, task.system, toolbox, inner))
    else:
        ctx = RunContext(**common)
    exceeded: Exceeded | None = None
    try:
        outcome = await within_wall(task.loop.run(ctx), meter, float(budget["max_wall_seconds"]))
    except Exceeded as exc:
        exceeded = exc
    except (asyncio.TimeoutError, TimeoutError):
        exceeded = Exceeded("max_wall_seconds", f"over {budget['max_wall_seconds']} s", f"{budget['max_wall_seconds']} s")
    outputs = await asyncio.to_thread(_locked, inner.outputs)
    record: dict[str, Any]
    if exceeded is None:
        record = {"outcome": outcome.outcome, "steps": outcome.steps, "answer_text": outcome.answer_text, "answer": outcome.answer,
                  "submitted": outcome.submitted, "transcript": outcome.transcript, "events": outcome.events}
        if getattr(outcome, "workflow", None) is not None:
            record["workflow"] = outcome.workflow
        if outcome.outcome == "step_cap":
            exceeded_info = {"limit": "max_steps", "observed": outcome.steps + 1, "allowed": max_steps}
        else:
            exceeded_info = None
    else:
        transcript = list(seen["messages"] or [])
        if seen["turn"] is not None:
            transcript.append(seen["turn"].message)
        record = {"outcome": "budget_exceeded", "steps": meter.steps, "answer_text": None, "answer": None, "submitted": False,
                  "transcript": transcript,
                  "events": [{"step": meter.steps, "event": "stop", "reason": "task budget", "limit": exceeded.limit}]}
        exceeded_info = {"limit": exceeded.limit, "observed": exceeded.observed, "allowed": exceeded.allowed}
    if exceeded_info is not None and exceeded_info["limit"] == "max_wall_seconds":
        exceeded_info = {**exceeded_info, "observed": "over the limit"}  # no wall clock in what is graded or traced
    record["task"] = {"outputs": _encoded(outputs), "mutations": inner.mutations, "used": meter.used(), "exceeded": exceeded_info}
    return record


def earlier_latency(journal: Any, run: str, step: int, before: set) -> float | None:
    """Seconds the provider took for step `step` of `run` when an earlier execute journaled it
    (None: this execute makes the call). A resumed task run counts them against its wall budget."""
    if (run, step) not in before:
        return None
    return max(0, int(journal.calls[(run, step)].get("latency_ms") or 0)) / 1000


def work_folder(out: Path | None, spec: Any) -> Path:
    """The private folder a task run works in: OUT/work/<task>/<model>/<system>/<id>.r<N>/, its
    own scratch copy of the inputs, removed once the run is journaled (the saved files are in the
    run record; `lrc report` writes them under OUT/runs/, which stays a function of the journal)."""
    from lrc.runtime.report.outputs import slug  # here, not at import: outputs imports this module

    if out is None:
        raise ValueError("a task run needs the output folder")
    return out / "work" / spec.workload / slug(spec.model) / spec.system / f"{spec.item_id}.r{spec.repetition}"


def remove_work_folder(out: Path, spec: Any) -> None:
    """Remove a journaled run's scratch folder, and its parents up to OUT/work once they are empty."""
    folder = work_folder(out, spec)
    shutil.rmtree(folder, ignore_errors=True)
    for parent in folder.parents:
        if parent == out:
            break
        try:
            parent.rmdir()
        except OSError:  # not empty: another run's scratch copy is still there
            break


def task_messages(item: Any, budget: dict[str, Any]) -> list[dict[str, Any]]:
    """The task's first messages, showing `budget`: the run's (`effective_budget`). The one
    rendering the run, the forecast (`planning.first_request`) and the manifest's digest share."""
    from lrc.runtime.tasks import prompt

    return prompt.messages({**item.context, "budget": budget})
