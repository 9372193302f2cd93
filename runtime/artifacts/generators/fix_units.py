"""The `fix-units` task kind (runtime/artifacts/kinds_repairs.py) as the versioned generator `lrc.task.fix-units`."""

from __future__ import annotations

from lrc.runtime.artifacts import tasks
from lrc.runtime.artifacts.generators import base

COMPONENT_ID = "lrc.task.fix-units"
COMPONENT_VERSION = 1
KIND = "fix-units"


def generate(seed: str, task_id: str) -> tasks.Task:
    return base.generate(KIND, seed, task_id)
