"""Run folders from elsewhere, as `lrc publish`, `lrc package`, `lrc merge`, `lrc report` and the
journal readers meet them (found by the 2026-12-07 probes of hostile shard and run folders):
outputs that are not the journal's, files that are not regular files, links, files lrc never
wrote, live keys in clear, nested output folders and categorizations no reviewer could choose.
Each test works on a copy of the session's small demo run; the CLI runs as a subprocess with a
timeout, so a command that would wait on a FIFO fails the test instead of hanging it."""

from __future__ import annotations

import json
import os
import shutil
import stat
import tarfile
import threading
import time
from pathlib import Path

import polars as pl
import pytest

from helpers.project import lrc_env, run_lrc
from support import REPO
from lrc.runtime import filebytes


def _copy(small_demo_run, tmp_path: Path, name: str = "run") -> tuple[Path, Path]:
    lock, out, res = small_demo_run
    assert res.returncode == 0, res.stderr
    run = tmp_path / name
    shutil.copytree(out, run, ignore=shutil.ignore_patterns(".lrc-*"))
    return lock, run


def _history_rows(history: Path) -> list[dict]:
    files = sorted(history.glob("*.parquet"))
    assert len(files) == 1, files
    return pl.read_parquet(files[0]).to_dicts()


# -- reading a file that is not a regular one ---------------------------------------------------

@pytest.mark.parametrize("kind", ["fifo", "device", "folder"])
def test_whole_and_first_line_reads_refuse_what_is_not_a_regular_file(tmp_path, kind):
    path = tmp_path / "journal.jsonl"
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "device":
        path.symlink_to("/dev/zero")
    else:
        path.mkdir()
    started = time.monotonic()
    for read in (filebytes.read_whole, filebytes.first_line):
        with pytest.raises(filebytes.NotRegular):
            read(path)
    assert time.monotonic() - started < 5  # never waited on, never read without end


def test_whole_reads_keep_to_their_limit_and_first_line_stops_at_the_line(tmp_path):
    path = tmp_path / "f"
    path.write_bytes(b'{"type":"header"}\n' + b"x" * 100_000)
    assert filebytes.read_whole(path) == path.read_bytes()
    with pytest.raises(filebytes.NotRegular, match="over the 1,000-byte limit"):
        filebytes.read_whole(path, limit=1000)
    assert filebytes.first_line(path) == b'{"type":"header"}\n'
    path.write_bytes(b"y" * 5000)  # no newline: at most `limit` bytes are read
    assert filebytes.first_line(path, limit=100) == b"y" * 100
    with pytest.raises(FileNotFoundError):
        filebytes.read_whole(tmp_path / "absent")


def test_a_journal_that_is_a_fifo_is_refused_by_the_loader_without_a_wait(tmp_path):
    from lrc.runtime.journal import Journal, JournalError

    os.mkfifo(tmp_path / "journal.jsonl")
    done: list[BaseException] = []

    def load() -> None:
        try:
            Journal(tmp_path / "journal.jsonl", "sha256:" + "0" * 64, "demo.v1", readonly=True)
        except BaseException as exc:  # noqa: BLE001 - what it raised is the result
            done.append(exc)

    worker = threading.Thread(target=load, daemon=True)
    worker.start()
    worker.join(10)
    if worker.is_alive():  # unblock the waiting open so the thread can end, then fail
        fd = os.open(tmp_path / "journal.jsonl", os.O_WRONLY | os.O_NONBLOCK)
        os.close(fd)
        pytest.fail("the journal loader waited on a FIFO")
    assert len(done) == 1 and isinstance(done[0], JournalError) and "not a regular file" in str(done[0])


