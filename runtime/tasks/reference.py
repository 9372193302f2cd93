"""What the embedded reference models answer on a task: the tool calls of
`lrc.runtime.artifacts.policies`, one assistant turn per request.

Why through the reference provider (`lrc.runtime.models.reference`) like month-end's
reference component: the whole path — litellm, the journal, the agentic loop, the toolbox,
the saved file, the validators — runs for the reference models exactly as for a real model.
`lrc/oracle` makes the differ's edits from the input to the expected artifact and submits (it
must pass every check: the infrastructure check); `lrc/null` submits the input unchanged (it
must fail); `lrc/baseline` makes a partial job. Which turn to send is read from the
conversation (the number of assistant turns so far), so a replay on resume asks for the same
turn again. Calls of tools the task does not permit are left out: the oracle works with the
tools the task grants, and if those cannot express the task the oracle fails, visibly.
"""

from __future__ import annotations

from typing import Any, Sequence

from lrc.runtime.artifacts import policies
from lrc.runtime.workloads.base import Reply, ToolCall


class TaskPolicies:
    """The reference component of one task (`ReferenceContext.policies`); plans are made once."""

    def __init__(self, item: Any):
        self.item = item
        self._turns: dict[str, list[list[tuple[str, dict[str, Any]]]]] = {}

    def _plan(self, model: str) -> list[list[tuple[str, dict[str, Any]]]]:
        if model not in self._turns:
            allowed = set(self.item.context["permitted_tools"]) | {"submit"}
            if model != "null" and self.item.oracle is None:  # a checked-in task without an expected artifact
                calls: list = [("submit", {"note": "no expected artifact to work towards"})]
            else:
                calls = [c for c in policies.calls(model, self.item) if c[0] in allowed]
            self._turns[model] = policies.turns(calls)
        return self._turns[model]

    def _reply(self, model: str, messages: Sequence[dict[str, Any]]) -> Reply:
        turn = sum(1 for m in messages if m.get("role") == "assistant")
        plan = self._plan(model)
        if turn >= len(plan):
            return Reply("")  # a submit that failed: nothing more to do (the run ends without an answer)
        return Reply(None, [ToolCall(f"call_{turn + 1}_{n}", name, args) for n, (name, args) in enumerate(plan[turn], 1)])

    def oracle(self, messages: Sequence[dict[str, Any]], tools: Any, item: Any = None) -> Reply:
        return self._reply("oracle", messages)

    def baseline(self, messages: Sequence[dict[str, Any]], tools: Any) -> Reply:
        return self._reply("baseline", messages)

    def null(self, messages: Sequence[dict[str, Any]], tools: Any, item: Any = None) -> Reply:
        return self._reply("null", messages)
