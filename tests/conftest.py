"""Shared test settings: where the repository is, and how to run the real `lrc` command."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
LRC = [sys.executable, "-m", "lrc.compiler.cli"]


def run_lrc(*args: str, cwd: Path | None = None, env: dict[str, str] | None = None, timeout: int = 300) -> subprocess.CompletedProcess:
    """Run `lrc ARGS` as a real subprocess (the same entry point as the installed script)."""
    full_env = {**os.environ, **(env or {})}
    return subprocess.run([*LRC, *args], cwd=cwd or REPO, env=full_env, capture_output=True, text=True, timeout=timeout)


@pytest.fixture
def repo() -> Path:
    return REPO


@pytest.fixture
def project_copy(tmp_path: Path) -> Path:
    """A throw-away copy of the project's specs/, schemas/ and generated/."""
    for name in ("specs", "schemas", "generated"):
        shutil.copytree(REPO / name, tmp_path / name)
    return tmp_path
