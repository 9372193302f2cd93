"""Shared plumbing of the workload packages: tool dispatch, and reading a conversation.

This is plain shared code, not a component (no COMPONENT_ID): it declares no behaviour of
its own that a spec pins. The tools and reference components of every workload import it,
so a change here changes their fingerprints — which is what should happen, because it
changes what they do.

Why it exists: every workload's toolbox must behave the same way at its edges (an unknown
tool, arguments that are not an object, a tool that crashes, an oversized result), and
every reference policy reads tool calls and results out of OpenAI-style messages the same
way. One copy keeps those edges identical across workloads; what genuinely differs per
workload (e.g. extract's attached PDFs, reconcile's JSON results, month-end's dict-only
arguments) stays in the workload, as a small explicit wrapper.
"""

from __future__ import annotations

from typing import Any, Callable, Mapping, Sequence

from lrc.runtime import boundedjson
from lrc.runtime.workloads.base import ToolOutcome

TRUNCATION_MARKER = "…[truncated]"

Message = Mapping[str, Any]
Tool = Callable[[Mapping[str, Any]], ToolOutcome]


# --------------------------------------------------------------------------------------
# tools


def tool_error(message: str) -> ToolOutcome:
    """An error result for the model (`error: <message>`).

    A bad tool call is a model mistake to be graded, not an infrastructure fault, so it is
    returned to the model as a result instead of raised.
    """
    return ToolOutcome(f"error: {message}", is_error=True)


class ToolDispatch:
    """Base of a workload `Toolbox`: name -> tool dispatch that never raises, and result capping.

    A subclass builds its tools and passes them, with `max_result_chars`, to `__init__`.
    `call` turns every failure into an error result: an unknown tool (listing the
    available ones, in registration order), arguments that are not a JSON object, and any
    exception inside a tool (only its type is reported, so nothing of the item leaks).
    """

    def __init__(self, max_result_chars: int, tools: Mapping[str, Tool]):
        self._max = max_result_chars
        self._tools: dict[str, Tool] = dict(tools)

    def call(self, name: str, arguments: Mapping[str, Any]) -> ToolOutcome:
        tool = self._tools.get(name)
        if tool is None:
            return tool_error(f"unknown tool {name!r}; available: {', '.join(self._tools)}")
        if not isinstance(arguments, Mapping):
            return tool_error(f"arguments of {name} must be a JSON object")
        try:
            return tool(arguments)
        except Exception as exc:  # noqa: BLE001 - a tool fault is reported to the model, never raised
            return tool_error(f"{name} failed: {type(exc).__name__}")

    def _cap(self, text: str) -> str:
        """`text`, cut to `max_result_chars` with a visible marker so a runaway result cannot
        blow the context silently."""
        if len(text) <= self._max:
            return text
        return text[: max(0, self._max - len(TRUNCATION_MARKER))] + TRUNCATION_MARKER


# --------------------------------------------------------------------------------------
# reading the conversation (reference models)


def message_text(content: Any) -> str:
    """Message content as text: a plain string, or the `text` of OpenAI content parts.

    Other parts (images, files) contribute nothing here; a workload that reads attached
    files does so itself.
    """
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(p.get("text", "") for p in content if isinstance(p, Mapping) and isinstance(p.get("text"), str))
    return ""


def tool_calls_by_id(messages: Sequence[Message]) -> dict[str, tuple[str, Any]]:
    """tool_call_id -> (tool name, parsed arguments) for every call the assistant made.

    Arguments that are not valid, bounded JSON (`lrc.runtime.boundedjson`) read as `{}`; a later call with the same id wins.
    """
    calls: dict[str, tuple[str, Any]] = {}
    for m in messages:
        if m.get("role") != "assistant":
            continue
        for call in m.get("tool_calls") or []:
            fn = call.get("function") or {}
            try:
                args = boundedjson.loads(fn.get("arguments") or "{}")
            except boundedjson.Unparseable:
                args = {}
            calls[str(call.get("id"))] = (str(fn.get("name")), args)
    return calls


def tool_exchanges(messages: Sequence[Message]) -> list[tuple[str, Any, str]]:
    """(tool name, arguments, result text) of every tool result whose call is known, in order."""
    calls = tool_calls_by_id(messages)
    out: list[tuple[str, Any, str]] = []
    for m in messages:
        if m.get("role") == "tool":
            called = calls.get(str(m.get("tool_call_id")))
            if called:
                out.append((called[0], called[1], message_text(m.get("content"))))
    return out


def tool_results(messages: Sequence[Message], name: str) -> list[tuple[Any, str]]:
    """(arguments, result text) of every tool result for tool `name`, in order."""
    return [(args, text) for called, args, text in tool_exchanges(messages) if called == name]


def next_turn(messages: Sequence[Message]) -> int:
    """The number of the assistant turn about to be taken (1 for the first).

    Reference models derive tool-call ids from it (`call_<turn>_<n>`), never from
    randomness or the clock, so their replies are deterministic.
    """
    return sum(1 for m in messages if m.get("role") == "assistant") + 1
