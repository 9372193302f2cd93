"""Which runs a plan's tasks get, and under which system.

A task's model edits files through tools, so it runs only on a tool-using system. Tasks do
not name a system in their spec; the edition decides:

- a task runs on **every system of the edition whose mode is `direct` or `orchestrated`**
  (seed 000's two configurations, the task systems: the demo runs each task under
  `direct.v2` and `orchestrated.v4`, a paired comparison on the same model and items);
- an edition that lists no task system runs its tasks on its systems of mode `agentic`
  (issue 13's part 1: the loop of the agentic workloads);
- the task systems run tasks only: a workload cannot pin them (the workload schema names
  single-shot and agentic only) and an edition that lists one without any task is refused at
  compile time (LRC6010).

An edition with tasks and no such system cannot run them: `lrc execute` refuses it before
anything is written (`problems`).

Runs are task × model × system × repetition, one item per task (index 0, the task id as the
item id), keyed like every run (`journal.run_key`: `<task ref>|<model>|<system id>|<task id>|r<N>`),
so the journal, resume, `--models`, `--workloads` (a task is named by its ref or id), `--limit`
and `--shard` treat them like workload runs.
"""

from __future__ import annotations

from typing import Any

from lrc.runtime.lock import tasks as locktasks


TASK_MODES = ("direct", "orchestrated")


def task_systems(plan: dict[str, Any]) -> dict[str, str]:
    """The systems the edition's tasks run on: system id -> system ref, sorted by id."""
    edition = plan["edition"]["spec"]
    modes = {ref: plan["systems"][ref]["spec"].get("mode") for ref in edition["systems"]}
    wanted = TASK_MODES if any(m in TASK_MODES for m in modes.values()) else ("agentic",)
    found = {plan["systems"][ref]["spec"]["id"]: ref for ref, mode in modes.items() if mode in wanted}
    return dict(sorted(found.items()))


agentic_systems = task_systems  # the part-1 name


def problems(plan: dict[str, Any]) -> list[str]:
    """Why the plan's tasks cannot run (empty when they can)."""
    entries = locktasks.tasks(plan)
    if not entries:
        return []
    out = []
    if not agentic_systems(plan):
        out.append(f"the edition lists {len(entries)} task(s) ({', '.join(sorted(entries))}) but no system to run them on: "
                   f"a task's model works through tools, so it runs on the edition's systems of mode 'direct' or "
                   f"'orchestrated' (or, with neither, 'agentic'); add one (e.g. direct.v2) to the edition's systems")
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
    systems = task_systems(plan)
    runs = []
    for ref in sorted(locktasks.tasks(plan)):
        item = items[ref][0]  # one item per task
        for model in sorted(plan["models"]):
            for system in systems:
                for rep in range(1, reps + 1):
                    runs.append(RunSpec(run_key(ref, model, system, item.item_id, rep), ref, model, system, item.index, item.item_id, rep))
    return runs


def system_spec(plan: dict[str, Any], system_id: str) -> dict[str, Any]:
    return plan["systems"][task_systems(plan)[system_id]]["spec"]


def system_ref(plan: dict[str, Any], system_id: str) -> str:
    return task_systems(plan)[system_id]


def first_request(plan: dict[str, Any], system_id: str, item: Any) -> dict[str, Any]:
    """What a task run on system `system_id` sends first and what bounds it, for `lrc estimate`:
    `messages` and `tools` of its first request (as `lrc.runtime.tasks.runner.run` and the
    system's loop build them: the task prompt, plus the plan stage's prompt and tools on an
    orchestrated system), the run's budget (`runner.effective_budget`: the task's and the
    system's, the smaller of each): `max_steps`, `max_tokens` and `max_cost_usd` (None when
    unset; the run stops after the first reply that takes it past either), and
    `max_result_chars` (the artifact toolbox's cut of any tool result).
    `tests/test_estimate_tasks.py` holds the first request equal to the one a run sends."""
    from lrc.runtime.artifacts.toolargs import Limits
    from lrc.runtime.tasks import runner

    system = system_spec(plan, system_id)
    budget = runner.effective_budget(item.context["budget"], system)
    messages = runner.task_messages(item, budget)  # a new list on every call: appended to below
    tools = runner.tool_schemas(item.context["permitted_tools"])
    if system.get("mode") == "orchestrated":
        from lrc.runtime.systems import orchestrated

        workflow = runner.Workflow(item, system, None, None)  # prompts and tools only: no toolbox is needed
        view = orchestrated._view(orchestrated._State(int(system["retries"]["max"])))
        messages.append({"role": "user", "content": workflow.prompt("plan", view)})
        tools = workflow.tools("plan")
    return {"messages": messages, "tools": tools, "max_steps": int(budget["max_steps"]), "max_tokens": int(budget["max_tokens"]),
            "max_cost_usd": budget.get("max_cost_usd"), "max_result_chars": Limits().max_result_chars}
