"""The `add-required-slide` task kind (runtime/artifacts/kinds_deck.py) as the versioned generator `lrc.task.add-required-slide`."""

from __future__ import annotations

from lrc.runtime.artifacts import tasks
from lrc.runtime.artifacts.generators import base

COMPONENT_ID = "lrc.task.add-required-slide"
COMPONENT_VERSION = 1
KIND = "add-required-slide"


def generate(seed: str, task_id: str) -> tasks.Task:
    return base.generate(KIND, seed, task_id)
