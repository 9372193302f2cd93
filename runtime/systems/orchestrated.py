"""Orchestrated system (seed 000, "Orchestrated system"): the same model endpoint inside a staged
workflow — plan, act, validate, repair (bounded), report — with every stage decision traced.

Why a harness of its own, and what it may and may not do. Seed 000 asks whether a harness
makes a model more reliable, so the harness gets the tools a careful operator would give it
and nothing the model could not earn: it sees the task's own deterministic validators
through a `validate` tool, which reports each failing check's id, message and location — the
validator's own words, never its observed/expected values or the answer key — and it may
send the model back to repair at most `retries.max` times (the system spec's bound; a repair
round starts only on a failed validation, never on the graded outcome, which the harness
never sees). Stages, in order:

1. plan: the stage's locked prompt; the permitted read-only tools and `record_plan`. The plan
   (`record_plan`'s steps, or a plain-text reply) is recorded as revision 1; the model may
   revise it later with `record_plan` in any working stage, each revision kept.
2. act: the stage's prompt; the permitted tools (without `submit`), `record_plan` and
   `validate`. The stage ends when the model calls `validate` (or replies with text: the
   harness then validates for it).
3. validate: the task's checks over the files as saved (`validate` saves changed files
   first). All pass: report. Some fail and repairs are left: repair. None left: stop.
4. repair: the repair prompt (attempt k of max) and the act tools; ends like act.
5. report: the report prompt and `submit` alone; the model's submit (its note is the report)
   ends the run. A text reply instead is the note, and the harness submits for it; so does a
   stop after the last repair — the files as saved are graded either way.

The step cap and the task budget bound the whole workflow, as for the direct system.
Tool arguments are hostile input: a malformed `record_plan` or `validate` call is an error
result the model sees, never an exception. Everything the harness decided is in the run's
`workflow` record (plan revisions, each validation's failing check ids, repairs used and the
bound, the stop reason) and in its events.

The Office-artifact library is the task runner's (pyproject.toml, import-linter): the
validators, the toolbox and the stage templates reach this loop through `RunContext.workflow`
(`lrc.runtime.tasks.runner.Workflow`).
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass
from typing import Any

from lrc.runtime.systems.agentic import _arguments
from lrc.runtime.systems.base import RunContext, RunOutcome

COMPONENT_ID = "lrc.system.orchestrated"
COMPONENT_VERSION = 1

STAGES = ("plan", "act", "validate", "repair", "report")
PLAN_TOOL, VALIDATE_TOOL, SUBMIT = "record_plan", "validate", "submit"
MAX_PLAN_STEPS, MAX_PLAN_STEP_CHARS, MAX_PLAN_TEXT = 50, 500, 4_000


@dataclass
class StagedContext(RunContext):
    """A run context with what the workflow needs: the system's locked spec (stage templates,
    retry bound) and the task runner's hooks (`lrc.runtime.tasks.runner.Workflow`: `prompt`,
    `tools`, `validate`)."""

    system: dict[str, Any] | None = None
    workflow: Any = None


@dataclass
class StagedOutcome(RunOutcome):
    """A run outcome with the workflow record: stages entered, plan revisions, validations,
    repairs used and their bound, the stop decision."""

    workflow: dict[str, Any] | None = None


def plan_steps(args: dict[str, Any]) -> tuple[list[str] | None, str | None]:
    """The steps of a `record_plan` call, or why the call is refused."""
    extra = sorted(set(args) - {"steps"})
    if extra:
        return None, f"error: record_plan takes only 'steps' (got {', '.join(repr(e)[:40] for e in extra[:5])})"
    steps = args.get("steps")
    if not isinstance(steps, list) or not steps:
        return None, "error: record_plan needs 'steps', a non-empty list of strings"
    if len(steps) > MAX_PLAN_STEPS:
        return None, f"error: a plan has at most {MAX_PLAN_STEPS} steps"
    out = []
    for i, s in enumerate(steps, 1):
        if not isinstance(s, str) or not s.strip():
            return None, f"error: step {i} must be a non-empty string"
        if len(s) > MAX_PLAN_STEP_CHARS:
            return None, f"error: step {i} is over {MAX_PLAN_STEP_CHARS} characters"
        out.append(s.strip())
    return out, None


class _State:
    def __init__(self, retries_max: int):
        self.stage = "plan"
        self.retries_max = retries_max
        self.plans: list[dict[str, Any]] = []
        self.validations: list[dict[str, Any]] = []
        self.repairs = 0
        self.stages: list[str] = ["plan"]
        self.stop: str | None = None

    def record(self) -> dict[str, Any]:
        return {"stages": list(self.stages), "plan_revisions": self.plans, "validations": self.validations,
                "repairs": self.repairs, "retries_max": self.retries_max, "stop": self.stop}

    def enter(self, stage: str) -> None:
        self.stage = stage
        self.stages.append(stage)


async def run(ctx: RunContext) -> RunOutcome:
    wf, system = getattr(ctx, "workflow", None), getattr(ctx, "system", None)
    if wf is None or system is None:
        raise ValueError("the orchestrated system runs only reliability tasks (through lrc.runtime.tasks.runner)")
    state = _State(int(system["retries"]["max"]))
    messages = list(ctx.messages)
    events: list[dict[str, Any]] = [{"step": 0, "event": "stage", "stage": "plan"}]
    messages.append({"role": "user", "content": wf.prompt("plan", _view(state))})

    def done(outcome: str, step: int, **kw: Any) -> RunOutcome:
        return StagedOutcome(outcome, step, transcript=messages, events=events, workflow=state.record(), **kw)

    def enter(stage: str, step: int) -> None:
        state.enter(stage)
        events.append({"step": step, "event": "stage", "stage": stage})
        messages.append({"role": "user", "content": wf.prompt(stage, _view(state))})

    async def harness_submit(step: int, note: str) -> RunOutcome:
        outcome = await asyncio.to_thread(ctx.toolbox.call, SUBMIT, {"note": note[:MAX_PLAN_TEXT]})
        events.append({"step": step, "event": "stop", "reason": state.stop, "submitted_by": "harness", "error": outcome.is_error})
        if outcome.is_error:
            return done("no_answer", step)
        return done("answered", step, answer=outcome.answer, submitted=True)

    async def after_validation(step: int, report: dict[str, Any]) -> RunOutcome | None:
        """The validate stage's decision: report, repair, or stop."""
        if report["passed"]:
            enter("report", step)
            return None
        if state.repairs < state.retries_max:
            state.repairs += 1
            events.append({"step": step, "event": "repair", "attempt": state.repairs, "of": state.retries_max})
            enter("repair", step)
            return None
        state.stop = "retries exhausted"
        return await harness_submit(step, f"stopped by the harness after {state.repairs} repair(s): "
                                          f"{len(report['failing'])} check(s) still fail")

    for step in range(1, ctx.max_steps + 1):
        offered = wf.tools(state.stage)
        names = {t["function"]["name"] for t in offered}
        turn = await ctx.call(step, messages, offered)
        messages.append(turn.message)
        calls = turn.message.get("tool_calls") or []
        events.append({"step": step, "event": "model_reply", "stage": state.stage, "finish_reason": turn.finish_reason,
                       "tool_calls": len(calls)})
        if turn.invalid:
            events.append({"step": step, "event": "invalid_response", "detail": turn.invalid})
            return done("invalid_output", step)
        if turn.refusal:
            return done("refusal", step)
        if not calls:
            text = str(turn.message.get("content") or "").strip()
            if state.stage == "plan":
                if not text:
                    return done("no_answer", step)
                _add_plan(state, events, step, [text[:MAX_PLAN_TEXT]], "text")
                enter("act", step)
                continue
            if state.stage == "report":
                state.stop = "reported"
                return await harness_submit(step, text or "(no report)")
            report = await asyncio.to_thread(wf.validate)  # act or repair ended in text: the harness validates
            _add_validation(state, events, step, report, "harness")
            outcome = await after_validation(step, report)
            if outcome is not None:
                return outcome
            continue
        submitted, validated, planned = None, None, False
        for call in calls:
            name = call["function"]["name"]
            args, problem = _arguments(call["function"].get("arguments"))
            terminal = False
            if problem is not None:
                content, is_error = problem, True
            elif name not in names:
                content, is_error = (f"error: {str(name)[:60]!r} is not offered in the {state.stage} stage; "
                                     f"offered: {', '.join(sorted(names))}"), True
            elif validated is not None or submitted is not None:
                content, is_error = f"error: not run: {'validate' if validated is not None else 'submit'} ended the stage", True
            elif name == PLAN_TOOL:
                steps, problem = plan_steps(args)
                if steps is None:
                    content, is_error = problem, True
                else:
                    revision = _add_plan(state, events, step, steps, "record_plan")
                    content, is_error, planned = f"plan recorded (revision {revision}, {len(steps)} step(s))", False, True
            elif name == VALIDATE_TOOL:
                if args:
                    content, is_error = "error: validate takes no arguments", True
                else:
                    validated = await asyncio.to_thread(wf.validate)
                    _add_validation(state, events, step, validated, "model")
                    content, is_error = show(validated, state.repairs, state.retries_max), False
            else:
                outcome = await asyncio.to_thread(ctx.toolbox.call, name, args)
                content, is_error, terminal = outcome.content, outcome.is_error, outcome.terminal
                if terminal and not is_error:
                    submitted = outcome.answer
            messages.append({"role": "tool", "tool_call_id": call["id"], "content": content})
            events.append({"step": step, "event": "tool_call", "tool": name, "error": is_error, "terminal": terminal})
        if submitted is not None:
            state.stop = "submitted"
            events.append({"step": step, "event": "stop", "reason": "terminal tool"})
            return done("answered", step, answer=submitted, submitted=True)
        if validated is not None:
            outcome = await after_validation(step, validated)
            if outcome is not None:
                return outcome
        elif planned and state.stage == "plan":
            enter("act", step)
    state.stop = "step cap"
    events.append({"step": ctx.max_steps, "event": "stop", "reason": "step cap"})
    return done("step_cap", ctx.max_steps)


