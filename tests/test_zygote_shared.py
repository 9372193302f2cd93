"""The suite's forked `lrc` commands (`helpers.zygote`): under xdist the workers share the session's
zygote (one warm-up per run, not one per worker) through a server forked for each worker."""

from __future__ import annotations

import os

import pytest

from helpers import zygote
from helpers.project import lrc_env, run_lrc

UNDER_XDIST = bool(os.environ.get("PYTEST_XDIST_WORKER"))


@pytest.mark.skipif(not UNDER_XDIST or "1" in (os.environ.get("LRC_TEST_NO_ZYGOTE"), os.environ.get("LRC_TEST_NO_SHARED_ZYGOTE")),
                    reason="the shared zygote is the xdist controller's, and not turned off")
def test_a_worker_runs_its_commands_in_the_sessions_shared_zygote():
    shared = zygote._shared()
    assert shared is not None and os.path.exists(shared["socket"]), "the controller started no shared zygote"
    res = run_lrc("compile", "--help")
    assert res.returncode == 0 and "compile" in res.stdout
    runner = zygote._ZYGOTES[tuple(sorted(zygote._startup_env(lrc_env()).items()))]
    assert runner.connection is not None and runner.proc is None, "this worker warmed a zygote of its own"
    assert runner.alive()

