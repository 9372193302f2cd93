"""Infrastructure trouble end to end: a hung provider, slow runs, a model deadline, a storm.

`lrc execute` runs as a subprocess against `helpers.stub_server.StubServer` (real HTTP,
litellm's real client). With small deadlines a hung provider costs seconds: the model is
stopped with a message naming it and its endpoint, the execute ends incomplete (exit 3),
and a rerun against a healthy server completes with exactly the results of an uninterrupted
run, paying no finished call twice. A 30% 429/5xx storm changes nothing but the retry count.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from helpers.project import STUB_MODEL, TRIAGE, build_project, journal_records, lrc_env, read_cells, run_lrc, tree
from helpers.stub_server import Fault, StubServer

KEY = "sk-lrc-test-infra-3b1d2f9a7c"
N = 4
SYSTEMS = ("single-shot", "agentic")
STUB_SLUG = "openai__stub-model"
#: Small deadlines: a hung call is given up after 5 s (litellm's first call alone can take
#: seconds on a loaded machine), a model after 3 timeouts in a row.
FAST = {"LRC_REQUEST_TIMEOUT_SECONDS": "5", "LRC_STOP_AFTER_TIMEOUTS": "3"}
#: Where every call hangs no call has to succeed in time: the wait is only what the hang costs.
HANG_EVERY_CALL = {**FAST, "LRC_REQUEST_TIMEOUT_SECONDS": "2.5"}


@pytest.fixture(scope="module")
def lock(stub: StubServer, tmp_path_factory) -> Path:
    return build_project(tmp_path_factory.mktemp("infra-project"), stub.api_base, n_per_cell=N)


@pytest.fixture
def server(stub: StubServer) -> StubServer:
    stub.reset()
    yield stub
    stub.reset()  # let go of any request still held by a "hang" fault


@pytest.fixture(scope="module")
def clean(stub: StubServer, lock: Path, tmp_path_factory):
    stub.reset()
    out = tmp_path_factory.mktemp("clean") / "out"
    res = execute(lock, out)
    assert res.returncode == 0, res.stderr
    return out


def execute(lock: Path, out: Path, **env: str):
    return run_lrc("execute", lock, "--out", out, env=lrc_env(KEY, **env))


def results(out: Path) -> tuple[dict, dict]:
    """What must not depend on infrastructure: every evaluation, and each cell without its retry count."""
    evaluations = tree(out / "runs", "evaluation.json")
    cells = {k: {c: v for c, v in row.items() if c != "infra_retries"} for k, row in read_cells(out).items()}
    return evaluations, cells


def exclusions(out: Path) -> dict[str, str]:
    return {r["run"]: r.get("reason") for r in journal_records(out) if r["type"] == "infra_exhausted"}


def assert_resumes_to_clean(server: StubServer, lock: Path, out: Path, clean: Path, first_records,
                            cut_in_flight: int = 0) -> None:
    """A rerun against a healthy server completes, repays nothing, and equals the clean run.

    `cut_in_flight`: calls the first execute abandoned when it stopped the model may have been
    answered by the server after lrc stopped listening (the server's 200 then never reached a
    journal); at most that many (the model's concurrency) may be sent again."""
    server.reset()
    res = execute(lock, out)
    assert res.returncode == 0, res.stdout + res.stderr
    assert "resuming" in res.stderr
    paid = {r.digest for r in first_records if r.status == 200}
    assert len(paid & {r.digest for r in server.snapshot()}) <= cut_in_flight, "a finished call was paid twice"
    assert results(out) == results(clean)
    assert json.loads((out / "summary.json").read_text())["runs_incomplete"] == 0


# -- a provider that hangs ----------------------------------------------------------------------

def _after_first_step(body: dict) -> bool:
    return bool(body.get("tools")) and len(body["messages"]) > 2


#: A hang after the first agentic step (successes in between reset the count) is slow.
@pytest.mark.parametrize("hang", [None, pytest.param(_after_first_step, marks=pytest.mark.slow)], ids=["every-call", "agentic-after-step-1"])
def test_a_hung_provider_stops_the_model_in_seconds_and_a_rerun_completes(server, lock, clean, tmp_path, hang):
    server.reset(faults=[Fault("hang", match=hang)])
    out = tmp_path / "out"
    settings = HANG_EVERY_CALL if hang is None else FAST
    res = execute(lock, out, **settings)
    ended = time.monotonic()
    first = server.snapshot()
    assert res.returncode == 3, res.stdout + res.stderr
    assert "Traceback" not in res.stderr
    # A clear message naming the model and its endpoint, and how to resume.
    assert f"{STUB_MODEL} ({server.api_base}) was stopped" in res.stderr
    assert "timed out" in res.stderr and "run the same command again" in res.stderr
    # Only the first timeouts were waited for: at most one wave per concurrency slot, then no request.
    hung = [r for r in first if r.fault == "hang"]
    timeout = float(settings["LRC_REQUEST_TIMEOUT_SECONDS"])
    if hang is None:  # nothing succeeds: one wave of timeouts (4 slots), then not one request more
        assert 3 <= len(hung) <= 3 + 4
        assert max(r.started for r in hung) - min(r.started for r in hung) < 2 * timeout
        assert not [r for r in first if r.started > min(r.started for r in hung) + 2 * timeout], \
            "requests were still sent after the model should have been stopped"
    else:  # successes in between reset the count; still far fewer than every attempt of every run
        assert 3 <= len(hung) < N * 8 // 2
    # What the hang cost: from the first hung request to the end of the process (the report
    # included) — seconds, where the defaults of old cost ~43 minutes per run.
    assert ended - min(r.started for r in hung) < 2 * timeout + 60
    # Every run of the stub model not done is journaled as excluded (so the next execute retries it).
    excluded = exclusions(out)
    assert excluded and all(f"|{STUB_MODEL}|" in run for run in excluded)
    assert set(excluded.values()) <= {"model-stopped"}
    cells = read_cells(out)
    assert sum(int(cells[(STUB_MODEL, s)]["infra_excluded"]) for s in SYSTEMS) == len(excluded)
    assert all(cells[("lrc/baseline", s)]["infra_excluded"] == "0" for s in SYSTEMS)
    if hang is not None:
        assert any(r.status == 200 and r.has_tools for r in first), "no agentic first step was paid"
    assert_resumes_to_clean(server, lock, out, clean, first)


@pytest.mark.slow  # waits out a 15 s run deadline (a healthy agentic run must fit in it on a loaded machine)
def test_a_run_slower_than_its_deadline_is_excluded_alone(server, lock, clean, tmp_path):
    # Batch 02's requests never answer; a run may spend 15 s in calls (a healthy agentic run
    # needs a few seconds even on a loaded machine). The model is not hung as a whole: it stays.
    slow = Fault("hang", match=lambda body: "AP-B02" in json.dumps(body["messages"]))
    server.reset(faults=[slow])
    out = tmp_path / "out"
    res = execute(lock, out, LRC_RUN_DEADLINE_SECONDS="15", LRC_STOP_AFTER_TIMEOUTS="50")
    first = server.snapshot()
    assert res.returncode == 3, res.stdout + res.stderr
    assert "was stopped" not in res.stderr
    excluded = exclusions(out)
    assert set(excluded.values()) == {"run-deadline"}
    assert sorted(excluded) == sorted(f"{TRIAGE}|{STUB_MODEL}|{s}|ap-batch-02|r1" for s in SYSTEMS)
    assert "run deadline passed" in res.stderr
    assert_resumes_to_clean(server, lock, out, clean, first)


def test_a_model_past_its_deadline_is_stopped_and_resumes(server, lock, clean, tmp_path):
    server.reset(delay=0.4)
    out = tmp_path / "out"
    res = execute(lock, out, LRC_MODEL_DEADLINE_SECONDS="1.5")
    first = server.snapshot()
    assert res.returncode == 3, res.stdout + res.stderr
    assert f"{STUB_MODEL} ({server.api_base}) was stopped" in res.stderr
    assert "LRC_MODEL_DEADLINE_SECONDS" in res.stderr
    assert set(exclusions(out).values()) == {"model-stopped"}
    # The deadline cuts the calls in flight (at most the model's concurrency, 4 in the profile).
    assert_resumes_to_clean(server, lock, out, clean, first, cut_in_flight=4)


@pytest.mark.parametrize("name, value", [("LRC_RUN_DEADLINE_SECONDS", "soon"), ("LRC_MAX_ATTEMPTS", "0")])
def test_a_bad_setting_is_refused_before_anything_runs(server, lock, tmp_path, name, value):
    out = tmp_path / "out"
    res = execute(lock, out, **{name: value})
    assert res.returncode == 1 and name in res.stderr and "Traceback" not in res.stderr
    assert server.count == 0 and not (out / "journal.jsonl").exists()


# -- a storm --------------------------------------------------------------------------------------

def storm(seed: int, rate: float = 0.3) -> list[Fault]:
    """`rate` of all requests fail: half 429 (some with Retry-After), half 5xx or a dropped connection."""
    share = rate / 6  # six kinds, equally likely
    faults, left = [], 1.0
    for kind, status, retry_after in (("status", 429, "0.05"), ("status", 429, None), ("status", 429, "0"),
                                      ("status", 500, None), ("status", 503, None), ("drop", 0, None)):
        faults.append(Fault(kind, status=status, retry_after=retry_after, chance=share / left, seed=seed + len(faults)))
        left -= share
    return faults


@pytest.mark.slow  # a random storm; scripted 429/5xx/drops by default: test_e2e_local_server.py
def test_a_storm_of_429s_and_5xx_changes_nothing_but_the_retry_count(server, lock, clean, tmp_path):
    # The first 429 and the first 500 are certain; the rest of the storm is drawn.
    certain = [Fault("status", status=429, retry_after="0.05", first=1), Fault("status", status=500, first=1)]
    server.reset(faults=certain + storm(seed=11))
    out = tmp_path / "out"
    res = execute(lock, out)
    assert res.returncode == 0, res.stdout + res.stderr
    records = server.snapshot()
    failed = [r for r in records if r.fault]
    assert {r.fault for r in failed} >= {"status 429", "status 500"} and len(failed) >= 5
    assert results(out) == results(clean)
    cells = read_cells(out)
    assert sum(int(cells[(STUB_MODEL, s)]["infra_retries"]) for s in SYSTEMS) == len(failed)
    assert not exclusions(out)
    assert KEY not in (out / "journal.jsonl").read_text()
