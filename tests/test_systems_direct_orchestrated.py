"""The reliability protocol's two systems (seed 000, issue 14): `direct` and `orchestrated`.

- in-process, with a scripted model (no litellm): the orchestrated stages come in order, each
  with its own tools; a model that never repairs stops after `retries.max` repairs, counted in
  the record; the plan and its revisions are recorded; `validate` shows each failing check's id,
  status, message and location and never a check's observed/expected values; malformed
  `record_plan` / `validate` calls are tool errors, never exceptions;
- the lock: direct and orchestrated are runnable (LRC6009 lifted), the tasks run on them, and
  the release manifest names per system the models and sampling, the prompt and tool-schema
  digests, the retry policy and the validators' fingerprints, the same on every compile;
- end to end (`lrc execute` of the demo lock, one task): orchestrated beats direct on the
  baseline model because the validate tool lets it repair its work;
- through the local OpenAI-compatible stub server: an orchestrated task run (plan, a hostile
  turn, a failed validation, a repair, submit) on litellm's real client path.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from lrc.runtime.lock import format as lockformat
from lrc.runtime.lock.canonical import digest_text
from lrc.runtime.systems import direct, orchestrated
from lrc.runtime.systems.base import Turn
from lrc.runtime.tasks import grade, items, planning, runner
from lrc.runtime.tasks.reference import TaskPolicies
from support import REPO, pinned

CACHED_RECALCULATION = True  # tests/conftest.py: one recalculation per distinct workbook in this module

LOCK = REPO / "generated" / "demo" / "plan.lock"
TASK = "fa.fix-sign.v5"
DIRECT, ORCHESTRATED = pinned("direct"), pinned("orchestrated")


@pytest.fixture(scope="module")
def plan() -> dict[str, Any]:
    return lockformat.loads(LOCK.read_bytes())["plan"]


@pytest.fixture(scope="module")
def item(plan):
    return items.build(plan, TASK, plan["tasks"][TASK], plan["seed"]["value"], 0)


def _turn(*calls: tuple[str, Any], content: str | None = None) -> Turn:
    tool_calls = [{"id": f"c{n}", "type": "function",
                   "function": {"name": name, "arguments": args if isinstance(args, str) else json.dumps(args)}}
                  for n, (name, args) in enumerate(calls, 1)]
    message: dict[str, Any] = {"role": "assistant", "content": content}
    if tool_calls:
        message["tool_calls"] = tool_calls
    return Turn(message, "tool_calls" if tool_calls else "stop")


def _run(plan, item, work: Path, turns: list[Turn], system: str = "orchestrated") -> dict[str, Any]:
    sent: list[list[str]] = []

    async def call(step, messages, tools):
        sent.append(sorted(t["function"]["name"] for t in tools or []))
        return turns[step - 1] if step <= len(turns) else _turn(("validate", {}))

    loop = orchestrated if system == "orchestrated" else direct
    record = asyncio.run(runner.run(runner.TaskRun(
        item=item, system=planning.system_spec(plan, system), loop=loop, call=call,
        usage_of=lambda step: {"input": 10, "output": 0}, earlier_latency=lambda step: None, work=work)))
    record["_tools_sent"] = sent
    return record


def _edits(item, model: str) -> list[tuple[str, dict[str, Any]]]:
    return TaskPolicies(item)._edits(model)


def test_the_stages_come_in_order_and_a_model_that_never_repairs_stops_after_retries_max(plan, item, tmp_path):
    retries_max = plan["systems"][ORCHESTRATED]["spec"]["retries"]["max"]
    wrong = _edits(item, "baseline")  # the pasted value where a formula belongs: fa.formula-presence fails
    turns = [_turn(("record_plan", {"steps": ["paste the figure"]})), _turn(*wrong), _turn(("validate", {}))]
    turns += [_turn(("validate", {}))] * 10  # never repairs
    record = _run(plan, item, tmp_path / "w", turns)
    wf = record["workflow"]
    assert wf["stages"] == ["plan", "act"] + ["repair"] * retries_max
    assert wf["repairs"] == retries_max == 2 and wf["retries_max"] == retries_max
    assert len(wf["validations"]) == retries_max + 1 and not any(v["passed"] for v in wf["validations"])
    assert wf["stop"] == "retries exhausted"
    assert record["steps"] == 3 + retries_max  # no request after the last failed validation
    assert [e["attempt"] for e in record["events"] if e["event"] == "repair"] == list(range(1, retries_max + 1))
    assert record["outcome"] == "answered" and record["submitted"]  # the harness hands in the files as saved
    assert grade.grade(item, record)["verdict"] != "pass"
    plan_tools, act_tools = record["_tools_sent"][0], record["_tools_sent"][1]
    assert "record_plan" in plan_tools and "validate" not in plan_tools and "write_cells" not in plan_tools
    assert "submit" not in plan_tools and "submit" not in act_tools
    assert {"validate", "record_plan", "write_cells"} <= set(act_tools)


def test_a_repair_passes_the_plan_and_its_revisions_are_recorded_and_report_offers_submit_alone(plan, item, tmp_path):
    turns = [_turn(("read_range", {"file": "model.xlsx", "sheet": "IS", "range": "A1:E10"}),
                   ("record_plan", {"steps": ["read IS", "fix the expense sign"]})),
             _turn(*_edits(item, "baseline"), ("validate", {})),
             _turn(("record_plan", {"steps": ["write the formula instead of the figure"]}), *_edits(item, "oracle"), ("validate", {})),
             _turn(("submit", {"note": "expense row is a formula again"}))]
    record = _run(plan, item, tmp_path / "w", turns)
    wf = record["workflow"]
    assert wf["stages"] == ["plan", "act", "repair", "report"] and wf["stop"] == "submitted"
    assert [p["revision"] for p in wf["plan_revisions"]] == [1, 2]
    assert wf["plan_revisions"][0]["steps"] == ["read IS", "fix the expense sign"] and wf["plan_revisions"][1]["stage"] == "repair"
    assert [v["passed"] for v in wf["validations"]] == [False, True] and wf["repairs"] == 1
    assert record["_tools_sent"][3] == ["submit"]
    assert grade.grade(item, record)["verdict"] == "pass"
    prompts = [m["content"] for m in record["transcript"] if m["role"] == "user"]
    assert prompts[1].startswith("Stage 1 of 4: plan") and prompts[3].startswith("Repair 1 of 2")


def test_a_plain_text_plan_is_recorded_and_a_text_reply_in_act_is_validated_by_the_harness(plan, item, tmp_path):
    turns = [_turn(content="I will write the formula."), _turn(*_edits(item, "oracle")), _turn(content="done"),
             _turn(content="wrote the formula")]
    record = _run(plan, item, tmp_path / "w", turns)
    wf = record["workflow"]
    assert wf["plan_revisions"][0]["via"] == "text" and wf["validations"][0]["by"] == "harness"
    assert wf["stages"] == ["plan", "act", "report"] and wf["stop"] == "reported"
    assert grade.grade(item, record)["verdict"] == "pass"


def test_validate_shows_each_checks_rule_never_the_validators_words_or_values(plan, item, tmp_path):
    from lrc.runtime.artifacts.validators import run_all
    from lrc.runtime.artifacts.views import Submission

    record = _run(plan, item, tmp_path / "w", [_turn(("record_plan", {"steps": ["x"]})), _turn(*_edits(item, "baseline"), ("validate", {}))]
                  + [_turn(("validate", {}))] * 5)
    shown = [json.loads(m["content"]) for m in record["transcript"] if m["role"] == "tool" and m["content"].startswith("{")]
    assert shown and all(set(s) == {"passed", "checks", "failing", "repairs_used", "repairs_max"} for s in shown)
    for s in shown:
        assert all(set(f) == {"check", "status", "message", "location"} for f in s["failing"])
    results = run_all(item.checks, Submission(inputs=dict(item.files), outputs=grade.outputs_of(record)))
    text = json.dumps(shown)
    failed = [r for r in results if r["status"] != "pass"]
    assert failed  # the baseline's edits leave a check failing: something to show
    for r in failed:
        # the validator's message quotes what it observed and expected (the answer): never shown
        assert r["message"] and r["message"] not in text, r
        for value in (r.get("observed"), r.get("expected")):
            if isinstance(value, (str, int, float)) and not isinstance(value, bool):
                assert json.dumps(value) not in text and str(value) not in text, (r["id"], value)
    from lrc.runtime.artifacts.validators import FAMILIES

    for s in shown:
        for f in s["failing"]:
            assert f["message"].endswith(FAMILIES[f["check"]][2]), f
    assert item.answer_key["expected"]["sha256"] not in text


def test_validate_on_every_tasks_untouched_input_shows_no_observed_or_expected_value(plan):
    """The class: for every task of the demo lock, what `validate` shows of the untouched input
    (every check that fails there) holds neither the validators' messages nor the values they quote."""
    from lrc.runtime.artifacts.validators import run_all
    from lrc.runtime.artifacts.views import Submission

    tasks_seen = 0
    for ref in sorted(plan["tasks"]):
        task = items.build(plan, ref, plan["tasks"][ref], plan["seed"]["value"], 0)
        results = run_all(task.checks, Submission(inputs=dict(task.files), outputs=dict(task.files)))
        shown = json.dumps(runner.failing_report(results))
        assert any(r["status"] != "pass" for r in results), ref  # an untouched input fails its task
        for r in results:
            if r["status"] == "pass":
                continue
            assert r["message"] not in shown, (ref, r)
            for value in (r.get("observed"), r.get("expected")):
                if isinstance(value, (int, float, str)) and not isinstance(value, bool) and len(str(value)) > 2:
                    assert str(value) not in shown, (ref, r["id"], value)
        tasks_seen += 1
    assert tasks_seen >= 4


