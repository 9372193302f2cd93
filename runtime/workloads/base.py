"""The contract between the runtime and a workload package.

A workload package (runtime/workloads/<name>/) holds four component modules, each declaring
COMPONENT_ID / COMPONENT_VERSION and referenced from the workload spec by `id.vN`:

- generator: `generate(seed: str, index: int, params: Mapping) -> Item`
- grading:   `normalize(answer) -> answer` and `validate(answer, key, params[, item]) -> list[ValidatorResult]`
             (or a `VALIDATORS = {name: fn}` table when a workload has several; a validator that
             declares a 4th parameter also receives the Item, e.g. to run SQL on its database)
- tools:     `Toolbox(item, max_result_chars=...)` with `call(name, arguments) -> ToolOutcome`; a fresh
             toolbox per run, so any state (a scratch ledger) belongs to that run alone
- reference: `oracle(messages, tools, item) -> Reply` and `baseline(messages, tools) -> Reply`
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Item:
    """One dataset instance. `context` goes into prompts; `answer_key` never does."""

    index: int
    item_id: str
    context: dict[str, Any]
    answer_key: dict[str, Any]
    files: dict[str, bytes] = field(default_factory=dict)


@dataclass(frozen=True)
class ToolCall:
    id: str
    name: str
    arguments: dict[str, Any]


@dataclass(frozen=True)
class Reply:
    """What a reference model answers: text and/or tool calls (OpenAI message semantics)."""

    content: str | None
    tool_calls: list[ToolCall] = field(default_factory=list)


@dataclass(frozen=True)
class ToolOutcome:
    """A tool's answer to the model. A terminal tool ends the loop with `answer`."""

    content: str
    is_error: bool = False
    terminal: bool = False
    answer: Any = None