@pytest.mark.parametrize("command", ["publish", "package", "review-export"])
@pytest.mark.parametrize("kind", ["fifo", "device"])
def test_publish_package_and_review_refuse_a_journal_that_is_a_fifo_or_a_device(small_demo_run, tmp_path, command, kind):
    lock, run = _copy(small_demo_run, tmp_path)
    journal = run / "journal.jsonl"
    journal.unlink()
    if kind == "fifo":
        os.mkfifo(journal)
    else:
        journal.symlink_to("/dev/zero")
    args = {"publish": ("publish", run, "--history", tmp_path / "h", "--plan", lock),
            "package": ("package", run, "--out", tmp_path / "p.tar.gz", "--plan", lock),
            "review-export": ("review", "export", run, "--out", tmp_path / "r.xlsx", "--plan", lock)}[command]
    res = run_lrc(*args, timeout=60)
    assert res.returncode == 4, (res.returncode, res.stderr)
    assert "not a regular file" in res.stderr and "Traceback" not in res.stderr and "MemoryError" not in res.stderr
    assert not (tmp_path / "h").exists() and not (tmp_path / "p.tar.gz").exists() and not (tmp_path / "r.xlsx").exists()


# -- publish: the rows are the journal's, never the folder's word ------------------------------

@pytest.fixture(scope="module")
def honest_rows(small_demo_run, tmp_path_factory) -> list[dict]:
    """The history rows of the small demo published from an untouched copy."""
    base = tmp_path_factory.mktemp("honest")
    lock, run = _copy(small_demo_run, base)
    res = run_lrc("publish", run, "--history", base / "h", "--plan", lock)
    assert res.returncode == 0, res.stderr
    return _history_rows(base / "h")


def _cells_changed(run: Path, change) -> None:
    frame = pl.read_parquet(run / "cells.parquet")
    change(frame).write_parquet(run / "cells.parquet")


@pytest.mark.parametrize("damage", [
    "summary-calibration-a-number", "summary-nested-deep", "summary-not-json", "summary-deleted", "cells-cut-to-3",
    "cells-float-cost", "cells-without-role", "cells-string-passes", "runs-deleted",
])
def test_published_rows_come_from_the_journal_whatever_the_outputs_say(small_demo_run, tmp_path, honest_rows, damage):
    lock, run = _copy(small_demo_run, tmp_path)
    summary = run / "summary.json"
    if damage == "summary-calibration-a-number":
        doc = json.loads(summary.read_text(encoding="utf-8"))
        summary.write_text(json.dumps({**doc, "calibration": 7}), encoding="utf-8")
    elif damage == "summary-nested-deep":
        summary.write_text("[" * 100_000 + "]" * 100_000, encoding="utf-8")
    elif damage == "summary-not-json":
        summary.write_bytes(b"\xff\xfe not json")
    elif damage == "summary-deleted":
        summary.unlink()
    elif damage == "cells-cut-to-3":
        _cells_changed(run, lambda f: f.head(3))
    elif damage == "cells-float-cost":
        _cells_changed(run, lambda f: f.with_columns(pl.lit("1.5").alias("cost_usd")))
    elif damage == "cells-without-role":
        _cells_changed(run, lambda f: f.drop("role"))
    elif damage == "cells-string-passes":
        _cells_changed(run, lambda f: f.with_columns(pl.col("passes").cast(pl.String)))
    elif damage == "runs-deleted":
        shutil.rmtree(run / "runs")
    res = run_lrc("publish", run, "--history", tmp_path / "h", "--plan", lock)
    assert res.returncode == 0, res.stderr
    assert _history_rows(tmp_path / "h") == honest_rows


def test_a_shard_given_the_whole_runs_outputs_does_not_publish(small_demo_run, tmp_path):
    """The journal cut to its header and its first records (a shard, a stopped run) with the
    whole run's summary.json and cells.parquet beside it: the journal says partial."""
    lock, run = _copy(small_demo_run, tmp_path)
    lines = (run / "journal.jsonl").read_bytes().splitlines(keepends=True)
    (run / "journal.jsonl").write_bytes(b"".join(lines[:12]))
    res = run_lrc("publish", run, "--history", tmp_path / "h", "--plan", lock)
    assert res.returncode == 4, res.stderr
    assert "partial folders never publish" in res.stderr and "Traceback" not in res.stderr
    assert not (tmp_path / "h").exists()


