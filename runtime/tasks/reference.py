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

Under the orchestrated system (its stage tools are offered: `validate`, `record_plan`) the
same edits go through the stages: a plan naming them, the edits, `validate`, then `submit`
when the report stage offers it alone. `lrc/baseline` then **repairs from the validator's
report**, as a careful heuristic would: for each failing check it reads the location the
validator names (a cell `IS!H12` or a sheet: that sheet; a slide `slide 3`: that slide) and
makes the oracle's edits on that sheet or slide that it has not made yet — nothing where no
failing check points, and nothing when the location names no sheet or slide (a defined name). It never reads the
validators' expected values (the tool does not show them) nor the answer key beyond its
part-1 heuristic (which already stands for "knows how to do the edit"): what it fixes, and
whether the orchestrated run beats the direct one, is decided by what the validator
messages point at. `lrc/null` does nothing under either system.
"""

from __future__ import annotations

import json
import re
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
            from lrc.runtime.tasks.runner import ARTIFACT_LOCK  # the differ may recalculate (a fork): one artifact operation at a time

            allowed = set(self.item.context["permitted_tools"]) | {"submit"}
            if model != "null" and self.item.oracle is None:  # a checked-in task without an expected artifact
                calls: list = [("submit", {"note": "no expected artifact to work towards"})]
            else:
                with ARTIFACT_LOCK:
                    calls = [c for c in policies.calls(model, self.item) if c[0] in allowed]
            self._turns[model] = policies.turns(calls)
        return self._turns[model]

    def _edits(self, model: str) -> list[tuple[str, dict[str, Any]]]:
        return [c for turn in self._plan(model) for c in turn if c[0] != "submit"]

    def _repairs(self) -> list[tuple[str, dict[str, Any]]]:
        """The oracle's edits (the edits baseline may repair with, one location at a time)."""
        return self._edits("oracle")

    def _reply(self, model: str, messages: Sequence[dict[str, Any]], tools: Any = None) -> Reply:
        names = {t.get("function", {}).get("name") for t in tools or [] if isinstance(t, dict)}
        if "validate" in names or "record_plan" in names or names == {"submit"} and _staged(messages):
            return self._staged(model, messages, names)
        turn = sum(1 for m in messages if m.get("role") == "assistant")
        plan = self._plan(model)
        if turn >= len(plan):
            return Reply("")  # a submit that failed: nothing more to do (the run ends without an answer)
        return Reply(None, [ToolCall(f"call_{turn + 1}_{n}", name, args) for n, (name, args) in enumerate(plan[turn], 1)])

    def _staged(self, model: str, messages: Sequence[dict[str, Any]], names: set) -> Reply:
        """One turn of the orchestrated workflow (see the module docstring), from the conversation."""
        turn = sum(1 for m in messages if m.get("role") == "assistant")
        made = _made_calls(messages)
        if model == "null":
            return Reply("")
        if names == {"submit"}:
            return Reply(None, [ToolCall(f"call_{turn + 1}_1", "submit", {"note": f"{model}: edits made and validated"})])
        edits = self._edits(model)
        if "validate" not in names:  # the plan stage
            steps = [f"{name} on {_targets_text(args)}" for name, args in edits[:20]] or ["no edit to make"]
            return Reply(None, [ToolCall(f"call_{turn + 1}_1", "record_plan", {"steps": steps})])
        report = _last_validation(messages)
        if report is None or model != "baseline":
            todo = [c for c in edits if _key(c) not in made]
        else:
            locations = [f.get("location") for f in report.get("failing", []) if isinstance(f, dict)]
            todo = [c for c in self._repairs() if _key(c) not in made and any(_touches(c, loc) for loc in locations)]
        if todo:
            return Reply(None, [ToolCall(f"call_{turn + 1}_{n}", name, args) for n, (name, args) in enumerate(todo[:20], 1)])
        return Reply(None, [ToolCall(f"call_{turn + 1}_1", "validate", {})])

    def oracle(self, messages: Sequence[dict[str, Any]], tools: Any, item: Any = None) -> Reply:
        return self._reply("oracle", messages, tools)

    def baseline(self, messages: Sequence[dict[str, Any]], tools: Any) -> Reply:
        return self._reply("baseline", messages, tools)

    def null(self, messages: Sequence[dict[str, Any]], tools: Any, item: Any = None) -> Reply:
        return self._reply("null", messages, tools)


