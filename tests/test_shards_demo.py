"""Three shards of the whole demo edition, merged, are byte-identical to one unsharded execute.

`lrc execute --shard i/3` for i = 1..3, then `lrc merge PLAN.lock S1 S2 S3 --out DIR`: every
output file (cells, rate card, summary, every trace, every item) equals the unsharded run's,
the record of how a folder was operated aside (helpers/folders.py). The cheaper merge tests
(order, duplicates, refusals, partial merges) are in test_shards.py, on a subset of the small
demo. Four executes of the whole 865-run demo make this a benchmark-sized case: slow.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from helpers.folders import assert_same_outputs
from helpers.project import REPO, journal_records, run_lrc

LOCK = REPO / "generated" / "demo" / "plan.lock"
pytestmark = pytest.mark.slow


def execute(out: Path, *flags: str):
    return run_lrc("execute", LOCK, "--out", out, "--no-progress", *flags, timeout=600)


@pytest.fixture(scope="module")
def full(demo_run) -> Path:
    """The unsharded demo run (conftest.py `demo_run`, shared read-only)."""
    out, res = demo_run
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


def test_three_shards_merged_equal_an_unsharded_run(tmp_path, shards, full):
    parts = [{r["run"] for r in journal_records(s) if r["type"] == "run"} for s in shards]
    assert all(parts) and sum(map(len, parts)) == len(set().union(*parts))  # disjoint ...
    everything = {r["run"] for r in journal_records(full) if r["type"] == "run"}
    assert set().union(*parts) == everything  # ... and covering
    for s in shards:
        assert json.loads((s / "summary.json").read_text(encoding="utf-8"))["partial"] is True

    out = tmp_path / "merged"
    res = run_lrc("merge", LOCK, *shards, "--out", out, timeout=600)
    assert res.returncode == 0, res.stderr
    assert_same_outputs(out, full)
    assert res.stdout.startswith((out / "rate-card.md").read_text(encoding="utf-8"))
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    assert summary["partial"] is False and summary["runs_not_run"] == 0 and "partial" not in res.stderr
    # The merged journal holds every record of the shards once, under the plan's header.
    merged = journal_records(out)
    assert merged[0] == {**journal_records(full)[0]}
    # ... apart from the operating record: identical "session" records are kept once (the shards'
    # executes may have been operated alike), distinct ones each once.
    results = [r for r in merged[1:] if r["type"] != "session"]
    assert sorted(map(canonical, results)) == sorted(canonical(r) for s in shards for r in journal_records(s)[1:]
                                                      if r["type"] != "session")
    assert {canonical(r) for r in merged if r["type"] == "session"} == \
        {canonical(r) for s in shards for r in journal_records(s) if r["type"] == "session"}