def test_a_journal_cut_to_its_header_does_not_publish(small_demo_run, tmp_path):
    lock, run = _copy(small_demo_run, tmp_path)
    header = (run / "journal.jsonl").read_bytes().splitlines(keepends=True)[0]
    (run / "journal.jsonl").write_bytes(header)
    res = run_lrc("publish", run, "--history", tmp_path / "h", "--plan", lock)
    assert res.returncode == 4 and "partial" in res.stderr and "Traceback" not in res.stderr, res.stderr
    assert not (tmp_path / "h").exists()


@pytest.mark.parametrize("name", ["summary.json", "cells.parquet"])
def test_an_output_that_is_a_link_is_never_published_or_written_through(small_demo_run, tmp_path, name):
    lock, run = _copy(small_demo_run, tmp_path)
    elsewhere = tmp_path / f"elsewhere-{name}"
    shutil.copyfile(run / name, elsewhere)
    before = elsewhere.read_bytes()
    (run / name).unlink()
    (run / name).symlink_to(elsewhere)
    res = run_lrc("publish", run, "--history", tmp_path / "h", "--plan", lock)
    assert res.returncode == 6, res.stderr
    assert "link" in res.stderr and "nothing was added to the history" in res.stderr and "Traceback" not in res.stderr
    assert elsewhere.read_bytes() == before and not (tmp_path / "h").exists()


# -- package: lrc's outputs only, regular files only, no live key ------------------------------

def _package_names(path: Path) -> list[str]:
    with tarfile.open(path, "r:gz") as tar:
        return [m.name.split("/", 1)[1] for m in tar.getmembers()]


def test_package_packs_only_the_outputs_lrc_writes_and_names_the_rest(small_demo_run, tmp_path):
    lock, run = _copy(small_demo_run, tmp_path)
    (run / "credentials.json").write_text('{"password": "hunter2"}', encoding="utf-8")
    (run / "notes.md").write_text("operator notes", encoding="utf-8")
    (run / "scratch").mkdir()
    res = run_lrc("package", run, "--out", tmp_path / "p.tar.gz", "--plan", lock)
    assert res.returncode == 0, res.stderr
    names = _package_names(tmp_path / "p.tar.gz")
    assert not any("credentials" in n or "notes.md" in n or "scratch" in n for n in names), names
    assert {"run/summary.json", "run/cells.parquet", "run/rate-card.md", "run/journal.jsonl"} <= set(names)
    assert "not packed" in res.stdout and "credentials.json" in res.stdout and "notes.md" in res.stdout


@pytest.mark.parametrize("kind", ["hard-link", "fifo", "symlink"])
def test_package_refuses_a_member_that_is_not_a_plain_regular_file(small_demo_run, tmp_path, kind):
    lock, run = _copy(small_demo_run, tmp_path)
    trace = sorted((run / "runs").rglob("trace.json"))[0]
    outside = tmp_path / "outside.txt"
    outside.write_text("a file outside the folder", encoding="utf-8")
    trace.unlink()
    if kind == "hard-link":
        os.link(outside, trace)
    elif kind == "fifo":
        os.mkfifo(trace)
    else:
        trace.symlink_to(outside)
    res = run_lrc("package", run, "--out", tmp_path / "p.tar.gz", "--plan", lock, timeout=60)
    assert res.returncode == 4, res.stderr
    word = {"hard-link": "hard link", "fifo": "not a regular file", "symlink": "symbolic link"}[kind]
    assert word in res.stderr and "Traceback" not in res.stderr
    assert not (tmp_path / "p.tar.gz").exists()


