"""Shared fixtures: the repository, and throw-away copies of the project."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from support import REPO


@pytest.fixture
def repo() -> Path:
    return REPO


@pytest.fixture
def project_copy(tmp_path: Path) -> Path:
    """A throw-away copy of the project's specs/, schemas/ and generated/."""
    for name in ("specs", "schemas", "generated"):
        shutil.copytree(REPO / name, tmp_path / name)
    return tmp_path
