"""The `budget-vs-actual` task kind (runtime/artifacts/kinds_dcf.py) as the versioned generator `lrc.task.budget-vs-actual`."""

from __future__ import annotations

from lrc.runtime.artifacts import tasks
from lrc.runtime.artifacts.generators import base

COMPONENT_ID = "lrc.task.budget-vs-actual"
COMPONENT_VERSION = 1
KIND = "budget-vs-actual"


def generate(seed: str, task_id: str) -> tasks.Task:
    return base.generate(KIND, seed, task_id)