@pytest.mark.parametrize("where", ["trace", "summary", "journal"])
def test_package_refuses_a_folder_holding_a_live_key_in_clear(small_demo_run, tmp_path, where):
    lock, run = _copy(small_demo_run, tmp_path)
    key = "sk-live-" + "Q7w9Z2" * 6
    target = {"trace": sorted((run / "runs").rglob("trace.json"))[0], "summary": run / "summary.json",
              "journal": run / "journal.jsonl"}[where]
    data = target.read_bytes()
    if where == "journal":  # an answer echoing the key, in a run record's text
        lines = data.splitlines(keepends=True)
        i = next(i for i, line in enumerate(lines) if b'"type":"run"' in line)
        rec = json.loads(lines[i])
        rec["answer_text"] = f"my key is {key}"
        lines[i] = (json.dumps(rec, sort_keys=True, separators=(",", ":")) + "\n").encode("utf-8")
        target.write_bytes(b"".join(lines))
    else:
        target.write_bytes(data.replace(b'"', f'"{key} '.encode(), 1))
    res = run_lrc("package", run, "--out", tmp_path / "p.tar.gz", "--plan", lock, env=lrc_env(OPENAI_API_KEY=key))
    assert res.returncode == 4, res.stderr
    shown = target.relative_to(run).as_posix()
    assert f"run/{shown} (OPENAI_API_KEY)" in res.stderr and "Nothing was packed" in res.stderr
    assert key not in res.stderr and key not in res.stdout
    assert not (tmp_path / "p.tar.gz").exists()
    # the same folder with the key no longer set is packed (its text is then not known to be a secret)
    assert run_lrc("package", run, "--out", tmp_path / "q.tar.gz", "--plan", lock).returncode == 0


# -- merge: --out never inside an input, nor an input inside --out -----------------------------

def test_merge_refuses_an_out_folder_nested_with_an_input(small_demo_run, tmp_path):
    lock, run = _copy(small_demo_run, tmp_path)
    before = sorted(p.relative_to(run).as_posix() for p in run.rglob("*"))
    res = run_lrc("merge", lock, run, "--out", run / "runs" / "merged")
    assert res.returncode == 4 and "is inside" in res.stderr and "Traceback" not in res.stderr, res.stderr
    assert sorted(p.relative_to(run).as_posix() for p in run.rglob("*")) == before
    outer = tmp_path / "outer"
    inner = outer / "shard"
    shutil.copytree(run, inner)
    res = run_lrc("merge", lock, inner, "--out", outer)
    assert res.returncode == 4 and "is inside --out" in res.stderr, res.stderr
    assert sorted(p.name for p in outer.iterdir()) == ["shard"]


# -- categorizations the locked taxonomy does not hold -----------------------------------------

@pytest.mark.parametrize("change, named, by", [
    ({"primary": "made-up-category"}, "made-up-category", "lrc categorize"),
    ({"secondary": ["made-up-secondary"]}, "made-up-secondary", "lrc categorize"),
    ({"taxonomy": "another.taxonomy.v1"}, "another.taxonomy.v1", "lrc categorize"),
    ({"run": "no|such|run|here|r1"}, "no graded run of that key", "lrc categorize"),
    # the journal's own check of the record's shape (it once reached `lrc categorize` unchecked: exit 70)
    ({"seq": "1"}, "`seq` is not a whole number from 1", "damaged journal line"),
])
def test_report_refuses_a_categorization_no_reviewer_could_have_made(small_demo_run, tmp_path, change, named, by):
    from lrc.runtime.failures import taxonomy_ids

    lock, run = _copy(small_demo_run, tmp_path)
    plan = json.loads(lock.read_text(encoding="utf-8"))["plan"]
    ids = taxonomy_ids(plan)
    primary = next(i for i, tier in sorted(ids.items()) if tier == "primary")
    key = next(json.loads(line)["run"] for line in (run / "journal.jsonl").read_text(encoding="utf-8").splitlines()
               if '"type":"run"' in line)
    rec = {"type": "categorization", "run": key, "seq": 1, "taxonomy": plan["taxonomy"]["ref"], "primary": primary,
           "secondary": [], "note": "reviewed", **change}
    with open(run / "journal.jsonl", "a", encoding="utf-8") as fh:
        fh.write(json.dumps(rec, sort_keys=True, separators=(",", ":")) + "\n")
    cards = {p.name: p.read_bytes() for p in run.glob("*.md")}
    res = run_lrc("report", lock, "--out", run)
    assert res.returncode == 4, res.stderr
    assert named in res.stderr and by in res.stderr and "Traceback" not in res.stderr
    assert {p.name: p.read_bytes() for p in run.glob("*.md")} == cards


