"""The `build-dcf` task kind (runtime/artifacts/kinds_dcf.py) as the versioned generator `lrc.task.build-dcf`."""

from __future__ import annotations

from lrc.runtime.artifacts import tasks
from lrc.runtime.artifacts.generators import base

COMPONENT_ID = "lrc.task.build-dcf"
COMPONENT_VERSION = 1
KIND = "build-dcf"


def generate(seed: str, task_id: str) -> tasks.Task:
    return base.generate(KIND, seed, task_id)
