"""docs/specs-repository-ci.yml works in a repository that holds only specs/ and generated/.

A temporary git repository gets a copy of this repository's specs/ and generated/ (no
schemas/, no lrc source, no dev.py); the workflow's lrc steps run there through a real shell,
with the `lrc` installed in the running venv on PATH (the install step itself, from a git ref
with the hash-locked requirements, is run by .ci/wheel-check). A clean tree passes; each way
a pull request can break the gate fails with an annotation on the right file.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from helpers.workflow import load, run_steps
from support import REPO

WORKFLOW = REPO / "docs" / "specs-repository-ci.yml"
BIN = Path(sys.executable).parent
WORKLOAD = "specs/workloads/triage.ap-inbox/workload.yaml"


def _lrc_steps(step: dict) -> bool:
    return "lrc " in step["run"] and "pip install" not in step["run"]


@pytest.fixture
def specs_repo(tmp_path: Path) -> Path:
    root = tmp_path / "specs-repo"
    root.mkdir()
    for part in ("specs", "generated"):
        shutil.copytree(REPO / part, root / part)
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@example.invalid", "-c", "commit.gpgsign=false"]
    subprocess.run([*git, "init", "-q"], cwd=root, check=True)
    subprocess.run([*git, "add", "-A"], cwd=root, check=True)
    subprocess.run([*git, "commit", "-q", "-m", "specs"], cwd=root, check=True)
    return root


def _run(root: Path, tmp_path: Path):
    assert (BIN / "lrc").exists(), f"no lrc installed beside {sys.executable}"
    results = run_steps(WORKFLOW, root, tmp_path / "runner", path_prefix=[str(BIN)], select=_lrc_steps, timeout=300)
    assert [r.command for r in results] == ["lrc compile --check --format github"][: len(results)]
    assert results, "the workflow has no lrc step"
    return results[-1]


def test_the_workflow_installs_lrc_from_a_pinned_ref_with_hash_locked_requirements_and_never_calls_dev_py():
    doc = load(WORKFLOW)
    runs = "\n".join(s["run"] for job in doc["jobs"].values() for s in job["steps"] if "run" in s)
    assert "dev.py" not in runs and ".venv/" not in runs
    assert "--require-hashes" in runs and "requirements.lock" in runs and "--no-deps" in runs
    assert "LRC_REF" in runs and "LRC_REF" in doc["env"]
    assert any(s["run"].strip() == "lrc compile --check --format github" for job in doc["jobs"].values() for s in job["steps"] if "run" in s)


def test_a_clean_specs_only_repository_passes(specs_repo: Path, tmp_path: Path):
    assert not (specs_repo / "schemas").exists()
    res = _run(specs_repo, tmp_path)
    assert res.returncode == 0, res.stdout + res.stderr
    assert "::error" not in res.stdout and "::warning" not in res.stdout  # github format: silent when clean


def _unknown_field(root: Path) -> None:
    path = root / WORKLOAD
    path.write_text(path.read_text().replace("title: AP inbox triage", "titel: AP inbox triage"))


def _changed_without_bump(root: Path) -> None:
    path = root / WORKLOAD
    text = path.read_text()
    new = text.replace("title: AP inbox triage", "title: AP inbox triage, reworded")
    assert new != text
    path.write_text(new)


def _stale_lock(root: Path) -> None:
    lock = root / "generated/demo/plan.lock"
    lock.write_bytes(lock.read_bytes().replace(b'"n_per_cell": 15', b'"n_per_cell": 14'))


def _missing_lock(root: Path) -> None:
    (root / "generated/demo/plan.lock").unlink()


@pytest.mark.parametrize("breakage, code, file", [
    (_unknown_field, "LRC2003", WORKLOAD),
    (_changed_without_bump, "LRC5001", WORKLOAD),
    (_stale_lock, "LRC7001", "generated/demo/plan.lock"),
    (_missing_lock, "LRC7002", None),
], ids=["unknown-field", "changed-without-bump", "stale-lock", "missing-lock"])
def test_a_broken_pull_request_fails_with_an_annotation(specs_repo: Path, tmp_path: Path, breakage, code: str, file: str | None):
    breakage(specs_repo)
    res = _run(specs_repo, tmp_path)
    assert res.returncode == 1, res.stdout + res.stderr
    assert "Traceback" not in res.stdout + res.stderr
    annotations = [line for line in res.stdout.splitlines() if line.startswith("::error")]
    assert any(f"title={code}" in a for a in annotations), res.stdout + res.stderr
    if file is not None:
        assert any(a.startswith(f"::error file={file},") and f"title={code}" in a for a in annotations), res.stdout


def test_a_vendored_schemas_folder_is_used_instead_of_lrcs_own(specs_repo: Path, tmp_path: Path):
    shutil.copytree(REPO / "schemas", specs_repo / "schemas")
    assert _run(specs_repo, tmp_path).returncode == 0
    (specs_repo / "schemas/workload.schema.json").write_text("[not an object]")
    res = _run(specs_repo, tmp_path)
    assert res.returncode == 1 and "title=LRC3005" in res.stdout, res.stdout + res.stderr


def test_lrc_finds_the_specs_only_project_from_a_subfolder(specs_repo: Path):
    res = subprocess.run([str(BIN / "lrc"), "compile", "--check"], cwd=specs_repo / "specs" / "workloads",
                         capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, res.stdout + res.stderr


def test_a_folder_with_an_unrelated_specs_folder_is_not_a_project(tmp_path: Path):
    (tmp_path / "specs" / "notes").mkdir(parents=True)
    res = subprocess.run([str(BIN / "lrc"), "compile", "--check"], cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert res.returncode == 2 and "no lrc project" in res.stderr, res.stdout + res.stderr