def test_malformed_stage_tool_calls_are_tool_errors_never_exceptions(plan, item, tmp_path):
    hostile = _turn(("record_plan", "{not json"), ("record_plan", {"steps": 5}), ("record_plan", {"steps": ["x" * 10_000]}),
                    ("record_plan", {"steps": ["ok"], "extra": 1}), ("validate", "[1, 2]"), ("validate", {"check": "fa.identities"}),
                    ("submit", {}), ("write_cells", {"file": "model.xlsx", "cells": [{"cell": "IS!A1", "value": 1}]}), ("no_such", {}))
    turns = [hostile, _turn(("record_plan", {"steps": ["ok"]})), _turn(*_edits(item, "oracle"), ("validate", {}), ("validate", {}),
                                                                      ("write_cells", {"file": "model.xlsx", "cells": []})),
             _turn(("submit", {}))]
    record = _run(plan, item, tmp_path / "w", turns)
    results = [m["content"] for m in record["transcript"] if m["role"] == "tool"]
    assert all(r.startswith("error:") for r in results[:9]), results[:9]
    assert "not offered in the plan stage" in results[6] and "not offered in the plan stage" in results[7]
    assert results[-3].startswith("error: not run: validate ended the stage")
    assert record["workflow"]["plan_revisions"][0]["steps"] == ["ok"] and record["outcome"] == "answered"
    assert grade.grade(item, record)["verdict"] == "pass"


