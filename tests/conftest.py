"""Shared fixtures: the repository, and throw-away copies of the project."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import settings
from ruamel.yaml import YAML

from helpers.shared import TASK_SUBSET, shared_execute, small_demo_lock
from helpers.stub_server import StubServer
from support import REPO

# pytest keeps each test module's assertion-rewritten bytecode in tests/__pycache__/ (gitignored)
# only when bytecode writing is on; with PYTHONDONTWRITEBYTECODE set (as on CI machines) every
# worker of every run rewrote all ~90 test modules again (~5 s of CPU each before a test ran).
# Only this process: the lrc subprocesses the tests start keep the environment as it is.
sys.dont_write_bytecode = False

# No example database: hypothesis would otherwise keep one in .hypothesis/ in the working tree,
# shared by parallel workers and replayed by later runs -- a test's outcome must not depend on
# what an earlier run left in the tree. A failure prints its reproducing example instead.
settings.register_profile("lrc", database=None)
settings.load_profile("lrc")


@pytest.fixture(scope="session")
def demo_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, subprocess.CompletedProcess]:
    """`lrc execute generated/demo/plan.lock` (the committed demo lock, a subprocess), run once per
    session and shared by every test that reads a finished demo run: (out folder, the completed
    process). Read-only: a test that changes the run works on a copy."""
    from helpers.project import run_lrc

    return shared_execute(tmp_path_factory, "demo-run", ["execute", REPO / "generated" / "demo" / "plan.lock"], run_lrc)


@pytest.fixture(scope="session")
def small_demo_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, subprocess.CompletedProcess]:
    """(lock, out folder, completed process) of `lrc execute` of the small demo (the demo edition
    at n_per_cell 2 -- every workload, system and model: 110 runs instead of 865 -- compiled from
    scratch in tmp), run once per session and shared read-only: the tests of run-folder
    behaviour (resume, report, partial folders, shards, rebuilt outputs) use it, and the full
    demo is left to the tests of its numbers."""
    from helpers.project import run_lrc

    lock = small_demo_lock(tmp_path_factory)
    out, res = shared_execute(tmp_path_factory, "demo-small-run", ["execute", lock], run_lrc)
    return lock, out, res


@pytest.fixture(scope="session")
def task_subset_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, subprocess.CompletedProcess]:
    """(out folder, completed process) of `lrc execute` of the committed demo lock with
    `--workloads` two of its four tasks (TASK_SUBSET: a partial folder, exit 0), run once per
    session and shared read-only: the default suite's end-to-end run of the tasks on the
    reference models under direct and orchestrated (the full demo run, which runs all four
    among its 865 runs, is left to the slow tests)."""
    from helpers.project import run_lrc

    return shared_execute(tmp_path_factory, "demo-task-subset",
                          ["execute", REPO / "generated" / "demo" / "plan.lock", "--workloads", ",".join(TASK_SUBSET)], run_lrc)


@pytest.fixture(params=["small", pytest.param("full", marks=pytest.mark.slow)])
def demo_run_of_each_size(request: pytest.FixtureRequest) -> tuple[Path, Path, subprocess.CompletedProcess]:
    """(lock, out folder, completed process) of a finished demo execute, shared read-only: the
    small demo (`small_demo_run`, every workload, system and model) by default, and the full
    demo run (`demo_run`, 865 runs, ~40 s of one worker) under `--slow`. For the checks that
    hold at any n; the checks of the full demo's own numbers (n = 15 per cell) are slow tests."""
    if request.param == "full":
        out, res = request.getfixturevalue("demo_run")
        lock = REPO / "generated" / "demo" / "plan.lock"
    else:
        lock, out, res = request.getfixturevalue("small_demo_run")
    assert res.returncode == 0, res.stdout + res.stderr
    return lock, out, res


@pytest.fixture
def repo() -> Path:
    return REPO


