"""The `roll-fixed-assets-forward` task kind (runtime/artifacts/kinds_schedules.py) as the versioned generator `lrc.task.roll-fixed-assets-forward`."""

from __future__ import annotations

from lrc.runtime.artifacts import tasks
from lrc.runtime.artifacts.generators import base

COMPONENT_ID = "lrc.task.roll-fixed-assets-forward"
COMPONENT_VERSION = 1
KIND = "roll-fixed-assets-forward"


def generate(seed: str, task_id: str) -> tasks.Task:
    return base.generate(KIND, seed, task_id)
