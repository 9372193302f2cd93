"""Reference policies for seed-000 tasks: the tool calls `lrc/oracle`, `lrc/null` and
`lrc/baseline` make through the artifact toolbox.

Why these three (DESIGN §4, "embedded reference models"): they bound every task from both
sides and prove the path works end to end, with no model and no network.

- `oracle`: the differ's edits from the task's input to its oracle artifact (`differ.plan`),
  batched, then `submit`. Applied through the toolbox, the saved file must pass every check
  of the task — the infrastructure check: it proves that the tools can express the task and
  that what they save is what the validators want. Edits the tools cannot express are in
  `differ.Plan.uncovered`; the oracle still runs what it can (and so fails, visibly).
- `null`: `submit` at once — the input handed back unchanged; it must fail.
- `baseline`: an honest partial job. When the task carries its own baseline artifact
  (`Task.baseline`, bytes, written by the task's author), the differ's edits towards it.
  Otherwise the first half of the oracle's edits (rounded up) — a job stopped half-way; and
  when the oracle makes a single edit, that edit with a formula pasted as the number it
  gives (the right figure, not a working model: the classic shortcut seed 000 penalises). A
  single edit that is not a formula is not made at all. It must fail at least one check
  (tests/test_artifacts_policies.py holds every kind to it).

The calls come as a list; `turns` splits them into the assistant turns an agentic run makes
(edits first, `submit` alone last), for the litellm reference provider to serve one by one.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any, Protocol

from lrc.runtime.artifacts import differ, recalc, safezip
from lrc.runtime.artifacts.differ import Call
from lrc.runtime.artifacts.toolargs import Limits
from lrc.runtime.artifacts.toolbox import ArtifactToolbox, ToolOutcome
from lrc.runtime.artifacts.views import money

MODELS = ("oracle", "null", "baseline")


class TaskLike(Protocol):
    inputs: dict[str, bytes]
    output: str
    oracle: bytes


def _given(task: TaskLike) -> bytes:
    return task.inputs[task.output]


def oracle_plan(task: TaskLike) -> differ.Plan:
    return differ.plan(_given(task), task.oracle, task.output)


def oracle(task: TaskLike, limits: Limits = Limits()) -> list[Call]:
    p = oracle_plan(task)
    return differ.batch(p.edits, limits) + [("submit", {"note": f"{len(p.edits)} edit(s) towards the expected artifact"})]


def null(task: TaskLike, limits: Limits = Limits()) -> list[Call]:
    return [("submit", {})]


def baseline(task: TaskLike, limits: Limits = Limits()) -> list[Call]:
    own = getattr(task, "baseline", None)
    if isinstance(own, bytes):
        edits = differ.plan(_given(task), own, task.output).edits
    else:
        edits = _half_job(task, oracle_plan(task).edits)
    return differ.batch(edits, limits) + [("submit", {"note": f"{len(edits)} edit(s); a partial job"})]


def _half_job(task: TaskLike, edits: list[Call]) -> list[Call]:
    if len(edits) != 1:
        return edits[: math.ceil(len(edits) / 2)]
    name, args = edits[0]
    if name != "write_cells" or "formula" not in args["cells"][0]:
        return []
    entry = dict(args["cells"][0])
    sheet, _, coord = entry["cell"].rpartition("!")
    sheet = sheet[1:-1].replace("''", "'") if sheet.startswith("'") else sheet
    wb, _pkg = safezip.open_workbook(task.oracle)
    calc = recalc.recalculate(task.oracle, wb)
    value = calc.get(sheet, coord) if calc.ok else None
    text = money(value) if value is not None and not isinstance(value, (str, bool, recalc.XlError)) else None
    if text is None:
        return []
    del entry["formula"]
    entry["value"] = float(text) if "." in text or "e" in text.lower() else int(text)
    return [("write_cells", {**args, "cells": [entry]})]


POLICIES = {"oracle": oracle, "null": null, "baseline": baseline}


def calls(model: str, task: TaskLike, limits: Limits = Limits()) -> list[Call]:
    """The tool calls of `lrc/<model>` on `task` ("oracle", "null" or "baseline")."""
    return POLICIES[model](task, limits)


def turns(plan: list[Call], per_turn: int = 20) -> list[list[Call]]:
    """Assistant turns: the edits `per_turn` at a time, then `submit` on its own."""
    body = [c for c in plan if c[0] != "submit"]
    tail = [c for c in plan if c[0] == "submit"]
    out = [body[i:i + per_turn] for i in range(0, len(body), per_turn)]
    return out + ([tail[:1]] if tail else [])


def apply(toolbox: ArtifactToolbox, plan: list[Call]) -> list[ToolOutcome]:
    """Run the calls through the toolbox, in order, stopping after a terminal one."""
    outcomes = []
    for name, args in plan:
        outcome = toolbox.call(name, args)
        outcomes.append(outcome)
        if outcome.terminal:
            break
    return outcomes


def run(model: str, task: Any, folder: Path, limits: Limits = Limits()) -> tuple[ArtifactToolbox, list[ToolOutcome]]:
    """`lrc/<model>`'s run of `task` in `folder`: the toolbox (its outputs and mutations) and each call's outcome."""
    toolbox = ArtifactToolbox(folder, task.inputs, limits=limits)
    return toolbox, apply(toolbox, calls(model, task, limits))
