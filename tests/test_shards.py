"""Sharding on a subset of the demo: `lrc execute --shard i/N` and `lrc merge [PLAN.lock] FOLDER… --out DIR`.

Three shards of `--workloads triage.ap-inbox` of the small demo (the demo at n_per_cell 2,
conftest.py `small_demo_run`: 12 runs) merged, in any order, with an
identical duplicate among them and into one of the shards itself, give the outputs of the same
subset run unsharded, byte for byte (the record of how a folder was operated aside, see
helpers/folders.py) -- and that merged folder still misses most of the plan's runs, so it is
partial. Folders of another plan, folders that are not run folders, overlapping folders that
disagree and an output folder holding another journal are refused (exit 4), nothing written.
The whole demo, 3 shards merged against one unsharded execute, is test_shards_demo.py.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from helpers.folders import assert_same_outputs
from helpers.project import REPO, journal_records, run_lrc
from helpers.shared import SMALL_N, small_demo_lock

LOCK = REPO / "generated" / "demo" / "plan.lock"  # the small demo's lock once `small_lock` has run
_PLAN = json.loads(LOCK.read_bytes())["plan"]
TRIAGE = next(w for w in _PLAN["workloads"] if w.startswith("triage."))
SUBSET = ("--workloads", TRIAGE)
SUBSET_RUNS = SMALL_N * len(_PLAN["models"]) * 2  # items x models x (single-shot, agentic)


@pytest.fixture(scope="module", autouse=True)
def small_lock(tmp_path_factory):
    """Every execute and merge of this module runs the small demo's lock (same workloads, 2 items a cell)."""
    global LOCK
    LOCK = small_demo_lock(tmp_path_factory)
    yield LOCK


def execute(out: Path, *flags: str):
    return run_lrc("execute", LOCK, "--out", out, "--no-progress", *flags, timeout=600)


def merge(out: Path, *folders: Path):
    return run_lrc("merge", LOCK, *folders, "--out", out, timeout=600)


def write_journal(folder: Path, records: list[dict]) -> None:
    (folder / "journal.jsonl").write_text(
        "".join(json.dumps(r, sort_keys=True, ensure_ascii=False, separators=(",", ":")) + "\n" for r in records),
        encoding="utf-8")


def copy(folder: Path, to: Path) -> Path:
    shutil.copytree(folder, to)
    (to / ".lrc-execute.lock").unlink(missing_ok=True)
    return to


def run_keys(folder: Path) -> set[str]:
    return {r["run"] for r in journal_records(folder) if r["type"] == "run"}


