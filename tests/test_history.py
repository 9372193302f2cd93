"""`lrc publish RUN_DIR --history DIR` and `lrc report ... --history DIR` through the CLI (real
subprocesses), on a copy of the session's small demo run (read-only: the copy is changed)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import polars as pl
import pytest

from helpers.project import run_lrc
from lrc.runtime.publish import history as hist


@pytest.fixture(scope="module")
def published(small_demo_run, tmp_path_factory) -> tuple[Path, Path, Path]:
    """(lock, run folder copy, history) with the small demo published once through the CLI."""
    lock, out, res = small_demo_run
    assert res.returncode == 0, res.stderr
    base = tmp_path_factory.mktemp("history")
    run = base / "run"
    shutil.copytree(out, run, ignore=shutil.ignore_patterns(".lrc-*"))
    history = base / "history"
    res = run_lrc("publish", run, "--history", history, "--plan", lock)
    assert res.returncode == 0, res.stderr
    assert "published edition demo" in res.stdout and "cells appended" in res.stdout
    return lock, run, history


def test_publish_writes_one_validated_file(published):
    lock, run, history = published
    digest = json.loads(lock.read_text(encoding="utf-8"))["root_digest"]
    [path] = sorted(history.iterdir())
    assert path.name == hist.file_name("demo", digest)
    rows = hist.read(history)
    cells = pl.read_parquet(run / "cells.parquet")
    assert rows.height == cells.height and set(rows["plan_digest"]) == {digest}
    assert rows.schema["cpo_usd"] == pl.String and set(rows["workload_version"]) == {4}


def test_publishing_the_same_plan_again_is_a_no_op_or_refused(published, tmp_path):
    lock, run, history = published
    before = {p.name: p.read_bytes() for p in history.iterdir()}
    res = run_lrc("publish", run, "--history", history, "--plan", lock)
    assert res.returncode == 0, res.stderr
    assert "already published" in res.stdout and "nothing written" in res.stdout
    # Same plan, other rows: copy the history and change one published number in the copy's file.
    other = tmp_path / "other"
    shutil.copytree(history, other)
    [path] = list(other.iterdir())
    frame = pl.read_parquet(path).with_columns(pl.lit("123.45").alias("cost_usd"))
    path.unlink()
    frame.write_parquet(path)
    res = run_lrc("publish", run, "--history", other, "--plan", lock)
    assert res.returncode == 4
    assert "already published" in res.stderr and "with other rows" in res.stderr and "Traceback" not in res.stderr
    assert {p.name: p.read_bytes() for p in history.iterdir()} == before


def test_a_partial_folder_never_publishes(published, tmp_path):
    lock, run, _ = published
    partial = tmp_path / "partial"
    shutil.copytree(run, partial)
    # A journal missing its last runs (a stopped execute): publish rebuilds the outputs from the
    # journal, so the whole run's summary.json beside it does not make it whole.
    lines = (partial / "journal.jsonl").read_bytes().splitlines(keepends=True)
    (partial / "journal.jsonl").write_bytes(b"".join(lines[:-10]))
    res = run_lrc("publish", partial, "--history", tmp_path / "h", "--plan", lock)
    assert res.returncode == 4
    assert "partial folders never publish" in res.stderr and "Traceback" not in res.stderr
    assert not (tmp_path / "h").exists()


def test_a_corrupt_history_is_refused_clearly(published, tmp_path):
    lock, run, history = published
    bad = tmp_path / "bad"
    shutil.copytree(history, bad)
    [path] = list(bad.iterdir())
    path.write_bytes(path.read_bytes()[:100])
    for args in (("publish", run, "--history", bad, "--plan", lock),
                 ("report", lock, "--out", run, "--history", bad)):
        res = run_lrc(*args)
        assert res.returncode == 4, res.stderr
        assert "not a readable parquet file" in res.stderr and "Traceback" not in res.stderr


def test_report_with_history_draws_the_trend_and_without_it_nothing_changes(published, small_demo_run, tmp_path):
    lock, run, history = published
    _, shared_out, _ = small_demo_run
    res = run_lrc("report", lock, "--out", run, "--html", "--history", history)
    assert res.returncode == 0, res.stderr
    assert "trend across editions" in res.stdout
    page = (run / "report.html").read_text(encoding="utf-8")
    assert page.count("Trend across editions") == 1
    section = page[page.index('id="trend"'):page.index("<h2>Judge</h2>")]
    workloads = {w["spec"]["id"] for w in json.loads(lock.read_text(encoding="utf-8"))["plan"]["workloads"].values()}
    assert section.count("<svg") == len(workloads)  # one chart per workload
    assert "This edition is not in the history" not in section
    res = run_lrc("report", lock, "--out", run, "--html", "--history", history)
    assert res.returncode == 0, res.stderr
    again = (run / "report.html").read_text(encoding="utf-8")
    assert again == page  # same history, same page
    # A package of the page with its trend still verifies: the section is set aside (its history is not packed).
    target = tmp_path / "pkg.tar.gz"
    res = run_lrc("package", run, "--out", target, "--plan", lock)
    assert res.returncode == 0, res.stderr
    res = run_lrc("verify", target)
    assert res.returncode == 0, res.stdout + res.stderr
    assert "Trend across editions" in res.stdout + res.stderr
    res = run_lrc("report", lock, "--out", run)
    assert res.returncode == 0, res.stderr
    assert (run / "report.html").read_bytes() == (shared_out / "report.html").read_bytes()
    assert (run / "cells.csv").read_bytes() == (shared_out / "cells.csv").read_bytes()


def test_history_without_a_run_folder_is_a_usage_error(small_demo_run, tmp_path):
    lock, _, _ = small_demo_run
    res = run_lrc("report", lock, "--html", "--history", tmp_path)
    assert res.returncode == 2
    assert "--history" in res.stderr
