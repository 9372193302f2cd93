"""Expensive results built once per test session and shared, read-only, by the tests that need them.

With pytest-xdist every worker is a process of its own, so a session-scoped fixture alone is
built once per worker. `shared(tmp_path_factory, name, build)` builds `name` once per session:
under the session's common temporary folder, behind a file lock, so the first worker to ask
builds it while the others wait for it (they would otherwise build it again on the same two
cores). A test that changes a shared result works on its own copy.

Nothing here is kept between sessions: the folder lives under this session's pytest base
temporary folder, so no test depends on what an earlier run (or the demo) left behind.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Callable

import pytest

try:
    import fcntl
except ImportError:  # not POSIX: every worker builds its own copy
    fcntl = None


def session_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The folder every worker of this session shares (the per-worker base folder's parent under xdist)."""
    base = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER") and fcntl is not None:
        base = base.parent
    root = base / "lrc-shared"
    root.mkdir(parents=True, exist_ok=True)
    return root


def shared(tmp_path_factory: pytest.TempPathFactory, name: str, build: Callable[[Path], None]) -> Path:
    """The folder `name`, filled by `build(folder)` exactly once per session (a failed build is retried)."""
    root = session_root(tmp_path_factory)
    target = root / name
    done = root / f"{name}.done"
    with open(root / f"{name}.lock", "w") as lock:
        if fcntl is not None:
            fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            if not done.exists():
                if target.exists():
                    shutil.rmtree(target)
                target.mkdir()
                build(target)
                done.write_text("ok\n")
        finally:
            if fcntl is not None:
                fcntl.flock(lock, fcntl.LOCK_UN)
    return target


def shared_execute(tmp_path_factory: pytest.TempPathFactory, name: str, args: list[str | Path],
                   run: Callable[..., subprocess.CompletedProcess]) -> tuple[Path, subprocess.CompletedProcess]:
    """`run(*args, "--out", OUT)` once per session: (OUT, the completed process as it ran).

    The process's exit code and output are kept beside OUT, so every test sees the same run,
    whatever its outcome (a test asserts on it; the build itself never fails on a non-zero exit).
    """

    def build(folder: Path) -> None:
        res = run(*args, "--out", folder / "out")
        (folder / "process.json").write_text(json.dumps(
            {"args": [str(a) for a in res.args], "returncode": res.returncode, "stdout": res.stdout, "stderr": res.stderr}),
            encoding="utf-8")

    folder = shared(tmp_path_factory, name, build)
    done = json.loads((folder / "process.json").read_text(encoding="utf-8"))
    return folder / "out", subprocess.CompletedProcess(done["args"], done["returncode"], done["stdout"], done["stderr"])


SMALL_N = 2
"""n_per_cell of the small demo: every workload, system and model of the demo at 2 items a cell
(and none of its tasks)."""
TASK_SUBSET = ("fa.fix-sign", "fa.refresh-deck-table")
"""The demo tasks of conftest.py `task_subset_run`: one workbook task and one deck task."""


def build_small_demo(folder: Path, candidates: bool = True) -> None:
    """The demo edition (every workload, system and model) at n_per_cell SMALL_N, compiled from
    scratch in `folder` (its own ledger: a throw-away project states its own, smaller n, LRC6110).
    `candidates` False: without the two priced reference candidates (lrc/careful, lrc/cheap), so
    every model is priced $0 and there is no flagship -- the states a report must say honestly."""
    import re

    from lrc.compiler.pipeline import compile_project
    from support import REPO

    for name in ("specs", "schemas"):
        shutil.copytree(REPO / name, folder / name)
    for path in (folder / "specs" / "editions").glob("*.yaml"):
        if path.name != "demo.yaml":
            path.unlink()
    for rel, pattern in (("specs/standard/ledgerrate.yaml", r"(?m)^(  n_per_cell: )15\b"),
                         ("specs/editions/demo.yaml", r"(?m)^(n_per_cell: )15\b")):
        path = folder / rel
        text, count = re.subn(pattern, rf"\g<1>{SMALL_N}", path.read_text(encoding="utf-8"))
        assert count == 1, rel
        path.write_text(text, encoding="utf-8")
    # Without the edition's tasks (seed 000): a task has one item whatever n is, and grading a
    # workbook costs about a second, so they would add most of the small demo's time to every test
    # that executes or rebuilds it. tests/test_task_e2e.py covers the tasks' run-folder properties
    # (identical bytes, report from the journal, resume) and the full demo run runs them.
    path = folder / "specs" / "editions" / "demo.yaml"
    text, count = re.subn(r"(?ms)^tasks:\n(?:[ #].*?\n|\n)*\Z", "", path.read_text(encoding="utf-8"))
    assert count == 1, "the demo edition's tasks block (at its end)"
    # ... and without the systems that run tasks only (LRC6010 refuses them in an edition without tasks)
    text, count = re.subn(r"(?m)^  - (?:direct|orchestrated)\.v\d+\b.*\n", "", text)
    assert count == 2, "the demo edition's direct and orchestrated systems"
    if not candidates:
        text, count = re.subn(r"(?m)^  - id: lrc/(?:careful|cheap)\n(?:    .*\n)+", "", text)
        assert count == 2, "the demo edition's two candidates"
        text, count = re.subn(r"(?m)^  lrc/(?:careful|cheap):\n(?:    .*\n)+", "", text)
        assert count == 2, "the two candidates' demo prices"
    path.write_text(text, encoding="utf-8")
    result = compile_project(folder)
    assert not result.diagnostics.has_errors, "\n".join(str(d) for d in result.diagnostics.sorted())


def small_demo_lock(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The small demo's plan.lock, compiled once per session."""
    return shared(tmp_path_factory, "demo-small-project", build_small_demo) / "generated" / "demo" / "plan.lock"


def zero_priced_demo_lock(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The small demo without its two priced candidates (`build_small_demo(candidates=False)`),
    compiled once per session."""
    folder = shared(tmp_path_factory, "demo-zero-priced-project", lambda f: build_small_demo(f, candidates=False))
    return folder / "generated" / "demo" / "plan.lock"