def test_report_counts_a_categorization_lrc_categorize_made(small_demo_run, tmp_path):
    """The check refuses only what `lrc categorize` could not have written: its own record passes."""
    from lrc.runtime.failures import taxonomy_ids

    lock, run = _copy(small_demo_run, tmp_path)
    plan = json.loads(lock.read_text(encoding="utf-8"))["plan"]
    primary = next(i for i, tier in sorted(taxonomy_ids(plan).items()) if tier == "primary")
    key = next(json.loads(line)["run"] for line in (run / "journal.jsonl").read_text(encoding="utf-8").splitlines()
               if '"type":"run"' in line)
    res = run_lrc("categorize", run, "--run", key, "--primary", primary, "--note", "seen by a reviewer", "--plan", lock)
    assert res.returncode == 0, res.stderr
    res = run_lrc("report", lock, "--out", run)
    assert res.returncode == 0, res.stderr
    summary = json.loads((run / "summary.json").read_text(encoding="utf-8"))
    assert any(c["assigned"].get(primary) == 1 for c in summary["failure_categories"])


def test_lrc_categorize_records_pass_the_journal_check():
    """Unit: the record `lrc categorize` builds is one the report's check accepts, and a changed one is not."""
    from types import SimpleNamespace

    from lrc.runtime.review.categorize import recorded_problem

    plan = {"taxonomy": {"ref": "t.v1", "spec": {"primary": [{"id": "p"}], "secondary": [{"id": "s"}]}}}
    good = {"type": "categorization", "run": "k", "seq": 2, "taxonomy": "t.v1", "primary": "p", "secondary": ["s"], "note": "n"}
    runs = {"k": {"type": "run"}}
    assert recorded_problem(plan, SimpleNamespace(categorizations={"k": [good]}, runs=runs)) is None
    for bad in ({"primary": "s"}, {"secondary": ["p"]}, {"secondary": ["s", "s"]}, {"secondary": "s"}, {"seq": True},
                {"seq": 0}, {"note": 3}, {"reviewer": ["x"]}, {"primary": None}):
        assert recorded_problem(plan, SimpleNamespace(categorizations={"k": [{**good, **bad}]}, runs=runs)) is not None, bad
    assert recorded_problem({}, SimpleNamespace(categorizations={"k": [good]}, runs=runs)) is not None
    assert recorded_problem({}, SimpleNamespace(categorizations={}, runs=runs)) is None
    # a run the folder does not hold (a hand edit; `lrc categorize` names graded runs only): before, ignored
    said = recorded_problem(plan, SimpleNamespace(categorizations={"k2": [{**good, "run": "k2"}]}, runs=runs))
    assert said is not None and "no graded run of that key" in said


# -- writing: the temporary file is created anew ------------------------------------------------

