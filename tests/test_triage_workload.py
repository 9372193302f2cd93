"""Tests of the triage.ap-inbox workload package: generator, grading, tools, reference models."""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path
from typing import Any, Callable

import jsonschema
import pytest

from lrc.runtime.checks.results import blocking_failures
from lrc.runtime.workloads.base import Item, Reply
from lrc.runtime.workloads.triage_ap_inbox import generator, grading, reference
from lrc.runtime.workloads.triage_ap_inbox.tools import TRUNCATION_MARKER, Toolbox

from helpers.agent_loop import render_messages, run_tool_loop, single_shot_answer
from helpers.workload import assert_imports_confined, canonical, item_json
from support import tool_defs

ROOT = Path(__file__).resolve().parent.parent
SPEC_DIR = ROOT / "specs" / "workloads" / "triage.ap-inbox"
PACKAGE_DIR = ROOT / "runtime" / "workloads" / "triage_ap_inbox"
BATCHES = 15
CANARY_SEED = "canary-0"
CANARY_DIGEST = "sha256:8c6baba5844dcb8f0ce8b1153334b5d24869ca85ec53cac7ad61aedd8b49542c"
BASELINE_SEEDS = (CANARY_SEED, "seed-1", "seed-2", "seed-7")


# ---------------------------------------------------------------------------------------
# helpers


def edition(seed: str) -> list[Item]:
    return [generator.generate(seed, i, {}) for i in range(BATCHES)]


@pytest.fixture(scope="module")
def canary() -> list[Item]:
    return edition(CANARY_SEED)


def messages_for(spec: dict[str, Any], item: Item, system: str) -> list[dict[str, Any]]:
    return render_messages(SPEC_DIR, spec, item.context, system)


def grade(answer: Any, item: Item, params: dict[str, Any], output_schema: dict[str, Any]) -> tuple[bool, list]:
    """normalize -> output contract -> validate, as the runtime does."""
    answer = grading.normalize(answer)
    jsonschema.Draft202012Validator(output_schema).validate(answer)
    results = grading.validate(answer, item.answer_key, params)
    return not blocking_failures(results), results


def single_shot(policy: Callable[[list], Reply], spec: dict[str, Any], item: Item) -> Any:
    return single_shot_answer(policy(messages_for(spec, item, "single-shot")))


def agentic(policy: Callable[[list, list], Reply], spec: dict[str, Any], output_schema: dict[str, Any], item: Item) -> Any:
    """Drive the tool loop: ask the policy, run its calls, append the results, until a terminal tool."""
    box = Toolbox(item, spec["systems"]["agentic"]["tools"]["max_result_chars"])
    return run_tool_loop(policy, messages_for(spec, item, "agentic"), tool_defs(spec, output_schema), box, 6)[0]


def gold(item: Item) -> dict[str, Any]:
    return {"labels": [{"email_id": i, "label": lab} for i, lab in item.answer_key["labels"].items()]}


# ---------------------------------------------------------------------------------------
# components


def test_components_declared_and_imports_confined() -> None:
    from lrc.runtime.lock.codeprint import discover

    ids = {c.id for c in discover().values()}  # by id, whatever the current version
    for name in ("generator", "grading", "tools", "reference"):
        assert f"triage.ap-inbox.{name}" in ids
    allowed = ("lrc.runtime.checks", "lrc.runtime.workloads.base", "lrc.runtime.workloads.kit", "lrc.runtime.workloads.triage_ap_inbox",
               "cerberus")
    stdlib = {"__future__", "copy", "dataclasses", "datetime", "decimal", "json", "re", "typing"}
    assert_imports_confined(PACKAGE_DIR, ("generator", "grading", "tools", "reference"), allowed, stdlib)


# ---------------------------------------------------------------------------------------
# generator


def test_generator_is_deterministic() -> None:
    a = [canonical(item_json(generator.generate("det-seed", i, {}))) for i in (0, 7, 14)]
    b = [canonical(item_json(generator.generate("det-seed", i, {"batch_size": 20}))) for i in (0, 7, 14)]
    assert a == b
    other = canonical(item_json(generator.generate("det-seed-2", 0, {})))
    assert other != a[0]
    assert a[0] != a[1]  # batches of one edition differ too


def test_canary_digest(canary: list[Item]) -> None:
    data = canonical([item_json(item) for item in canary]).encode("utf-8")
    assert "sha256:" + hashlib.sha256(data).hexdigest() == CANARY_DIGEST


