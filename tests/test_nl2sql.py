"""Tests of query.nl2sql.v2: generator, execution-match grading, tools, reference models, end to end.

The grading is stricter than the field's comparators on purpose; the BIRD (set equality),
Spider (DISTINCT stripped) and Spider 2.0 (columns sorted independently, extra columns
allowed) holes are re-implemented here and shown to accept answers this grader rejects.
The end-to-end test compiles a throw-away edition with both database workloads and runs
`lrc execute` on the embedded reference models.
"""

from __future__ import annotations

import csv
import functools
import hashlib
import json
import re
import shutil
from collections import Counter
from pathlib import Path
from typing import Any, Callable

import jsonschema
import pytest

from lrc.runtime.checks.results import blocking_failures
from lrc.runtime.workloads import financedb
from lrc.runtime.workloads.base import Item, Reply
from lrc.runtime.workloads.query_nl2sql import compare as compare_module
from lrc.runtime.workloads.query_nl2sql import generator, grading, reference
from lrc.runtime.workloads.query_nl2sql.tools import Toolbox
from support import tool_defs

from helpers.agent_loop import render_messages, run_tool_loop, single_shot_answer
from helpers.workload import assert_imports_confined

ROOT = Path(__file__).resolve().parent.parent
SPEC_DIR = ROOT / "specs" / "workloads" / "query.nl2sql"
PACKAGE_DIR = ROOT / "runtime" / "workloads" / "query_nl2sql"
N = 15
CANARY_SEED = "canary-0"
CANARY_DIGEST = "sha256:4927e515df73c09a3029e1491854e530eae84423d746d4ae2e670c6c778ec047"  # variants vary master data (issue 10)
BASELINE_SEEDS = (CANARY_SEED, "seed-1", "seed-2", "seed-3", "seed-4", "seed-5", "seed-6", "seed-7", "seed-8", "seed-9")
#: The baseline test by default on three seeds; the other seven are slow (CI runs them).
BASELINE_PARAMS = [s if i < 3 else pytest.param(s, marks=pytest.mark.slow) for i, s in enumerate(BASELINE_SEEDS)]


# ---------------------------------------------------------------------------------------
# helpers


def edition(seed: str) -> list[Item]:
    return [generator.generate(seed, i, {}) for i in range(N)]


@pytest.fixture(scope="module")
def canary() -> list[Item]:
    return edition(CANARY_SEED)


def by_topic(items: list[Item], topic: str) -> Item:
    return next(i for i in items if i.answer_key["topic"] == topic)


def messages_for(spec: dict[str, Any], item: Item, system: str) -> list[dict[str, Any]]:
    return render_messages(SPEC_DIR, spec, item.context, system)


def grade(answer: Any, item: Item, params: dict[str, Any], output_schema: dict[str, Any]) -> tuple[bool, list]:
    """normalize -> output contract -> validator, as the runtime does."""
    answer = grading.normalize(answer)
    jsonschema.Draft202012Validator(output_schema).validate(answer)
    results = grading.VALIDATORS["execution-match"](answer, item.answer_key, params, item)
    return not blocking_failures(results), results


def grade_sql(sql: str, item: Item, params: dict[str, Any], output_schema: dict[str, Any]) -> tuple[bool, list]:
    return grade({"sql": sql}, item, params, output_schema)


def single_shot(policy: Callable[[list], Reply], spec: dict[str, Any], item: Item) -> Any:
    return single_shot_answer(policy(messages_for(spec, item, "single-shot")))


def agentic(policy: Callable[[list, list], Reply], spec: dict[str, Any], output_schema: dict[str, Any], item: Item) -> tuple[Any, int]:
    box = Toolbox(item, spec["systems"]["agentic"]["tools"]["max_result_chars"])
    return run_tool_loop(policy, messages_for(spec, item, "agentic"), tool_defs(spec, output_schema), box, 25, unit="steps")


@functools.lru_cache(maxsize=8)
def content_digest(data: bytes) -> str:
    return financedb.content_digest(data)


def item_fingerprint(item: Item) -> dict[str, Any]:
    files = {name: content_digest(data) if name.endswith(".db") else hashlib.sha256(data).hexdigest()
             for name, data in sorted(item.files.items())}
    return {"index": item.index, "item_id": item.item_id, "context": item.context, "answer_key": item.answer_key, "files": files}


# ---------------------------------------------------------------------------------------
# components


def test_components_declared_and_imports_confined() -> None:
    from lrc.runtime.lock.codeprint import discover

    refs = {c.id for c in discover().values()}  # by id, whatever the current version
    for name in ("generator", "grading", "tools", "reference"):
        assert f"query.nl2sql.{name}" in refs
    allowed = ("lrc.runtime.checks", "lrc.runtime.workloads.base", "lrc.runtime.workloads.kit", "lrc.runtime.workloads.financedb",
               "lrc.runtime.workloads.query_nl2sql.compare", "cerberus")
    stdlib = {"__future__", "bisect", "calendar", "collections", "dataclasses", "datetime", "decimal", "functools", "json", "re",
              "sqlite3", "typing", "unicodedata"}
    assert_imports_confined(PACKAGE_DIR, ("generator", "grading", "tools", "reference", "compare"), allowed, stdlib,
                            hidden_from_reference=("generator", "financedb"))


