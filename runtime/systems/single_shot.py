"""Single-shot: one request, no tools; the reply text is the answer (seed 001 §3)."""

from __future__ import annotations

from lrc.runtime.systems.base import RunContext, RunOutcome

COMPONENT_ID = "lrc.system.single-shot"
COMPONENT_VERSION = 2


async def run(ctx: RunContext) -> RunOutcome:
    messages = list(ctx.messages)
    turn = await ctx.call(1, messages, None)
    messages.append(turn.message)
    events = [{"step": 1, "event": "model_reply", "finish_reason": turn.finish_reason}]
    if turn.invalid:
        events.append({"step": 1, "event": "invalid_response", "detail": turn.invalid})
        return RunOutcome("invalid_output", 1, transcript=messages, events=events)
    if turn.refusal:
        return RunOutcome("refusal", 1, transcript=messages, events=events)
    content = turn.message.get("content")
    if not content or not str(content).strip():
        return RunOutcome("no_answer", 1, transcript=messages, events=events)
    return RunOutcome("answered", 1, answer_text=content, transcript=messages, events=events)