def test_items_match_item_schema(spec: dict[str, Any], canary: list[Item]) -> None:
    validator = jsonschema.Draft202012Validator(spec["dataset"]["item_schema"])
    ids: list[str] = []
    for n, item in enumerate(canary):
        validator.validate(item.context)
        assert item.index == n and item.item_id == f"ap-batch-{n + 1:02d}"
        emails = item.context["emails"]
        assert len(emails) == 20
        assert [e["id"] for e in emails] == list(item.answer_key["labels"])
        assert set(item.answer_key["hard_cases"]) <= set(item.answer_key["labels"])
        dates = [e["date"] for e in emails]
        assert dates == sorted(dates) and all(re.fullmatch(r"\d{4}-\d\d-\d\d \d\d:\d\d", d) for d in dates)
        assert all(e["from"].rstrip(">").endswith(".example") for e in emails)
        ids += [e["id"] for e in emails]
    assert len(ids) == len(set(ids)), "email ids must be unique across the edition"


def test_batch_size_param() -> None:
    item = generator.generate("small", 0, {"batch_size": 8})
    assert len(item.context["emails"]) == 8 == len(item.answer_key["labels"])


def test_label_mix_and_hard_cases(canary: list[Item]) -> None:
    labels = [lab for item in canary for lab in item.answer_key["labels"].values()]
    assert set(labels) == set(grading.LABEL_IDS)
    mixes = {tuple(sorted(labels.count(lab) for lab in grading.LABEL_IDS)) for labels in
             ([*item.answer_key["labels"].values()] for item in canary)}
    assert len(mixes) > 5, "the label mix should vary per batch"
    full = sum(1 for item in canary if set(item.answer_key["labels"].values()) == set(grading.LABEL_IDS))
    assert full >= 10, "every label should appear in most batches"
    kinds = [k for item in canary for k in item.answer_key["hard_cases"].values()]
    for kind in generator.REQUIRED_HARD_KINDS:
        assert kind in kinds
    for item in canary:
        assert 3 <= len(item.answer_key["hard_cases"]) <= 6


def test_hard_case_content(canary: list[Item]) -> None:
    """The hard cases carry the surface features that make them hard."""
    by_kind: dict[str, list[dict[str, str]]] = {}
    for item in canary:
        emails = {e["id"]: e for e in item.context["emails"]}
        for email_id, kind in item.answer_key["hard_cases"].items():
            by_kind.setdefault(kind, []).append(emails[email_id])
    assert any(re.search(r"invoice \S+ .*is now \d+ days overdue", e["body"], re.I) for e in by_kind["dunning_quotes_invoice"])
    assert all("Please remit to:" in e["body"] for e in by_kind["statement_with_remittance"])
    assert all("price" in e["body"] for e in by_kind["po_price_change"])
    assert all("---------- Forwarded message ---------" in e["body"] for e in by_kind["forwarded_thread"])
    assert all(re.search(r"invoice", e["body"], re.I) for e in by_kind["remittance_mentions_invoices"])
    assert any("statement" in e["subject"].lower() for e in by_kind["misleading_subject_invoice"])


def test_money_formats_and_variety() -> None:
    bodies = [e["body"] for s in ("seed-1", "seed-2") for item in edition(s) for e in item.context["emails"]]
    text = "\n".join(bodies)
    assert re.search(r"\$\d{1,3}(,\d{3})*\.\d\d", text)
    assert re.search(r"EUR \d{1,3}(\.\d{3})*,\d\d", text)
    assert len({b.split("\n")[0] for b in bodies}) > 10  # greetings and openings vary


# ---------------------------------------------------------------------------------------
# grading


def test_gold_passes(canary: list[Item], params: dict[str, Any], output_schema: dict[str, Any]) -> None:
    for item in canary:
        ok, results = grade(gold(item), item, params, output_schema)
        assert ok and results[0]["observed"] == "20/20 correct" and len(results) == 1
        assert results[0]["id"] == "triage.ap-inbox.batch-accuracy" and results[0]["version"] == grading.COMPONENT_VERSION
        json.dumps(results)


def _flip(label: str) -> str:
    return "other" if label != "other" else "invoice"


