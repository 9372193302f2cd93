"""What a system loop needs from the runtime, and what it hands back.

Systems are code components (versioned, fingerprinted) that drive one run: they call the
model through `RunContext.call` (which journals every call and replays finished ones on
resume) and execute tools through the workload's toolbox. They never retry a model failure.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Awaitable, Callable, Protocol


@dataclass
class Turn:
    """One model call's result as a system sees it."""

    message: dict[str, Any]  # OpenAI-format assistant message (content, tool_calls)
    finish_reason: str | None
    refusal: bool = False
    invalid: str | None = None  # a response arrived but could not be read: why (the model's invalid output)


class Toolbox(Protocol):
    def call(self, name: str, arguments: dict[str, Any]) -> Any: ...


@dataclass
class RunContext:
    messages: list[dict[str, Any]]
    tools: list[dict[str, Any]]
    terminal_tools: list[str]
    max_steps: int
    call: Callable[[int, list[dict[str, Any]], list[dict[str, Any]] | None], Awaitable[Turn]]
    toolbox: Toolbox | None = None


@dataclass
class RunOutcome:
    """How a run ended. `outcome` is answered | no_answer | refusal | step_cap | invalid_output
    (a response arrived that could not be read; the reason is in the `invalid_response` event)."""

    outcome: str
    steps: int
    answer_text: str | None = None  # a final text reply, to be parsed as JSON
    answer: Any = None  # an answer submitted through a terminal tool
    submitted: bool = False
    transcript: list[dict[str, Any]] = field(default_factory=list)
    events: list[dict[str, Any]] = field(default_factory=list)
