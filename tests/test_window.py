"""Seed §3: "Edition window: all runs within 72 hours" (runtime/window.py).

Before, `window_hours` was locked and never read: a folder resumed a week later mixed two models
under one name, and its rate card said nothing. Now the window opens with the folder's first
execute (its session record is dated), an execute with runs left refuses to start once it has
closed (exit 8, nothing written), no run starts after the close during an execute (exit 8), and
`--outside-window` makes the runs anyway, journaled as outside and counted on the rate card and in
summary.json. The outputs hold counts, never times, so two executes still write the same bytes.
"""

from __future__ import annotations

import json
import re
import time
from pathlib import Path
from types import SimpleNamespace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from helpers.folders import outputs
from helpers.project import build_project, journal_records, lrc_env, run_lrc
from lrc.runtime import window
from lrc.runtime.execute import EXIT_WINDOW, WindowGate
from support import REPO

DEMO = REPO / "generated" / "demo" / "plan.lock"
SUBSET = ["--workloads", "triage.ap-inbox.v4"]
KEY = "sk-lrc-test-window-4b81e0"


# -- the window's arithmetic and what the journal says ------------------------------------------

@given(st.integers(min_value=0, max_value=253402300799))  # up to 9999-12-31T23:59:59Z
def test_a_stamp_reads_back_to_the_second(t):
    assert window.parse(window.stamp(t)) == t


@settings(max_examples=300)
@given(st.one_of(st.text(max_size=30), st.integers(), st.none(), st.lists(st.integers(), max_size=2)))
def test_anything_but_a_stamp_is_no_time(value):
    parsed = window.parse(value)
    assert parsed is None or (isinstance(value, str) and window.stamp(parsed) == value)


def test_the_window_closes_window_hours_after_it_opened():
    w = window.Window(opened=1_000_000.0, hours=72)
    assert w.close == 1_000_000 + 72 * 3600
    assert not w.closed(w.close - 1) and w.closed(w.close)
    assert not window.Window(None, 72).closed(10 ** 12)  # not opened yet: nothing has closed
    assert window.hours_of({"edition": {"spec": {"window_hours": 24}}}) == 24
    assert window.hours_of({"edition": {"spec": {}}}) == 72
    assert window.hours_of({"edition": {"spec": {"window_hours": True}}}) == 72


def test_the_gate_stops_runs_after_the_close_unless_told_to_go_on():
    w = window.Window(opened=0.0, hours=1)
    gate = WindowGate(w, outside_allowed=False)
    assert not gate.outside(3599) and not gate.stopped
    assert gate.outside(3600) and gate.stopped
    going_on = WindowGate(w, outside_allowed=True)
    assert going_on.outside(3600) and not going_on.stopped


def _journal(sessions, runs, run_session):
    return SimpleNamespace(sessions=sessions, runs=runs, run_session=run_session)


def test_the_summary_counts_runs_outside_and_runs_it_cannot_place():
    plan = {"edition": {"spec": {"window_hours": 72}}}
    dated = {"opened": "2026-12-01T00:00:00Z", "operation": {}}
    undated = {"operation": {}}
    inside = _journal([dated], {"a": {}, "b": {}}, {"a": 0, "b": 0})
    assert window.summary(plan, inside) | {"about": ""} == {"about": "", "hours": 72, "runs": 2, "runs_dated": 2,
                                                             "runs_outside": 0, "kept": True}
    outside = _journal([dated, dated], {"a": {}, "b": {"outside_window": True}}, {"a": 0, "b": 1})
    assert window.summary(plan, outside)["kept"] is False and window.summary(plan, outside)["runs_outside"] == 1
    old = _journal([undated, dated], {"a": {}, "b": {}, "c": {}}, {"a": 0, "b": 1})  # c: before any session record
    s = window.summary(plan, old)
    assert s["kept"] is None and s["runs_dated"] == 1
    assert "2 of 3 runs were journaled without a date" in window.rate_card_line(s)
    assert window.of(plan, _journal([undated, {"opened": "2026-12-02T00:00:00Z"}, dated, {"opened": 7}], {}, {})).opened == \
        window.parse("2026-12-01T00:00:00Z")  # the earliest dated session (merged shards), garbage ignored
    # A shard executed after the window closed, merged: its runs are outside though none was flagged.
    late = {"opened": "2026-12-04T00:00:01Z", "operation": {}}
    merged = _journal([dated, late], {"a": {}, "b": {}, "c": {}}, {"a": 0, "b": 1, "c": 1})
    s = window.summary(plan, merged)
    assert s["kept"] is False and s["runs_outside"] == 2 and s["runs_dated"] == 3
    just_in = _journal([dated, {"opened": "2026-12-03T23:59:59Z"}], {"a": {}, "b": {}}, {"a": 0, "b": 1})
    assert window.summary(plan, just_in)["kept"] is True


# -- through `lrc execute` ------------------------------------------------------------------------

def _age(out: Path, seconds_ago: float) -> None:
    """Date every session of `out`'s journal `seconds_ago` before now (as if the folder's first
    execute had been then)."""
    path = out / "journal.jsonl"
    stamp = window.stamp(time.time() - seconds_ago)
    text = re.sub(r'"opened":"[^"]*"', f'"opened":"{stamp}"', path.read_text(encoding="utf-8"))
    path.write_text(text, encoding="utf-8")


def _window(out: Path) -> dict:
    return json.loads((out / "summary.json").read_text(encoding="utf-8"))["window"]