def test_the_orchestrated_loop_refuses_to_run_outside_a_task():
    from lrc.runtime.systems.base import RunContext

    async def call(step, messages, tools):  # pragma: no cover - never reached
        raise AssertionError

    with pytest.raises(ValueError, match="reliability tasks"):
        asyncio.run(orchestrated.run(RunContext(messages=[], tools=[], terminal_tools=[], max_steps=3, call=call)))


# -- the lock -------------------------------------------------------------------------------------

def test_direct_and_orchestrated_run_the_tasks_and_the_workloads_keep_their_systems(plan):
    assert planning.task_systems(plan) == {"direct": DIRECT, "orchestrated": ORCHESTRATED}
    for ref in (DIRECT, ORCHESTRATED):
        impl = plan["systems"][ref]["spec"]["implementation"]
        assert impl in plan["code"]  # runnable: no LRC6009
    assert all(set(w["spec"]["systems"]) <= {"single-shot", "agentic"} for w in plan["workloads"].values())
    spec = plan["systems"][ORCHESTRATED]["spec"]
    assert set(spec["workflow"]) == {"plan", "act", "repair", "report"}
    assert all(not e["prompt"].endswith(".j2") and "\n" in e["prompt"] for e in spec["workflow"].values())  # the text, inlined


def test_the_release_manifest_names_models_digests_retries_and_validators(plan):
    manifest = plan["release_manifest"]
    assert sorted(manifest["systems"]) == [DIRECT, ORCHESTRATED] and manifest["tasks"] == sorted(plan["tasks"])
    d, o = manifest["systems"][DIRECT], manifest["systems"][ORCHESTRATED]
    assert d["models"] == o["models"] and set(d["models"]) == set(plan["models"])  # the same endpoints and sampling
    assert all(m["sampling"] == plan["models"][mid]["sampling"] and m["api_version"] for mid, m in d["models"].items())
    assert d["validators"] == o["validators"] == {ref: {"validators": e["validators"]["ref"], "fingerprint": e["validators"]["fingerprint"]}
                                                  for ref, e in plan["tasks"].items()}
    assert d["retry_policy"] == {"retry_model_failures": False, "repairs_max": 0, "on": []}
    assert o["retry_policy"] == {"retry_model_failures": False, "repairs_max": 2, "on": ["in-loop-check-failed"]}
    spec = plan["systems"][ORCHESTRATED]["spec"]
    for stage, entry in spec["workflow"].items():
        assert o["prompts"][f"stage:{stage}"] == digest_text("prompt-template", entry["prompt"])
    assert set(o["tool_schemas"]) == {"toolbox", "record_plan", "validate"} and o["tool_schemas"]["validate"].startswith("sha256:")
    assert d["prompts"]["task"] == o["prompts"]["task"] and d["tool_schemas"]["toolbox"] == o["tool_schemas"]["toolbox"]
    assert o["implementation"]["fingerprint"] == plan["code"]["lrc.system.orchestrated.v1"]["fingerprint"]


