"""Helpers shared by tests (import it as `support`; conftest modules are not importable by name)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
LRC = [sys.executable, "-m", "lrc.compiler.cli"]


def run_lrc(*args: str, cwd: Path | None = None, env: dict[str, str] | None = None, timeout: int = 300) -> subprocess.CompletedProcess:
    """Run `lrc ARGS` as a real subprocess (the same entry point as the installed script)."""
    full_env = {**os.environ, **(env or {})}
    return subprocess.run([*LRC, *args], cwd=cwd or REPO, env=full_env, capture_output=True, text=True, timeout=timeout)