# ---------------------------------------------------------------------------------------
# generator


def test_generator_is_deterministic(canary: list[Item]) -> None:
    again = [generator.generate(CANARY_SEED, i, {"ignored": True}) for i in (0, 7, 14)]
    for a, b in zip(again, (canary[0], canary[7], canary[14])):
        assert a == b
    other = generator.generate("another-seed", 0, {})
    assert other.context != canary[0].context or other.files["finance.db"] != canary[0].files["finance.db"]


def test_canary_digest(canary: list[Item]) -> None:
    data = json.dumps([item_fingerprint(i) for i in canary], sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    assert "sha256:" + hashlib.sha256(data.encode("utf-8")).hexdigest() == CANARY_DIGEST


def test_items_match_item_schema_and_shape(spec: dict[str, Any], canary: list[Item]) -> None:
    validator = jsonschema.Draft202012Validator(spec["dataset"]["item_schema"])
    for n, item in enumerate(canary):
        validator.validate(item.context)
        assert item.item_id == f"nl2sql-q{n + 1:02d}" and item.context["question_id"] == f"Q{n + 1:02d}"
        assert set(item.files) == {generator.PRIMARY, *generator.VARIANTS}
        assert item.answer_key["databases"] == [generator.PRIMARY, *generator.VARIANTS]
        for name in item.answer_key["databases"]:
            assert item.answer_key["expected"][name]["columns"] == item.context["columns"]
            assert item.answer_key["database_digests"][name] == content_digest(item.files[name])
        primary = item.answer_key["expected"][generator.PRIMARY]["rows"]
        assert primary and not all(v is None for row in primary for v in row)
        json.dumps(item.answer_key)  # answer keys are written as JSON
    assert [i.context["difficulty"] for i in canary] == ["easy"] * 5 + ["medium"] * 5 + ["hard"] * 5
    assert len({i.answer_key["topic"] for i in canary}) == N
    assert sum(i.context["ordered"] for i in canary) >= 5 and sum(not i.context["ordered"] for i in canary) >= 5
    # every item of an edition shares one database
    assert len({i.files[generator.PRIMARY] for i in canary}) == 1


def test_variants_disagree_with_the_primary(canary: list[Item]) -> None:
    """The variants are informative: most reference results differ from the primary's."""
    differ = sum(1 for i in canary if any(i.answer_key["expected"][v]["rows"] != i.answer_key["expected"][generator.PRIMARY]["rows"]
                                          for v in generator.VARIANTS))
    assert differ >= 12


def test_parameters_come_from_the_seed(canary: list[Item]) -> None:
    other = edition("seed-1")
    assert sum(a.context["question"] != b.context["question"] for a, b in zip(canary, other)) >= 12
    assert [a.answer_key["topic"] for a in canary] == [b.answer_key["topic"] for b in other]


def test_duplicate_question_really_has_duplicates(canary: list[Item]) -> None:
    item = by_topic(canary, "payment-category-and-method")
    rows = [tuple(r) for r in item.answer_key["expected"][generator.PRIMARY]["rows"]]
    assert len(set(rows)) < len(rows)


def test_no_answer_in_any_prompt(spec: dict[str, Any], canary: list[Item]) -> None:
    for item in canary:
        for system in ("single-shot", "agentic"):
            text = "\n".join(m["content"] for m in messages_for(spec, item, system))
            assert item.answer_key["reference_sql"] not in text
            assert item.context["question"] in text and "Return exactly these columns" in text
            expected = item.answer_key["expected"][generator.PRIMARY]["rows"]
            if len(expected) == 1 and len(expected[0]) == 1 and isinstance(expected[0][0], float):
                assert f"{expected[0][0]:.2f}" not in text


# ---------------------------------------------------------------------------------------
# reference models


def test_oracle_passes_everything(spec: dict[str, Any], canary: list[Item], params: dict[str, Any], output_schema: dict[str, Any]) -> None:
    for item in canary:
        ok, results = grade(single_shot(lambda m: reference.oracle(m, None, item), spec, item), item, params, output_schema)
        assert ok, results[0]["message"]
        answer, steps = agentic(lambda m, t: reference.oracle(m, t, item), spec, output_schema, item)
        assert steps == 2 and grade(answer, item, params, output_schema)[0]


def test_oracle_answers_only_a_visible_question(spec: dict[str, Any], canary: list[Item], params: dict[str, Any],
                                                output_schema: dict[str, Any]) -> None:
    item = canary[4]
    messages = messages_for(spec, canary[5], "single-shot")  # another item's question
    answer = json.loads(reference.oracle(messages, None, item).content)
    assert not grade(answer, item, params, output_schema)[0]


def test_null_answer_fails(canary: list[Item], params: dict[str, Any]) -> None:
    for answer in ({"sql": ""}, {}, None, {"sql": "SELECT 1"}):
        results = grading.execution_match(answer, canary[0].answer_key, params, canary[0])
        assert blocking_failures(results)


@pytest.mark.parametrize("damage", [
    lambda k: k.__setitem__("databases", []), lambda k: k.pop("databases"), lambda k: k.__setitem__("databases", None),
    lambda k: k["expected"].pop(k["databases"][-1]), lambda k: k.__setitem__("expected", {}),
], ids=["empty", "absent", "null", "one-reference-missing", "no-references"])
def test_a_key_without_databases_is_an_error_never_a_pass(canary: list[Item], params: dict[str, Any], damage) -> None:
    """A match on 0 of 0 databases proves nothing: the oracle's SQL against a damaged key is an
    error result (blocking), not a pass and not an exception."""
    import copy
    item = canary[0]
    key = copy.deepcopy(item.answer_key)
    damage(key)
    results = grading.execution_match({"sql": item.answer_key["reference_sql"]}, key, params, item)
    assert results[0]["status"] == "error" and blocking_failures(results)


@pytest.mark.parametrize("seed", BASELINE_PARAMS)
def test_baseline_is_honest_and_in_between(seed: str, spec: dict[str, Any], params: dict[str, Any], output_schema: dict[str, Any]) -> None:
    items = edition(seed)
    single = [grade(single_shot(lambda m: reference.baseline(m, None), spec, it), it, params, output_schema)[0] for it in items]
    tooled = [grade(agentic(reference.baseline, spec, output_schema, it)[0], it, params, output_schema)[0] for it in items]
    assert single == tooled, "the baseline must judge the same questions the same way in both systems"
    assert 0 < sum(single) < N, f"baseline passed {sum(single)}/{N}"
    assert all(single[:5]), "template SQL answers the easy questions"
    assert not any(single[10:]), "the hard questions defeat templates"


# ---------------------------------------------------------------------------------------
# grading: mutations fail and say where


def fan_out(item: Item) -> str:
    """Bills and payments joined on the vendor, then both summed: every bill counted once per payment."""
    day = re.search(r"bill_date <= '([\d-]+)'", item.answer_key["reference_sql"])[1]
    return ("SELECT v.name AS vendor_name, ROUND(SUM(b.amount) - COALESCE(SUM(p.amount), 0), 2) AS open_balance FROM vendors v "
            "JOIN ap_bills b ON b.vendor_id = v.vendor_id LEFT JOIN ap_payments p ON p.vendor_id = v.vendor_id "
            f"AND p.payment_date <= '{day}' WHERE b.bill_date <= '{day}' GROUP BY v.vendor_id, v.name "
            "HAVING open_balance <> 0 ORDER BY open_balance DESC, vendor_name")


def lag_before_filter(item: Item) -> str:
    """LAG over the whole year, then the range filtered: the first period's change is not NULL."""
    p1, p2 = re.search(r"BETWEEN '(\d{4}-\d{2})' AND '(\d{4}-\d{2})'", item.answer_key["reference_sql"]).groups()
    return ("WITH m AS (SELECT e.period_id, SUM(l.debit - l.credit) AS total_expense FROM gl_lines l "
            "JOIN journal_entries e ON e.entry_id = l.entry_id JOIN accounts a ON a.account_id = l.account_id "
            "WHERE a.type = 'expense' GROUP BY e.period_id), w AS (SELECT period_id, total_expense, "
            "total_expense - LAG(total_expense) OVER (ORDER BY period_id) AS change_from_prior FROM m) "
            f"SELECT * FROM w WHERE period_id BETWEEN '{p1}' AND '{p2}' ORDER BY period_id")


MUTATIONS = [
    # (topic, description, SQL transform, words the message must contain)
    ("open-ap-by-vendor", "wrong join: bills joined to payments, then summed (fan-out)", fan_out, "row 1 differs"),
    ("bills-total-for-month", "missing filter: credit memos not excluded",
     lambda item: item.answer_key["reference_sql"].replace(" AND is_credit_memo = 0", ""), "row(s) missing"),
    ("bills-total-for-month", "wrong period logic: posting period instead of bill date",
     lambda item: re.sub(r"bill_date BETWEEN '(\d{4}-\d{2})-01' AND '[\d-]+'", r"period_id = '\1'", item.answer_key["reference_sql"]),
     "row(s) missing"),
    ("active-accounts-of-type", "missing filter: inactive accounts included",
     lambda item: item.answer_key["reference_sql"].replace(" AND is_active = 1", "").replace("'liability'", "'expense'")
     .replace("'asset'", "'expense'").replace("'revenue'", "'expense'"), None),
    ("department-expense-by-account", "missing filter: all departments",
     lambda item: re.sub(r"l\.department_id = '\w+' AND ", "", item.answer_key["reference_sql"]), "differs"),
    ("customers-by-region-and-limit", "duplicated rows",
     lambda item: item.answer_key["reference_sql"] + " UNION ALL " + item.answer_key["reference_sql"], "unexpected row(s)"),
    ("payment-category-and-method", "DISTINCT drops the duplicates the question keeps",
     lambda item: item.answer_key["reference_sql"].replace("SELECT v.category", "SELECT DISTINCT v.category"), "missing"),
    ("active-accounts-of-type", "order not as asked",
     lambda item: item.answer_key["reference_sql"].replace("ORDER BY account_id", "ORDER BY account_id DESC"), "row 1 differs"),
    ("customers-by-region-and-limit", "an extra column",
     lambda item: item.answer_key["reference_sql"].replace("SELECT name, credit_limit", "SELECT name, credit_limit, region"),
     "expected 2 column(s)"),
    ("monthly-expense-change", "window over the whole year, then filtered", lag_before_filter, "row 1 differs"),
    ("vendors-without-bills", "inner join instead of anti-join",
     lambda item: reference.baseline_sql(item.context["question"], item.context["columns"]), "unexpected row(s)"),
    ("customers-net-invoiced-over", "a syntax error", lambda item: "SELEC name FROM customers", "does not run"),
    ("customers-net-invoiced-over", "a write", lambda item: "DELETE FROM customers", "not allowed"),
]


@pytest.mark.parametrize("topic,what,mutate,words", MUTATIONS, ids=[m[1] for m in MUTATIONS])
def test_mutation_fails_and_says_where(canary: list[Item], params: dict[str, Any], output_schema: dict[str, Any],
                                       topic: str, what: str, mutate, words: str | None) -> None:
    item = by_topic(canary, topic)
    if topic == "active-accounts-of-type" and words is None:
        # Make the question about expense accounts (where an inactive account exists) to test the missing filter.
        item = Item(item.index, item.item_id, item.context, _rekey_accounts(item, "expense"), item.files)
    sql = mutate(item)
    ok, results = grade_sql(sql, item, params, output_schema)
    assert not ok, what
    summary = results[0]
    assert summary["status"] == "fail" and summary["id"] == grading.EXECUTION_MATCH
    assert summary["location"]["database"] in item.answer_key["databases"]
    assert summary["message"].startswith(summary["location"]["database"] + ":")
    if words:
        assert words in summary["message"], summary["message"]
    assert all(r["severity"] == "info" and r["location"]["database"] for r in results[1:])


def _rekey_accounts(item: Item, kind: str) -> dict[str, Any]:
    sql = re.sub(r"type = '\w+'", f"type = '{kind}'", item.answer_key["reference_sql"])
    key = json.loads(json.dumps(item.answer_key))
    key["reference_sql"] = sql
    for name in key["databases"]:
        conn = financedb.open_copy(item.files[name])
        key["expected"][name] = generator.run_reference(conn, sql)
        conn.close()
    return key


def test_coincidence_on_one_database_fails_on_the_variants(canary: list[Item], params: dict[str, Any], output_schema: dict[str, Any]) -> None:
    item = by_topic(canary, "paid-per-vendor-in-category")
    rows = item.answer_key["expected"][generator.PRIMARY]["rows"]
    hardcoded = " UNION ALL ".join(f"SELECT {json.dumps(n).replace(chr(34), chr(39))} AS vendor_name, {v} AS total_paid" for n, v in rows)
    ok, results = grade_sql(hardcoded, item, params, output_schema)
    assert not ok
    assert results[0]["location"]["database"] in generator.VARIANTS
    assert results[0]["observed"].startswith("matches on 1 of 3")


def literal_sql(result: dict[str, Any]) -> str:
    """The result as a query of literal values only (what a model that read the primary once could send)."""
    def lit(v: Any) -> str:
        return "NULL" if v is None else ("'" + v.replace("'", "''") + "'" if isinstance(v, str) else repr(v))
    return " UNION ALL ".join("SELECT " + ", ".join(f'{lit(v)} AS "{c}"' for v, c in zip(row, result["columns"]))
                              for row in result["rows"])


LITERAL_SEEDS = (CANARY_SEED, "seed-1", "seed-2", "seed-3", "lit-4", "lit-5", "lit-6", "lit-7")


#: By default on three seeds (two kinds of names); the other five are slow (CI runs them).
@pytest.mark.parametrize("seed", [s if s in (CANARY_SEED, "seed-1", "lit-4") else pytest.param(s, marks=pytest.mark.slow) for s in LITERAL_SEEDS])
def test_a_hard_coded_literal_answer_fails_every_template(seed: str, params: dict[str, Any], output_schema: dict[str, Any]) -> None:
    """For every template (master-data questions included), the primary's result returned as
    literals fails on at least one variant, and the generator's own check says so."""
    for item in edition(seed):
        key = item.answer_key
        primary = key["expected"][generator.PRIMARY]
        differing = [v for v in generator.VARIANTS
                     if grading.compare(key["expected"][v], primary["columns"], primary["rows"], key["ordered"], key["tolerance"])]
        assert differing, f"{seed} {key['topic']}: no variant tells a literal answer apart"
        ok, results = grade_sql(literal_sql(primary), item, params, output_schema)
        assert not ok, f"{seed} {key['topic']}: the hard-coded literal answer passed"
        assert results[0]["location"]["database"] in differing
        assert grade_sql(key["reference_sql"], item, params, output_schema)[0]


def test_variants_vary_the_master_data(canary: list[Item]) -> None:
    item = canary[0]
    tables = {"vendors": "SELECT * FROM vendors ORDER BY 1", "customers": "SELECT * FROM customers ORDER BY 1",
              "accounts": "SELECT * FROM accounts ORDER BY 1"}
    def read(name: str) -> dict[str, list]:
        conn = financedb.open_copy(item.files[name])
        try:
            return {t: conn.execute(q).fetchall() for t, q in tables.items()}
        finally:
            conn.close()
    primary = read(generator.PRIMARY)
    for name in generator.VARIANTS:
        variant = read(name)
        for table in tables:
            assert variant[table] != primary[table], f"{name}: {table} is the primary's"
    # the company stays the same: name, year, categories and regions
    conn = financedb.open_copy(item.files[generator.VARIANTS[0]])
    try:
        assert {c for (c,) in conn.execute("SELECT DISTINCT region FROM customers")} <= set(financedb.books.REGIONS)
    finally:
        conn.close()


@pytest.mark.parametrize("topic", ["vendor-count-by-category", "customers-by-region-and-limit", "active-accounts-of-type"])
def test_redraws_a_question_the_variants_do_not_change(topic: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """A draw whose result is the same on every variant is refused: with the variant check
    forced to say 'same' for the first attempts, the generator keeps drawing."""
    index = next(i for i in range(N) if generator.generate(CANARY_SEED, i, {}).answer_key["topic"] == topic)
    calls = []
    real = generator.varies

    def fake(q, primary, variants):
        calls.append(q.question)
        return len(calls) > 3 and real(q, primary, variants)

    monkeypatch.setattr(generator, "varies", fake)
    item = generator.generate("redraw-seed", index, {})
    assert len(calls) >= 4 and item.context["question"] == calls[-1]
    monkeypatch.setattr(generator, "varies", lambda *a: False)
    with pytest.raises(RuntimeError, match="no informative draw"):
        generator.generate("redraw-seed", index, {})


LENIENT = [
    ("customers-by-region-and-limit", "rows in another order (order not asked)",
     lambda s: s + " ORDER BY credit_limit DESC, name DESC"),
    ("customers-by-region-and-limit", "columns in another order, matched by name",
     lambda s: s.replace("SELECT name, credit_limit", "SELECT credit_limit, name")),
    ("customers-by-region-and-limit", "aliases and case differ from the expected names",
     lambda s: s.replace("SELECT name, credit_limit", "SELECT name AS NAME, credit_limit AS Credit_Limit")),
    ("bills-total-for-month", "no rounding (float noise)", lambda s: s.replace("ROUND(SUM(amount), 2)", "SUM(amount)")),
    ("bills-total-for-month", "money as text", lambda s: s.replace("ROUND(SUM(amount), 2)", "printf('%.2f', SUM(amount))")),
    ("vendor-count-by-category", "a count as a real", lambda s: s.replace("COUNT(*)", "COUNT(*) * 1.0")),
    ("late-posted-bills", "a trailing semicolon and a fence", lambda s: f"```sql\n{s};\n```"),
]


@pytest.mark.parametrize("topic,what,mutate", LENIENT, ids=[m[1] for m in LENIENT])
def test_equivalent_answers_pass(canary: list[Item], params: dict[str, Any], output_schema: dict[str, Any], topic: str, what: str, mutate) -> None:
    item = by_topic(canary, topic)
    ok, results = grade_sql(mutate(item.answer_key["reference_sql"]), item, params, output_schema)
    assert ok, results[0]["message"]


def test_columns_not_matched_by_name_compare_by_position(canary: list[Item], params: dict[str, Any], output_schema: dict[str, Any]) -> None:
    item = by_topic(canary, "customers-by-region-and-limit")
    sql = item.answer_key["reference_sql"].replace("SELECT name, credit_limit", "SELECT credit_limit AS a, name AS b")
    ok, results = grade_sql(sql, item, params, output_schema)
    assert not ok and "unexpected row(s)" in results[0]["message"]


def test_cell_normalization() -> None:
    c = grading.cell
    assert c(0.1 + 0.2) == c(0.3) == c("0.30") == c(" 0.3 ")
    assert c(1) == c(1.0) == c("1.00") and c(1) != c(1.01)
    assert c(2.675) == c("2.675") != c("2.68")  # exact from the decimal string: nothing is rounded half-up
    assert c(None) is None and c(None) != c("") and c("") == ("s", "")
    assert c("Cafe\u0301") == c("Café") and c("abc") != c("ABC")
    assert c("2026-06-30") == ("s", "2026-06-30")
    assert c(b"\x01") == ("b", "01") and c(float("inf"))[0] == "n"


MONEY = {"columns": ["vendor_name", "total_paid"], "rows": [["Kestrel Freight", 1234.5], ["Alder Steel Supply", 88.1]]}


@pytest.mark.parametrize("offset,ok", [("0", True), ("0.005", True), ("-0.005", True), ("0.0049", True), ("-0.0049", True),
                                       ("0.0051", False), ("-0.0051", False), ("0.01", False), ("-0.01", False)])
@pytest.mark.parametrize("ordered", [False, True])
def test_money_tolerance_is_symmetric_around_the_exact_reference(offset: str, ok: bool, ordered: bool) -> None:
    """|observed - expected| <= 0.005 both ways: 1234.495 and 1234.505 both match 1234.50 (half-up
    rounding of both sides accepted the first and refused the second)."""
    from decimal import Decimal
    got = [[name, str(Decimal(repr(v)) + Decimal(offset))] for name, v in MONEY["rows"]]
    assert (grading.compare(MONEY, MONEY["columns"], got, ordered) is None) is ok
    # the same as a float cell, and with the rows in another order when order does not count
    floats = [[name, float(v)] for name, v in got]
    assert (grading.compare(MONEY, MONEY["columns"], floats, ordered) is None) is ok
    if not ordered:
        assert (grading.compare(MONEY, MONEY["columns"], floats[::-1], False) is None) is ok


@pytest.mark.parametrize("got,ok", [(3, True), (3.0, True), ("3", True), (3.004, False), (2.996, False), (4, False)])
def test_integer_columns_compare_exactly(got: Any, ok: bool) -> None:
    """Counts and ranks are declared exact (tolerance 0), not money: 3.004 is not a count of 3."""
    expected = {"columns": ["vendor_count"], "rows": [[3]]}
    assert compare_module.tolerances(expected) == ["0"]
    assert (grading.compare(expected, ["vendor_count"], [[got]], False) is None) is ok


def test_multiset_matching_within_tolerance_is_one_to_one() -> None:
    """Two returned rows within tolerance of one expected row do not both match it."""
    expected = {"columns": ["a", "b"], "rows": [["x", 10.0], ["x", 10.01]]}
    assert grading.compare(expected, ["a", "b"], [["x", 10.004], ["x", 10.006]], False) is None
    assert grading.compare(expected, ["a", "b"], [["x", 10.006], ["x", 10.004]], False) is None  # needs re-matching
    assert grading.compare(expected, ["a", "b"], [["x", 10.0], ["x", 10.0]], False) is not None
    assert grading.compare(expected, ["a", "b"], [["x", 10.0]], False) is not None
    assert grading.compare(expected, ["a", "b"], [["y", 10.0], ["x", 10.01]], False) is not None


@pytest.mark.parametrize("want,got,ok", [
    (10**28, 10**28 + 1, False), (10**28 + 1, 10**28, False), (-(10**29) - 7, -(10**29) - 8, False),
    (10**30 + 5, "1000000000000000000000000000005", True), (10**30 + 5, "1000000000000000000000000000005.0", True),
    (10**30 + 5, 10**30 + 6, False), (1234567890123456789012345678, 1234567890123456789012345679, False),
])
def test_integers_beyond_28_digits_compare_exactly(want: int, got: Any, ok: bool) -> None:
    """Cells are read exactly: normalizing in the default 28-digit context made 10**28 + 1 equal 10**28."""
    expected = {"columns": ["n"], "rows": [[want]]}
    assert (grading.compare(expected, ["n"], [[got]], False) is None) is ok
    assert (grading.compare(expected, ["n"], [[got]], True) is None) is ok


@pytest.mark.parametrize("n,shift,ok", [(2000, "0.005", True), (2000, "-0.005", True), (3000, "0.005", True),
                                        (2000, "0.0051", False), (1500, "0.004", True)])
def test_many_rows_within_tolerance_match_without_running_out(n: int, shift: str, ok: bool) -> None:
    """Rows a cent apart, every returned row off by up to the tolerance, so most returned rows are
    within tolerance of two expected rows: a maximum matching exists and must be found (the
    augmenting-path search used to walk a chain as long as the result, ran out of its budget and
    failed a right answer) — and quickly."""
    import time
    from decimal import Decimal
    expected = {"columns": ["k", "amount"], "rows": [["x", float(Decimal(100) + Decimal(i) / 100)] for i in range(n)]}
    got = [["x", str(Decimal(100) + Decimal(i) / 100 + Decimal(shift))] for i in range(n)]
    start = time.perf_counter()
    assert (grading.compare(expected, ["k", "amount"], got, False) is None) is ok
    assert (grading.compare(expected, ["k", "amount"], got[::-1], False) is None) is ok
    assert time.perf_counter() - start < 20


def test_long_augmenting_chains_never_recurse_past_the_limit() -> None:
    """Expected values closer together than the tolerance, with the exact pass building a chain
    as long as the result: grading fails or passes, never a RecursionError."""
    from decimal import Decimal
    n = 3000
    expected = {"columns": ["v"], "rows": [[str(Decimal(i) / 1000)] for i in range(n + 1)]}
    got = [[str(Decimal(i) / 1000)] for i in range(1, n + 1)] + [[str(Decimal(n) / 1000 + Decimal("0.004"))]]
    tol = ["0.005"]
    out = grading.compare(expected, ["v"], got, False, tol)
    assert out is None or "missing" in out["message"]


# ---------------------------------------------------------------------------------------
# the known holes of BIRD, Spider and Spider 2.0, and this grader


def bird_ex(gold: list[tuple], pred: list[tuple]) -> bool:
    """bird-bench mini_dev evaluation_ex.py: set equality of result tuples."""
    return set(pred) == set(gold)


def spider_ex(gold_sql: str, pred_sql: str, run: Callable[[str], list[tuple]]) -> bool:
    """Spider test-suite default: DISTINCT stripped from both queries, then multiset (no column permutation here)."""
    strip = lambda s: re.sub(r"\bDISTINCT\b\s*", "", s, flags=re.I)
    return Counter(run(strip(gold_sql))) == Counter(run(strip(pred_sql)))


def spider2_ignore_order(gold: list[tuple], pred: list[tuple]) -> bool:
    """Spider 2.0-lite compare_pandas_table(ignore_order=True): each gold column sorted on its own must
    equal some predicted column sorted on its own; extra predicted columns are allowed."""
    gold_cols = [sorted(map(repr, col)) for col in zip(*gold)]
    pred_cols = [sorted(map(repr, col)) for col in zip(*pred)]
    return len(gold) == len(pred) and all(g in pred_cols for g in gold_cols)


def ours(item: Item, sql: str, params: dict[str, Any], output_schema: dict[str, Any]) -> bool:
    return grade_sql(sql, item, params, output_schema)[0]


def _runner(item: Item) -> Callable[[str], list[tuple]]:
    conn = financedb.open_copy(item.files[generator.PRIMARY])
    return lambda sql: [tuple(r) for r in conn.execute(sql).fetchall()]


def test_bird_and_spider_accept_distinct_we_do_not(canary: list[Item], params: dict[str, Any], output_schema: dict[str, Any]) -> None:
    item = by_topic(canary, "payment-category-and-method")
    run = _runner(item)
    gold = item.answer_key["reference_sql"]
    pred = gold.replace("SELECT v.category", "SELECT DISTINCT v.category")
    assert bird_ex(run(gold), run(pred)), "BIRD: set equality ignores the lost duplicates"
    assert spider_ex(gold, pred, run), "Spider: DISTINCT is stripped before comparing"
    assert not ours(item, pred, params, output_schema)


def test_bird_accepts_a_duplicated_row_we_do_not(canary: list[Item], params: dict[str, Any], output_schema: dict[str, Any]) -> None:
    item = by_topic(canary, "customers-by-region-and-limit")
    run = _runner(item)
    gold = item.answer_key["reference_sql"]
    pred = f"{gold} UNION ALL SELECT * FROM ({gold} LIMIT 1)"
    assert bird_ex(run(gold), run(pred))
    assert not ours(item, pred, params, output_schema)


def test_spider2_accepts_misaligned_rows_and_extra_columns_we_do_not(canary: list[Item], params: dict[str, Any],
                                                                     output_schema: dict[str, Any]) -> None:
    item = by_topic(canary, "customers-net-invoiced-over")
    run = _runner(item)
    gold = item.answer_key["reference_sql"]
    # Pair each customer with the *next* customer's amount: every column is right, no row is.
    misaligned = (f"WITH g AS ({gold}), n AS (SELECT customer_name, net_invoiced, ROW_NUMBER() OVER (ORDER BY customer_name) AS k, "
                  f"COUNT(*) OVER () AS c FROM g) SELECT a.customer_name, b.net_invoiced FROM n a JOIN n b ON b.k = a.k % a.c + 1")
    assert run(misaligned) != run(gold)
    assert spider2_ignore_order(run(gold), run(misaligned)), "Spider 2.0: columns sorted independently"
    assert not ours(item, misaligned, params, output_schema)
    extra = gold.replace("SELECT c.name AS customer_name,", "SELECT c.name AS customer_name, c.region,")
    assert spider2_ignore_order(run(gold), run(extra)), "Spider 2.0: extra columns allowed"
    assert not ours(item, extra, params, output_schema)


# ---------------------------------------------------------------------------------------
# tools


def test_tools(canary: list[Item]) -> None:
    box = Toolbox(canary[0])
    out = box.call("run_sql", {"sql": "SELECT vendor_id, name FROM vendors ORDER BY vendor_id LIMIT 3"})
    payload = json.loads(out.content)
    assert not out.is_error and payload["columns"] == ["vendor_id", "name"] and payload["row_count"] == 3
    assert payload["rows"][0][0] == "V001" and payload["truncated"] is False
    sub = box.call("submit_sql", {"sql": "SELECT 1"})
    assert sub.terminal and sub.answer == {"sql": "SELECT 1"} and not sub.is_error


@pytest.mark.parametrize("name,arguments", [
    ("drop_table", {}), ("run_sql", {}), ("run_sql", {"sql": ""}), ("run_sql", {"sql": 3}), ("run_sql", {"sql": "SELECT 1", "x": 1}),
    ("submit_sql", {}), ("submit_sql", {"sql": "  "}), ("run_sql", ["SELECT 1"]),
])
def test_tool_errors(canary: list[Item], name: str, arguments: Any) -> None:
    out = Toolbox(canary[0]).call(name, arguments)
    assert out.is_error and out.content.startswith("error: ") and not out.terminal


# ---------------------------------------------------------------------------------------
# end to end: compile an edition with both database workloads and execute it


EDITION_ID = "sql-demo"


def _pinned(workload: str) -> str:
    """The version of `workload` the repository's demo edition pins (the ids follow the re-locks)."""
    found = re.search(rf"(?m)^  - ({re.escape(workload)}\.v\d+)$", (ROOT / "specs" / "editions" / "demo.yaml").read_text(encoding="utf-8"))
    assert found, workload
    return found.group(1)


NL2SQL, MONTH_END = _pinned("query.nl2sql"), _pinned("execute.month-end")


def build_project(tmp_path: Path) -> Path:
    project = tmp_path / "project"
    for name in ("specs", "schemas"):
        shutil.copytree(ROOT / name, project / name)
    demo = (ROOT / "specs" / "editions" / "demo.yaml").read_text(encoding="utf-8")
    text = re.sub(r"(?m)^id: demo$", f"id: {EDITION_ID}", demo)
    text = re.sub(r"(?ms)^workloads:\n(  - .*?\n)+", f"workloads:\n  - {NL2SQL}\n  - {MONTH_END}\n", text)
    assert NL2SQL in text and "triage.ap-inbox" not in text
    (project / "specs" / "editions" / f"{EDITION_ID}.yaml").write_text(text, encoding="utf-8")
    return project


@pytest.mark.slow  # reads the full demo run (conftest.py `demo_run`: 865 runs)
def test_end_to_end_on_the_reference_models(tmp_path: Path, demo_run) -> None:
    """The edition of both database workloads compiles with their tools; executed, the oracle
    passes n/n, the null model 0 and the baseline in between. The execute is the session's demo
    run (conftest.py `demo_run`): the demo edition runs these two workloads, at the same pins,
    on the same models, systems and seed, among others -- executing them again here would
    repeat it."""
    from lrc.compiler.pipeline import compile_project

    project = build_project(tmp_path)
    result = compile_project(project)
    errors = [d for d in result.diagnostics.items if d.severity == "error"]
    assert not errors, errors
    lock = project / "generated" / EDITION_ID / "plan.lock"
    plan = json.loads(lock.read_text(encoding="utf-8"))["plan"]
    assert set(plan["workloads"]) == {NL2SQL, MONTH_END}
    assert set(plan["workloads"][MONTH_END]["tools"]) == {"agentic"}
    assert {"run_sql", "submit_sql"} == {t["function"]["name"] for t in plan["workloads"][NL2SQL]["tools"]["agentic"]}
    out, proc = demo_run
    assert proc.returncode == 0, proc.stderr[-3000:]
    with (out / "cells.csv").open(encoding="utf-8") as fh:
        cells = {(r["workload"], r["model"], r["system"]): r for r in csv.DictReader(fh)}
    expected = [(NL2SQL, "single-shot"), (NL2SQL, "agentic"), (MONTH_END, "agentic")]
    assert {(w, s) for w, _, s in cells if w in (NL2SQL, MONTH_END)} == set(expected)
    for workload, system in expected:
        oracle, null, baseline = (cells[(workload, f"lrc/{m}", system)] for m in ("oracle", "null", "baseline"))
        assert (oracle["passes"], oracle["n"]) == ("15", "15"), (workload, system)
        assert (null["passes"], null["n"]) == ("0", "15"), (workload, system)
        assert 0 < int(baseline["passes"]) < 15, (workload, system, baseline["passes"])
    oracle_run = next(p for p in sorted((out / "runs" / MONTH_END).rglob("evaluation.json")) if "oracle" in str(p))
    evaluation = json.loads(oracle_run.read_text(encoding="utf-8"))
    assert evaluation["verdict"] == "pass"
    assert {r["id"] for r in evaluation["validators"]} >= {"execute.month-end.writer-seal", "execute.month-end.entries-match",
                                                          "execute.month-end.trial-balance", "execute.month-end.close-summary"}
