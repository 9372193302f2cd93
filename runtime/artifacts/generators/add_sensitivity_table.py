"""The `add-sensitivity-table` task kind (runtime/artifacts/kinds_dcf.py) as the versioned generator `lrc.task.add-sensitivity-table`."""

from __future__ import annotations

from lrc.runtime.artifacts import tasks
from lrc.runtime.artifacts.generators import base

COMPONENT_ID = "lrc.task.add-sensitivity-table"
COMPONENT_VERSION = 1
KIND = "add-sensitivity-table"


def generate(seed: str, task_id: str) -> tasks.Task:
    return base.generate(KIND, seed, task_id)
