"""An output folder is written only where it is a folder of its own (runtime/outfolder.py).

Found by a probe of hostile run folders (2026-12-07): run folders travel (a shard made elsewhere
is merged, a colleague's folder is reported again), and what their maker put in them was
followed: `.lrc-execute.lock` a link to a file elsewhere was truncated to 0 bytes, a FIFO there
made the command wait forever, a linked `runs/<workload>` or `items/` folder received the
outputs, and a planted `item.json.tmp` link made the item be written wherever it pointed.
"""

from __future__ import annotations

import json
import os
import shutil
import threading
from pathlib import Path

import pytest

from helpers.project import run_lrc
from helpers.shared import small_demo_lock
from lrc.runtime import items as item_gen
from lrc.runtime.execute import Unusable, _OutLock


def test_a_linked_lock_file_is_refused_and_its_target_left_whole(tmp_path):
    victim = tmp_path / "victim.txt"
    victim.write_text("precious\n")
    out = tmp_path / "out"
    out.mkdir()
    (out / ".lrc-execute.lock").symlink_to(victim)
    with pytest.raises(Unusable, match="symbolic link"):
        _OutLock(out)
    assert victim.read_text() == "precious\n"


def test_a_fifo_in_the_locks_place_is_refused_at_once(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    os.mkfifo(out / ".lrc-execute.lock")
    outcome: list[BaseException | None] = []

    def attempt() -> None:
        try:
            _OutLock(out)
            outcome.append(None)
        except BaseException as exc:  # noqa: BLE001 - recorded for the assertion
            outcome.append(exc)

    worker = threading.Thread(target=attempt, daemon=True)
    worker.start()
    worker.join(10)
    assert not worker.is_alive(), "opening the lock waited on a FIFO"
    assert isinstance(outcome[0], Unusable) and "not a regular file" in str(outcome[0])


def test_a_lock_file_already_there_is_used_never_truncated(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    (out / ".lrc-execute.lock").write_text("left by an earlier lrc\n")
    with _OutLock(out):
        pass
    assert (out / ".lrc-execute.lock").read_text() == "left by an earlier lrc\n"


@pytest.mark.parametrize("where", ["runs/w", "items", "deep/a/b/c"])
def test_a_folder_holding_a_link_anywhere_is_refused_naming_it(tmp_path, where):
    out = tmp_path / "out"
    (out / where).parent.mkdir(parents=True)
    (tmp_path / "elsewhere").mkdir()
    (out / where).symlink_to(tmp_path / "elsewhere", target_is_directory=True)
    with pytest.raises(Unusable, match=f"symbolic link \\({where}\\)"):
        _OutLock(out)
    from lrc.runtime import outfolder

    assert outfolder.first_link(out) == where
    assert outfolder.first_link(tmp_path / "elsewhere") is None


def test_an_items_temporary_file_is_never_written_through_a_link(tmp_path):
    victim = tmp_path / "victim.txt"
    victim.write_text("precious\n")
    folder = tmp_path / "items" / "w" / "i1"
    folder.mkdir(parents=True)
    for name in ("item.json.tmp", f".item.json.{os.getpid()}.tmp"):  # the old fixed name, and this process's
        (folder / name).symlink_to(victim)
    item_gen._put(folder / "item.json", b'{"item_id": "i1"}\n')
    assert victim.read_text() == "precious\n"
    assert (folder / "item.json").read_bytes() == b'{"item_id": "i1"}\n' and not (folder / "item.json").is_symlink()


def test_report_of_a_folder_holding_a_linked_run_folder_writes_nothing_through_it(tmp_path_factory, tmp_path):
    lock = small_demo_lock(tmp_path_factory)
    out = tmp_path / "out"
    triage = next(w for w in json.loads(lock.read_bytes())["plan"]["workloads"] if w.startswith("triage."))
    res = run_lrc("execute", lock, "--out", out, "--no-progress", "--workloads", triage, timeout=600)
    assert res.returncode in (0, 3), res.stderr
    outside = tmp_path / "outside"
    workload = next((out / "runs").iterdir())
    shutil.move(workload, outside)
    workload.symlink_to(outside, target_is_directory=True)
    for f in outside.rglob("*.json"):
        f.unlink()  # what a report would write again
    report = run_lrc("report", lock, "--out", out, timeout=600)
    assert report.returncode == 6, report.stdout + report.stderr
    assert "symbolic link" in report.stderr and "Traceback" not in report.stderr
    assert not list(outside.rglob("*.json")), "the report wrote through the link"
