"""Which runs a plan's tasks get, and under which system.

A task's model edits files through tools, so it runs only on a tool-using system. Tasks do
not name a system in their spec: a task runs on **every system of the edition whose mode is
`agentic`** (the demo: `agentic.v2`), so a task is measured under the same loop, step cap and
request timeout as the edition's agentic workloads, and a second agentic system in a later
edition gives each task a second cell. An edition with tasks and no agentic system cannot
run them: `lrc execute` refuses it before anything is written (`problems`).

Runs are task × model × system × repetition, one item per task (index 0, the task id as the
item id), keyed like every run (`journal.run_key`: `<task ref>|<model>|<system id>|<task id>|r<N>`),
so the journal, resume, `--models`, `--workloads` (a task is named by its ref or id), `--limit`
and `--shard` treat them like workload runs.
"""

from __future__ import annotations

from typing import Any

from lrc.runtime.lock import tasks as locktasks


def agentic_systems(plan: dict[str, Any]) -> dict[str, str]:
    """The edition's tool-using systems: system id -> system ref, sorted by id."""
    edition = plan["edition"]["spec"]
    found = {plan["systems"][ref]["spec"]["id"]: ref for ref in edition["systems"]
             if plan["systems"][ref]["spec"].get("mode") == "agentic"}
    return dict(sorted(found.items()))


def problems(plan: dict[str, Any]) -> list[str]:
    """Why the plan's tasks cannot run (empty when they can)."""
    entries = locktasks.tasks(plan)
    if not entries:
        return []
    out = []
    if not agentic_systems(plan):
        out.append(f"the edition lists {len(entries)} task(s) ({', '.join(sorted(entries))}) but no agentic system: "
                   f"a task's model works through tools, so it runs on the edition's systems of mode 'agentic'; "
                   f"add one (e.g. agentic.v2) to the edition's systems")
    from lrc.runtime.tasks.runner import known_tools

    known = set(known_tools())
    for ref, entry in sorted(entries.items()):
        unknown = [t for t in entry["spec"]["permitted_tools"] if t not in known]
        if unknown:
            out.append(f"task {ref} permits tool(s) the artifact toolbox does not have: {', '.join(unknown)} "
                       f"(it has: {', '.join(sorted(known))})")
    clash = sorted(set(entries) & set(plan["workloads"]))
    if clash:
        out.append(f"{', '.join(clash)} is both a workload and a task of the plan")
    return out


def plan_runs(plan: dict[str, Any], items: dict[str, Any]) -> list:
    """The task runs of the plan, in a fixed order (task ref, model, system, repetition)."""
    from lrc.runtime.execute import RunSpec
    from lrc.runtime.journal import run_key

    reps = plan["edition"]["spec"].get("repetitions", 1)
    systems = agentic_systems(plan)
    runs = []
    for ref in sorted(locktasks.tasks(plan)):
        item = items[ref][0]  # one item per task
        for model in sorted(plan["models"]):
            for system in systems:
                for rep in range(1, reps + 1):
                    runs.append(RunSpec(run_key(ref, model, system, item.item_id, rep), ref, model, system, item.index, item.item_id, rep))
    return runs


def system_spec(plan: dict[str, Any], system_id: str) -> dict[str, Any]:
    return plan["systems"][agentic_systems(plan)[system_id]]["spec"]


def system_ref(plan: dict[str, Any], system_id: str) -> str:
    return agentic_systems(plan)[system_id]
