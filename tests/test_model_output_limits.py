"""Model output can never crash `execute`, its resume or `lrc report`.

A model's reply and its tool arguments are hostile input: a 5,000-digit integer, 5,000-deep
nesting, invalid JSON, huge strings, and responses of the wrong shape (no choices, content
not a string...). Each is the model's invalid output — graded, journaled, never retried,
never repaid on resume — and never an internal error (exit 70).

The class is tested at each layer: the bounded parser, the output contract, the agentic
tool-argument parser, the workloads' kit, the journal (a record holding what JSON cannot
write), litellm's "Invalid response object" classification, and end to end: `lrc execute`
against the local stub server answering every hostile case (tests/helpers/hostile.py),
then a resume and `lrc report`, as subprocesses.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections import Counter
from pathlib import Path

import pytest

from helpers import hostile
from helpers.project import KEY_ENV, STUB_MODEL, build_project, journal_records, lrc_env, read_cells, run_lrc, tree
from helpers.stub_server import Fault, StubServer
from lrc.runtime import boundedjson
from lrc.runtime.checks import contract
from lrc.runtime.journal import Journal
from lrc.runtime.systems import agentic
from lrc.runtime.workloads import kit

KEY = "sk-lrc-test-hostile-4b1d9e07c2aa5f31"
BIG = "9" * 5000
HUGE_INT = 10 ** 5000  # its decimal text has 5,001 digits: over Python's 4,300-digit conversion limit


def nested(depth: int) -> list:
    value: list = []
    for _ in range(depth):
        value = [value]
    return value

CASES = hostile.cases()
#: The end-to-end run's cases, one per item: each class once (the fuzz target runs them all).
E2E_CASES = ["content:big-int", "content:deep-array", "content:huge-string", "content:fenced-big-int", "args:big-int",
             "args:deep-object", "args:deep-unclosed", "args:invalid-json", "args:nan-inf", "shape:no-choices",
             "shape:content-a-number", "shape:content-a-big-int", "shape:content-deep", "shape:arguments-a-number",
             "shape:not-json-at-all", "shape:usage-big-int"]
_BATCH = re.compile(r"AP-B(\d+)")


# -- the bounded parser --------------------------------------------------------------------

OVER_A_LIMIT = {
    "int-5000-digits": '{"a": ' + BIG + "}",
    "negative-int": "[-" + BIG + "]",
    "int-101-digits": "[" + "1" * 101 + "]",
    "float-digits": '{"a": 1.' + BIG + "}",
    "float-overflow": '{"a": 1e999}',
    "nan": '{"a": NaN}',
    "infinity": "[Infinity]",
    "deep-5000": "[" * 5000 + "]" * 5000,
    "deep-65": "[" * 65 + "]" * 65,
    "deep-object": '{"a":' * 100 + "1" + "}" * 100,
    "deep-unclosed": "{" * 5000,
    "too-long": '"' + "a" * (boundedjson.MAX_CHARS + 1) + '"',
    "invalid": '{"a": [1,, 2]}',
    "empty": "   ",
    "extra-data": '{"a": 1} {"b": 2}',
    "not-text": 42,
    "bad-utf8": b'{"a": "\xff"}',
}


@pytest.mark.parametrize("text", OVER_A_LIMIT.values(), ids=OVER_A_LIMIT.keys())
def test_loads_refuses_anything_over_a_limit_or_not_json(text):
    with pytest.raises(boundedjson.Unparseable) as info:
        boundedjson.loads(text)
    assert isinstance(info.value, ValueError) and str(info.value)


@pytest.mark.parametrize("text, value", [
    ('{"a": [1, 2.5, "x", null, true]}', {"a": [1, 2.5, "x", None, True]}),
    ("[" * 64 + "]" * 64, nested(63)),
    ("[" + "9" * 100 + "]", [int("9" * 100)]),
    ('{"s": "[[[[[[' + "[" * 500 + '"}', {"s": "[[[[[[" + "[" * 500}),  # brackets inside a string are text
    ('  {"a": 1}\n', {"a": 1}),
])
def test_loads_reads_json_within_the_limits_unchanged(text, value):
    assert boundedjson.loads(text) == value


@pytest.mark.parametrize("text", [
    "Here: {\"x\": " + BIG + "}", "```json\n[" + "[" * 200 + "]" * 201 + "\n```", "]" * 3000 + "[" * 3000 + "]" * 3000,
    "{" * 3000, "prose { not json } and " + "[1," * 10000,
])
def test_the_output_contract_refuses_hostile_replies_as_no_json(text):
    with pytest.raises(contract.NoJSON):
        contract.extract_json(text)


def test_the_output_contract_still_finds_json_in_prose():
    assert contract.extract_json('Sure: ```json\n{"labels": ["invoice"]}\n``` done') == {"labels": ["invoice"]}
    assert contract.extract_json("x [1] y") == [1]


@pytest.mark.parametrize("raw", [
    '{"labels": [' + BIG + "]}", "[" * 5000, '{"a":' * 5000 + "1" + "}" * 5000, "not json", "[1, 2]", "null",
    {"deep": nested(70)}, {"n": 10 ** 200},  # arguments handed over in-process
])
def test_agentic_tool_arguments_over_a_limit_are_a_tool_error_for_the_model(raw):
    args, problem = agentic._arguments(raw)
    assert args is None and problem.startswith("error: arguments")


def test_the_kit_reads_hostile_arguments_as_empty():
    messages = [{"role": "assistant", "tool_calls": [
        {"id": "a", "function": {"name": "f", "arguments": '{"x": ' + BIG + "}"}},
        {"id": "b", "function": {"name": "f", "arguments": "[" * 5000}},
        {"id": "c", "function": {"name": "f", "arguments": 12}},
        {"id": "d", "function": {"name": "f", "arguments": '{"ok": 1}'}},
    ]}]
    assert kit.tool_calls_by_id(messages) == {"a": ("f", {}), "b": ("f", {}), "c": ("f", {}), "d": ("f", {"ok": 1})}


@pytest.mark.parametrize("value", [
    {"n": HUGE_INT}, {"deep": nested(2000)}, {"deep": nested(50_000)}, [float("nan")], {"set": {1, 2}},
])
def test_the_journal_writes_and_reads_back_what_json_cannot_hold(tmp_path, value):
    path = tmp_path / "journal.jsonl"
    journal = Journal(path, "sha256:x", "e")
    journal.append({"type": "run", "run": "r1", "outcome": "answered", "answer": value})
    journal.close()
    again = Journal(path, "sha256:x", "e", readonly=True)
    assert "r1" in again.runs
    assert all(len(line) < 200_000 for line in path.read_text(encoding="utf-8").splitlines())


# -- litellm's "Invalid response object" is the model's output, not an outage ---------------

TOOLS = [{"type": "function", "function": {"name": "submit_labels", "description": "d", "parameters": {"type": "object"}}}]
UNREADABLE = [c for c in CASES if c.startswith("shape:") and c not in ("shape:arguments-an-object", "shape:unknown-tool")] + \
             ["args:big-int", "args:big-int-bare", "args:big-negative-int", "args:deep-unclosed"]


@pytest.fixture(scope="module")
def adapter_env():
    import os

    saved = {k: os.environ.get(k) for k in ("LRC_MAX_ATTEMPTS", "LRC_RETRY_BASE_SECONDS", "LRC_TEST_ADAPTER_KEY")}
    os.environ.update({"LRC_MAX_ATTEMPTS": "3", "LRC_RETRY_BASE_SECONDS": "0", "LRC_TEST_ADAPTER_KEY": KEY})
    yield
    for k, v in saved.items():
        if v is None:
            os.environ.pop(k, None)
        else:
            os.environ[k] = v


def _complete(stub: StubServer):
    from lrc.runtime.models import adapter

    from lrc.runtime.models import infra
    from lrc.runtime.operate import ModelEndpoint

    model = {"id": STUB_MODEL, "price": {"input": "1", "output": "1"}}
    endpoint = ModelEndpoint(api_base=stub.api_base, api_key_env="LRC_TEST_ADAPTER_KEY", max_concurrency=1)
    lane = infra.ModelLane(model["id"], model, infra.InfraSettings.from_env(), infra.InfraStats(), endpoint=endpoint)
    return asyncio.run(adapter.complete(model, [{"role": "user", "content": "AP-B01"}], TOOLS, 30, lane))


@pytest.mark.parametrize("case", UNREADABLE)
def test_a_response_that_arrived_but_cannot_be_read_is_an_invalid_output_never_retried(stub, adapter_env, case):
    stub.reset(reply_hook=lambda body: hostile.reply(case, body))
    result = _complete(stub)
    assert result.invalid and result.attempts == 1 and not result.failures, result
    assert stub.count == 1


def test_usage_that_is_no_count_stops_the_call_as_a_configuration_error_never_an_answer_at_0(stub, adapter_env):
    """A reply whose usage is no count (`prompt_tokens: -5`, `completion_tokens: "many"`) was
    litellm's "Invalid response object", read here as the model's invalid output at $0. Its
    answer may be fine; its cost cannot be computed: the adapter reads the usage as sent and
    stops the call (tests/test_provider_usage.py: exit 1, nothing journaled, resumable)."""
    from lrc.runtime.models import adapter

    stub.reset(reply_hook=lambda body: hostile._envelope('{"role": "assistant", "content": "{}"}',
                                                         usage='{"prompt_tokens": -5, "completion_tokens": "many", "total_tokens": 2}'))
    with pytest.raises(adapter.ConfigError, match="prompt_tokens = '-5'"):
        _complete(stub)
    assert stub.count == 1


@pytest.mark.parametrize("fault", [Fault("status", status=500), Fault("status", status=503), Fault("drop")], ids=["500", "503", "drop"])
def test_real_outages_stay_infrastructure_failures(stub, adapter_env, fault):
    from lrc.runtime.models import adapter

    stub.reset(faults=[fault])
    with pytest.raises(adapter.InfraExhausted):
        _complete(stub)
    assert stub.count == 3


# -- end to end: every hostile case through `lrc execute`, its resume and `lrc report` -------

def hostile_hook(body):
    """Item n gets case n (by its batch number) at its first request; later agentic steps
    get the baseline policy, so a run that survives a hostile step goes on normally."""
    step = sum(1 for m in body.get("messages") or [] if m.get("role") == "assistant") + 1
    if step > 1:
        return None
    found = _BATCH.findall(json.dumps(body.get("messages")))
    return hostile.reply(E2E_CASES[(int(found[0]) - 1) % len(E2E_CASES)], body)


@pytest.fixture(scope="module")
def hostile_run(stub: StubServer, tmp_path_factory):
    lock = build_project(tmp_path_factory.mktemp("hostile-project"), stub.api_base, n_per_cell=len(E2E_CASES))
    stub.reset(reply_hook=hostile_hook)
    out = tmp_path_factory.mktemp("hostile") / "out"
    res = run_lrc("execute", lock, "--out", out, "--no-progress", env=lrc_env(KEY), timeout=900)
    return lock, out, res, stub.snapshot()


def test_hostile_replies_are_graded_never_an_internal_error_nor_retried(hostile_run):
    lock, out, res, records = hostile_run
    assert res.returncode == 0, res.stderr[-3000:]
    assert "Traceback" not in res.stderr and "internal error" not in res.stderr
    calls = [r for r in journal_records(out) if r["type"] == "call" and f"|{STUB_MODEL}|" in r["run"]]
    assert calls and all(c["attempts"] == 1 and not c["infra_failures"] for c in calls)
    assert not [r for r in journal_records(out) if r["type"] == "infra_exhausted"]
    for system in ("single-shot", "agentic"):
        row = read_cells(out)[(STUB_MODEL, system)]
        assert (row["n"], row["infra_excluded"], row["infra_retries"]) == (str(len(E2E_CASES)), "0", "0"), row
    # Every single-shot reply is hostile: none passes, every one is invalid output.
    single = read_cells(out)[(STUB_MODEL, "single-shot")]
    assert (single["passes"], single["invalid_output"]) == ("0", str(len(E2E_CASES))), single
    # The unreadable responses ended their runs as invalid output, in both systems; hostile
    # text answers were graded invalid output too (args cases went on after a tool error).
    runs = {r["run"]: r for r in journal_records(out) if r["type"] == "run" and f"|{STUB_MODEL}|" in r["run"]}
    by_case: dict[str, list[str]] = {}
    for run in runs.values():  # item n (0-based) is batch AP-B(n+1)
        by_case.setdefault(E2E_CASES[run["item_index"] % len(E2E_CASES)], []).append(run["outcome"])
    for case in E2E_CASES:
        if case.startswith("shape:"):
            assert by_case.get(case) == ["invalid_output", "invalid_output"], (case, by_case.get(case))
    agentic_row = read_cells(out)[(STUB_MODEL, "agentic")]
    assert int(agentic_row["invalid_output"]) >= sum(not c.startswith("args:") for c in E2E_CASES), agentic_row


def test_a_resume_repays_nothing_and_report_rebuilds_the_same_outputs(hostile_run, stub):
    lock, out, res, records = hostile_run
    before = {k: v for k, v in tree(out).items() if not k.startswith(".")}
    stub.reset(reply_hook=hostile_hook)
    again = run_lrc("execute", lock, "--out", out, "--no-progress", env=lrc_env(KEY), timeout=900)
    assert again.returncode == 0, again.stderr[-3000:]
    assert stub.count == 0, "a resume repaid journaled calls"
    report = run_lrc("report", lock, "--out", out, env=lrc_env(KEY), timeout=900)
    assert report.returncode == 0, report.stderr[-3000:]
    after = {k: v for k, v in tree(out).items() if not k.startswith(".")}
    assert after == before


def test_report_survives_a_journal_holding_5000_digit_integers_and_deep_nesting(hostile_run, tmp_path):
    """Whatever a journal line holds (here: every run's answer text replaced with hostile
    JSON), `lrc report` grades it as invalid output and exits 0."""
    lock, out, res, records = hostile_run
    copy = tmp_path / "out"
    copy.mkdir()
    lines = []
    payloads = ['{"labels": [' + BIG + "]}", "[" * 5000 + "]" * 5000, '{"a":' * 900 + "1" + "}" * 900, BIG]
    for n, line in enumerate((out / "journal.jsonl").read_text(encoding="utf-8").splitlines()):
        rec = json.loads(line)
        if rec.get("type") == "run" and rec.get("outcome") == "answered" and not rec.get("submitted"):
            rec["answer_text"] = payloads[n % len(payloads)]
        lines.append(json.dumps(rec, sort_keys=True))
    (copy / "journal.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    report = run_lrc("report", lock, "--out", copy, env=lrc_env(KEY), timeout=900)
    assert report.returncode == 0, report.stderr[-3000:]
    evaluations = [json.loads(v) for v in tree(copy / "runs", "evaluation.json").values()]
    assert evaluations and Counter(e["verdict"] for e in evaluations)["fail"] > 0


# -- the fuzz target, bounded (benchmarks/fuzz_replies.py runs it longer) --------------------

@pytest.mark.fuzz
@pytest.mark.slow
def test_fuzz_hostile_replies_bounded(stub, tmp_path):
    import sys

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
    import fuzz_replies

    parsers = fuzz_replies.fuzz_parsers(500, seed=7)
    assert parsers["crashes"] == [] and parsers["examples"] == 500
    summary = fuzz_replies.run(stub, tmp_path, rounds=1, items=10, seed=7)
    assert summary["failures"] == [] and summary["exit_codes"] == {0: 3}, summary
    assert summary["requests"] >= 20 and summary["cases_seen"] >= 10, summary