def test_one_wrong_still_passes(canary: list[Item], params: dict[str, Any], output_schema: dict[str, Any]) -> None:
    item = canary[0]
    answer = gold(item)
    answer["labels"][3]["label"] = _flip(answer["labels"][3]["label"])
    ok, results = grade(answer, item, params, output_schema)
    assert ok
    assert results[0]["observed"] == "19/20 correct" and results[0]["expected"] == ">= 19/20 correct"
    assert results[0]["location"] == [answer["labels"][3]["email_id"]]
    assert [r["location"] for r in results[1:]] == [answer["labels"][3]["email_id"]]
    assert results[1]["severity"] == "info" and results[1]["id"] == "triage.ap-inbox.email-label"


def test_two_wrong_fails(canary: list[Item], params: dict[str, Any], output_schema: dict[str, Any]) -> None:
    item = canary[1]
    answer = gold(item)
    for n in (0, 11):
        answer["labels"][n]["label"] = _flip(answer["labels"][n]["label"])
    ok, results = grade(answer, item, params, output_schema)
    wrong = [answer["labels"][0]["email_id"], answer["labels"][11]["email_id"]]
    assert not ok
    assert results[0]["status"] == "fail" and results[0]["observed"] == "18/20 correct"
    assert results[0]["location"] == wrong
    assert all(w in results[0]["message"] for w in wrong)
    assert {r["location"] for r in results[1:]} == set(wrong)


def test_missing_duplicate_and_unknown(canary: list[Item], params: dict[str, Any], output_schema: dict[str, Any]) -> None:
    item = canary[2]
    answer = gold(item)
    missing = answer["labels"].pop(5)["email_id"]
    ok, results = grade(answer, item, params, output_schema)
    assert ok and results[0]["location"] == [missing] and results[1]["observed"] is None

    answer = gold(item)
    answer["labels"].append(dict(answer["labels"][2]))  # same email twice, same (right) label
    dup = answer["labels"][2]["email_id"]
    ok, results = grade(answer, item, params, output_schema)
    assert results[0]["observed"] == "19/20 correct" and results[0]["location"] == [dup]
    assert results[1]["observed"] == [answer["labels"][2]["label"]] * 2

    answer["labels"].pop(0)  # now also one missing: 18/20
    ok, results = grade(answer, item, params, output_schema)
    assert not ok and results[0]["observed"] == "18/20 correct"

    answer = gold(item)
    answer["labels"].append({"email_id": "B99-M01", "label": "invoice"})
    ok, results = grade(answer, item, params, output_schema)
    assert ok and results[0]["observed"] == "20/20 correct" and results[0]["location"] == []
    assert [r["location"] for r in results[1:]] == ["B99-M01"]
    assert "unknown" in results[1]["message"]


def test_normalize() -> None:
    raw = {"labels": [
        {"email_id": " B01-M01 ", "label": "Dunning Notice"},
        {"email_id": "B01-M02", "label": " PO response "},
        {"email_id": "B01-M03", "label": "po-response"},
        {"email_id": "B01-M04", "label": "INVOICE"},
    ]}
    before = json.dumps(raw)
    out = grading.normalize(raw)
    assert [e["label"] for e in out["labels"]] == ["dunning_notice", "po_response", "po_response", "invoice"]
    assert out["labels"][0]["email_id"] == "B01-M01"
    assert json.dumps(raw) == before, "normalize must not mutate its input"
    for odd in (None, "text", 3, [], {"labels": "x"}, {"labels": [1, None, {"label": 5}]}, {"nope": 1}):
        assert grading.normalize(odd) == odd


# ---------------------------------------------------------------------------------------
# tools


def test_tools(canary: list[Item]) -> None:
    item = canary[0]
    box = Toolbox(item)
    listed = box.call("list_emails", {})
    rows = json.loads(listed.content)
    assert not listed.is_error and [r["id"] for r in rows] == [e["id"] for e in item.context["emails"]]
    assert set(rows[0]) == {"id", "from", "date", "subject"}
    read = box.call("read_email", {"email_id": rows[4]["id"]})
    assert json.loads(read.content) == item.context["emails"][4]
    sub = box.call("submit_labels", {"labels": [{"email_id": rows[0]["id"], "label": "invoice"}]})
    assert sub.terminal and sub.content == "labels received" and sub.answer == {"labels": [{"email_id": rows[0]["id"], "label": "invoice"}]}