@pytest.mark.parametrize("planted", ["fifo", "link", "stale-file"])
def test_the_temporary_file_of_a_write_is_created_anew_whatever_sits_at_its_name(tmp_path, planted):
    """`filebytes.write_replacing` (every output and item file): a FIFO planted at the temporary
    name would have made the write wait forever, a link would have written through it."""
    target = tmp_path / "trace.json"
    tmp = tmp_path / f".trace.json.{os.getpid()}.tmp"
    outside = tmp_path / "outside.txt"
    outside.write_text("untouched", encoding="utf-8")
    if planted == "fifo":
        os.mkfifo(tmp)
    elif planted == "link":
        tmp.symlink_to(outside)
    else:
        tmp.write_text("left by a killed process of the same pid", encoding="utf-8")
    done: list[BaseException | None] = []

    def write() -> None:
        try:
            filebytes.write_replacing(target, b'{"ok": true}\n')
            done.append(None)
        except BaseException as exc:  # noqa: BLE001 - what it raised is the result
            done.append(exc)

    worker = threading.Thread(target=write, daemon=True)
    worker.start()
    worker.join(10)
    if worker.is_alive():
        os.close(os.open(tmp, os.O_RDONLY | os.O_NONBLOCK))  # let the waiting open end
        pytest.fail("the write waited on a FIFO at its temporary name")
    assert done == [None]
    assert target.read_bytes() == b'{"ok": true}\n' and not tmp.exists() and not tmp.is_symlink()
    assert outside.read_text(encoding="utf-8") == "untouched"


def test_the_report_writer_replaces_an_output_and_makes_its_folder(tmp_path):
    from lrc.runtime.report.outputs import _put

    _put(tmp_path / "a" / "b" / "summary.json", b"one")
    _put(tmp_path / "a" / "b" / "summary.json", b"two")
    assert (tmp_path / "a" / "b" / "summary.json").read_bytes() == b"two"
    assert sorted(p.name for p in (tmp_path / "a" / "b").iterdir()) == ["summary.json"]


# -- judge records the plan's judge step could not have written ------------------------------

@pytest.mark.parametrize("change, named", [
    ({"model": "nope/model"}, "nope/model"),  # was priced at a price the plan does not freeze: exit 70
    ({"model": 5}, "`model` is not text"),
    ({"role": "third"}, "third"),
    ({"material": "x"}, "`material`"),  # was an AttributeError: exit 70
])
def test_report_refuses_a_judge_record_the_plans_judge_step_could_not_have_written(small_demo_run, tmp_path, change, named):
    lock, run = _copy(small_demo_run, tmp_path)
    lines = (run / "journal.jsonl").read_text(encoding="utf-8").splitlines(keepends=True)
    i = next(i for i, line in enumerate(lines) if '"type":"judge"' in line)
    rec = {**json.loads(lines[i]), **change}
    lines[i] = json.dumps(rec, sort_keys=True, separators=(",", ":")) + "\n"
    (run / "journal.jsonl").write_text("".join(lines), encoding="utf-8")
    res = run_lrc("report", lock, "--out", run)
    assert res.returncode == 4, (res.returncode, res.stderr)
    assert named in res.stderr and "Traceback" not in res.stderr and "internal error" not in res.stderr


# -- files the user names: never renamed over a device, a FIFO or a folder --------------------

def _special(path: Path, kind: str) -> None:
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "folder":
        path.mkdir()
    else:  # a character device like /dev/null (making one needs root)
        if os.geteuid() != 0:
            pytest.skip("making a device node needs root")
        os.mknod(path, 0o666 | stat.S_IFCHR, os.makedev(1, 3))


@pytest.mark.parametrize("kind", ["fifo", "folder", "device"])
def test_put_output_refuses_a_device_fifo_or_folder_at_the_name_and_replaces_a_link(tmp_path, kind):
    target = tmp_path / "out.bin"
    _special(target, kind)
    before = os.lstat(target)
    with pytest.raises(filebytes.NotRegular, match="not a regular file"):
        filebytes.put_output(target, b"data")
    after = os.lstat(target)
    assert stat.S_IFMT(after.st_mode) == stat.S_IFMT(before.st_mode) and after.st_ino == before.st_ino
    link, victim = tmp_path / "link.bin", tmp_path / "victim.txt"
    victim.write_text("untouched", encoding="utf-8")
    link.symlink_to(victim)
    filebytes.put_output(link, b"data")
    assert not link.is_symlink() and link.read_bytes() == b"data" and victim.read_text(encoding="utf-8") == "untouched"


