"""Ctrl-C or SIGTERM during `lrc execute` (runtime/halt.py): no new call starts, every call in
flight comes back and is journaled, and the resume pays for nothing twice.

Against the local stub server with a per-request delay, so the signal lands while calls are in
flight (single-shot and agentic runs of the stub model, whose agentic runs stop between steps).
The server's request log is the provider's bill: after one signal every request it received is
a journaled call, and the resume sends only requests it never saw -- over both executes, each
(run, step) exactly once. A second signal stops at once, as an interrupt always did.
"""

from __future__ import annotations

import os
import signal
import subprocess
import time
from collections import Counter
from pathlib import Path

import pytest

from helpers.project import LRC, REPO, STUB_MODEL, build_project, journal_records, lrc_env, run_lrc, with_profile
from helpers.stub_server import StubServer, triage_call_key

KEY = "sk-lrc-interrupt-test-3c7a9e1f"
DELAY = 0.25  # seconds per request: calls are in flight when the signal comes
N = 6


@pytest.fixture(scope="module")
def stub():
    with StubServer(delay=DELAY) as server:
        yield server


@pytest.fixture(scope="module")
def lock(stub: StubServer, tmp_path_factory) -> Path:
    return build_project(tmp_path_factory.mktemp("interrupt-project"), stub.api_base, n_per_cell=N, max_concurrency=4)


