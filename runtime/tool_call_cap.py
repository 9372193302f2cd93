"""The most tool calls one workload run may make: a model's tool calls are hostile input.

Why: nothing else bounded them. A task run has its budget's `max_tool_calls`, but a workload's
agentic run was bounded only by its step cap (25 requests), and a reply may carry any number of
tool calls: a model (or a provider) that answered every request with 2,000 `list_emails` calls
made one triage run execute 50,000 tool calls, take three minutes of CPU and write a 200 MB
journal -- a thousand such runs would fill a disk. The cap is counted as each reply arrives,
before any of its tool calls runs (as a task's `max_tool_calls` is), and going over it ends the
run as a fail, `budget_exceeded` (category budget-exceeded), never retried. It sits far above
what solving a workload takes (the demo's most: 22 calls, a triage batch of 20 emails read one
by one) and, being code of the analysis component, it is frozen by every lock's fingerprint.
A replayed (journaled) reply counts the same, so a resumed run ends where it ended.
"""

from __future__ import annotations

from typing import Any, Awaitable, Callable

from lrc.runtime.systems.base import RunOutcome, Turn

MAX_TOOL_CALLS_PER_RUN = 200

Call = Callable[[int, list[dict[str, Any]], list[dict[str, Any]] | None], Awaitable[Turn]]


class OverCap(Exception):
    """A reply took the run's tool calls past `MAX_TOOL_CALLS_PER_RUN`."""

    def __init__(self, step: int, made: int, transcript: list[dict[str, Any]]):
        super().__init__(f"{made} tool calls > {MAX_TOOL_CALLS_PER_RUN}")
        self.step, self.made, self.transcript = step, made, transcript


def capped(call: Call) -> Call:
    """`call`, counting the tool calls of every reply; raises OverCap (with the conversation
    up to and including that reply) once the run's total passes the cap."""
    made = 0

    async def counted(step: int, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None) -> Turn:
        nonlocal made
        turn = await call(step, messages, tools)
        calls = turn.message.get("tool_calls") if isinstance(turn.message, dict) else None
        made += len(calls) if isinstance(calls, list) else 0
        if made > MAX_TOOL_CALLS_PER_RUN:
            raise OverCap(step, made, [*messages, turn.message])
        return turn

    return counted


def outcome(over: OverCap) -> RunOutcome:
    """The run's outcome when it went over the cap: a fail with its reason."""
    return RunOutcome("budget_exceeded", over.step, transcript=over.transcript,
                      events=[{"step": over.step, "event": "stop", "reason": "tool call cap", "limit": "max_tool_calls",
                               "observed": over.made, "allowed": MAX_TOOL_CALLS_PER_RUN}])