def _staged(messages: Sequence[dict[str, Any]]) -> bool:
    """Did an earlier turn of this conversation call a stage tool (the report stage offers submit alone)?"""
    return any(call.get("function", {}).get("name") in ("validate", "record_plan")
               for m in messages if m.get("role") == "assistant" for call in m.get("tool_calls") or [])


def _key(call: tuple[str, dict[str, Any]]) -> str:
    return call[0] + json.dumps(call[1], sort_keys=True)


def _made_calls(messages: Sequence[dict[str, Any]]) -> set[str]:
    made = set()
    for m in messages:
        if m.get("role") != "assistant":
            continue
        for call in m.get("tool_calls") or []:
            fn = call.get("function", {})
            try:
                args = json.loads(fn.get("arguments") or "{}") if isinstance(fn.get("arguments"), str) else fn.get("arguments")
            except ValueError:
                continue
            made.add(_key((fn.get("name", ""), args)))
    return made


def _last_validation(messages: Sequence[dict[str, Any]]) -> dict[str, Any] | None:
    """The last `validate` result of the conversation, parsed (None before the first)."""
    ids = {call.get("id") for m in messages if m.get("role") == "assistant" for call in m.get("tool_calls") or []
           if call.get("function", {}).get("name") == "validate"}
    for m in reversed(messages):
        if m.get("role") == "tool" and m.get("tool_call_id") in ids:
            try:
                report = json.loads(m.get("content") or "")
            except ValueError:
                return None
            return report if isinstance(report, dict) else None
    return None


_CELL = re.compile(r"^(?:'((?:[^']|'')+)'|([^!]+))!\$?([A-Z]{1,3})\$?(\d+)")


def _targets(call: tuple[str, dict[str, Any]]) -> tuple[set[str], set[str], set[int]]:
    """(cells as 'Sheet!A1', sheets, slides) an edit touches."""
    name, args = call
    cells, sheets, slides = set(), set(), set()
    for entry in args.get("cells") or []:
        m = _CELL.match(str(entry.get("cell", "")))
        if m:
            sheet = (m.group(1) or "").replace("''", "'") or m.group(2)
            cells.add(f"{sheet}!{m.group(3)}{m.group(4)}")
            sheets.add(sheet)
    if isinstance(args.get("sheet"), str):
        sheets.add(args["sheet"])
    if isinstance(args.get("refers_to"), str):
        m = _CELL.match(args["refers_to"])
        if m:
            sheets.add((m.group(1) or "").replace("''", "'") or m.group(2))
    if isinstance(args.get("slide"), int):
        slides.add(args["slide"])
    if isinstance(args.get("position"), int) and name == "add_slide":
        slides.add(args["position"])
    return cells, sheets, slides


def _targets_text(args: dict[str, Any]) -> str:
    cells, sheets, slides = _targets(("", args))
    parts = sorted(cells)[:3] or sorted(sheets) or [f"slide {n}" for n in sorted(slides)] or [str(args.get("file", "the file"))]
    return ", ".join(parts)


def _touches(call: tuple[str, dict[str, Any]], location: Any) -> bool:
    """Does an edit touch what a failing check's location names (a cell, its sheet, a slide)?"""
    if not isinstance(location, str) or not location:
        return False
    cells, sheets, slides = _targets(call)
    m = _CELL.match(location)
    if m:
        sheet = (m.group(1) or "").replace("''", "'") or m.group(2)
        return sheet in sheets
    slide = re.search(r"slide (\d+)", location)
    if slide:
        return int(slide.group(1)) in slides
    return any(location == s or location.startswith(s + "!") for s in sheets)