def test_the_release_manifest_is_the_same_on_every_compile(tmp_path):
    import shutil

    from lrc.compiler.pipeline import compile_project

    for name in ("specs", "schemas", "generated"):
        shutil.copytree(REPO / name, tmp_path / name)
    result = compile_project(tmp_path)
    assert not result.diagnostics.has_errors
    assert (tmp_path / "generated" / "demo" / "plan.lock").read_bytes() == LOCK.read_bytes()


# -- end to end on the reference models ------------------------------------------------------------

@pytest.mark.slow  # ~20 s: two task runs graded in a subprocess; tests/test_task_e2e.py checks all four demo tasks in the shared demo run
def test_orchestrated_beats_direct_on_the_baseline_model_through_the_validate_tool(tmp_path):
    from helpers.project import run_lrc

    out = tmp_path / "out"
    res = run_lrc("execute", LOCK, "--out", out, "--workloads", "fa.fix-sign", "--models", "lrc/baseline")
    assert res.returncode == 0, res.stdout + res.stderr
    cells = {c["system"]: c for c in json.loads((out / "summary.json").read_text(encoding="utf-8"))["tasks"]["cells"]}
    assert (cells["direct"]["passes"], cells["direct"]["partials"]) == (0, 1)
    assert cells["orchestrated"]["passes"] == 1
    trace = json.loads((out / "runs" / TASK / "lrc__baseline" / "orchestrated" / "fa.fix-sign.r1" / "trace.json").read_text())
    first = trace["workflow"]["validations"][0]
    assert not first["passed"] and trace["workflow"]["repairs"] == 1 and trace["workflow"]["validations"][-1]["passed"]
    # the repair is where the failing check pointed: the cell its location names
    report = next(json.loads(m["content"]) for m in trace["messages"] if m["role"] == "tool" and m["content"].startswith("{"))
    location = report["failing"][0]["location"]
    repair_turn = [m for m in trace["messages"] if m["role"] == "assistant"][3]
    assert location in json.dumps(repair_turn["tool_calls"])
    manifest = json.loads((out / "runs" / TASK / "lrc__baseline" / "orchestrated" / "fa.fix-sign.r1" / "manifest.json").read_text())
    assert set(manifest["prompts"]) == {"task", "stage:act", "stage:plan", "stage:repair", "stage:report"}


# -- through the local OpenAI-compatible stub server -----------------------------------------------