@pytest.mark.parametrize("name,arguments", [
    ("delete_email", {}),
    ("read_email", {"email_id": "B99-M99"}),
    ("read_email", {}),
    ("read_email", {"email_id": 7}),
    ("read_email", {"email_id": "B01-M01", "extra": 1}),
    ("list_emails", {"filter": "invoice"}),
    ("submit_labels", {}),
    ("submit_labels", {"labels": "invoice"}),
    ("list_emails", ["not", "a", "mapping"]),
])
def test_tool_errors(canary: list[Item], name: str, arguments: Any) -> None:
    outcome = Toolbox(canary[0]).call(name, arguments)
    assert outcome.is_error and outcome.content.startswith("error: ") and not outcome.terminal


def test_tool_truncation(canary: list[Item]) -> None:
    box = Toolbox(canary[0], max_result_chars=300)
    out = box.call("list_emails", {})
    assert out.content.endswith(TRUNCATION_MARKER) and len(out.content) <= 300 and not out.is_error
    full = Toolbox(canary[0]).call("list_emails", {})
    assert not full.content.endswith(TRUNCATION_MARKER)


# ---------------------------------------------------------------------------------------
# reference models


def test_oracle_passes_everything(spec: dict[str, Any], canary: list[Item], params: dict[str, Any], output_schema: dict[str, Any]) -> None:
    for item in canary:
        answer = single_shot(lambda m: reference.oracle(m, None, item), spec, item)
        assert grade(answer, item, params, output_schema)[1][0]["observed"] == "20/20 correct"
        answer = agentic(lambda m, t: reference.oracle(m, t, item), spec, output_schema, item)
        assert grade(answer, item, params, output_schema)[1][0]["observed"] == "20/20 correct"


def test_oracle_labels_only_what_it_sees(spec: dict[str, Any], canary: list[Item], params: dict[str, Any], output_schema: dict[str, Any]) -> None:
    item = canary[3]
    messages = messages_for(spec, item, "single-shot")
    dropped = [item.context["emails"][6]["id"], item.context["emails"][13]["id"]]

    def without(text: str, email_id: str) -> str:
        pattern = rf"=== EMAIL {re.escape(email_id)} ===\n.*?=== END EMAIL {re.escape(email_id)} ===\n"
        new, n = re.subn(pattern, "", text, flags=re.S)
        assert n == 1
        return new

    messages[1]["content"] = without(messages[1]["content"], dropped[0])
    answer = json.loads(reference.oracle(messages, None, item).content)
    ok, results = grade(answer, item, params, output_schema)
    assert results[0]["location"] == [dropped[0]] and results[1]["observed"] is None

    messages[1]["content"] = without(messages[1]["content"], dropped[1])
    answer = json.loads(reference.oracle(messages, None, item).content)
    ok, results = grade(answer, item, params, output_schema)
    assert not ok and results[0]["location"] == dropped


def test_reference_tool_call_ids_are_deterministic(spec: dict[str, Any], output_schema: dict[str, Any], canary: list[Item]) -> None:
    item = canary[0]
    messages = messages_for(spec, item, "agentic")
    defs = tool_defs(spec, output_schema)
    first = reference.baseline(messages, defs)
    assert [c.id for c in first.tool_calls] == ["call_1_1"] and first.tool_calls[0].name == "list_emails"
    messages.append({"role": "assistant", "content": None, "tool_calls": [
        {"id": "call_1_1", "type": "function", "function": {"name": "list_emails", "arguments": "{}"}}]})
    messages.append({"role": "tool", "tool_call_id": "call_1_1", "content": Toolbox(item).call("list_emails", {}).content})
    second = reference.baseline(messages, defs)
    assert [c.id for c in second.tool_calls] == [f"call_2_{n}" for n in range(1, 21)]
    assert {c.name for c in second.tool_calls} == {"read_email"}
    assert second == reference.baseline(messages, defs)


@pytest.mark.parametrize("seed", BASELINE_SEEDS)
def test_baseline_is_a_floor(seed: str, spec: dict[str, Any], params: dict[str, Any], output_schema: dict[str, Any]) -> None:
    items = edition(seed)
    single = [grade(single_shot(lambda m: reference.baseline(m, None), spec, it), it, params, output_schema)[0] for it in items]
    tooled = [grade(agentic(reference.baseline, spec, output_schema, it), it, params, output_schema)[0] for it in items]
    assert single == tooled, "the baseline must judge the same emails the same way in both systems"
    assert 0 < sum(single) < BATCHES, f"baseline passed {sum(single)}/{BATCHES}"