@pytest.mark.parametrize("command", ["package", "review-export", "preregister", "html-out"])
def test_commands_that_write_a_named_file_refuse_a_device_instead_of_replacing_it(small_demo_run, tmp_path, command):
    """Run as root, `lrc package --out /dev/null` renamed a regular file over /dev/null."""
    lock, run = _copy(small_demo_run, tmp_path)
    target = tmp_path / "target"
    _special(target, "device" if os.geteuid() == 0 else "fifo")
    args = {"package": ("package", run, "--out", target, "--plan", lock),
            "review-export": ("review", "export", run, "--out", target, "--plan", lock),
            "preregister": ("preregister", REPO / "generated" / "demo" / "plan.lock", "--out", target),  # a lock with tasks
            "html-out": ("report", lock, "--html", "--html-out", target)}[command]
    res = run_lrc(*args, timeout=120)
    assert res.returncode in (4, 6), (res.returncode, res.stderr)
    assert "not a regular file" in res.stderr and "Traceback" not in res.stderr
    assert not stat.S_ISREG(os.lstat(target).st_mode)


# -- found by a probe of odd command-line paths (2026-12-07) -----------------------------------

def test_an_output_option_naming_the_lock_or_a_file_of_the_run_folder_is_refused(small_demo_run, tmp_path):
    lock, run = _copy(small_demo_run, tmp_path)
    plan = tmp_path / "plan.lock"
    shutil.copyfile(lock, plan)
    before = plan.read_bytes(), (run / "journal.jsonl").read_bytes()
    for args in (("report", plan, "--html", "--html-out", plan),
                 ("review", "export", run, "--out", plan, "--plan", plan),
                 ("review", "export", run, "--out", run / "journal.jsonl", "--plan", plan),
                 ("package", run, "--out", plan, "--plan", plan)):
        res = run_lrc(*args, timeout=120)
        assert res.returncode in (4, 6), (args, res.returncode, res.stderr)
        assert ("which this command reads" in res.stderr or "inside" in res.stderr) and "Traceback" not in res.stderr, res.stderr
    assert (plan.read_bytes(), (run / "journal.jsonl").read_bytes()) == before


@pytest.mark.parametrize("where", ["generated", "outputs-without-journal", "erratum-without-journal"])
def test_execute_refuses_an_out_folder_whose_files_it_would_destroy(tmp_path, where):
    project = tmp_path / "project"
    for name in ("specs", "schemas", "generated"):
        shutil.copytree(REPO / name, project / name)
    lock = project / "generated" / "demo" / "plan.lock"
    if where == "generated":
        out = project / "generated" / "demo"
    else:
        out = tmp_path / "notes"
        out.mkdir()
        # any top-level file lrc writes as an output (outfolder.OUTPUT_FILES, the list lrc package packs)
        name = "report.html" if where == "outputs-without-journal" else "erratum.json"
        (out / name).write_text("the operator's own file", encoding="utf-8")
    before = sorted(p.name for p in out.iterdir())
    res = run_lrc("execute", lock, "--out", out, "--models", "lrc/oracle", "--workloads", "triage.ap-inbox", "--limit", "1",
                  "--no-progress")
    if where == "erratum-without-journal":  # a regraded folder's mark: refused before the place is looked at
        assert res.returncode == 4 and "never executed into" in res.stderr, res.stderr
    else:
        assert res.returncode == 6, res.stderr
        assert ("lrc compile" in res.stderr if where == "generated" else "would be overwritten" in res.stderr), res.stderr
    assert sorted(p.name for p in out.iterdir()) == before


