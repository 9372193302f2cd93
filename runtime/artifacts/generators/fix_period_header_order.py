"""The `fix-period-header-order` task kind (runtime/artifacts/kinds_repairs.py) as the versioned generator `lrc.task.fix-period-header-order`."""

from __future__ import annotations

from lrc.runtime.artifacts import tasks
from lrc.runtime.artifacts.generators import base

COMPONENT_ID = "lrc.task.fix-period-header-order"
COMPONENT_VERSION = 1
KIND = "fix-period-header-order"


def generate(seed: str, task_id: str) -> tasks.Task:
    return base.generate(KIND, seed, task_id)