@pytest.fixture(scope="module")
def whole(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("whole") / "out"
    res = execute(out, *SUBSET)
    assert res.returncode == 0, res.stderr
    return out


@pytest.fixture(scope="module")
def shards(tmp_path_factory) -> list[Path]:
    root = tmp_path_factory.mktemp("shards")
    folders = []
    for i in (1, 2, 3):
        out = root / f"shard-{i}"
        res = execute(out, *SUBSET, "--shard", f"{i}/3")
        assert res.returncode == 0, res.stderr
        folders.append(out)
    return folders


def test_shards_run_disjoint_parts_of_the_selection(shards, whole):
    parts = [run_keys(s) for s in shards]
    assert all(parts) and sum(map(len, parts)) == len(set().union(*parts)) == SUBSET_RUNS
    assert set().union(*parts) == run_keys(whole)


def test_merge_in_any_order_with_duplicates_and_into_a_shard_equals_the_unsharded_run(tmp_path, shards, whole):
    """The folders in another order, a shard twice (one copy with other latencies and attempts:
    how a call was operated is not its content), merged into one of the shards itself."""
    again = copy(shards[0], tmp_path / "shard-1-again")
    records = journal_records(again)
    for r in records:
        if r["type"] == "call":
            r["latency_ms"] = r.get("latency_ms", 0) + 1234
    write_journal(again, records)
    into = copy(shards[2], tmp_path / "into")
    res = merge(into, into, shards[1], again, shards[0])
    assert res.returncode == 0, res.stderr
    assert_same_outputs(into, whole)
    # Still missing most of the plan: partial, like the unsharded subset run.
    summary = json.loads((into / "summary.json").read_text(encoding="utf-8"))
    assert summary["partial"] is True and summary["runs_not_run"] == summary["runs_planned"] - SUBSET_RUNS
    assert isinstance(summary["derived"], str) and "partial run" in summary["derived"]
    assert "PARTIAL RUN" in (into / "rate-card.md").read_text(encoding="utf-8") and "partial run" in res.stderr
    # Every call and run once: the duplicate shard added nothing.
    kinds = [(r["type"], r.get("run"), r.get("step")) for r in journal_records(into)[1:] if r["type"] in ("call", "run")]
    assert len(kinds) == len(set(kinds)) and {k[1] for k in kinds if k[0] == "run"} == run_keys(whole)


def test_merge_finds_the_plan_of_its_folders_when_no_lock_is_given(tmp_path, shards, whole):
    """`lrc merge FOLDER FOLDER... --out DIR` (issue 11 §5's form): the lock is found as `lrc report
    RUN_DIR` finds it (generated/<edition>/plan.lock above the working directory), and the merge is
    the one the lock-first form makes. Where no such lock is found: refused, naming the form that
    takes one, nothing written."""
    project = LOCK.parent.parent.parent
    out = tmp_path / "merged"
    res = run_lrc("merge", shards[2], shards[0], shards[1], "--out", out, cwd=project, timeout=600)
    assert res.returncode == 0, res.stderr
    assert_same_outputs(out, whole)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    lost = tmp_path / "lost"
    res = run_lrc("merge", shards[0], shards[1], "--out", lost, cwd=elsewhere)
    _refused(res, lost, "no generated/demo/plan.lock found above", "`lrc merge PLAN.lock FOLDER... --out DIR`")
    res = run_lrc("merge", LOCK, "--out", lost, cwd=elsewhere)
    assert res.returncode == 2 and "give the run folders to combine" in res.stderr and not lost.exists(), res.stderr


def _refused(res, out: Path, *words: str) -> None:
    assert res.returncode == 4, res.stdout + res.stderr
    assert "Traceback" not in res.stderr and all(w in res.stderr for w in words), res.stderr
    assert not out.exists(), "a refused merge wrote its output folder"


def test_merge_refuses_a_folder_of_another_plan(tmp_path, shards):
    other = copy(shards[1], tmp_path / "other")
    records = journal_records(other)
    records[0]["plan"] = "sha256:" + "0" * 64
    write_journal(other, records)
    out = tmp_path / "merged"
    _refused(merge(out, shards[0], other, shards[2]), out, "another plan", str(other))


@pytest.mark.parametrize("kind,field", [("run", "answer_text"), ("run", "outcome"), ("call", "response"), ("call", "usage")])
def test_merge_refuses_overlapping_folders_that_disagree(tmp_path, shards, kind, field):
    changed = copy(shards[0], tmp_path / "changed")
    records = journal_records(changed)
    target = next(r for r in records if r["type"] == kind)
    # Other values lrc could have written (a value of the wrong shape is refused as damaged
    # before any comparison: tests/test_journal_records.py).
    if field == "usage":
        target[field] = {k: v + 1 for k, v in target[field].items()}
    elif field == "outcome":
        target[field] = "no_answer" if target[field] != "no_answer" else "refusal"
    elif field == "response":
        target[field] = {**target[field], "message": {"role": "assistant", "content": "tampered"}}
    else:
        target[field] = {"tampered": True} if isinstance(target[field], dict) else "tampered"
    write_journal(changed, records)
    out = tmp_path / "merged"
    _refused(merge(out, shards[0], changed, shards[1]), out, "disagree", target["run"])


def test_merge_refuses_what_is_not_a_run_folder(tmp_path, shards):
    empty = tmp_path / "empty"
    empty.mkdir()
    a_file = tmp_path / "notes.txt"
    a_file.write_text("hello\n")
    foreign = tmp_path / "foreign"
    foreign.mkdir()
    (foreign / "journal.jsonl").write_text('{"hello": "world"}\n')
    garbage = tmp_path / "garbage"
    garbage.mkdir()
    (garbage / "journal.jsonl").write_bytes(b"\xff\xfe not json\n")
    for bad in (empty, a_file, foreign, garbage, tmp_path / "missing"):
        out = tmp_path / "merged"
        _refused(merge(out, shards[0], bad), out, str(bad), "not a run folder" if bad is not garbage else "journal")


def test_merge_refuses_an_output_folder_holding_another_journal(tmp_path, shards):
    out = copy(shards[1], tmp_path / "busy")
    before = (out / "journal.jsonl").read_bytes()
    res = merge(out, shards[0], shards[2])
    assert res.returncode == 4 and "already holds a journal" in res.stderr, res.stderr
    assert (out / "journal.jsonl").read_bytes() == before


# -- combining records, in process -----------------------------------------------------------

def _call(run: str, step: int, reply: str = "ok", **extra) -> dict:
    return {"type": "call", "run": run, "step": step, "request": f"sha256:{run}{step}", "response": {"message": {"content": reply}, "finish_reason": "stop", "refusal": False},
            "usage": {"input": 3, "output": 1}, "response_model": "m", "attempts": 1, "infra_failures": [], "latency_ms": 5, **extra}


def _run(run: str, answer: str = "a") -> dict:
    return {"type": "run", "run": run, "workload": "w", "model": "m", "system": "s", "item": "i", "item_index": 0,
            "repetition": 1, "outcome": "answered", "steps": 1, "answer_text": answer, "answer": None, "submitted": False,
            "transcript": [], "events": []}


def test_records_merge_in_a_fixed_order_whatever_the_folders_order():
    from itertools import permutations

    from lrc.runtime.merge import merge_records

    a = [_call("k2", 2), _call("k2", 1), _run("k2"), {"type": "session", "n": 1}]
    b = [_call("k1", 1), {"type": "infra_exhausted", "run": "k3", "failures": [{"kind": "timeout"}]}, {"type": "session", "n": 2}]
    c = [_call("k1", 1, latency_ms=999, attempts=3), _run("k1"), {"type": "session", "n": 1}]  # k1 step 1 again, operated otherwise
    results = {json.dumps(merge_records(list(order))) for order in permutations([("a", a), ("b", b), ("c", c)])}
    assert len(results) == 1
    merged = json.loads(results.pop())
    # Runs journaled before any session record come first; each session, then the runs made under it.
    assert [(r["type"], r.get("run"), r.get("step")) for r in merged] == [
        ("call", "k1", 1), ("run", "k1", None), ("call", "k2", 1), ("call", "k2", 2), ("run", "k2", None),
        ("infra_exhausted", "k3", None), ("session", None, None), ("session", None, None)]


def test_each_run_stays_after_the_session_that_made_it():
    """The operating record of a run and the edition's window are read from the session it follows
    (journal order): merged shards keep each run after its own session, sessions in the order they
    were opened, a run in several folders after the earliest of its sessions."""
    from itertools import permutations

    from lrc.runtime.merge import merge_records

    first = {"type": "session", "opened": "2026-12-01T00:00:00Z", "operation": {"n": 1}}
    later = {"type": "session", "opened": "2026-12-05T00:00:00Z", "operation": {"n": 2}}
    a = [first, _call("k2", 1), _run("k2")]
    b = [later, _call("k1", 1), _run("k1"), _call("k3", 1)]
    c = [first, _call("k1", 1, latency_ms=999), _run("k1")]  # k1 also made under the first session
    results = {json.dumps(merge_records(list(order))) for order in permutations([("a", a), ("b", b), ("c", c)])}
    assert len(results) == 1
    merged = json.loads(results.pop())
    assert [(r["type"], r.get("run"), (r.get("operation") or {}).get("n")) for r in merged] == [
        ("session", None, 1), ("call", "k1", None), ("run", "k1", None), ("call", "k2", None), ("run", "k2", None),
        ("session", None, 2), ("call", "k3", None)]


@pytest.mark.parametrize("left,right,named", [
    (_call("k1", 1, "yes"), _call("k1", 1, "no"), "call k1 step 1"),
    (_call("k1", 1), {**_call("k1", 1), "usage": {"input": 4, "output": 1}}, "call k1 step 1"),
    (_call("k1", 1), {**_call("k1", 1), "request": "sha256:other"}, "call k1 step 1"),
    (_run("k1", "a"), _run("k1", "b"), "run k1"),
    (_run("k1"), {**_run("k1"), "outcome": "refusal"}, "run k1"),
])
def test_records_that_disagree_are_refused(left, right, named):
    from lrc.runtime.execute import Refused
    from lrc.runtime.merge import merge_records

    with pytest.raises(Refused) as err:
        merge_records([("A", [left]), ("B", [right])])
    assert named in str(err.value) and "A vs B" in str(err.value)


@pytest.mark.parametrize("given", ["specs/editions/demo.yaml", "generated/demo"])
def test_merge_takes_a_plan_lock_first(tmp_path, given):
    out = tmp_path / "merged"
    res = run_lrc("merge", REPO / given, tmp_path, "--out", out)
    assert res.returncode == 2 and "LRC8301" in res.stderr and "generated/demo/plan.lock" in res.stderr, res.stderr
    assert not out.exists()


# -- found by a probe of hostile shard folders (2026-12-07) ------------------------------------

def _judge(run: str, score: int = 3, role: str = "primary") -> dict:
    return {"type": "judge", "run": run, "role": role, "model": "j", "rubric": "r.v1", "request": f"sha256:{run}",
            "material": {}, "judgment": {"clarity": score}, "invalid_judgment": None, "response": {"message": {}},
            "usage": {"input": 3, "output": 1}, "response_model": "j", "attempts": 1, "infra_failures": []}


@pytest.mark.parametrize("left,right,named", [
    (_judge("k1", 3), _judge("k1", 1), "judge (primary) of run k1"),  # merged silently, it flipped a pass
    (_judge("k1"), {**_judge("k1"), "usage": {"input": 9, "output": 1}}, "judge (primary) of run k1"),
    (_run("k1"), {**_run("k1"), "outside_window": True}, "run k1"),  # merged silently, the rate card changed
])
def test_judges_records_and_the_window_mark_are_content_that_must_agree(left, right, named):
    from lrc.runtime.execute import Refused
    from lrc.runtime.merge import merge_records

    with pytest.raises(Refused) as err:
        merge_records([("A", [left]), ("B", [right])])
    assert named in str(err.value)
    same = merge_records([("A", [left, _run("k1")]), ("B", [{**left, "latency_ms": 77}])])
    assert sum(r["type"] == left["type"] for r in same) == 1, "agreeing copies are kept once"


def test_merge_refuses_runs_the_plan_does_not_make_and_a_second_header(tmp_path, shards):
    extra = copy(shards[0], tmp_path / "extra")
    records = journal_records(extra)
    stranger = {**next(r for r in records if r["type"] == "run"), "run": "triage.x|lrc/none|single-shot|ZZ|1"}
    write_journal(extra, records + [stranger])
    out = tmp_path / "merged"
    _refused(merge(out, extra, shards[1]), out, "does not make", "ZZ")
    appended = copy(shards[0], tmp_path / "appended")
    records = journal_records(appended)
    write_journal(appended, records + [{**records[0], "plan": "sha256:" + "1" * 64}] + records[1:3])
    _refused(merge(out, appended, shards[1]), out, "a second header")


def test_a_refused_merge_into_a_shard_leaves_its_journal_as_it_was(tmp_path, shards):
    into = copy(shards[0], tmp_path / "into")
    item = next((into / "items").rglob("item.json"))
    item.write_bytes(item.read_bytes().replace(b'"', b"'", 1))  # not what the locked generator produces
    before = (into / "journal.jsonl").read_bytes()
    res = merge(into, into, shards[1], shards[2])
    assert res.returncode == 4 and "differs from what the locked generator produces" in res.stderr, res.stderr
    assert (into / "journal.jsonl").read_bytes() == before, "the journal was replaced before the merge was refused"


@pytest.mark.parametrize("linked", ["runs", "items", "runs/first"])
def test_merge_into_a_shard_holding_a_link_writes_nothing_through_it(tmp_path, shards, linked):
    into = copy(shards[0], tmp_path / "into")
    outside = tmp_path / "outside"
    outside.mkdir()
    target = into / linked if linked != "runs/first" else next(p for p in (into / "runs").iterdir())
    shutil.copytree(target, outside / "content")
    shutil.rmtree(target)
    target.symlink_to(outside / "content", target_is_directory=True)
    before = sorted(p.relative_to(outside) for p in outside.rglob("*"))
    res = merge(into, into, shards[1], shards[2])
    assert res.returncode == 6, res.stdout + res.stderr
    assert "symbolic link" in res.stderr and "Traceback" not in res.stderr
    assert sorted(p.relative_to(outside) for p in outside.rglob("*")) == before, "written through the link"


def test_a_shard_whose_journal_escapes_a_lone_surrogate_merges_and_reads_back(tmp_path, shards):
    """The journal escapes a lone surrogate (`\\ud800`: not Unicode text) so that its line stays
    UTF-8 and reads back; `lrc merge` read such a line and wrote it back unescaped, which is not
    UTF-8 (UnicodeEncodeError: exit 70). It writes lines with the journal's own encoder now."""
    odd = copy(shards[0], tmp_path / "odd")
    records = journal_records(odd)
    run = next(r for r in records if r["type"] == "run")
    run["answer_text"] = (run.get("answer_text") or "") + "\ud800"
    (odd / "journal.jsonl").write_text("".join(json.dumps(r, sort_keys=True) + "\n" for r in records), encoding="ascii")
    out = tmp_path / "merged"
    res = merge(out, odd, shards[1], shards[2])
    assert res.returncode == 0, res.stdout + res.stderr
    raw = (out / "journal.jsonl").read_bytes()
    raw.decode("utf-8")  # every line is UTF-8
    assert b"\\ud800" in raw
    merged = next(r for r in journal_records(out) if r["type"] == "run" and r["run"] == run["run"])
    assert merged["answer_text"] == run["answer_text"]