@pytest.mark.parametrize("kind", ["fifo", "device"])
def test_a_lock_a_seed_file_or_a_package_that_is_not_a_regular_file_is_refused_without_a_wait(tmp_path, kind):
    odd = tmp_path / "odd"
    if kind == "fifo":
        os.mkfifo(odd)
    else:
        odd.symlink_to("/dev/zero")
    held = REPO / "generated" / "2026-12" / "plan.lock"
    for args in (("estimate", odd), ("report", odd, "--html"), ("verify", odd),
                 ("estimate", held, "--seed-file", odd)):
        res = run_lrc(*args, timeout=60)
        assert res.returncode in (1, 4), (args, res.returncode, res.stderr)
        assert "not a regular file" in res.stderr and "Traceback" not in res.stderr and "internal error" not in res.stderr, res.stderr


def test_a_seed_file_that_is_not_utf8_is_refused(tmp_path):
    seed = tmp_path / "bad.seed"
    seed.write_bytes(b"\xff\xfe")
    res = run_lrc("estimate", REPO / "generated" / "2026-12" / "plan.lock", "--seed-file", seed)
    assert res.returncode == 4 and "not UTF-8" in res.stderr and "internal error" not in res.stderr, res.stderr


def test_arguments_that_are_not_utf8_or_no_file_can_have_are_usage_errors(small_demo_run, tmp_path):
    import subprocess
    import sys

    lock, run = _copy(small_demo_run, tmp_path)
    journal = (run / "journal.jsonl").read_bytes()
    key = json.loads(next(line for line in journal.splitlines() if b'"type":"run"' in line))["run"]
    # bytes that are not UTF-8, as a shell passes them (subprocess: the zygote takes text only)
    res = subprocess.run([sys.executable, "-m", "lrc.compiler.cli", "categorize", str(run), "--run", key, "--primary", "x",
                          "--note", b"bad \xff note", "--plan", str(lock)], capture_output=True, text=True, timeout=120,
                         env=lrc_env())
    assert res.returncode == 2 and "not UTF-8" in res.stderr, res.stderr
    assert (run / "journal.jsonl").read_bytes() == journal
    long_name = tmp_path / ("x" * 300)
    for args in (("estimate", long_name), ("report", lock, "--out", long_name)):
        res = run_lrc(*args, timeout=120)
        assert res.returncode in (2, 4), (args, res.returncode, res.stderr)
        assert "internal error" not in res.stderr and "Traceback" not in res.stderr, res.stderr


@pytest.mark.parametrize("stamp", ["fifo", "deep"])
def test_a_planted_outputs_stamp_is_no_stamp(small_demo_run, tmp_path, stamp):
    lock, run = _copy(small_demo_run, tmp_path)
    if stamp == "fifo":
        os.mkfifo(run / ".lrc-outputs.json")
    else:
        (run / ".lrc-outputs.json").write_text("[" * 100_000, encoding="utf-8")
    res = run_lrc("report", lock, "--out", run, timeout=120)
    assert res.returncode in (0, 6), res.stderr  # rebuilt (0); a FIFO where the stamp is rewritten: unusable, said so
    assert "internal error" not in res.stderr and "Traceback" not in res.stderr, res.stderr


def test_a_ledger_line_nested_a_million_deep_is_a_malformed_line(tmp_path):
    project = tmp_path / "project"
    for name in ("specs", "schemas", "generated"):
        shutil.copytree(REPO / name, project / name)
    with open(project / "generated" / "ledger.jsonl", "a", encoding="utf-8") as fh:
        fh.write("[" * 1_000_000 + "\n")
    res = run_lrc("compile", "--check", cwd=project, timeout=120)
    assert res.returncode == 1 and "LRC5006" in res.stdout + res.stderr and "internal error" not in res.stderr, res.stderr
