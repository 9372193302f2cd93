"""Task specs (seed 000) through the compiler: input artifacts hashed as bytes, the checks
against the validator registry, inclusion rules 3 and 5, the dev -> test ledger rule, and
tasks in the lock (entries, task hashes, the split manifest), byte-identical across compiles.

Each test overlays one task (and, where a lock is needed, an edition listing it) on a copy
of the baseline project; the golden text of each diagnostic is in tests/compiler/bad_specs/.
"""

from __future__ import annotations

import base64
import hashlib
import json
import shutil
from pathlib import Path

import pytest

from lrc.compiler.pipeline import compile_project
from lrc.runtime.lock import format as lockformat, tasks as lock_tasks

REPO = Path(__file__).resolve().parents[2]
BAD = Path(__file__).resolve().parent / "bad_specs"
TASK = BAD / "task-artifact-missing/specs/tasks/fa.case/task.yaml"  # a valid checked-in task once its xlsx exists
EDITION = BAD / "task-dev-recorded-enters-test/specs/editions/reliability.yaml"  # lists fa.case.v2 as a test task


def _xlsx() -> bytes:
    from lrc.runtime.artifacts import tasks

    return tasks.make("fix-sign", "task-specs-test").inputs["model.xlsx"]


def _task(root: Path, text: str | None = None, xlsx: bytes | None = None) -> Path:
    folder = root / "specs/tasks/fa.case"
    (folder / "inputs").mkdir(parents=True, exist_ok=True)
    (folder / "task.yaml").write_text(text if text is not None else TASK.read_text())
    if xlsx is not None:
        (folder / "inputs/model.xlsx").write_bytes(xlsx)
    return folder


def _edition(root: Path, ref: str = "fa.case.v1") -> None:
    (root / "specs/editions/reliability.yaml").write_text(EDITION.read_text().replace("fa.case.v2", ref))


def _errors(result) -> list[tuple[str, str, str | None]]:
    return [(d.code, d.summary, d.pointer) for d in result.diagnostics.sorted() if d.severity == "error"]


def test_an_xlsx_input_is_accepted_hashed_as_bytes_and_inlined(fresh_project: Path) -> None:
    data = _xlsx()
    _task(fresh_project, xlsx=data)
    _edition(fresh_project)
    result = compile_project(fresh_project)
    assert _errors(result) == []
    sha = "sha256:" + hashlib.sha256(data).hexdigest()
    spec = result.graph.specs["task"]["fa.case"].normalized
    assert spec["input_artifacts"][0]["sha256"] == sha and spec["input_artifacts"][0]["size"] == len(data)
    plan = result.locks["reliability"]["plan"]
    entry = plan["tasks"]["fa.case.v1"]
    item = entry["inputs"][0]
    assert (item["origin"], item["name"], item["source"]) == ("checked-in", "model.xlsx", "specs/tasks/fa.case/inputs/model.xlsx")
    assert base64.b64decode(item["content_base64"]) == data == lock_tasks.input_bytes(item)
    assert plan["splits"] == {"tasks": {"fa.case.v1": "test"}, "test_hashes": {"fa.case.v1": entry["task_hash"]}}
    assert entry["validators"]["ref"] == "lrc.artifact-validators.v2" and "lrc.artifact-validators.v2" in plan["code"]
    assert lock_tasks.verify(plan) == []
    from jsonschema import Draft202012Validator

    Draft202012Validator(json.loads((REPO / "schemas/lock.schema.json").read_text())).validate(result.locks["reliability"])


def test_changing_the_artifact_bytes_changes_the_digest_and_needs_a_bump(fresh_project: Path) -> None:
    data = _xlsx()
    _task(fresh_project, xlsx=data)
    first = compile_project(fresh_project)
    assert _errors(first) == []
    _task(fresh_project, xlsx=data[:-1] + bytes([data[-1] ^ 1]))
    again = compile_project(fresh_project)
    assert [(c, p) for c, _, p in _errors(again)] == [("LRC5001", "/version")]
    assert any("changed: /input_artifacts/0/sha256" in n for d in again.diagnostics.items for n in d.notes)


