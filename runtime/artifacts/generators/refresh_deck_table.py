"""The `refresh-deck-table` task kind (runtime/artifacts/tasks.py) as the versioned generator `lrc.task.refresh-deck-table`."""

from __future__ import annotations

from lrc.runtime.artifacts import tasks
from lrc.runtime.artifacts.generators import base

COMPONENT_ID = "lrc.task.refresh-deck-table"
COMPONENT_VERSION = 2
KIND = "refresh-deck-table"


def generate(seed: str, task_id: str) -> tasks.Task:
    return base.generate(KIND, seed, task_id)