def signal_when(server: StubServer, lock: Path, out: Path, seen: int, signals: list[int]) -> subprocess.CompletedProcess:
    """Start `lrc execute`; once the server has received `seen` requests, send `signals` (0.8 s
    apart: closer than `halt.DUPLICATE_SECONDS` they count as one)."""
    first = server.count
    proc = subprocess.Popen([*LRC, *with_profile(["execute", lock, "--out", out, "--no-progress"])], env=lrc_env(KEY),
                            cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 120
        while server.count - first < seen:
            assert proc.poll() is None, f"lrc execute ended before the signal:\n{proc.communicate()[1]}"
            assert time.monotonic() < deadline, "the run never reached the signal point"
            time.sleep(0.002)
        for i, sig in enumerate(signals):
            if i:
                time.sleep(0.8)
            os.kill(proc.pid, sig)
        stdout, stderr = proc.communicate(timeout=120)
    except BaseException:
        proc.kill()
        proc.communicate(timeout=30)
        raise
    return subprocess.CompletedProcess(proc.args, proc.returncode, stdout, stderr)


def journaled_stub_calls(out: Path) -> Counter:
    """(system, item, step) of every stub-model call in the journal (a torn last line is no record)."""
    return Counter((r["run"].split("|")[2], r["run"].split("|")[3], r["step"])
                   for r in journal_records(out) if r["type"] == "call" and STUB_MODEL in r["run"])


@pytest.mark.parametrize("sig", [signal.SIGINT, pytest.param(signal.SIGTERM, marks=pytest.mark.slow)], ids=["SIGINT", "SIGTERM"])
def test_one_signal_journals_every_call_in_flight_and_the_resume_pays_nothing_twice(stub, lock, tmp_path, sig):
    stub.reset(delay=DELAY)
    out = tmp_path / "out"
    res = signal_when(stub, lock, out, seen=6, signals=[sig])
    name = signal.Signals(sig).name
    assert res.returncode == 128 + sig, res.stderr
    assert "Traceback" not in res.stderr
    assert f"{name} received: stopping. No new call starts" in res.stderr
    assert f"stopped on {name}: no call was started after it, and every call in flight came back and was journaled" in res.stderr
    time.sleep(DELAY + 0.2)  # a request sent at the last moment would reach the server by now
    billed = Counter(triage_call_key(r) for r in stub.snapshot())
    journaled = journaled_stub_calls(out)
    # The provider's bill equals the journal: nothing paid was lost, nothing was sent after the stop.
    assert billed == journaled and set(journaled.values()) == {1}, (billed - journaled, journaled - billed)
    assert 6 <= sum(billed.values()) < 6 + 4 * 3, "calls kept going out after the signal"
    runs_before = {r["run"] for r in journal_records(out) if r["type"] == "run"}
    assert not (out / "summary.json").exists(), "the outputs were rewritten by a stopped execute"

    resumed = run_lrc("execute", lock, "--out", out, env=lrc_env(KEY), timeout=300)
    assert resumed.returncode == 0, resumed.stderr
    everything = Counter(triage_call_key(r) for r in stub.snapshot())
    assert set(everything.values()) == {1}, "a call the stopped execute journaled was paid again"
    assert everything == journaled_stub_calls(out)
    records = journal_records(out)
    runs = Counter(r["run"] for r in records if r["type"] == "run")
    assert set(runs.values()) == {1} and runs_before <= set(runs)
    assert (out / "summary.json").is_file()


def test_a_second_sigint_stops_at_once_and_the_resume_completes(stub, lock, tmp_path):
    stub.reset(delay=3.0)  # the calls in flight outlast the second Ctrl-C, 0.8 s after the first
    out = tmp_path / "out"
    res = signal_when(stub, lock, out, seen=4, signals=[signal.SIGINT, signal.SIGINT])
    stub.reset(delay=DELAY)
    assert res.returncode == 130, res.stderr
    assert "SIGINT received: stopping" in res.stderr and "lrc: interrupted" in res.stderr
    assert "Traceback" not in res.stderr
    resumed = run_lrc("execute", lock, "--out", out, env=lrc_env(KEY), timeout=300)
    assert resumed.returncode == 0, resumed.stderr
    calls = Counter((r["run"], r["step"]) for r in journal_records(out) if r["type"] == "call")
    assert set(calls.values()) == {1}, "a call was journaled twice"


def test_a_stop_cuts_a_retry_backoff_short(stub, lock, tmp_path):
    """Every request is answered 429 with Retry-After 30 s: the runs sit in their backoff. The
    stop wakes them at once; no retry goes out, and the execute ends in seconds, not 30."""
    from helpers.stub_server import Fault

    stub.reset(faults=[Fault("status", status=429, retry_after="30")])
    out = tmp_path / "out"
    first = stub.count
    proc = subprocess.Popen([*LRC, *with_profile(["execute", lock, "--out", out, "--no-progress"])],
                            env=lrc_env(KEY, LRC_RETRY_MAX_SECONDS="60", LRC_RUN_DEADLINE_SECONDS="600"),
                            cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 120
        while stub.count - first < 4:  # every slot's first attempt was refused: all in backoff
            assert proc.poll() is None and time.monotonic() < deadline, proc.communicate(timeout=30)[1]
            time.sleep(0.01)
        time.sleep(0.3)
        sent = stub.count
        signalled = time.monotonic()
        os.kill(proc.pid, signal.SIGINT)
        _, stderr = proc.communicate(timeout=60)
        took = time.monotonic() - signalled
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate(timeout=30)
    after = stub.count
    stub.reset(delay=DELAY)
    assert proc.returncode == 130, stderr
    assert took < 10, f"the stop waited {took:.1f} s for the backoff"
    assert after == sent, "a retry went out after the stop"
    assert "stopped on SIGINT" in stderr and "Traceback" not in stderr


def test_a_ctrl_c_to_the_process_group_is_one_stop_and_forked_work_in_flight_finishes(tmp_path):
    """The terminal sends Ctrl-C to every process of the group, the recalculation workers lrc
    forks included. A worker ignores it and finishes its work (the parent decides what stops), and
    its inherited copy of the event loop's wakeup fd never reports a second signal to the parent:
    one Ctrl-C is one graceful stop, never "Ctrl-C again"."""
    import json

    from helpers.ctrl_c import ctrl_c_when_ready

    ready = tmp_path / "ready"
    driver = f"""
import asyncio, json, pathlib, time
from lrc.runtime import halt as halt_module
from lrc.runtime.artifacts import recalc_worker
from lrc.runtime.halt import Halt

halt_module.DUPLICATE_SECONDS = 0  # every signal the loop sees counts: a worker's copy would be a second Ctrl-C

def work():
    pathlib.Path({str(ready)!r}).write_text("x")
    time.sleep(1.5)
    return 42

async def main():
    halt = Halt(lambda text: None)
    halt.install()
    try:
        answer = await asyncio.to_thread(recalc_worker.run_limited, work)
        await asyncio.sleep(0.3)  # a second signal, if one were coming, would be handled by now
    finally:
        halt.uninstall()
    return answer, halt.signum

answer, signum = asyncio.run(main())
print(json.dumps({{"answer": answer, "signum": signum}}))
"""
    res = ctrl_c_when_ready(driver, ready)
    assert res.returncode == 0, res.stderr
    assert json.loads(res.stdout) == {"answer": [42, ""], "signum": signal.SIGINT}


def test_a_signal_within_half_a_second_of_the_first_is_the_same_one(monkeypatch):
    from lrc.runtime import halt as halt_module

    said: list[str] = []
    clock = [100.0]
    monkeypatch.setattr(halt_module.time, "monotonic", lambda: clock[0])
    halt = halt_module.Halt(said.append)
    halt._on_signal(signal.SIGINT)
    clock[0] += halt_module.DUPLICATE_SECONDS / 2
    halt._on_signal(signal.SIGINT)  # the same Ctrl-C, seen twice
    assert halt.signum == signal.SIGINT and len(said) == 1
    clock[0] += halt_module.DUPLICATE_SECONDS
    with pytest.raises(KeyboardInterrupt):  # pressed again: at once
        halt._on_signal(signal.SIGINT)
