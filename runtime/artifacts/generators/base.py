"""What every task-kind generator shares: deriving the kind's seed from the edition's seed.

Plain shared code, not a component: each `lrc.task.<kind>` module imports it, so a change
here changes every kind's fingerprint (and needs their bumps), as it should.
"""

from __future__ import annotations

import hashlib

from lrc.runtime.artifacts import tasks


def task_seed(seed: str, task_id: str) -> str:
    """The seed a task's kind is generated from: sha256 over (edition seed, task id), hex.

    Hash-derived (DESIGN §9, Seeds): nothing depends on the Python version or PYTHONHASHSEED."""
    return hashlib.sha256("\x1f".join(("lrc.task", seed, task_id)).encode("utf-8")).hexdigest()


def generate(kind: str, seed: str, task_id: str) -> tasks.Task:
    """The input files, oracle and seeded checks of task `task_id` of kind `kind`."""
    return tasks.make(kind, task_seed(seed, task_id))
