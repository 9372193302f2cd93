"""The messages a task run starts from.

Why fixed text in code: a task spec carries its objective, not a template, and the prompt
must be identical for every model (DESIGN §2). It shows the objective, the files the agent
receives, the file it hands back (by name only), the prohibited shortcuts and the budget —
never the expected artifact or the checks' seeded parameters (inclusion rule 5). Being code
imported by the analysis component, its text is frozen by the lock's fingerprint; each run's
manifest records the digest of the exact messages and tool schemas.
"""

from __future__ import annotations

from typing import Any

SYSTEM = (
    "You are a careful finance analyst. You work on the task's office files only through the tools you are given; "
    "each tool returns its result or an error. Edit the files in place, keep formulas as formulas, and change nothing "
    "the objective does not ask for. When the work is done, call submit: it saves every changed file and ends the task. "
    "Stay within the budget below; exceeding it fails the task."
)


def user_text(context: dict[str, Any]) -> str:
    budget = context["budget"]
    lines = [f"Task: {context['title']}", "", "Objective:", context["objective"], "", "Files:"]
    lines += [f"- {f['name']} ({f['media_type']})" for f in context["files"]]
    lines += ["", f"Hand back: {context['output']['file']}, edited in place, then call submit."]
    if context["prohibited_shortcuts"]:
        lines += ["", "Prohibited shortcuts:"] + [f"- {s}" for s in context["prohibited_shortcuts"]]
    limits = [f"{budget['max_steps']} model requests"]
    if "max_tool_calls" in budget:
        limits.append(f"{budget['max_tool_calls']} tool calls")
    limits += [f"{budget['max_tokens']:,} tokens", f"{budget['max_wall_seconds']} seconds"]
    if "max_cost_usd" in budget:
        limits.append(f"${budget['max_cost_usd']} of model spend at the edition's frozen prices")
    lines += ["", "Budget: at most " + ", ".join(limits) + "."]
    return "\n".join(lines)


def messages(context: dict[str, Any]) -> list[dict[str, Any]]:
    """A new list on every call (the loop extends it)."""
    return [{"role": "system", "content": SYSTEM}, {"role": "user", "content": user_text(context)}]
