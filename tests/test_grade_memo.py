"""The sealed per-user memo of task grades (lrc.runtime.tasks.grade_memo).

It may only ever save time: a hit gives exactly the grade the validators gave; any change to
the checks, an input, a saved file or the code is a miss; an entry not sealed by this user's
key (planted, damaged) is never trusted; a grade that may depend on the machine (an `error`
result) or that would not read back exactly (non-JSON values) is never remembered; and
`lrc verify` recomputes every grade. End to end, tests/test_task_e2e.py rebuilds a task folder
with the memo off (LRC_NO_CACHE) and, under --slow, from a private memo cold then warm: the same
bytes as the execute wrote each time.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from lrc.runtime.lock import sealing
from lrc.runtime.tasks.grade_memo import GradeMemo, plain

from helpers.memos import SEAL_DAMAGE, bump_library_version, damage_entry, entries, private_user_cache

PLAN = {"code": {"lrc.artifact-validators.v5": {"fingerprint": "sha256:" + "a" * 64},
                 "lrc.analysis.v77": {"fingerprint": "sha256:" + "b" * 64}}}
ANSWERED = {"outcome": "answered"}


@dataclass
class Item:
    checks: list = field(default_factory=lambda: [{"validator": "formula-integrity", "params": {"sheet": "Model"},
                                                    "failure_category": "formula-error"}])
    files: dict = field(default_factory=lambda: {"inputs/model.xlsx": b"PK\x03\x04 input book"})


def passed(item: Any, run: dict, outputs: dict | None = None) -> dict:
    return {"results": [{"id": "lrc.formula-integrity", "version": 1, "status": "pass", "severity": "error",
                         "observed": 12, "expected": 12, "location": "Model!B7", "message": "ok", "ratio": 0.5}],
            "verdict": "pass", "outcome": "answered", "failed_checks": []}


class Counting:
    def __init__(self, result=passed):
        self.calls = 0
        self.result = result

    def __call__(self, item: Any, run: dict, outputs: dict) -> dict:
        self.calls += 1
        self.outputs = outputs  # the caller's decoded files, never decoded again
        return self.result(item, run)


@pytest.fixture
def user_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    return private_user_cache(tmp_path, monkeypatch, "task-grades")


def test_a_second_grade_of_the_same_files_is_a_hit_and_identical(user_cache):
    compute = Counting()
    saved = {"out/model.xlsx": b"saved book"}
    first = GradeMemo(PLAN, compute).grade(Item(), ANSWERED, saved)
    assert compute.outputs is saved
    memo = GradeMemo(PLAN, compute)  # another process, the same user
    again = memo.grade(Item(), ANSWERED, {"out/model.xlsx": b"saved book"})
    assert compute.calls == 1 and (memo.hits, memo.misses) == (1, 0)
    assert again == first == passed(None, ANSWERED)
    assert json.dumps(again, sort_keys=True) == json.dumps(first, sort_keys=True)  # the same types, the same bytes
    assert len(entries(user_cache)) == 1


@pytest.mark.parametrize("change", ["output bytes", "output name", "input bytes", "checks", "code", "library"])
def test_anything_that_decides_the_grade_is_in_the_key(user_cache, monkeypatch, change):
    compute = Counting()
    GradeMemo(PLAN, compute).grade(Item(), ANSWERED, {"out/model.xlsx": b"saved book"})
    item, outputs, plan = Item(), {"out/model.xlsx": b"saved book"}, PLAN
    if change == "output bytes":
        outputs = {"out/model.xlsx": b"saved book!"}
    elif change == "output name":
        outputs = {"out/other.xlsx": b"saved book"}
    elif change == "input bytes":
        item.files = {"inputs/model.xlsx": b"PK\x03\x04 another input"}
    elif change == "checks":
        item.checks = [{**item.checks[0], "params": {"sheet": "Other"}}]
    elif change == "code":
        plan = {"code": {**PLAN["code"], "lrc.artifact-validators.v5": {"fingerprint": "sha256:" + "c" * 64}}}
    else:
        bump_library_version(monkeypatch, "formulas")
    memo = GradeMemo(plan, compute)
    memo.grade(item, ANSWERED, outputs)
    assert compute.calls == 2 and memo.misses == 1


@pytest.mark.parametrize("damage", ["flipped byte", "another user's key", "truncated", "another entry's name"])
def test_an_entry_not_sealed_by_this_user_is_never_trusted(user_cache, tmp_path, monkeypatch, damage):
    compute = Counting()
    outputs = {"out/model.xlsx": b"saved book"}
    GradeMemo(PLAN, compute).grade(Item(), ANSWERED, outputs)
    [path] = entries(user_cache)
    forged = {"key": path.stem, "grade": {**passed(None, ANSWERED), "verdict": "forged"}}
    if damage in SEAL_DAMAGE:
        damage_entry(path, damage, forged)
    else:  # a valid entry of another key, copied under this name
        other = GradeMemo(PLAN, compute)
        other.grade(Item(), ANSWERED, {"out/model.xlsx": b"other book"})
        source = next(p for p in entries(user_cache) if p != path)
        path.write_bytes(source.read_bytes())
    memo = GradeMemo(PLAN, compute)
    graded = memo.grade(Item(), ANSWERED, outputs)
    assert memo.misses == 1 and graded == passed(None, ANSWERED)


def test_an_undecided_or_unplain_grade_is_never_remembered(user_cache):
    def undecided(item, run, outputs=None):
        g = passed(item, run)
        g["results"][0]["status"] = "error"  # a deadline or a memory limit: the machine, not the files
        return g

    def decimal(item, run, outputs=None):
        g = passed(item, run)
        g["results"][0]["observed"] = Decimal("12.50")  # would read back as another type
        return g

    for result in (undecided, decimal):
        compute = Counting(result)
        for _ in range(2):
            GradeMemo(PLAN, compute).grade(Item(), ANSWERED, {"out/model.xlsx": result.__name__.encode()})
        assert compute.calls == 2, result.__name__
    assert entries(user_cache) == []


def test_plain_is_json_types_only():
    assert plain({"a": [1, 2.5, "x", None, True, {"b": []}]})
    for value in ({"a": (1, 2)}, {"a": Decimal(1)}, {1: "x"}, {"a": float("nan")}, {"a": b"x"}, {"a": {1.0}}):
        assert not plain(value), value


def test_no_cache_or_a_run_not_answered_always_computes(user_cache, monkeypatch):
    compute = Counting()
    monkeypatch.setenv("LRC_NO_CACHE", "1")
    for _ in range(2):
        GradeMemo(PLAN, compute).grade(Item(), ANSWERED, {"out/model.xlsx": b"saved"})
    monkeypatch.delenv("LRC_NO_CACHE")
    for _ in range(2):
        GradeMemo(PLAN, compute, enabled=False).grade(Item(), ANSWERED, {"out/model.xlsx": b"saved"})
        GradeMemo(PLAN, compute).grade(Item(), {"outcome": "step_cap"}, {})
    assert compute.calls == 6 and entries(user_cache) == []


def test_an_unwritable_cache_only_costs_time(user_cache, monkeypatch):
    user_cache.parent.mkdir(parents=True)
    user_cache.write_text("a file where the folder would be")
    compute = Counting()
    for _ in range(2):
        assert GradeMemo(PLAN, compute).grade(Item(), ANSWERED, {"out/model.xlsx": b"saved"}) == passed(None, ANSWERED)
    assert compute.calls == 2


def test_verify_recomputes_every_grade(tmp_path, monkeypatch):
    """`lrc verify` rebuilds the outputs with the memos off (grades, charts, forecast) and
    regenerates every item (the item memo off), whatever the user's cache holds."""
    from lrc.runtime import execute
    from lrc.runtime import items as item_gen
    from lrc.runtime import journal as journal_mod
    from lrc.runtime.publish import verify_package

    seen = {}
    monkeypatch.setattr(execute, "_write_outputs", lambda *a, **kw: seen.update(kw))
    monkeypatch.setattr(execute, "plan_runs", lambda plan, items: [])
    monkeypatch.setattr(execute, "import_modules", lambda plan: {})
    generated = {}
    monkeypatch.setattr(item_gen, "generate", lambda plan, seed, **kw: generated.update(kw) or {})
    monkeypatch.setattr(item_gen, "write", lambda items, out: None)
    monkeypatch.setattr(journal_mod, "Journal", lambda *a, **kw: None)
    (tmp_path / "pkg" / "run").mkdir(parents=True)
    (tmp_path / "pkg" / "run" / "journal.jsonl").write_text("")
    (tmp_path / "fresh").mkdir()
    verify_package.rebuild(tmp_path / "pkg", {"plan": {"edition": {"ref": "x.v1"}}, "root_digest": "sha256:0"}, "seed", tmp_path / "fresh")
    assert seen.get("memo") is False and generated.get("memo") is False