def test_the_lock_with_tasks_is_byte_identical_across_compiles(fresh_project: Path, tmp_path: Path) -> None:
    _task(fresh_project, xlsx=_xlsx())
    _edition(fresh_project)
    other = tmp_path / "elsewhere"
    shutil.copytree(fresh_project, other)
    first = compile_project(fresh_project)
    warm = compile_project(fresh_project)  # from the compile cache
    cold = compile_project(other, cache=False)  # another folder, no cache
    assert _errors(first) == []
    for name in ("reliability", "demo"):
        path = f"generated/{name}/plan.lock"
        assert first.outputs[path] == warm.outputs[path] == cold.outputs[path]
    assert (fresh_project / "generated/reliability/plan.lock").read_bytes() == first.outputs["generated/reliability/plan.lock"]


def test_the_demo_lock_holds_its_tasks_with_generator_fingerprints() -> None:
    lock = lockformat.loads((REPO / "generated/demo/plan.lock").read_bytes())
    plan = lock["plan"]
    assert sorted(plan["tasks"]) == ["fa.extend-quarter.v3", "fa.fix-cash-flow.v3", "fa.fix-sign.v3", "fa.refresh-deck-table.v3"]
    assert plan["splits"]["test_hashes"] == {} and set(plan["splits"]["tasks"].values()) == {"dev"}
    for entry in plan["tasks"].values():
        for item in entry["inputs"]:
            assert item["origin"] == "generated"
            assert item["fingerprint"] == plan["code"][item["generator"]]["fingerprint"]
    assert [i["name"] for i in plan["tasks"]["fa.refresh-deck-table.v3"]["inputs"]] == ["model.xlsx", "deck.pptx"]
    assert lock_tasks.verify(plan) == []


def test_a_tampered_task_hash_or_inlined_byte_is_reported(fresh_project: Path) -> None:
    _task(fresh_project, xlsx=_xlsx())
    _edition(fresh_project)
    plan = json.loads(json.dumps(compile_project(fresh_project).locks["reliability"]["plan"]))
    item = plan["tasks"]["fa.case.v1"]["inputs"][0]
    item["content_base64"] = base64.b64encode(b"PK" + base64.b64decode(item["content_base64"])[2:-1]).decode()
    plan["splits"]["test_hashes"]["fa.case.v1"] = "sha256:" + "0" * 64
    problems = lock_tasks.verify(plan)
    assert any("do not match their sha256" in p for p in problems)
    assert "the split manifest disagrees with the task entries" in problems


# -- the checks, one behaviour each (golden text: bad_specs/task-*) ---------------------------

def _compile_task(root: Path, old: str, new: str, xlsx: bool = True):
    text = TASK.read_text()
    assert old in text
    _task(root, text.replace(old, new), xlsx=_xlsx() if xlsx else None)
    return _errors(compile_project(root))


def test_unknown_validator_ids_are_refused_in_checks_and_failure_modes(fresh_project: Path) -> None:
    got = _compile_task(fresh_project, "observed_by: [fa.conventions]", "observed_by: [fa.conventions, fa.balance]")
    assert got == [("LRC3010", "unknown validator 'fa.balance'", "/failure_modes/0/observed_by/1")]


def test_a_checked_in_task_states_every_required_param(fresh_project: Path) -> None:
    got = _compile_task(fresh_project, "params: {file: model.xlsx, unit: USD thousands, sheets: [IS], expense_rows: {IS: [Operating expenses]}}",
                        "params: {file: model.xlsx, unit: USD thousands}")
    assert {(c, p) for c, _, p in got} == {("LRC3011", "/checks/0/params")}
    assert all("required" in s for _, s, _ in got) and any("expense_rows" in s for _, s, _ in got), got


def test_a_task_with_a_generated_input_leaves_the_seeded_params_to_its_generator(fresh_project: Path) -> None:
    text = TASK.read_text().replace("  - file: inputs/model.xlsx\n", "  - generator: lrc.task.fix-sign.v2\n    file: model.xlsx\n")
    _task(fresh_project, text.replace("region: [\"IS!C7:F7\"]", "regoin: []"))
    got = _errors(compile_project(fresh_project))
    assert [(c, p) for c, _, p in got] == [("LRC3011", "/checks/1/params")]  # the unknown key, not the missing ones
    _task(fresh_project, text.replace("params: {file: model.xlsx, unit: USD thousands, sheets: [IS], expense_rows: {IS: [Operating expenses]}}",
                                      "params: {file: model.xlsx}"))
    assert _errors(compile_project(fresh_project)) == []