def test_an_orchestrated_task_run_through_the_stub_server(stub, tmp_path, plan, item):
    from helpers.project import STUB_MODEL, build_project, journal_records, lrc_env, run_lrc

    lock = build_project(tmp_path / "project", stub.api_base, n_per_cell=2, edition_extra=f"tasks:\n  dev:\n    - {TASK}\n",
                         systems=("single-shot", "agentic", "orchestrated"))
    as_calls = lambda edits: [{"name": n, "arguments": a} for n, a in edits]  # noqa: E731
    turns = [
        [{"name": "record_plan", "arguments": {"steps": ["read IS", "fix the expense row"]}}],
        [{"name": "validate", "raw_arguments": "{not json"}, {"name": "record_plan", "arguments": {"steps": 3}},
         {"name": "submit", "arguments": {}}] + as_calls(_edits(item, "baseline")) + [{"name": "validate", "arguments": {}}],
        as_calls(_edits(item, "oracle")) + [{"name": "validate", "arguments": {}}],
        [{"name": "submit", "arguments": {"note": "the expense row is a formula again"}}],
    ]
    stub.reset(behaviour="task", task_turns=turns)
    out = tmp_path / "out"
    res = run_lrc("execute", lock, "--out", out, "--workloads", "fa.fix-sign", "--models", STUB_MODEL, env=lrc_env("sk-lrc-test-orch-5b2e"))
    assert res.returncode == 0, res.stdout + res.stderr
    requests = stub.snapshot()
    folder = out / "runs" / TASK / "openai__stub-model" / "orchestrated" / "fa.fix-sign.r1"
    evaluation = json.loads((folder / "evaluation.json").read_text(encoding="utf-8"))
    trace = json.loads((folder / "trace.json").read_text(encoding="utf-8"))
    assert evaluation["verdict"] == "pass", evaluation
    wf = trace["workflow"]
    assert wf["stages"] == ["plan", "act", "repair", "report"] and wf["repairs"] == 1 and wf["stop"] == "submitted"
    errors = [m["content"] for m in trace["messages"] if m["role"] == "tool"][1:4]
    assert all(e.startswith("error:") for e in errors), errors
    offered = [sorted(t["function"]["name"] for t in r.body["tools"]) for r in requests]
    assert offered[-1] == ["submit"] and "validate" in offered[1] and "validate" not in offered[0]
    assert len([r for r in journal_records(out) if r["type"] == "call"]) == len(requests) == len(turns)


def test_a_stage_template_reading_an_unknown_variable_or_an_incomplete_orchestrated_spec_is_refused(tmp_path):
    import shutil

    from lrc.compiler.pipeline import compile_project

    for name in ("specs", "schemas"):
        shutil.copytree(REPO / name, tmp_path / name)
    (tmp_path / "specs" / "systems" / "orchestrated" / "repair.j2").write_text("Fix {{ item.answer }} now.\n", encoding="utf-8")
    direct_yaml = tmp_path / "specs" / "systems" / "direct.yaml"
    direct_yaml.write_text(direct_yaml.read_text(encoding="utf-8") + "workflow:\n  plan: {prompt: x.j2}\n  act: {prompt: x.j2}\n"
                           "  repair: {prompt: x.j2}\n  report: {prompt: x.j2}\n", encoding="utf-8")
    found = {(d.code, d.path) for d in compile_project(tmp_path).diagnostics.sorted()}
    assert ("LRC4002", "specs/systems/orchestrated/repair.j2") in found
    assert ("LRC2003", "specs/systems/direct.yaml") in found


def test_a_workload_cannot_run_on_a_task_only_system(tmp_path):
    """The five workloads keep single-shot and agentic: their schema names no other system, so a
    workload that pins direct (or orchestrated) is refused where it says so."""
    import shutil

    from lrc.compiler.pipeline import compile_project

    for name in ("specs", "schemas"):
        shutil.copytree(REPO / name, tmp_path / name)
    path = tmp_path / "specs" / "workloads" / "triage.ap-inbox" / "workload.yaml"
    path.write_text(path.read_text(encoding="utf-8").replace(
        "systems:\n", f"systems:\n  direct:\n    system: {DIRECT}\n    prompts:\n      system: prompts/system.j2\n"
                      "      user: prompts/agentic.user.j2\n", 1), encoding="utf-8")
    errors = [d for d in compile_project(tmp_path).diagnostics.sorted() if d.severity == "error"]
    assert [(d.code, d.path, d.pointer) for d in errors] == [("LRC2004", "specs/workloads/triage.ap-inbox/workload.yaml", "/systems")]
    assert '"direct" is not allowed here' in errors[0].summary