def _view(state: _State) -> dict[str, Any]:
    """What a stage template sees of the workflow (never a check's values)."""
    last = state.validations[-1] if state.validations else None
    return {"repair": state.repairs, "retries_max": state.retries_max, "retries_left": state.retries_max - state.repairs,
            "failing": len(last["failing"]) if last else 0, "plan_revisions": len(state.plans)}


def _add_plan(state: _State, events: list, step: int, steps: list[str], via: str) -> int:
    state.plans.append({"revision": len(state.plans) + 1, "step": step, "stage": state.stage, "via": via, "steps": steps})
    events.append({"step": step, "event": "plan", "revision": len(state.plans), "stage": state.stage, "steps": len(steps)})
    return len(state.plans)


def _add_validation(state: _State, events: list, step: int, report: dict[str, Any], by: str) -> None:
    failing = [f["check"] for f in report["failing"]]
    state.validations.append({"step": step, "stage": state.stage, "by": by, "passed": report["passed"], "failing": failing})
    events.append({"step": step, "event": "validate", "by": by, "passed": report["passed"], "failing": failing})


def show(report: dict[str, Any], repairs: int, retries_max: int) -> str:
    """The `validate` tool's result as the model reads it: JSON of each failing check's id,
    status, location and message (the check's rule, never the validator's words: they quote
    the expected values), and the repairs left."""
    return json.dumps({"passed": report["passed"], "checks": report["checks"], "failing": report["failing"],
                       "repairs_used": repairs, "repairs_max": retries_max}, sort_keys=True, ensure_ascii=False)
