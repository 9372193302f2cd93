"""Direct baseline (seed 000, "Direct baseline"): one model session with the minimum documented
tools and prompt required to attempt the task.

Why it is the agentic loop unchanged: the direct system is the control of the paired
comparison, so it adds nothing a harness would add — no plan, no in-loop validation, no
retries. The task runner (`lrc.runtime.tasks.runner`) gives it the task's prompt
(`lrc.runtime.tasks.prompt`), the task's permitted tools and `submit` (the part-1 toolbox),
and the task's execution budget; this module runs the one tool loop under them. It is a
component of its own (not a pin of `lrc.system.agentic`) so that a later change of the
agentic loop for the five workloads is a visible change of the direct system too: its
fingerprint covers the loop it imports.
"""

from __future__ import annotations

from lrc.runtime.systems import agentic
from lrc.runtime.systems.base import RunContext, RunOutcome

COMPONENT_ID = "lrc.system.direct"
COMPONENT_VERSION = 1


async def run(ctx: RunContext) -> RunOutcome:
    return await agentic.run(ctx)
