"""Agentic: a tool loop with a hard step cap (seed 001 §3: max 25 steps; exceeding = fail).

A step is one model request. The loop ends when the model calls a terminal tool (its
arguments are the answer), or replies without tool calls (that text is the answer), or
refuses, or sends a response that cannot be read (invalid output). Tool arguments are parsed
with the limits of `lrc.runtime.boundedjson`; arguments over a limit are an error result the
model sees, like any other invalid arguments. A model that still wants to act after `max_steps` requests hits the step cap,
which is a fail and is never retried. Tool errors go back to the model as tool results.
"""

from __future__ import annotations

import asyncio
from typing import Any

from lrc.runtime import boundedjson
from lrc.runtime.systems.base import RunContext, RunOutcome

COMPONENT_ID = "lrc.system.agentic"
COMPONENT_VERSION = 2


def _arguments(raw: Any) -> tuple[dict[str, Any] | None, str | None]:
    try:
        value = boundedjson.bounded(raw) if isinstance(raw, dict) else boundedjson.loads(raw or "{}")
    except boundedjson.Unparseable as exc:
        return None, f"error: arguments are not valid JSON ({exc})"
    if not isinstance(value, dict):
        return None, "error: arguments must be a JSON object"
    return value, None


async def run(ctx: RunContext) -> RunOutcome:
    messages = list(ctx.messages)
    events: list[dict[str, Any]] = []
    for step in range(1, ctx.max_steps + 1):
        turn = await ctx.call(step, messages, ctx.tools)
        messages.append(turn.message)
        calls = turn.message.get("tool_calls") or []
        events.append({"step": step, "event": "model_reply", "finish_reason": turn.finish_reason, "tool_calls": len(calls)})
        if turn.invalid:
            events.append({"step": step, "event": "invalid_response", "detail": turn.invalid})
            return RunOutcome("invalid_output", step, transcript=messages, events=events)
        if turn.refusal:
            return RunOutcome("refusal", step, transcript=messages, events=events)
        if not calls:
            content = turn.message.get("content")
            if not content or not str(content).strip():
                return RunOutcome("no_answer", step, transcript=messages, events=events)
            return RunOutcome("answered", step, answer_text=content, transcript=messages, events=events)
        submitted = None
        for call in calls:
            name = call["function"]["name"]
            args, problem = _arguments(call["function"].get("arguments"))
            if problem is not None:
                content, is_error, terminal, answer = problem, True, False, None
            else:
                # Off the event loop: a tool (a slow SQL query) must never stall the other runs.
                outcome = await asyncio.to_thread(ctx.toolbox.call, name, args)
                content, is_error, terminal, answer = outcome.content, outcome.is_error, outcome.terminal, outcome.answer
            messages.append({"role": "tool", "tool_call_id": call["id"], "content": content})
            events.append({"step": step, "event": "tool_call", "tool": name, "error": is_error, "terminal": terminal})
            if terminal and not is_error and submitted is None:
                submitted = answer
                if name not in ctx.terminal_tools:
                    events.append({"step": step, "event": "warning", "detail": f"{name} ended the run but is not declared terminal"})
        if submitted is not None:
            events.append({"step": step, "event": "stop", "reason": "terminal tool"})
            return RunOutcome("answered", step, answer=submitted, submitted=True, transcript=messages, events=events)
    events.append({"step": ctx.max_steps, "event": "stop", "reason": "step cap"})
    return RunOutcome("step_cap", ctx.max_steps, transcript=messages, events=events)