def test_a_closed_window_refuses_the_resume_and_outside_window_counts_what_it_makes(tmp_path):
    out = tmp_path / "out"
    first = run_lrc("execute", DEMO, "--out", out, "--no-progress", *SUBSET, "--limit", "2")
    assert first.returncode == 0, first.stderr
    sessions = [r for r in journal_records(out) if r["type"] == "session"]
    assert len(sessions) == 1 and window.parse(sessions[0]["opened"]) is not None
    assert abs(window.parse(sessions[0]["opened"]) - time.time()) < 120
    assert _window(out)["kept"] is True
    assert "started within the edition's 72-hour window" in (out / "rate-card.md").read_text(encoding="utf-8")

    _age(out, 72 * 3600 + 60)  # the window closed a minute ago
    journal_before, outputs_before = (out / "journal.jsonl").read_bytes(), outputs(out)
    refused = run_lrc("execute", DEMO, "--out", out, "--no-progress", *SUBSET)
    assert refused.returncode == EXIT_WINDOW == 8, refused.stdout + refused.stderr
    assert "window" in refused.stderr and "--outside-window" in refused.stderr and "seed §3" in refused.stderr
    assert (out / "journal.jsonl").read_bytes() == journal_before and outputs(out) == outputs_before  # nothing run, nothing written

    made_before = {r["run"] for r in journal_records(out) if r["type"] == "run"}
    anyway = run_lrc("execute", DEMO, "--out", out, "--no-progress", *SUBSET, "--outside-window")
    assert anyway.returncode == 0, anyway.stderr
    runs = [r for r in journal_records(out) if r["type"] == "run"]
    outside = {r["run"] for r in runs if r.get("outside_window") is True}
    assert outside == {r["run"] for r in runs} - made_before and outside
    w = _window(out)
    assert w["kept"] is False and w["runs_outside"] == len(outside) and w["runs"] == len(runs)
    card = (out / "rate-card.md").read_text(encoding="utf-8")
    assert f"**{len(outside):,} of {len(runs):,} runs started after the edition's 72-hour window closed**" in card
    sessions = [r for r in journal_records(out) if r["type"] == "session"]
    assert sessions[-1]["operation"]["outside_window"] is True  # the operating record says how


def test_two_executes_in_their_windows_write_the_same_bytes(tmp_path):
    a, b = tmp_path / "a", tmp_path / "b"
    for out in (a, b):
        res = run_lrc("execute", DEMO, "--out", out, "--no-progress", *SUBSET, "--limit", "1")
        assert res.returncode == 0, res.stderr
        time.sleep(1.1)  # another second on the wall clock: the sessions' stamps differ
    assert [r["opened"] for r in journal_records(a) if r["type"] == "session"] != \
        [r["opened"] for r in journal_records(b) if r["type"] == "session"]
    assert outputs(a) == outputs(b)


@pytest.mark.slow
def test_no_run_starts_after_the_window_closes_during_an_execute(stub, tmp_path):
    lock = build_project(tmp_path / "project", stub.api_base, n_per_cell=6, max_concurrency=1, systems=("single-shot",))
    out = tmp_path / "out"
    env = lrc_env(KEY)
    first = run_lrc("execute", lock, "--out", out, "--no-progress", "--limit", "1", env=env)
    assert first.returncode == 0, first.stderr
    # One stub run at a time, 4 s each: the 5 left take 20 s; the window closes 15 s from now, while
    # they run (an execute takes a few seconds to start; 15 s leaves room on a loaded machine).
    stub.reset(delay=4.0)
    _age(out, 72 * 3600 - 15)
    res = run_lrc("execute", lock, "--out", out, "--no-progress", env=env, timeout=120)
    assert res.returncode == EXIT_WINDOW, res.stdout + res.stderr
    assert "closed during this execute" in res.stderr, res.stderr
    runs = [r for r in journal_records(out) if r["type"] == "run"]
    made_now = len([r for r in runs if r["model"] != "lrc/baseline"]) - 1  # one was made by the first execute
    assert 1 <= made_now < 5 and not any(r.get("outside_window") for r in runs)
    assert stub.count == made_now  # every call made was journaled: the run in flight at the close finished
    assert _window(out)["kept"] is True  # every run made started inside
    again = run_lrc("execute", lock, "--out", out, "--no-progress", env=env)
    assert again.returncode == EXIT_WINDOW and stub.count == made_now


def test_shards_executed_apart_and_merged_count_the_late_shards_runs_as_outside(tmp_path):
    """Each shard's execute knows only its own folder's window; the merged folder's window opens
    at the earliest shard's first execute, and the runs of a shard begun after it closed are
    outside it."""
    early, late, merged = tmp_path / "s1", tmp_path / "s2", tmp_path / "merged"
    for i, out in ((1, early), (2, late)):
        res = run_lrc("execute", DEMO, "--out", out, "--no-progress", *SUBSET, "--limit", "2", "--shard", f"{i}/2")
        assert res.returncode == 0, res.stderr
        assert _window(out)["kept"] is True
    _age(early, 72 * 3600 + 3600)  # shard 1 ran 73 hours before shard 2
    res = run_lrc("merge", DEMO, early, late, "--out", merged)
    assert res.returncode == 0, res.stdout + res.stderr
    late_runs = sum(1 for r in journal_records(late) if r["type"] == "run")
    w = _window(merged)
    assert w["kept"] is False and w["runs_outside"] == late_runs > 0 and w["runs"] > late_runs
    assert f"**{late_runs:,} of {w['runs']:,} runs started after" in (merged / "rate-card.md").read_text(encoding="utf-8")
