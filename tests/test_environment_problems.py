"""Environment problems are clear messages with their exit code, never "internal error" (70).

`--out` a file, `--out` read-only, `lrc report` on a read-only folder, another plan's items
without a journal, the disk filling up during a journal write: each says what is wrong, exits
with its documented code (6: the output folder is unusable; 4: refused as another plan's),
loses nothing journaled, and the same command resumes once the cause is gone. The journal is
created atomically, so a kill can never leave an empty one behind (and an empty one an older
lrc left is started afresh). Every `lrc` here is a subprocess.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from helpers import zygote
from helpers.project import REPO, build_project, journal_records, lrc_env, read_cells, run_lrc, tree, with_profile
from helpers.stub_server import StubServer
from lrc.runtime import journal as journal_module
from lrc.runtime.journal import Journal

KEY = "sk-lrc-test-environment-5e2a7c90d4b1"
N = 3


@pytest.fixture(scope="module")
def lock(stub: StubServer, tmp_path_factory) -> Path:
    return build_project(tmp_path_factory.mktemp("env-project"), stub.api_base, n_per_cell=N)


@pytest.fixture(scope="module")
def clean(stub: StubServer, lock: Path, tmp_path_factory) -> Path:
    stub.reset()
    out = tmp_path_factory.mktemp("clean") / "out"
    res = execute(lock, out)
    assert res.returncode == 0, res.stderr
    return out


def execute(lock: Path, out: Path) -> subprocess.CompletedProcess:
    return run_lrc("execute", lock, "--out", out, "--no-progress", env=lrc_env(KEY), timeout=900)


def copy_run(src: Path, dest: Path) -> None:
    """A writable copy of a finished run folder (without the lock file of the execute that wrote it)."""
    shutil.copytree(src, dest, dirs_exist_ok=True)
    (dest / ".lrc-execute.lock").unlink(missing_ok=True)


def clear(res: subprocess.CompletedProcess, code: int, *words: str) -> None:
    assert res.returncode == code, (res.returncode, res.stderr[-2000:])
    assert "Traceback" not in res.stderr and "internal error" not in res.stderr, res.stderr
    assert "never awaited" not in res.stderr, res.stderr
    for w in words:
        assert w in res.stderr, (w, res.stderr)


def outputs(out: Path) -> dict[str, bytes]:
    return {k: v for k, v in tree(out).items() if not k.startswith(".") and k != "journal.jsonl"}


# -- --out unusable ------------------------------------------------------------------------

@pytest.mark.parametrize("shape", ["file", "file-in-path", pytest.param("empty-file", marks=pytest.mark.slow)])
def test_out_that_is_a_file_is_refused_with_exit_6(lock, tmp_path, stub, shape):
    target = tmp_path / "out"
    if shape == "file":
        target.write_text("my notes\n")
        out = target
    elif shape == "empty-file":
        target.write_text("")
        out = target
    else:
        target.write_text("my notes\n")
        out = target / "sub"
    stub.reset()
    res = execute(lock, out)
    clear(res, 6, str(out))
    assert stub.count == 0
    if shape != "empty-file":
        assert target.read_text() == "my notes\n"


def _can_make_read_only() -> str | None:
    if os.geteuid() != 0:
        return "chmod"
    probe = Path("/tmp") / f"lrc-ro-probe-{os.getpid()}"
    probe.mkdir(exist_ok=True)
    ok = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", str(probe)], capture_output=True).returncode == 0
    if ok:
        subprocess.run(["umount", str(probe)], capture_output=True)
    probe.rmdir()
    return "mount" if ok else None


READ_ONLY = _can_make_read_only()


class ReadOnly:
    """A folder that can be switched read-only and back (chmod, or a tmpfs remounted ro as root)."""

    def __init__(self, path: Path):
        self.path = path
        path.mkdir(parents=True, exist_ok=True)
        if READ_ONLY == "mount":
            subprocess.run(["mount", "-t", "tmpfs", "-o", "size=200m", "tmpfs", str(path)], check=True)

    def set(self, read_only: bool) -> None:
        if READ_ONLY == "mount":
            subprocess.run(["mount", "-o", f"remount,{'ro' if read_only else 'rw'}", str(self.path)], check=True)
        else:
            for p in [self.path, *self.path.rglob("*")]:
                if p.is_dir():
                    p.chmod(0o555 if read_only else 0o755)

    def close(self) -> None:
        if READ_ONLY == "mount":
            subprocess.run(["umount", "-l", str(self.path)], capture_output=True)


@pytest.fixture
def ro_folder(tmp_path):
    if READ_ONLY is None:
        pytest.skip("cannot make a folder read-only here (root without mount)")
    folder = ReadOnly(tmp_path / "ro")
    try:
        yield folder
    finally:
        folder.close()


@pytest.mark.parametrize("where", ["out-itself", pytest.param("out-inside", marks=pytest.mark.slow)])
def test_read_only_out_is_exit_6_and_resumes_once_writable(lock, ro_folder, stub, clean, where):
    out = ro_folder.path if where == "out-itself" else ro_folder.path / "run"
    ro_folder.set(True)
    stub.reset()
    res = execute(lock, out)
    clear(res, 6, "Read-only file system" if READ_ONLY == "mount" else "ermission")
    assert stub.count == 0
    ro_folder.set(False)
    again = execute(lock, out)
    assert again.returncode == 0, again.stderr
    assert read_cells(out) == read_cells(clean)


@pytest.mark.parametrize("outputs", ["stale", "up-to-date"])
def test_report_reads_a_read_only_folder_without_opening_the_journal_for_writing(lock, ro_folder, stub, clean, outputs):
    out = ro_folder.path / "run"
    copy_run(clean, out)  # a finished run of this lock (the report's subject, not under test)
    journal_before = (out / "journal.jsonl").read_bytes()
    if outputs == "stale":  # no record that the outputs match the journal: they must be rebuilt
        (out / ".lrc-outputs.json").unlink()
    else:  # the stamp names its folder and its journal's inode: a copy is reported once to be up to date
        first = run_lrc("report", lock, "--out", out, env=lrc_env(KEY), timeout=900)
        assert first.returncode == 0, first.stderr
    ro_folder.set(True)
    res = run_lrc("report", lock, "--out", out, env=lrc_env(KEY), timeout=900)
    if outputs == "stale":
        # The journal is read (the rate card is rebuilt); writing the outputs is what fails, clearly.
        clear(res, 6, "cannot write the outputs", "journal is intact")
    else:
        # Written from this very journal: nothing to rebuild, nothing to write; the card is printed.
        assert res.returncode == 0, res.stderr
        assert res.stdout.startswith((out / "rate-card.md").read_text(encoding="utf-8"))
    ro_folder.set(False)
    assert (out / "journal.jsonl").read_bytes() == journal_before
    again = run_lrc("report", lock, "--out", out, env=lrc_env(KEY), timeout=900)
    assert again.returncode == 0, again.stderr
    assert read_cells(out) == read_cells(clean)


# -- another plan's items ---------------------------------------------------------------------

@pytest.mark.parametrize("damage", ["item-json", "answer-key"])
def test_items_of_another_plan_without_a_journal_are_refused_with_exit_4(lock, clean, tmp_path, stub, damage):
    out = tmp_path / "out"
    copy_run(clean, out)  # a finished run of this lock, whose journal and outputs are then lost
    (out / "journal.jsonl").unlink()
    res = execute(lock, out)  # its outputs without their journal: never overwritten (execute.out_place_problem)
    clear(res, 6, "would be overwritten")
    for name in ("summary.json", "cells.csv", "cells.parquet", "rate-card.md", "report.html", "forecast-vs-actual.md",
                 "reliability-report.md"):
        (out / name).unlink(missing_ok=True)
    name = "item.json" if damage == "item-json" else "answer_key.json"
    victim = sorted((out / "items").rglob(name))[0]
    victim.write_bytes(victim.read_bytes().replace(b"AP-B", b"XX-B", 1) + b" ")
    stub.reset()
    res = execute(lock, out)
    clear(res, 4, "another plan's items", str(victim))
    assert stub.count == 0


# -- disk full ----------------------------------------------------------------------------------

_FAIL_WRITES = """
import errno, os, sys, types
from lrc.runtime import journal
budget = {{"left": {after}}}
fake = types.SimpleNamespace(**{{k: getattr(os, k) for k in dir(os) if not k.startswith("__")}})
def write(fd, data):
    if budget["left"] <= 0:
        half = bytes(data)[: max(1, len(data) // 2)]
        os.write(fd, half)  # a torn write first, as a filling disk does
        raise OSError(errno.{errno_name}, os.strerror(errno.{errno_name}))
    budget["left"] -= 1
    return os.write(fd, data)
fake.write = write
journal.os = fake
"""


#: By default: the very first record and one mid-run with another errno; the other three are slow.
@pytest.mark.parametrize("after, errno_name", [(0, "ENOSPC"), pytest.param(3, "ENOSPC", marks=pytest.mark.slow),
                                               pytest.param(11, "ENOSPC", marks=pytest.mark.slow),
                                               pytest.param(5, "EDQUOT", marks=pytest.mark.slow), (7, "EIO")])
def test_disk_full_during_a_journal_write_is_exit_6_loses_nothing_and_resumes(lock, clean, tmp_path, stub, after, errno_name):
    out = tmp_path / "out"
    stub.reset()
    script = _FAIL_WRITES.format(after=after, errno_name=errno_name)
    res = zygote.run(with_profile(["execute", lock, "--out", out, "--no-progress"]), lrc_env(KEY), REPO, 900, preamble=script)
    clear(res, 6, "run the same command again")
    assert os.strerror(getattr(__import__("errno"), errno_name)) in res.stderr
    # Nothing torn, nothing lost: every line is whole, and exactly `after` records follow the header.
    lines = (out / "journal.jsonl").read_bytes().split(b"\n")
    assert lines[-1] == b"" and all(json.loads(line) for line in lines[:-1])
    assert len(lines) - 2 == after
    journaled_first = stub_calls(out)
    stub.settle()
    stub.reset()
    again = execute(lock, out)
    assert again.returncode == 0, again.stderr
    assert read_cells(out) == read_cells(clean)
    # The calls journaled before the failure were not paid again: the resume asked only for the rest.
    assert stub.count == stub_calls(out) - journaled_first


def stub_calls(out: Path) -> int:
    return sum(1 for r in journal_records(out) if r["type"] == "call" and "|openai/stub-model|" in r["run"])


# -- the journal's creation is atomic ---------------------------------------------------------

def test_an_empty_journal_left_by_a_kill_is_started_afresh(lock, clean, tmp_path, stub):
    out = tmp_path / "out"
    out.mkdir()
    (out / "journal.jsonl").write_bytes(b"")
    stub.reset()
    res = execute(lock, out)
    assert res.returncode == 0, res.stderr
    assert read_cells(out) == read_cells(clean)


@pytest.mark.parametrize("fail_at", ["write", "fsync", "replace"])
def test_a_kill_while_creating_the_journal_leaves_no_journal_at_all(tmp_path, monkeypatch, fail_at):
    path = tmp_path / "journal.jsonl"

    class Killed(BaseException):
        pass

    def die(*args, **kwargs):
        raise Killed()

    if fail_at == "write":
        monkeypatch.setattr(journal_module, "_encode", die)
    else:
        monkeypatch.setattr(journal_module.os, fail_at, die)
    with pytest.raises(Killed):
        Journal(path, "sha256:x", "e")
    monkeypatch.undo()
    assert not path.exists()
    assert list(tmp_path.iterdir()) == []
    journal = Journal(path, "sha256:x", "e")
    journal.close()
    assert json.loads(path.read_text().splitlines()[0])["type"] == "header"
