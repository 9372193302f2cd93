"""Crash safety for real: SIGKILL `lrc execute` mid-run, run it again, get the same bytes.

The local-server edition runs with a per-request server delay so the kill lands mid-run.
The process is killed once the server has seen a chosen share of the requests an
uninterrupted run sends; `lrc execute` into the same folder then resumes. The server's
request log proves no finished call was paid twice (only requests in flight at the kill,
at most max_concurrency of them, may be sent again), and every output file is byte-identical
to an uninterrupted run's.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from collections import Counter
from pathlib import Path

import pytest

from helpers.project import LRC, REPO, STUB_MODEL, build_project, journal_records, lrc_env, run_lrc, tree, with_profile
from helpers.stub_server import Record, StubServer
from helpers.stub_server import triage_call_key as call_key

pytestmark = pytest.mark.slow  # an uninterrupted reference run plus killed and resumed runs, with a per-request delay

KEY = "sk-lrc-kill-test-5b1e0c9d"
MAX_CONCURRENCY = 4
DELAY = 0.08  # seconds per request: the run stays in flight long enough to be killed mid-way
#: Files that must come out byte-identical (everything but the journal, whose line order and
#: latencies are the history of how the run went, and the folder's lock file).
IDENTICAL = ("cells.csv", "cells.parquet", "rate-card.md", "summary.json")


@pytest.fixture(scope="module")
def lock(stub: StubServer, tmp_path_factory) -> Path:
    return build_project(tmp_path_factory.mktemp("kill-project"), stub.api_base, n_per_cell=15,
                         max_concurrency=MAX_CONCURRENCY)


@pytest.fixture(scope="module")
def reference(stub: StubServer, lock: Path, tmp_path_factory):
    """An uninterrupted run: (out folder, the server's records)."""
    stub.reset()
    out = tmp_path_factory.mktemp("uninterrupted") / "out"
    res = run_lrc("execute", lock, "--out", out, env=lrc_env(KEY))
    assert res.returncode == 0, res.stderr
    records = stub.snapshot()
    assert records and all(r.status == 200 for r in records)
    return out, records


def max_overlap(records: list[Record]) -> int:
    """The most requests the server was handling at once."""
    events = []
    for r in records:
        events.append((r.started, 1))
        events.append((r.finished if r.finished is not None else float("inf"), -1))
    level = peak = 0
    for _, step in sorted(events, key=lambda e: (e[0], e[1])):
        level += step
        peak = max(peak, level)
    return peak


def kill_when(server: StubServer, lock: Path, out: Path, seen: int, log: Path) -> dict:
    """Start `lrc execute`, SIGKILL it once the server has received `seen` requests in total."""
    first = server.count
    with open(log, "w") as fh:
        proc = subprocess.Popen([*LRC, *with_profile(["execute", lock, "--out", out])], env=lrc_env(KEY), cwd=REPO,
                                stdout=fh, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 120
        while server.count < seen:
            assert proc.poll() is None, f"lrc execute ended before the kill point:\n{log.read_text()}"
            assert time.monotonic() < deadline, "the run never reached the kill point"
            time.sleep(0.002)
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)
    except BaseException:
        proc.kill()
        proc.wait(timeout=30)
        raise
    assert proc.returncode == -signal.SIGKILL
    time.sleep(DELAY + 0.2)  # let the server's handlers finish the requests in flight at the kill
    # Everything this process sent (a request can reach the server just after the kill).
    at_kill = server.snapshot()[first:]
    # The journal as the killed process left it; a torn last line (killed mid-write) is no record.
    lines = (out / "journal.jsonl").read_bytes().split(b"\n")[:-1]
    journaled = {(r["run"].split("|")[2], r["run"].split("|")[3], r["step"])
                 for r in map(json.loads, lines) if r["type"] == "call" and STUB_MODEL in r["run"]}
    # In flight from the client's side: sent, but its answer not yet in the journal (the server
    # may already have answered it; the process died before writing it down).
    in_flight = [r for r in at_kill if call_key(r) not in journaled]
    return {"in_flight": in_flight, "journaled": journaled}


def assert_journal_consistent(out: Path, expected_runs: int) -> None:
    records = journal_records(out)
    assert records[0]["type"] == "header"
    runs = Counter(r["run"] for r in records if r["type"] == "run")
    calls = Counter((r["run"], r["step"]) for r in records if r["type"] == "call")
    assert len(runs) == expected_runs and set(runs.values()) == {1}, "missing or duplicate run records"
    assert set(calls.values()) == {1}, "a call was journaled twice"


@pytest.mark.parametrize("kill_points", [(0.5,), (0.25, 0.8)], ids=["kill-at-50pct", "kill-at-25pct-then-80pct"])
def test_sigkill_then_resume_pays_nothing_twice_and_ends_byte_identical(stub, lock, reference, tmp_path, kill_points):
    ref_out, ref_records = reference
    expected = len(ref_records)
    ref_digests = Counter(r.digest for r in ref_records)
    assert set(ref_digests.values()) == {1}
    out = tmp_path / "out"
    stub.reset(delay=DELAY)

    kills = []
    for n, share in enumerate(kill_points, start=1):
        unique_so_far = len({r.digest for r in stub.snapshot()})
        target = stub.count + max(1, round(share * expected) - unique_so_far)
        kills.append(kill_when(stub, lock, out, target, tmp_path / f"kill{n}.log"))
        assert (out / "journal.jsonl").exists()

    before_resume = stub.count
    res = run_lrc("execute", lock, "--out", out, env=lrc_env(KEY))
    assert res.returncode == 0, res.stderr
    assert "resuming" in res.stderr
    records = stub.snapshot()
    resumed = records[before_resume:]

    # Nothing paid twice, except requests in flight at a kill (bounded by the concurrency cap).
    assert all(r.status == 200 for r in resumed)
    sent = Counter(r.digest for r in records)
    repeated = {d: c for d, c in sent.items() if c > 1}
    in_flight = [r for k in kills for r in k["in_flight"]]
    for k in kills:
        assert len(k["in_flight"]) <= MAX_CONCURRENCY
        assert k["journaled"], "the kill landed before any call was journaled"
    assert sum(c - 1 for c in repeated.values()) <= len(in_flight) <= MAX_CONCURRENCY * len(kills)
    assert set(repeated) <= {r.digest for r in in_flight}, "a call journaled before the kill was sent again"
    assert set(sent) == set(ref_digests), "the resumed run sent requests an uninterrupted run does not"
    assert len(resumed) < expected, "the resumed run started over instead of resuming"
    assert max_overlap(records) <= MAX_CONCURRENCY

    # Same bytes as the uninterrupted run: cells, rate card, summary, and every trace file.
    for name in IDENTICAL:
        assert (out / name).read_bytes() == (ref_out / name).read_bytes(), f"{name} differs after kill and resume"
    for sub in ("runs", "items"):
        got, want = tree(out / sub), tree(ref_out / sub)
        assert sorted(got) == sorted(want), f"{sub}/ holds other files"
        assert [k for k in want if got[k] != want[k]] == [], f"{sub}/ files differ after kill and resume"
    assert any(k.endswith("evaluation.json") for k in tree(out / "runs"))
    assert_journal_consistent(out, expected_runs=4 * 15)
