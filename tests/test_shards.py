"""Sharding: `lrc execute --shard i/N` and `lrc merge PLAN.lock FOLDER… --out DIR`.

Three shards of the demo merged give outputs byte-identical to one unsharded execute (the
record of how a folder was operated aside, see helpers/folders.py), whatever the order of the
folders and with identical duplicates among them; a merge missing a shard is partial; folders
of another plan, folders that are not run folders and overlapping folders that disagree are
refused (exit 4) with nothing written.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from helpers.folders import assert_same_outputs
from helpers.project import REPO, journal_records, run_lrc

LOCK = REPO / "generated" / "demo" / "plan.lock"


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


@pytest.fixture(scope="module")
def full(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("full") / "out"
    res = execute(out)
    assert res.returncode == 0, res.stderr
    return out


@pytest.fixture(scope="module")
def shards(tmp_path_factory) -> list[Path]:
    root = tmp_path_factory.mktemp("shards")
    folders = []
    for i in (1, 2, 3):
        out = root / f"shard-{i}"
        res = execute(out, "--shard", f"{i}/3")
        assert res.returncode == 0, res.stderr  # a shard is partial, and did all it was asked: exit 0
        assert "partial run" in res.stderr
        folders.append(out)
    return folders


def canonical(record: dict) -> str:
    return json.dumps(record, sort_keys=True)


def run_keys(folder: Path) -> set[str]:
    return {r["run"] for r in journal_records(folder) if r["type"] == "run"}


def test_shards_run_disjoint_parts_that_cover_the_plan(shards, full):
    parts = [run_keys(s) for s in shards]
    assert all(parts) and sum(map(len, parts)) == len(set().union(*parts))
    assert set().union(*parts) == run_keys(full)
    for s in shards:
        summary = json.loads((s / "summary.json").read_text(encoding="utf-8"))
        assert summary["partial"] is True and "PARTIAL RUN" in (s / "rate-card.md").read_text(encoding="utf-8")


def test_three_shards_merged_equal_an_unsharded_run(tmp_path, shards, full):
    out = tmp_path / "merged"
    res = merge(out, *shards)
    assert res.returncode == 0, res.stderr
    assert_same_outputs(out, full)
    assert res.stdout.startswith((out / "rate-card.md").read_text(encoding="utf-8"))
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    assert summary["partial"] is False and summary["runs_not_run"] == 0
    # The merged journal holds every call and run once, each as journaled by its shard.
    merged = journal_records(out)
    assert merged[0]["plan"] == journal_records(full)[0]["plan"]
    shard_records = [r for s in shards for r in journal_records(s)[1:]]
    assert sorted(map(canonical, merged[1:])) == sorted(map(canonical, shard_records))


def test_merge_is_order_independent_and_takes_identical_duplicates(tmp_path, shards, full):
    """The folders in another order, a shard twice (one copy with other latencies: how a call
    was operated is not its content), and merging into one of the shards itself."""
    again = copy(shards[0], tmp_path / "shard-1-again")
    records = journal_records(again)
    for r in records:
        if r["type"] == "call":
            r["latency_ms"] = r.get("latency_ms", 0) + 1234
    write_journal(again, records)
    into = copy(shards[2], tmp_path / "into")
    res = merge(into, into, shards[1], again, shards[0])
    assert res.returncode == 0, res.stderr
    assert_same_outputs(into, full)


def test_a_merge_missing_a_shard_is_partial(tmp_path, shards):
    out = tmp_path / "two-of-three"
    res = merge(out, shards[0], shards[2])
    assert res.returncode == 0, res.stderr
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    missing = len(run_keys(shards[1]))
    assert summary["partial"] is True and summary["runs_not_run"] == missing
    assert isinstance(summary["derived"], str) and "partial run" in summary["derived"]
    assert "PARTIAL RUN" in (out / "rate-card.md").read_text(encoding="utf-8") and "partial run" in res.stderr


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
    return {"type": "call", "run": run, "step": step, "request": f"sha256:{run}{step}", "response": {"message": {"content": reply}},
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
    assert [(r["type"], r.get("run"), r.get("step")) for r in merged] == [
        ("session", None, None), ("session", None, None),
        ("call", "k1", 1), ("run", "k1", None), ("call", "k2", 1), ("call", "k2", 2), ("run", "k2", None),
        ("infra_exhausted", "k3", None)]


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
