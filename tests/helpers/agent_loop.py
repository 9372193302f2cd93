"""Driving a workload's reference policies the way the runtime does, without the runtime.

The workload test modules (tests/test_triage_workload.py, test_extract_invoice.py,
test_reconcile_ledger.py, test_nl2sql.py, test_month_end.py) each render a spec's prompts and
run an agentic policy against the workload's `Toolbox` until a terminal tool. The loop and
the message shapes (OpenAI chat semantics, tool arguments as a JSON string) live here once,
so every workload is driven identically; what differs per workload (how many turns it may
take, extra checks on each tool result, what it returns) stays in that test module.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

from lrc.runtime.lock.templating import render
from lrc.runtime.workloads.base import Reply, ToolOutcome


def render_messages(spec_dir: Path, spec: Mapping[str, Any], context: Mapping[str, Any], system: str) -> list[dict[str, Any]]:
    """The system and user messages of `system`'s prompts, rendered for one item's context."""
    prompts = spec["systems"][system]["prompts"]
    ctx = {"task": spec["task"], "item": context}
    return [
        {"role": "system", "content": render((spec_dir / prompts["system"]).read_text(encoding="utf-8"), ctx)},
        {"role": "user", "content": render((spec_dir / prompts["user"]).read_text(encoding="utf-8"), ctx)},
    ]


def assistant_message(reply: Reply) -> dict[str, Any]:
    """A reply as the assistant message the conversation records (arguments as JSON text)."""
    return {"role": "assistant", "content": reply.content, "tool_calls": [
        {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": json.dumps(c.arguments)}}
        for c in reply.tool_calls]}


def run_tool_loop(policy: Callable[[list, list], Reply], messages: list[dict[str, Any]], defs: Sequence[Mapping[str, Any]],
                  box: Any, max_turns: int, *, unit: str = "turns",
                  check: Callable[[ToolOutcome], None] | None = None) -> tuple[Any, int]:
    """Ask the policy, run its calls on `box`, append the results, until a terminal tool.

    Every turn must call tools and no call may fail; `check` adds a workload's own assertion
    on each outcome. Returns (the terminal tool's answer, the turn it came in); `messages`
    holds the whole conversation afterwards.
    """
    for step in range(1, max_turns + 1):
        reply = policy(messages, defs)
        assert reply.tool_calls, f"the agentic policy must call tools (said {reply.content!r})"
        messages.append(assistant_message(reply))
        for call in reply.tool_calls:
            outcome = box.call(call.name, call.arguments)
            assert not outcome.is_error, outcome.content
            if check is not None:
                check(outcome)
            messages.append({"role": "tool", "tool_call_id": call.id, "content": outcome.content})
            if outcome.terminal:
                return outcome.answer, step
    raise AssertionError(f"no terminal tool call within {max_turns} {unit}")


def single_shot_answer(reply: Reply) -> Any:
    """The JSON answer of a single-shot reply (which must be text, not tool calls)."""
    assert not reply.tool_calls and reply.content is not None
    return json.loads(reply.content)