@pytest.fixture(scope="session")
def code_is_locked() -> None:
    """Fail first, loudly, when the running code differs from what the repository's locks
    fingerprinted (runtime/ edited without a re-lock): a test that runs `lrc bump
    --all-required` on a project copy would then bump the changed component in the real
    runtime/, i.e. edit this checkout's COMPONENT_VERSION behind the developer's back."""
    from lrc.runtime.execute import Refused, load_verified

    for lock in sorted((REPO / "generated").glob("*/plan.lock")):
        try:
            load_verified(lock)
        except Refused as exc:
            pytest.fail(f"{lock.relative_to(REPO)}: {exc}. runtime/ changed without a re-lock: run `lrc bump --all-required "
                        f"--update-pins` and `lrc compile` first (these tests would otherwise bump this checkout's code)",
                        pytrace=False)


@pytest.fixture
def project_copy(tmp_path: Path) -> Path:
    """A throw-away copy of the project's specs/, schemas/ and generated/."""
    for name in ("specs", "schemas", "generated"):
        shutil.copytree(REPO / name, tmp_path / name)
    return tmp_path


# -- workload test modules: each sets SPEC_DIR (specs/workloads/<id>) and gets these ------------

@pytest.fixture(scope="module")
def spec(request: pytest.FixtureRequest) -> dict[str, Any]:
    """The workload spec of the requesting module's SPEC_DIR, as plain data."""
    return YAML(typ="safe", pure=True).load((request.module.SPEC_DIR / "workload.yaml").read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def output_schema(request: pytest.FixtureRequest) -> dict[str, Any]:
    return json.loads((request.module.SPEC_DIR / "output.schema.json").read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def params(spec: dict[str, Any]) -> dict[str, Any]:
    """The parameters of the workload's first grading check."""
    return dict(spec["grading"]["checks"][0]["params"])


@pytest.fixture(scope="module")
def stub() -> StubServer:
    """A local OpenAI-compatible server (tests/helpers/stub_server.py) for one test module."""
    server = StubServer().start()
    try:
        yield server
    finally:
        server.stop()
        assert not server.handler_threads(), "stub server handler threads survived stop()"


@pytest.fixture(scope="module", autouse=True)
def _cached_recalculation(request: pytest.FixtureRequest):
    """The artifact tests, and the modules that say `CACHED_RECALCULATION = True` (tests of a
    task's tools, validators and stages, which recalculate the same workbooks test after test),
    share one recalculation per distinct workbook (helpers.artifacts says why); the engine's own
    tests (test_artifacts_recalc*.py) always run it for real."""
    name = request.module.__name__.rpartition(".")[2]
    artifact = name.startswith("test_artifacts") and not name.startswith("test_artifacts_recalc")
    if not (artifact or getattr(request.module, "CACHED_RECALCULATION", False)):
        yield
        return
    from helpers import artifacts
    from lrc.runtime.artifacts import recalc

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(recalc, "recalculate", artifacts.cached_recalculate)
        yield


_SHARED_ZYGOTE: list = []


def pytest_configure(config: pytest.Config) -> None:
    """In the xdist controller, before its workers start: the session's shared zygote
    (`helpers.zygote.start_shared`), warmed once while the workers collect."""
    if hasattr(config, "workerinput") or not getattr(config.option, "numprocesses", 0) or \
            getattr(config.option, "dist", "no") == "no":
        return
    from helpers import zygote

    _SHARED_ZYGOTE.append(zygote.start_shared())


def pytest_unconfigure(config: pytest.Config) -> None:
    from helpers import zygote

    while _SHARED_ZYGOTE:
        zygote.stop_shared(_SHARED_ZYGOTE.pop())


def pytest_collection_finish(session: pytest.Session) -> None:
    """Move everything collection made (lrc, its libraries, the test modules) to the permanent
    generation, so the garbage collector's full passes during the tests scan only what the tests
    allocate (the pattern of a pre-fork server; the zygote does the same). Collecting a test's own
    garbage is unchanged."""
    import gc
    import os

    from helpers.zygote import ENV_NO_FREEZE

    if not os.environ.get(ENV_NO_FREEZE):
        gc.freeze()
