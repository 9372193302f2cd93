"""The `fix-cash-flow` task kind (runtime/artifacts/tasks.py) as the versioned generator `lrc.task.fix-cash-flow`."""

from __future__ import annotations

from lrc.runtime.artifacts import tasks
from lrc.runtime.artifacts.generators import base

COMPONENT_ID = "lrc.task.fix-cash-flow"
COMPONENT_VERSION = 2
KIND = "fix-cash-flow"


def generate(seed: str, task_id: str) -> tasks.Task:
    return base.generate(KIND, seed, task_id)
