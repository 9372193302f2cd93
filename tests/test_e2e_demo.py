"""End to end on the committed demo lock: `lrc execute` and `lrc report` as real subprocesses.

The demo edition runs the embedded reference models (no keys, no network): the oracle must
pass every item, the null model none, the baseline some. Beyond the numbers these tests
check the runtime's promises: a trace folder per run, byte-identical items and outputs
across executes, reports rebuilt from the journal alone, an idempotent rerun, refusal of a
tampered or foreign lock and of another plan's journal, and recovery from a torn journal line.
Nothing is written into the repository: every output folder (and every altered lock) is in tmp.
The demo lock is executed once per test session (conftest.py `demo_run`, shared by every
worker and by the workload modules' end-to-end tests); the run-folder properties (identical
bytes, resume, report, torn and foreign journal) run by default on the demo edition at
n_per_cell 2 compiled from scratch in tmp, and on the full demo run with `--slow`.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from helpers.project import REPO, TRIAGE, journal_records, read_cells, run_lrc, tree

LOCK = REPO / "generated" / "demo" / "plan.lock"
WORKLOAD = TRIAGE
N = 15
MODELS = ("lrc/oracle", "lrc/null", "lrc/baseline")
CANDIDATES = ("lrc/careful", "lrc/cheap")  # the demo's reference candidates (tests/test_demo_card.py)
SYSTEMS = ("single-shot", "agentic")
OUTPUTS = ("cells.csv", "cells.parquet", "rate-card.md", "summary.json")


def execute(lock: Path, out: Path):
    return run_lrc("execute", lock, "--out", out)


def outputs(out: Path) -> dict[str, bytes]:
    """Everything a run folder holds that must be reproducible (not the journal's history)."""
    files = {name: (out / name).read_bytes() for name in OUTPUTS}
    files.update({f"runs/{k}": v for k, v in tree(out / "runs").items()})
    files.update({f"items/{k}": v for k, v in tree(out / "items").items()})
    return files


@pytest.fixture(scope="module")
def lock_data() -> dict:
    return json.loads(LOCK.read_bytes())


@pytest.fixture
def first(demo_run):
    """The demo lock executed once per session (conftest.py `demo_run`, shared read-only)."""
    out, res = demo_run
    assert res.returncode == 0, res.stdout + res.stderr
    return out, res


@pytest.fixture
def plan_run(demo_run_of_each_size):
    """(lock, out, completed process) of a finished execute, shared read-only. The properties of
    a run folder (identical bytes, resume, report, torn journal) are checked by default on the
    demo edition at n_per_cell 2 -- every workload, system and model: 110 runs instead of 865 --
    and on the full demo run by `--slow` (conftest.py `demo_run_of_each_size`)."""
    return demo_run_of_each_size


@pytest.fixture
def copy_of_first(plan_run, tmp_path) -> Path:
    out = tmp_path / "copy"
    shutil.copytree(plan_run[1], out)
    (out / ".lrc-execute.lock").unlink(missing_ok=True)
    return out


@pytest.mark.slow  # the full demo's own numbers (n = 15 per cell); the small demo's run folder is checked below
def test_demo_scores_bound_the_workload_and_print_the_rate_card(first, lock_data):
    out, res = first
    assert "Traceback" not in res.stderr
    cells = read_cells(out)
    assert {(m, s) for m in MODELS for s in SYSTEMS} <= set(cells)
    for system in SYSTEMS:
        oracle, null, baseline = (cells[(m, system)] for m in MODELS)
        assert all(row["n"] == str(N) and row["infra_excluded"] == "0" for row in (oracle, null, baseline))
        assert oracle["passes"] == str(N), f"the infrastructure check failed in {system}"
        assert null["passes"] == "0"
        assert 0 < int(baseline["passes"]) < N
    spec = lock_data["plan"]["edition"]["spec"]
    card = (out / "rate-card.md").read_text(encoding="utf-8")
    assert res.stdout.startswith(card), "the rate card printed is not the one written"
    assert "Sort 1,000 AP emails" in res.stdout
    assert spec["footer"] in res.stdout and spec["disclaimer"] in res.stdout
    assert str(out / "rate-card.md") in res.stdout
    calibration = json.loads((out / "summary.json").read_text(encoding="utf-8"))["calibration"]
    assert calibration["ok"] is True and calibration["failures"] == [] and calibration["unjudged"] == []
    task_systems = [r for r in spec["systems"] if lock_data["plan"]["systems"][r]["spec"]["mode"] in ("direct", "orchestrated")]
    assert len(task_systems) == 2
    assert calibration["cells_checked"] == 2 * sum(
        len(wl["spec"]["systems"]) for wl in lock_data["plan"]["workloads"].values()) \
        + 2 * len(lock_data["plan"]["tasks"]) * len(task_systems)  # the task cells (seed 000), under direct and orchestrated
    assert "calibration" not in res.stderr


def test_every_run_has_a_trace_folder(plan_run):
    lock, out, _ = plan_run
    lock_data = json.loads(Path(lock).read_bytes())
    n = lock_data["plan"]["edition"]["spec"]["n_per_cell"]
    folders = sorted(p for p in (out / "runs" / WORKLOAD).glob("*/*/*") if p.is_dir())
    assert len(folders) == len(MODELS + CANDIDATES) * len(SYSTEMS) * n
    for folder in folders:
        assert sorted(p.name for p in folder.iterdir()) == ["evaluation.json", "manifest.json", "trace.json"]
    manifest = json.loads((folders[0] / "manifest.json").read_text())
    assert manifest["plan_digest"] == lock_data["root_digest"]
    evaluation = json.loads((folders[0] / "evaluation.json").read_text())
    assert evaluation["verdict"] in ("pass", "partial", "fail") and evaluation["validators"]
    trace = json.loads((folders[0] / "trace.json").read_text())
    assert trace["messages"] and trace["calls"]


def test_two_executes_into_different_folders_write_identical_bytes(plan_run, tmp_path):
    lock, out_a, _ = plan_run
    out_b = tmp_path / "b"
    res = execute(lock, out_b)
    assert res.returncode == 0, res.stderr
    a, b = outputs(out_a), outputs(out_b)
    assert sorted(a) == sorted(b)
    assert {k for k in a if k.startswith("items/")}, "no items were written"
    assert [k for k in a if a[k] != b[k]] == []


def test_report_rebuilds_the_outputs_from_the_journal_alone(plan_run, copy_of_first):
    lock, first_out, _ = plan_run
    out = copy_of_first
    want = outputs(first_out)
    for name in OUTPUTS:
        (out / name).unlink()
    shutil.rmtree(out / "runs")
    res = run_lrc("report", lock, "--out", out)
    assert res.returncode == 0, res.stderr
    assert outputs(out) == want
    assert res.stdout.startswith((out / "rate-card.md").read_text(encoding="utf-8"))


def test_a_second_execute_into_the_same_folder_repeats_nothing(plan_run, copy_of_first):
    lock, first_out, first_res = plan_run
    out = copy_of_first
    journal = (out / "journal.jsonl").read_bytes()
    res = execute(lock, out)
    assert res.returncode == 0, res.stderr
    runs = sum(1 for r in journal_records(out) if r["type"] == "run")
    n = json.loads(lock.read_bytes())["plan"]["edition"]["spec"]["n_per_cell"]
    assert runs >= len(MODELS + CANDIDATES) * len(SYSTEMS) * n
    assert f"resuming: {runs} of {runs} runs already journaled" in res.stderr
    assert (out / "journal.jsonl").read_bytes() == journal  # not one line added
    assert outputs(out) == outputs(first_out)
    assert res.stdout == first_res.stdout.replace(str(first_out), str(out))


# -- refusals -------------------------------------------------------------------------------

def _one_byte_changed_in_a_template(lock_bytes: bytes, lock_data: dict) -> bytes:
    template = lock_data["plan"]["workloads"][WORKLOAD]["prompts"]["single-shot"]["user"]["template"]
    encoded = json.dumps(template, ensure_ascii=False).encode("utf-8")
    # The template is in the lock twice (the resolved spec and the prompt table), both inside
    # the workload's section; change the first one only.
    assert lock_bytes.count(encoded) == 2
    at = lock_bytes.index(encoded) + encoded.index(b"Answer with one JSON")
    changed = lock_bytes[:at] + b"a" + lock_bytes[at + 1:]
    assert sum(x != y for x, y in zip(changed, lock_bytes)) == 1 and len(changed) == len(lock_bytes)
    return changed


def test_a_lock_with_one_byte_changed_in_a_template_is_refused(lock_data, tmp_path):
    bad = tmp_path / "plan.lock"
    bad.write_bytes(_one_byte_changed_in_a_template(LOCK.read_bytes(), lock_data))
    out = tmp_path / "out"
    res = execute(bad, out)
    assert res.returncode == 4, res.stdout + res.stderr
    assert f"workloads/{WORKLOAD}" in res.stderr
    assert "Traceback" not in res.stderr
    assert not (out / "journal.jsonl").exists()


@pytest.mark.parametrize("redigest", [False, True], ids=["version-edited", "version-edited-and-redigested"])
def test_a_lock_whose_lrc_version_was_edited_is_refused(lock_data, tmp_path, redigest):
    from lrc.runtime.lock import format as lockformat

    edited = json.loads(LOCK.read_bytes())
    assert edited["lrc_version"] == lockformat.LRC_VERSION
    edited["lrc_version"] = "0.0.9"
    if redigest:  # a forger who also fixed the root digest still meets the version check
        edited["root_digest"] = lockformat.root_digest(edited)
    bad = tmp_path / "plan.lock"
    bad.write_bytes(lockformat.dumps(edited))
    out = tmp_path / "out"
    res = execute(bad, out)
    assert res.returncode == 4, res.stdout + res.stderr
    assert ("lrc 0.0.9" if redigest else "root digest") in res.stderr
    assert "Traceback" not in res.stderr
    assert not (out / "journal.jsonl").exists()


def test_a_journal_of_another_plan_is_refused(plan_run, tmp_path):
    lock, first_out, _ = plan_run
    out = tmp_path / "out"
    out.mkdir()
    header = journal_records(first_out)[0]
    other = {**header, "plan": "sha256:" + "0" * 64}
    data = (json.dumps(other, sort_keys=True, separators=(",", ":")) + "\n").encode()
    (out / "journal.jsonl").write_bytes(data)
    res = execute(lock, out)
    assert res.returncode == 4, res.stdout + res.stderr
    assert "another plan" in res.stderr and other["plan"] in res.stderr
    assert (out / "journal.jsonl").read_bytes() == data
    assert not (out / "cells.csv").exists()


def test_a_torn_last_journal_line_is_cut_and_the_run_completes(plan_run, tmp_path):
    lock, out_a, _ = plan_run
    lines = (out_a / "journal.jsonl").read_bytes().splitlines(keepends=True)
    keep = len(lines) // 2
    torn = b"".join(lines[:keep]) + lines[keep][: len(lines[keep]) // 2]
    out = tmp_path / "out"
    out.mkdir()
    (out / "journal.jsonl").write_bytes(torn)
    res = execute(lock, out)
    assert res.returncode == 0, res.stderr
    assert "incomplete" in res.stderr and "cut off" in res.stderr
    journal = (out / "journal.jsonl").read_bytes()
    assert journal.startswith(b"".join(lines[:keep])) and journal.endswith(b"\n")
    assert all(json.loads(line) for line in journal.splitlines())
    assert outputs(out) == outputs(out_a)
