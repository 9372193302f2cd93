"""`lrc seed new`: a held-out seed and the commitment that goes into the edition.

A held-out edition publishes only sha256 of its seed (seed §7); the seed itself stays with
the operator until the edition closes, then is published so anyone can regenerate the items
and check them against the commitment. The commitment uses the same domain-separated digest
the runtime checks (`lrc:seed:v1`).
"""

from __future__ import annotations

import os
import secrets
from pathlib import Path

from lrc.runtime.lock.canonical import digest_bytes


def commitment(value: str) -> str:
    return digest_bytes("seed", value.encode("utf-8"))


def new_seed(path: Path) -> str:
    """Write a fresh random seed to `path` (mode 0600, never overwriting); return its commitment."""
    value = secrets.token_hex(32)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w") as fh:
        fh.write(value + "\n")
    return commitment(value)
