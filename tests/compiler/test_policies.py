"""Methodology policies that need more than one bad file: ledger history, pricing by token
class, the lock's rubric/task/taxonomy sections, and the real edition."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from lrc.compiler.pipeline import compile_project
from support import pinned

REPO = Path(__file__).resolve().parents[2]
BAD = Path(__file__).resolve().parent / "bad_specs"


def _copy(tmp: Path) -> Path:
    for name in ("specs", "schemas"):
        shutil.copytree(REPO / name, tmp / name)
    return tmp


def _codes(result) -> list[tuple[str, str]]:
    return sorted((d.code, d.summary) for d in result.diagnostics.items if d.severity == "error")


def test_a_task_that_was_ever_dev_never_enters_a_test_split(tmp_path: Path):
    root = _copy(tmp_path)
    case = BAD / "dev-task-in-test-split"
    shutil.copytree(case / "specs/tasks", root / "specs/tasks", dirs_exist_ok=True)
    assert not compile_project(root).diagnostics.has_errors  # v1, split dev, in no edition: recorded
    task = root / "specs/tasks/fa-rollforward/task.yaml"
    task.write_text(task.read_text().replace("split: dev", "split: test").replace("version: 1", "version: 2"))
    shutil.copy(case / "specs/editions/reliability.yaml", root / "specs/editions/reliability.yaml")
    edition = root / "specs/editions/reliability.yaml"
    edition.write_text(edition.read_text().replace("fa-rollforward.v1", "fa-rollforward.v2"))
    result = compile_project(root)
    assert _codes(result) == [("LRC6107", "fa-rollforward was a development task at version 1; no later version can be a test task")]


def test_every_token_class_a_provider_bills_needs_a_price(tmp_path: Path):
    root = _copy(tmp_path)
    path = root / "specs/editions/2026-12.yaml"
    path.write_text(path.read_text().replace('    cache_write: "3.75"\n', "", 1))
    result = compile_project(root)
    assert ("LRC6001", "'anthropic/claude-sonnet-4-5' has no price for token class(es) anthropic bills: cache_write") in _codes(result)


def test_the_judge_must_be_priced(tmp_path: Path):
    root = _copy(tmp_path)
    shutil.copytree(BAD / "spot-check-too-low/specs", root / "specs", dirs_exist_ok=True)
    path = root / "specs/editions/judged.yaml"
    text = path.read_text().replace('spot_check_rate: "0.10"', 'spot_check_rate: "0.25"').replace("model: lrc/judge", "model: openai/gpt-4.1")
    path.write_text(text)
    result = compile_project(root)
    assert _codes(result) == [("LRC6001", "judge model 'openai/gpt-4.1' has no frozen price")]


def test_a_judged_edition_locks_its_rubric_and_a_task_edition_its_tasks_and_taxonomy(tmp_path: Path):
    root = _copy(tmp_path)
    shutil.copytree(BAD / "spot-check-too-low/specs", root / "specs", dirs_exist_ok=True)
    judged = root / "specs/editions/judged.yaml"
    judged.write_text(judged.read_text().replace('spot_check_rate: "0.10"', 'spot_check_rate: "0.20"'))
    shutil.copytree(BAD / "unknown-failure-category/specs/tasks", root / "specs/tasks", dirs_exist_ok=True)
    task = root / "specs/tasks/fa-rollforward/task.yaml"
    task.write_text(task.read_text().replace("financial-incorectness", "financial-incorrectness"))
    shutil.copy(BAD / "dev-task-in-test-split/specs/editions/reliability.yaml", root / "specs/editions/reliability.yaml")
    rel = root / "specs/editions/reliability.yaml"
    rel.write_text(rel.read_text().replace("standard: ledgerrate.v2", f"standard: ledgerrate.v2\ntaxonomy: {pinned('failure-taxonomy')}"))
    result = compile_project(root)
    assert not result.diagnostics.has_errors, _codes(result)
    plan = result.locks["judged"]["plan"]
    assert list(plan["rubrics"]) == ["variance-commentary.v1"]
    assert plan["rubrics"]["variance-commentary.v1"]["spec"]["answer_format"]["invalid_bucket"] == "invalid"
    rplan = result.locks["reliability"]["plan"]
    assert list(rplan["tasks"]) == ["fa-rollforward.v1"] and rplan["taxonomy"]["ref"] == pinned("failure-taxonomy")
    assert "artifact-review.v1" in rplan["rubrics"]
    assert re.fullmatch(r"sha256:[0-9a-f]{64}", rplan["tasks"]["fa-rollforward.v1"]["spec"]["input_artifacts"][0]["sha256"])
    assert rplan["splits"]["test_hashes"] == {"fa-rollforward.v1": rplan["tasks"]["fa-rollforward.v1"]["task_hash"]}
    schema = json.loads((REPO / "schemas/lock.schema.json").read_text())
    from jsonschema import Draft202012Validator

    Draft202012Validator(schema).validate(result.locks["reliability"])


@pytest.mark.slow
def test_the_real_edition_compiles_and_refuses_to_run_without_keys(tmp_path: Path):
    lock = REPO / "generated/2026-12/plan.lock"
    plan = json.loads(lock.read_text())["plan"]
    providers = {m["provider"] for m in plan["models"].values()}
    roles = {(m["provider"], m["role"]) for m in plan["models"].values()}
    assert providers == {"openai", "anthropic"}
    assert {("openai", "flagship"), ("openai", "candidate"), ("anthropic", "flagship"), ("anthropic", "candidate")} <= roles
    assert plan["seed"] == {"policy": "held-out", "commitment": plan["seed"]["commitment"]}  # never the seed itself
    env = {k: v for k, v in os.environ.items() if k not in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY")}
    res = subprocess.run([sys.executable, "-m", "lrc.compiler.cli", "execute", str(lock), "--out", str(tmp_path / "out")],
                         capture_output=True, text=True, env=env, timeout=300)
    assert res.returncode == 1
    assert "missing API credentials, nothing was called" in res.stderr
    assert "openai/gpt-4.1: set OPENAI_API_KEY" in res.stderr and "anthropic/claude-sonnet-4-5: set ANTHROPIC_API_KEY" in res.stderr
    assert not (tmp_path / "out").exists()
