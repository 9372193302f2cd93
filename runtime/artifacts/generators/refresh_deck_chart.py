"""The `refresh-deck-chart` task kind (runtime/artifacts/kinds_deck.py) as the versioned generator `lrc.task.refresh-deck-chart`."""

from __future__ import annotations

from lrc.runtime.artifacts import tasks
from lrc.runtime.artifacts.generators import base

COMPONENT_ID = "lrc.task.refresh-deck-chart"
COMPONENT_VERSION = 1
KIND = "refresh-deck-chart"


def generate(seed: str, task_id: str) -> tasks.Task:
    return base.generate(KIND, seed, task_id)