def test_a_generator_must_be_a_task_generator(fresh_project: Path) -> None:
    text = TASK.read_text().replace("  - file: inputs/model.xlsx\n", "  - generator: triage.ap-inbox.generator.v2\n    file: model.xlsx\n")
    _task(fresh_project, text)
    got = _errors(compile_project(fresh_project))
    assert [(c, p) for c, _, p in got] == [("LRC3008", "/input_artifacts/0/generator")]


def test_rule_3_needs_a_failure_mode_a_check_of_the_task_observes(fresh_project: Path) -> None:
    got = _compile_task(fresh_project, "observed_by: [fa.conventions]", "observed_by: [fa.rollforward]")
    assert got == [("LRC6115", "no failure mode is observable by the task's checks", "/failure_modes")]


def test_rule_3_accepts_review_only_failure_modes_beside_an_observable_one(fresh_project: Path) -> None:
    got = _compile_task(fresh_project, "    observed_by: [fa.conventions]\n",
                        "    observed_by: [fa.conventions]\n  - id: unclear-note\n    description: the cell note does not say why\n")
    assert got == []


@pytest.mark.parametrize("objective, ok", [
    ("Correct the sign in model.xlsx and touch nothing else in model.xlsx.", True),
    ("Correct the sign in inputs/model.xlsx; compare with solution.xlsx when done.", False),
    ("Correct the sign; the answer key is oracle/model.xlsx.", False),
    ("Correct the sign of the expense: it should read = - inputs!$D$6 after the fix.", False),
    ("Correct the sign of the operating expense (rows 4 to 13, e.g. the one near 1.5 million).", True),
])
def test_rule_5_the_objective_names_only_its_own_files_and_no_expected_formula(fresh_project: Path, objective: str, ok: bool) -> None:
    text = TASK.read_text()
    start = text.index("objective: >-")
    end = text.index("permitted_tools:")
    text = text[:start] + f"objective: {json.dumps(objective)}\n" + text[end:]
    text = text.replace("  - validator: fa.unchanged-outside", "  - validator: fa.formula-presence\n    params: {file: model.xlsx, cells: "
                        "[{sheet: IS, row: Operating expenses, pattern: \"=-Inputs!{c}6\"}]}\n    failure_category: artifact-integrity\n"
                        "  - validator: fa.unchanged-outside")
    _task(fresh_project, text, xlsx=_xlsx())
    got = _errors(compile_project(fresh_project))
    assert (got == []) is ok, got
    assert all(code == "LRC6114" and pointer == "/objective" for code, _, pointer in got)


def test_two_inputs_received_under_one_name_are_refused(fresh_project: Path) -> None:
    text = TASK.read_text()
    one = text[text.index("  - file: inputs/model.xlsx"):text.index("output:")]
    text = text.replace(one, one + one.replace("inputs/model.xlsx", "model.xlsx"))
    folder = _task(fresh_project, text, xlsx=_xlsx())
    (folder / "model.xlsx").write_bytes(_xlsx())
    got = _errors(compile_project(fresh_project))
    assert got == [("LRC3004", "input artifacts 0 and 1 are both received as 'model.xlsx'", "/input_artifacts/1/file")]


def test_a_symlinked_artifact_is_refused(fresh_project: Path, tmp_path: Path) -> None:
    outside = tmp_path / "model.xlsx"
    outside.write_bytes(_xlsx())
    folder = _task(fresh_project)
    (folder / "inputs/model.xlsx").symlink_to(outside)
    got = _errors(compile_project(fresh_project))
    assert [(c, p) for c, _, p in got] == [("LRC3004", "/input_artifacts/0/file")] and "symlink" in got[0][1]


def test_a_task_once_recorded_as_dev_never_enters_a_test_split(fresh_project: Path) -> None:
    text = TASK.read_text().replace("split: test", "split: dev")
    _task(fresh_project, text, xlsx=_xlsx())
    assert _errors(compile_project(fresh_project)) == []  # v1 recorded in the ledger, split dev
    _task(fresh_project, text.replace("split: dev", "split: test").replace("version: 1", "version: 2"))
    _edition(fresh_project, "fa.case.v2")
    got = _errors(compile_project(fresh_project))
    assert got == [("LRC6107", "fa.case was a development task at version 1; no later version can be a test task", "/tasks/test/0")]
