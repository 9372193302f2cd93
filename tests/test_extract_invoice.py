"""Tests of the extract.invoice workload package, the shared money/dates/pdf helpers, and an
end-to-end run of both new workloads (extract.invoice, reconcile.ledger) through `lrc execute`."""

from __future__ import annotations

import copy
import csv
import hashlib
import json
import re
from decimal import Decimal
from pathlib import Path
from typing import Any, Callable

import jsonschema
import pytest

from lrc.runtime.checks import money
from lrc.runtime.checks.dates import DateError, add_months, parse_iso
from lrc.runtime.checks.pdf import PdfError, extract_pages
from lrc.runtime.checks.results import blocking_failures
from lrc.runtime.workloads.base import Item, Reply
from lrc.runtime.workloads.extract_invoice import generator, grading, reference
from lrc.runtime.workloads.extract_invoice.tools import TRUNCATION_MARKER, Toolbox

from helpers.agent_loop import render_messages, run_tool_loop, single_shot_answer
from helpers.workload import assert_imports_confined, canonical, item_json
from support import outputs_across_environments, pinned, tool_defs

ROOT = Path(__file__).resolve().parent.parent
SPEC_DIR = ROOT / "specs" / "workloads" / "extract.invoice"
PACKAGE_DIR = ROOT / "runtime" / "workloads" / "extract_invoice"
ITEMS = 15
CANARY_SEED = "canary-0"
# sha256 of canonical JSON of every canary item's context and answer key (PDFs excluded) ...
CANARY_DIGEST = "sha256:4c3e668a9e522b06222ac5130dbe054f1e1d14e691909abbf9f4a4ae67e7784d"
# ... and the sha256 of each canary PDF's bytes, invoice-01 .. invoice-15.
CANARY_PDF_SHA256 = (
    "6128a04d76279673f0b9358e56f9fb0977e0aed4f605944df378f37dd2ba6e1f",
    "723f461c85ac3ee753f96c60721a487f8795ce0aaee63b3145031f9ff40f3226",
    "641e40095aa3035129c874266422576b163c8faa5536f746d1a6d37ac09f96ad",
    "5330afabc21d0e9ebd3c4f780d3f839de16701506b7986be8400306a3d9f3d86",
    "2420d03f53b05d15a671f744c3387d56c0374cbff0bcbb681bed7cb6dc77daf8",
    "e59b534205950765c3680409032172bb6c18fa0cb8c4f2308c9c767294b07331",
    "5fe6c1b5bebde3f07ddabe220f27298781944a815b28aae3cb24ea551ef0d1a3",
    "262811acf36b318af5aa174734349e79f1f523bb851d6f05b2bf22c0defe2bc3",
    "262fb97ab19a1266139711b9c67548fefaad934ed51e892b2d16fe7c6032a39e",
    "cc1219ba876e95f547b86a3d29931bb651b88db46e26fd9d59ce095fce2745e0",
    "045211d18c0a07800fbade039396d3c1ea3239f45d758ef27183e948707288cb",
    "c5c1f0b8396b72460f27cf459b28f1a565c2a67a4aebef97eb896864d83728f9",
    "e10916a81e3e51474a3dde99667d1d568a40164311e270c060e60b61e09ee271",
    "e1bf0c138efe7dd9edee2ea316a2038d90a81b3fa2e55377a8bb3e6a9e204e20",
    "2f01f687721f4dde88fe1ba0caa6105e5901dada7569298641194a9515704b8f",
)
BASELINE_SEEDS = (CANARY_SEED, "seed-1", "seed-2", "seed-3", "seed-4", "seed-5", "seed-6", "seed-7", "seed-8", "seed-9")


# ---------------------------------------------------------------------------------------
# helpers


def edition(seed: str) -> list[Item]:
    return [generator.generate(seed, i, {}) for i in range(ITEMS)]


@pytest.fixture(scope="module")
def canary() -> list[Item]:
    return edition(CANARY_SEED)


def messages_for(spec: dict[str, Any], item: Item, system: str) -> list[dict[str, Any]]:
    return render_messages(SPEC_DIR, spec, item.context, system)


def grade(answer: Any, item: Item, params: dict[str, Any], output_schema: dict[str, Any]) -> tuple[bool, list]:
    """output contract -> validate, as the runtime does (this workload has no pre-contract normalize)."""
    assert not hasattr(grading, "normalize")
    jsonschema.Draft202012Validator(output_schema).validate(answer)
    results = grading.VALIDATORS["invoice-fields"](answer, item.answer_key, params)
    json.dumps(results)
    return not blocking_failures(results), results


def single_shot(policy: Callable[[list], Reply], spec: dict[str, Any], item: Item) -> Any:
    return single_shot_answer(policy(messages_for(spec, item, "single-shot")))


def agentic(policy: Callable[[list, list], Reply], spec: dict[str, Any], output_schema: dict[str, Any], item: Item) -> Any:
    box = Toolbox(item, spec["systems"]["agentic"]["tools"]["max_result_chars"])
    return run_tool_loop(policy, messages_for(spec, item, "agentic"), tool_defs(spec, output_schema), box, 6)[0]


def gold(item: Item) -> dict[str, Any]:
    return copy.deepcopy(item.answer_key["fields"])


def summary_of(results: list) -> dict[str, Any]:
    assert results[0]["id"] == grading.ALL_FIELDS and results[0]["severity"] == "error"
    return results[0]


# ---------------------------------------------------------------------------------------
# components


def test_components_declared_and_imports_confined() -> None:
    from lrc.runtime.lock.codeprint import closure, discover

    refs = discover()
    from lrc.runtime.workloads.extract_invoice import tools as tools_module

    for name, module in {"generator": generator, "grading": grading, "tools": tools_module, "reference": reference}.items():
        assert f"extract.invoice.{name}.v{module.COMPONENT_VERSION}" in refs
    allowed = ("lrc.runtime.checks", "lrc.runtime.workloads.base", "lrc.runtime.workloads.kit", "lrc.runtime.workloads.extract_invoice",
               "cerberus", "reportlab", "pypdf")
    stdlib = {"__future__", "base64", "binascii", "collections", "copy", "dataclasses", "datetime", "decimal", "hashlib", "io",
              "json", "logging", "math", "re", "typing", "unicodedata"}
    assert_imports_confined(PACKAGE_DIR, ("generator", "grading", "tools", "reference"), allowed, stdlib)
    # the shared helpers are part of every fingerprint that uses them
    files = {p.name for p in closure("lrc.runtime.workloads.extract_invoice.grading")}
    assert {"money.py", "dates.py"} <= files
    assert "pdf.py" in {p.name for p in closure("lrc.runtime.workloads.extract_invoice.generator")}


def test_spec_declares_the_rules_the_validator_implements(spec: dict[str, Any], params: dict[str, Any]) -> None:
    rules = grading.rules_from(params)
    assert rules.unicode == "NFKC" and rules.casefold and rules.collapse_whitespace
    assert rules.money_tolerance == Decimal("0.005") and rules.decimal_mark is None
    assert list(rules.fields) == ["vendor", "invoice_number", "invoice_date", "due_date", "currency", "line_items",
                                  "subtotal", "tax", "total"]
    schema = json.loads((SPEC_DIR / "output.schema.json").read_text(encoding="utf-8"))
    assert set(rules.fields) == set(schema["required"]) == set(schema["properties"])
    assert spec["rate_card"] == {"job": "Process 1,000 invoices", "volume_units": 1000}
    assert spec["dataset"]["units_per_item"] == 1 and spec["input"]["mode"] == "text-or-file"


@pytest.mark.parametrize("bad", [
    {"normalization": {}},
    "money-rounding",
    "money-negative-tolerance",
    "money-no-tolerance",
    "unknown-kind",
    "unknown-rule",
])
def test_invalid_rules_are_an_error_result(params: dict[str, Any], canary: list[Item], bad: Any) -> None:
    p = copy.deepcopy(params)
    if bad == "money-rounding":  # rounding both sides is not a comparison this validator offers
        p["normalization"]["money"]["rounding"] = "ROUND_HALF_UP"
    elif bad == "money-negative-tolerance":
        p["normalization"]["money"]["tolerance"] = "-0.005"
    elif bad == "money-no-tolerance":
        del p["normalization"]["money"]["tolerance"]
    elif bad == "unknown-kind":
        p["fields"]["vendor"] = "fuzzy"
    elif bad == "unknown-rule":
        p["normalization"]["text"]["strip_punctuation"] = True
    else:
        p = bad
    results = grading.validate(gold(canary[0]), canary[0].answer_key, p)
    assert len(results) == 1 and results[0]["status"] == "error" and results[0]["location"] == "params"


# ---------------------------------------------------------------------------------------
# shared helpers: money, dates, pdf


@pytest.mark.parametrize("text,expected", [
    ("2.675", "2.675"), ("1,234.56", "1234.56"), ("1.234,56", "1234.56"), ("1 234,56", "1234.56"), ("1\u00a0234,56", "1234.56"),
    ("12'345.00", "12345.00"), ("1,234", "1234"), ("1,5", "1.5"), ("1,2345", "1.2345"), ("-1,234.56", "-1234.56"),
    ("(1,234.56)", "-1234.56"), ("1,234.56-", "-1234.56"), ("$1,234.56", "1234.56"), ("-$1,234.56", "-1234.56"),
    ("€ 1.234,56", "1234.56"), ("1.234,56 €", "1234.56"), ("EUR -1.234,56", "-1234.56"), ("(£1,234.56)", "-1234.56"),
    ("CHF 12'345.00", "12345.00"), ("CA$99.50", "99.50"), ("\u22121.50", "-1.50"), ("1.234.567,89", "1234567.89"),
    ("1,234,567.89", "1234567.89"), (".5", "0.5"), ("0", "0"), (7, "7"), (2.675, "2.675"), (1e-7, "1E-7"),
])
def test_parse_amount(text: Any, expected: str) -> None:
    assert money.parse_amount(text) == Decimal(expected)


@pytest.mark.parametrize("bad", ["", "abc", "1,23,4", "12,34,56", "1.2.3,4,5", "1e5", "--1", "1..2", "NaN", None, True, float("nan"), [1]])
def test_parse_amount_refuses(bad: Any) -> None:
    with pytest.raises(money.MoneyError):
        money.parse_amount(bad)


@pytest.mark.parametrize("bad", ["12 34", "1 2345.00", "1'23.00", "1 234 56", "1,234 567.00", "1234 567", "1 234 5678,9",
                                 "12'34'567", "\u00a012 3"])
def test_parse_amount_refuses_badly_spaced_groups(bad: str) -> None:
    """Rule 5 holds for space and apostrophe grouping too (it was checked only for ',' and '.')."""
    with pytest.raises(money.MoneyError):
        money.parse_amount(bad)


@pytest.mark.parametrize("text,expected", [("1 234 567,89", "1234567.89"), ("12 345", "12345"), ("1'234'567.50", "1234567.50"),
                                           ("123\u202f456.7", "123456.7"), ("-1 000", "-1000"), ("(1 234.50)", "-1234.50")])
def test_parse_amount_reads_well_spaced_groups(text: str, expected: str) -> None:
    assert money.parse_amount(text) == Decimal(expected)


@pytest.mark.parametrize("text", ["3.0000000000000000000000000001", "-3.0000000000000000000000000000001",
                                  "12345678901234567890123456789.5", "-0.10000000000000000000000000000000000001"])
def test_amounts_and_quantities_stay_exact_beyond_28_digits(text: str) -> None:
    """The default decimal context has 28 digits: negating or normalizing there rounded
    3.0000000000000000000000000001 to 3, so an 'exact' quantity compare accepted it."""
    assert money.parse_amount(text) == Decimal(text)
    assert Decimal(money.number_text(money.parse_amount(text))) == Decimal(text)


def test_quantize_half_up_from_the_string() -> None:
    assert money.to_cents("2.675") == Decimal("2.68")
    assert money.to_cents(2.675) == Decimal("2.68")  # a JSON number is read through its shortest repr
    assert float(2.675) < 2.675000000001 and round(2.675, 2) == 2.67  # what binary floats would have done
    assert money.to_cents("-2.675") == Decimal("-2.68")
    assert money.to_cents("-0.004") == Decimal("0.00") and str(money.to_cents("-0.004")) == "0.00"
    assert money.parse_amount("1,234", decimal_mark=",") == Decimal("1.234")
    assert money.plain(Decimal("-0.00")) == "0.00" and money.number_text(Decimal("7.50")) == "7.5"
    assert money.format_amount(Decimal("-1234567.5"), group=".", decimal=",") == "-1.234.567,50"
    assert money.format_amount(Decimal("-1234.5"), negative="parentheses") == "(1,234.50)"
    assert money.format_amount(Decimal("1234.5"), group="") == "1234.50"


@pytest.mark.parametrize("reference", ["12.34", "-12.34", "0.00", "1234567.89"])
@pytest.mark.parametrize("offset,ok", [("0", True), ("0.005", True), ("-0.005", True), ("0.0049", True), ("-0.0049", True),
                                       ("0.0051", False), ("-0.0051", False), ("0.01", False), ("-0.01", False)])
def test_money_within_is_symmetric_around_the_exact_reference(reference: str, offset: str, ok: bool) -> None:
    """|observed - expected| <= tolerance, never half-up rounding of both sides (which accepted
    12.335 for 12.34 and refused 12.345)."""
    expected = Decimal(reference)
    observed = money.parse_amount(str(expected + Decimal(offset)))
    assert money.within(observed, expected, money.MONEY_TOLERANCE) is ok
    assert money.within(money.parse_amount(float(observed)), expected, money.MONEY_TOLERANCE) is ok  # as a JSON number


@pytest.mark.parametrize("observed,expected,precision,ok", [
    ("0.3333", "0.33333333", "0.0001", True), ("0.3332", "0.33333333", "0.0001", False),  # a ratio at 1e-4
    ("12.5", "12.5", "0", True), ("12.50", "12.5", "0", True), ("12.51", "12.5", "0", False),  # exact (a quantity)
    ("33.34", "33.3333", "0.01", True), ("33.35", "33.3333", "0.01", False),  # a percentage at 0.01 points
])
def test_non_money_numbers_at_their_own_precision(observed: str, expected: str, precision: str, ok: bool) -> None:
    assert money.within(Decimal(observed), Decimal(expected), money.tolerance(precision)) is ok


@pytest.mark.parametrize("bad", ["-0.01", "NaN", "Infinity", "abc", None, 0.005, True, [], ""])
def test_a_tolerance_is_a_non_negative_decimal_string(bad: Any) -> None:
    with pytest.raises(money.MoneyError):
        money.tolerance(bad)


def test_within_is_exact_for_long_amounts() -> None:
    big = Decimal("12345678901234567890123456789012.34")  # more digits than the default context's 28
    assert money.within(Decimal("12345678901234567890123456789012.345"), big, money.MONEY_TOLERANCE)
    assert money.within(Decimal("12345678901234567890123456789012.335"), big, money.MONEY_TOLERANCE)
    assert not money.within(Decimal("12345678901234567890123456789012.3451"), big, money.MONEY_TOLERANCE)
    assert not money.within(Decimal("NaN"), big, money.MONEY_TOLERANCE)


def test_dates() -> None:
    assert parse_iso("2026-11-03").isoformat() == "2026-11-03" == parse_iso(" 20261103 ").isoformat()
    for bad in ("03/11/2026", "2026-02-30", "2026-11-3", "November 3, 2026", 20261103, None,
                "\u0662\u0660\u0662\u0666-\u0661\u0661-\u0660\u0663", "2026-1\u0661-03", "\uff12\uff10\uff12\uff16-11-03",
                "\u0968\u0966\u0968\u096c\u0967\u0967\u0966\u0969"):  # ASCII digits only (\\d matches any Unicode digit)
        with pytest.raises(DateError):
            parse_iso(bad)
    assert add_months(parse_iso("2026-01-31"), 1).isoformat() == "2026-02-28"


def test_pdf_helper_refuses_garbage() -> None:
    for bad in (b"", b"hello", b"%PDF-1.4 garbage"):
        with pytest.raises(PdfError):
            extract_pages(bad)


# ---------------------------------------------------------------------------------------
# generator


def test_generator_is_deterministic() -> None:
    a = [generator.generate("det-seed", i, {}) for i in (0, 7, 14)]
    b = [generator.generate("det-seed", i, {}) for i in (0, 7, 14)]
    assert [canonical(item_json(x)) for x in a] == [canonical(item_json(x)) for x in b]
    assert [x.files for x in a] == [x.files for x in b]
    assert generator.generate("det-seed-2", 0, {}).files != a[0].files
    assert a[0].files != a[1].files


def test_canary_digests(canary: list[Item]) -> None:
    data = canonical([item_json(item) for item in canary]).encode("utf-8")
    assert "sha256:" + hashlib.sha256(data).hexdigest() == CANARY_DIGEST
    assert tuple(hashlib.sha256(item.files["invoice.pdf"]).hexdigest() for item in canary) == CANARY_PDF_SHA256


_DETERMINISM_SCRIPT = """
import hashlib, json, sys
from lrc.runtime.workloads.extract_invoice import generator
h = hashlib.sha256()
for i in (0, 3, 9, 14):
    item = generator.generate(sys.argv[1], i, {})
    h.update(json.dumps([item.context, item.answer_key], sort_keys=True).encode())
    h.update(item.files["invoice.pdf"])
print(h.hexdigest())
"""


def test_generation_does_not_depend_on_hash_seed_or_time_zone(tmp_path: Path) -> None:
    assert len(outputs_across_environments(_DETERMINISM_SCRIPT, ["det-seed"], tmp_path)) == 1


def test_items_match_item_schema_and_files(spec: dict[str, Any], canary: list[Item]) -> None:
    validator = jsonschema.Draft202012Validator(spec["dataset"]["item_schema"])
    for n, item in enumerate(canary):
        validator.validate(item.context)
        assert item.index == n and item.item_id == f"invoice-{n + 1:02d}"
        pdf = item.files["invoice.pdf"]
        assert set(item.files) == {"invoice.pdf"} and pdf.startswith(b"%PDF-")
        assert item.context["pdf_sha256"] == hashlib.sha256(pdf).hexdigest()
        assert [p["text"] for p in item.context["pages"]] == extract_pages(pdf), "the context text is the PDF's text"
        assert item.context["page_count"] == len(item.context["pages"]) == item.answer_key["pages"]
        assert b"CreationDate" not in pdf or b"D:20000101000000" in pdf, "invariant mode: no wall-clock date"
        canonical(item.context)  # JSON-able


def test_every_invoice_is_internally_consistent(canary: list[Item]) -> None:
    for item in [*canary, *edition("seed-1")]:
        f = item.answer_key["fields"]
        lines = f["line_items"]
        for ln in lines:
            assert money.quantize(Decimal(ln["quantity"]) * Decimal(ln["unit_price"])) == Decimal(ln["amount"]), (item.item_id, ln)
        goods = sum(Decimal(ln["amount"]) for n, ln in enumerate(lines) if n not in item.answer_key["discount_lines"])
        discounts = -sum(Decimal(lines[n]["amount"]) for n in item.answer_key["discount_lines"])
        assert sum(Decimal(ln["amount"]) for ln in lines) == Decimal(f["subtotal"])
        assert goods - discounts + Decimal(f["tax"]) == Decimal(f["total"]), item.item_id
        assert re.fullmatch(r"-?\d+\.\d\d", f["total"]) and re.fullmatch(r"\d{4}-\d\d-\d\d", f["invoice_date"])


def test_every_edition_holds_every_edge_case_and_family() -> None:
    for seed in (CANARY_SEED, "seed-1", "seed-2", "seed-3"):
        items = edition(seed)
        families = [it.answer_key["family"] for it in items]
        assert all(families.count(f) >= 3 for f in generator.FAMILIES), families
        for edge in generator.EDGE_CASES:
            assert any(edge in it.answer_key["edge_cases"] for it in items), (seed, edge)
        for it in items:
            f, edges, text = it.answer_key["fields"], it.answer_key["edge_cases"], "\n".join(p["text"] for p in it.context["pages"])
            assert ("multi_page" in edges) == (it.context["page_count"] > 1)
            if "credit_note" in edges:
                assert Decimal(f["total"]) < 0 and f["due_date"] is None
                assert all(Decimal(ln["amount"]) < 0 for ln in f["line_items"])
            else:
                assert Decimal(f["total"]) > 0 and f["due_date"] > f["invoice_date"]
            if "discount_lines" in edges:
                assert it.answer_key["discount_lines"] and all(Decimal(f["line_items"][n]["amount"]) < 0 for n in it.answer_key["discount_lines"])
            assert ("foreign_currency" in edges) == (f["currency"] != "USD")
            if it.answer_key["family"] == "european":  # symbol, ISO code and decimal comma
                assert "€" in text and "EUR" in text and re.search(r"\d\.\d{3},\d\d|\d,\d\d €", text)
            assert f["invoice_number"] in text and f["vendor"] in text


def test_layout_families_differ_in_structure(canary: list[Item]) -> None:
    by_family: dict[str, str] = {}
    for it in canary:
        by_family.setdefault(it.answer_key["family"], "\n".join(p["text"] for p in it.context["pages"]))
    classic, european, uk, modern = (by_family[f] for f in generator.FAMILIES)
    assert "Invoice No.:" in classic or "Credit Note No.:" in classic
    assert re.search(r"^Ref\s{2,}Date\s{2,}", european, re.M), "labels above their values"
    assert re.search(r"^\s*Qty\s+Item\s+Description", uk, re.M) and "Ref:" in uk and "Tax point:" in uk
    assert re.search(r"Invoice #|Credit memo #", modern)
    assert modern.index("Line total") < modern.index("Issued"), "modern puts the invoice details below the table"
    assert classic.index("INVOICE" if "INVOICE" in classic else "CREDIT NOTE") < classic.index("DESCRIPTION")
    dates = {f: it.context["pages"][0]["text"] for f, it in ((it.answer_key["family"], it) for it in canary)}
    assert re.search(r"\d\d\.\d\d\.\d{4}", dates["european"]) and re.search(r"\d{4}-\d\d-\d\d", dates["modern"])


def test_pdfs_render_every_page(canary: list[Item]) -> None:
    multi = next(it for it in canary if "multi_page" in it.answer_key["edge_cases"])
    pages = [p["text"] for p in multi.context["pages"]]
    assert len(pages) >= 2 and all(re.search(r"Page \d+ (of|/) \d+|\d+/\d+", p) for p in pages)
    shown = sum(1 for ln in multi.answer_key["fields"]["line_items"] if ln["description"] in "\n".join(pages))
    assert shown == len(multi.answer_key["fields"]["line_items"])


# ---------------------------------------------------------------------------------------
# grading and mutation tests


def test_gold_passes(canary: list[Item], params: dict[str, Any], output_schema: dict[str, Any]) -> None:
    for item in canary:
        ok, results = grade(gold(item), item, params, output_schema)
        s = summary_of(results)
        assert ok and s["status"] == "pass" and s["observed"] == "9/9 fields equal" and s["location"] == []
        assert results[1]["id"] == grading.ACCURACY and results[1]["severity"] == "info" and results[1]["observed"] == "9/9 fields"
        assert [r["location"] for r in results[2:]] == [f"/{n}" for n in grading.rules_from(params).fields]
        assert all(r["severity"] == "info" and r["status"] == "pass" for r in results[2:])


def _wrong_digit(amount: str) -> str:
    i = max(k for k, ch in enumerate(amount) if ch.isdigit() and k < len(amount) - 3)
    return amount[:i] + str((int(amount[i]) + 1) % 10) + amount[i + 1:]


def test_one_wrong_digit_in_the_total_fails(canary: list[Item], params: dict[str, Any], output_schema: dict[str, Any]) -> None:
    for item in canary:
        answer = gold(item)
        answer["total"] = _wrong_digit(answer["total"])
        ok, results = grade(answer, item, params, output_schema)
        s = summary_of(results)
        assert not ok and s["location"] == ["/total"] and "total" in s["message"] and s["observed"] == "8/9 fields equal"
        field = next(r for r in results if r["location"] == "/total")
        assert field["status"] == "fail" and field["observed"] == money.plain(money.to_cents(answer["total"]))


def test_a_date_off_by_one_day_fails(canary: list[Item], params: dict[str, Any], output_schema: dict[str, Any]) -> None:
    import datetime as dt

    item = canary[0]
    answer = gold(item)
    answer["invoice_date"] = (dt.date.fromisoformat(answer["invoice_date"]) + dt.timedelta(days=1)).isoformat()
    ok, results = grade(answer, item, params, output_schema)
    assert not ok and summary_of(results)["location"] == ["/invoice_date"] and "invoice_date" in summary_of(results)["message"]


def _split_two(value: Any) -> str:
    """"1234.50" -> "12 34.50", "-123.40" -> "-1 23.40": a space that is no thousands grouping."""
    text = money.plain(money.parse_amount(value))
    whole, dot, frac = text.partition(".")
    return whole[:-2] + " " + whole[-2:] + dot + frac


_ARABIC = str.maketrans("0123456789", "\u0660\u0661\u0662\u0663\u0664\u0665\u0666\u0667\u0668\u0669")
_DEVANAGARI = str.maketrans("0123456789", "\u0966\u0967\u0968\u0969\u096a\u096b\u096c\u096d\u096e\u096f")


@pytest.mark.parametrize("mutate,where", [
    (lambda a: a.__setitem__("invoice_date", a["invoice_date"].translate(_ARABIC)), "/invoice_date"),
    (lambda a: a.__setitem__("invoice_date", a["invoice_date"].replace("-", "").translate(_DEVANAGARI)), "/invoice_date"),
    (lambda a: a.__setitem__("invoice_date", a["invoice_date"][:-1] + a["invoice_date"][-1].translate(_ARABIC)), "/invoice_date"),
    (lambda a: a["line_items"][0].__setitem__("quantity", money.number_text(money.parse_amount(a["line_items"][0]["quantity"]))
                                              + ("" if "." in str(a["line_items"][0]["quantity"]) else ".")
                                              + "0000000000000000000000000001"), "/line_items"),
    (lambda a: a["line_items"][0].__setitem__("quantity", "-" + str(a["line_items"][0]["quantity"]).lstrip("-") + "0" * 30 + "1"
                                              if "." in str(a["line_items"][0]["quantity"]) else
                                              str(a["line_items"][0]["quantity"]) + "." + "0" * 30 + "1"), "/line_items"),
    (lambda a: a.__setitem__("total", _split_two(a["total"])), "/total"),
], ids=["arabic-date", "devanagari-basic-date", "one-arabic-digit", "quantity-1e-28-off", "quantity-1e-31-off", "space-split-total"])
def test_near_miss_spellings_fail(canary: list[Item], params: dict[str, Any], output_schema: dict[str, Any], mutate, where: str) -> None:
    """Values that only look right: non-ASCII digits in a date, a quantity off beyond the 28th digit
    (exact compare), digits split by a space that is no thousands grouping."""
    failed = 0
    for item in canary:
        answer = gold(item)
        if where == "/total" and len(str(answer["total"]).lstrip("-").split(".")[0]) < 2:
            continue  # nothing to split
        mutate(answer)
        ok, results = grade(answer, item, params, output_schema)
        assert not ok and summary_of(results)["location"] == [where], (answer, summary_of(results))
        failed += 1
    assert failed


def test_a_due_date_given_for_a_credit_note_fails(canary: list[Item], params: dict[str, Any], output_schema: dict[str, Any]) -> None:
    item = next(it for it in canary if "credit_note" in it.answer_key["edge_cases"])
    answer = gold(item)
    answer["due_date"] = answer["invoice_date"]
    ok, results = grade(answer, item, params, output_schema)
    assert not ok and summary_of(results)["location"] == ["/due_date"]


def test_line_items_are_a_multiset(canary: list[Item], params: dict[str, Any], output_schema: dict[str, Any]) -> None:
    item = max(canary, key=lambda it: len(it.answer_key["fields"]["line_items"]))
    answer = gold(item)
    answer["line_items"].reverse()
    assert grade(answer, item, params, output_schema)[0], "order does not matter"
    dropped = gold(item)
    gone = dropped["line_items"].pop(1)
    ok, results = grade(dropped, item, params, output_schema)
    s = summary_of(results)
    assert not ok and s["location"] == ["/line_items"] and gone["description"].casefold() in s["message"]
    doubled = gold(item)
    doubled["line_items"].append(dict(doubled["line_items"][0]))
    ok, results = grade(doubled, item, params, output_schema)
    assert not ok and "not on the invoice" in summary_of(results)["message"]
    wrong_qty = gold(item)
    wrong_qty["line_items"][0]["quantity"] = str(Decimal(wrong_qty["line_items"][0]["quantity"]) + 1)
    assert not grade(wrong_qty, item, params, output_schema)[0]
    # line amounts at the money tolerance, both ways; quantities exact
    for offset, ok in (("0.005", True), ("-0.005", True), ("0.0051", False), ("-0.0051", False)):
        moved = gold(item)
        moved["line_items"][0]["amount"] = str(Decimal(moved["line_items"][0]["amount"]) + Decimal(offset))
        moved["line_items"][-1]["unit_price"] = str(Decimal(moved["line_items"][-1]["unit_price"]) + Decimal(offset))
        assert grade(moved, item, params, output_schema)[0] is ok, offset
    near_qty = gold(item)
    near_qty["line_items"][0]["quantity"] = str(Decimal(near_qty["line_items"][0]["quantity"]) + Decimal("0.001"))
    assert not grade(near_qty, item, params, output_schema)[0]
    # one to one: one returned line within tolerance of two equal gold lines matches only one of them
    twice = gold(item)
    first = dict(twice["line_items"][0])
    twice["line_items"] = [first, dict(first, amount=str(Decimal(first["amount"]) + Decimal("0.004")))]
    key = copy.deepcopy(item.answer_key)
    key["fields"]["line_items"] = [dict(item.answer_key["fields"]["line_items"][0])] * 2
    assert not grading.validate(dict(twice, line_items=[first]), key, params)[0]["status"] == "pass"
    assert grading.validate(twice, key, params)[0]["status"] == "pass"


def test_normalization_rules(canary: list[Item], params: dict[str, Any], output_schema: dict[str, Any]) -> None:
    item = next(it for it in canary if it.answer_key["family"] == "european")
    answer = gold(item)
    answer["vendor"] = "  " + "\u3000".join(answer["vendor"].upper().split(" ")) + " "  # case, ideographic spaces
    answer["invoice_number"] = answer["invoice_number"].lower()
    answer["invoice_date"] = answer["invoice_date"].replace("-", "")  # ISO 8601 basic form
    answer["currency"] = " eur"
    answer["total"] = float(answer["total"])  # a JSON number
    answer["tax"] = answer["tax"][:-1] + answer["tax"][-1] + "0"  # trailing zero: same amount
    for ln in answer["line_items"]:
        ln["quantity"] = float(ln["quantity"])
        ln["description"] = "  ".join(ln["description"].split(" "))
    ok, results = grade(answer, item, params, output_schema)
    assert ok, summary_of(results)["message"]
    # full-width letters are NFKC-equal to ASCII ones
    wide = gold(item)
    wide["currency"] = "ＥＵＲ"
    assert grade(wide, item, params, output_schema)[0]
    # money is compared at the declared tolerance around the exact reference, both ways
    for offset, ok in (("0.005", True), ("-0.005", True), ("0.0049", True), ("-0.0049", True), ("0.0051", False), ("-0.0051", False)):
        moved = gold(item)
        moved["subtotal"] = str(Decimal(moved["subtotal"]) + Decimal(offset))
        assert grade(moved, item, params, output_schema)[0] is ok, offset
    # a non-ISO date is unreadable, not guessed
    us = gold(item)
    y, m, d = us["invoice_date"].split("-")
    us["invoice_date"] = f"{m}/{d}/{y}"
    ok, results = grade(us, item, params, output_schema)
    assert not ok and "unreadable" in next(r for r in results if r["location"] == "/invoice_date")["observed"]
    # an amount the rules cannot read fails that field only
    junk = gold(item)
    junk["tax"] = "about forty"
    ok, results = grade(junk, item, params, output_schema)
    assert not ok and summary_of(results)["location"] == ["/tax"]


def test_validator_never_raises_on_odd_shapes(canary: list[Item], params: dict[str, Any]) -> None:
    for odd in (None, "text", 3, [], {}, {"line_items": "x"}, {"line_items": [1, None, {"amount": []}]}, {"total": {"a": 1}}):
        results = grading.validate(odd, canary[0].answer_key, params)
        assert summary_of(results)["status"] == "fail"
        json.dumps(results)


# ---------------------------------------------------------------------------------------
# tools


def test_tools(canary: list[Item]) -> None:
    item = next(it for it in canary if it.context["page_count"] > 1)
    box = Toolbox(item)
    info = json.loads(box.call("get_document_info", {}).content)
    assert info["page_count"] == item.context["page_count"] and info["filename"] == "invoice.pdf"
    page2 = json.loads(box.call("read_page", {"page": 2}).content)
    assert page2 == {"page": 2, "page_count": info["page_count"], "text": item.context["pages"][1]["text"]}
    number = item.answer_key["fields"]["invoice_number"]
    hits = json.loads(box.call("search_document", {"query": number.lower()}).content)
    assert hits["matches"] >= 1 and all(number in h["text"] for h in hits["hits"])
    sub = box.call("submit_invoice", {"vendor": "x"})
    assert sub.terminal and sub.answer == {"vendor": "x"} and sub.content == "invoice received"


@pytest.mark.parametrize("name,arguments", [
    ("delete_page", {}),
    ("read_page", {"page": 0}),
    ("read_page", {"page": 99}),
    ("read_page", {"page": "1"}),
    ("read_page", {"page": True}),
    ("read_page", {}),
    ("read_page", {"page": 1, "extra": 1}),
    ("get_document_info", {"x": 1}),
    ("search_document", {"query": ""}),
    ("search_document", {"query": "x" * 101}),
    ("search_document", {"query": "a", "page": 1}),
    ("read_page", ["not", "a", "mapping"]),
])
def test_tool_errors(canary: list[Item], name: str, arguments: Any) -> None:
    outcome = Toolbox(canary[0]).call(name, arguments)
    assert outcome.is_error and outcome.content.startswith("error: ") and not outcome.terminal


def test_tool_truncation_and_search_cap(canary: list[Item]) -> None:
    item = canary[0]
    out = Toolbox(item, max_result_chars=300).call("read_page", {"page": 1})
    assert out.content.endswith(TRUNCATION_MARKER) and len(out.content) <= 300 and not out.is_error
    multi = next(it for it in canary if it.context["page_count"] > 1)
    many = json.loads(Toolbox(multi).call("search_document", {"query": "."}).content)
    assert many["matches"] > 30
    assert many["shown"] == min(30, many["matches"]) and len(many["hits"]) <= 30


# ---------------------------------------------------------------------------------------
# reference models


def test_oracle_passes_everything(spec: dict[str, Any], canary: list[Item], params: dict[str, Any], output_schema: dict[str, Any]) -> None:
    for item in canary:
        assert grade(single_shot(lambda m: reference.oracle(m, None, item), spec, item), item, params, output_schema)[0]
        assert grade(agentic(lambda m, t: reference.oracle(m, t, item), spec, output_schema, item), item, params, output_schema)[0]


def test_oracle_answers_only_what_it_sees(spec: dict[str, Any], canary: list[Item], params: dict[str, Any], output_schema: dict[str, Any]) -> None:
    multi = next(it for it in canary if it.context["page_count"] > 1)
    messages = messages_for(spec, multi, "single-shot")
    messages[1]["content"] = re.sub(r"=== PAGE 2 of \d+ ===\n.*?=== END PAGE 2 ===\n", "", messages[1]["content"], flags=re.S)
    answer = json.loads(reference.oracle(messages, None, multi).content)
    ok, results = grade(answer, multi, params, output_schema)
    assert not ok and summary_of(results)["location"] == ["/line_items"]
    messages = messages_for(spec, multi, "single-shot")
    messages[1]["content"] = "nothing here"
    reply = reference.oracle(messages, None, multi)
    assert reply.content and not reply.content.lstrip().startswith("{")


def test_oracle_reads_an_attached_pdf(spec: dict[str, Any], canary: list[Item], params: dict[str, Any], output_schema: dict[str, Any]) -> None:
    """File mode: the PDF as an OpenAI/litellm `file` content part with a base64 data URL."""
    import base64

    item = canary[1]
    data = base64.b64encode(item.files["invoice.pdf"]).decode("ascii")
    messages = [messages_for(spec, item, "single-shot")[0], {"role": "user", "content": [
        {"type": "text", "text": "Key the attached invoice."},
        {"type": "file", "file": {"filename": "invoice.pdf", "file_data": f"data:application/pdf;base64,{data}"}}]}]
    assert grade(json.loads(reference.oracle(messages, None, item).content), item, params, output_schema)[0]


def test_reference_tool_call_ids_are_deterministic(spec: dict[str, Any], output_schema: dict[str, Any], canary: list[Item]) -> None:
    item = next(it for it in canary if it.context["page_count"] > 1)
    messages = messages_for(spec, item, "agentic")
    defs = tool_defs(spec, output_schema)
    first = reference.baseline(messages, defs)
    assert [(c.id, c.name) for c in first.tool_calls] == [("call_1_1", "get_document_info")]
    messages.append({"role": "assistant", "content": None, "tool_calls": [
        {"id": "call_1_1", "type": "function", "function": {"name": "get_document_info", "arguments": "{}"}}]})
    messages.append({"role": "tool", "tool_call_id": "call_1_1", "content": Toolbox(item).call("get_document_info", {}).content})
    second = reference.baseline(messages, defs)
    assert [c.id for c in second.tool_calls] == [f"call_2_{n}" for n in range(1, item.context["page_count"] + 1)]
    assert {c.name for c in second.tool_calls} == {"read_page"} and second == reference.baseline(messages, defs)


def test_baseline_is_an_honest_floor(spec: dict[str, Any], params: dict[str, Any], output_schema: dict[str, Any]) -> None:
    """Strictly between 0 and 15 for every seed, the same in both systems, and wrong where a US regex is blind."""
    tally = {}
    for seed in BASELINE_SEEDS:
        items = edition(seed)
        single = [grade(single_shot(lambda m: reference.baseline(m, None), spec, it), it, params, output_schema)[0] for it in items]
        tooled = [grade(agentic(reference.baseline, spec, output_schema, it), it, params, output_schema)[0] for it in items]
        assert single == tooled, "the baseline must read the same text the same way in both systems"
        assert 0 < sum(single) < ITEMS, f"{seed}: baseline passed {sum(single)}/{ITEMS}"
        for it, ok in zip(items, single):
            tally.setdefault(it.answer_key["family"], []).append(ok)
            if "credit_note" in it.answer_key["edge_cases"]:
                assert not ok, "the regex has no credit-note labels"
    assert not any(tally["european"]) and not any(tally["uk"]), "decimal commas / Ref labels defeat the regex"
    assert any(tally["classic"]) and any(tally["modern"])


# ---------------------------------------------------------------------------------------
# end to end: both workloads through the compiler and `lrc execute`

_EDITION = """\
# yaml-language-server: $schema=../../schemas/edition.schema.json
kind: edition
id: wl-e2e
version: 1
title: extract + reconcile end-to-end test edition
date: "2026-11-29"
standard: {standard}
analysis: {analysis}
workloads:
  - {extract}
  - {reconcile}
systems:
  - {single_shot}
  - {agentic}
models:
{models}pricing:
{prices}n_per_cell: 15
repetitions: 1
window_hours: 72
seed:
  policy: public
  value: ledgerrate-demo-2026-11
qualifying:
  min_pass_rate: "0.80"
brand: LedgerRate
footer: LedgerRate · methodology v1.0 · test edition
disclaimer: Test edition on the embedded reference models; not a measurement.
errata: []
"""
_ROLES = {"lrc/oracle": "infrastructure-check", "lrc/null": "floor-check", "lrc/baseline": "baseline"}


@pytest.mark.slow  # reads the full demo run (conftest.py `demo_run`: 865 runs)
def test_end_to_end_both_workloads(tmp_path: Path, demo_run) -> None:
    """The edition of both workloads compiles with their code components; executed, the oracle
    passes n/n, the null model 0 and the baseline in between, and the item files are stored by
    content. The execute is the session's demo run (conftest.py `demo_run`): the demo edition
    runs these two workloads, at the same pins, on the same models, systems and seed, among
    others -- executing them again here would repeat it."""
    import shutil

    from lrc.compiler.pipeline import compile_project

    project = tmp_path / "project"
    for name in ("specs", "schemas"):
        shutil.copytree(ROOT / name, project / name)
    models = "".join(f"  - id: {m}\n    role: {r}\n    sampling: {{temperature: 0}}\n" for m, r in _ROLES.items())
    prices = "".join(f"  {m}:\n    currency: USD\n    per_tokens: 1000000\n    input: \"0\"\n    cached_input: \"0\"\n"
                     f"    output: \"0\"\n    as_of: \"2026-11-29\"\n    source: embedded reference model\n" for m in _ROLES)
    edition = _EDITION.format(models=models, prices=prices, extract=pinned("extract.invoice"),
                              reconcile=pinned("reconcile.ledger"), agentic=pinned("agentic"),
                              single_shot=pinned("single-shot"), standard=pinned("ledgerrate"), analysis=pinned("lrc.analysis"))
    (project / "specs" / "editions" / "wl-e2e.yaml").write_text(edition, encoding="utf-8")
    compiled = compile_project(project)
    assert not compiled.diagnostics.has_errors, "\n".join(str(d) for d in compiled.diagnostics.sorted())
    lock = project / "generated" / "wl-e2e" / "plan.lock"
    plan = json.loads(lock.read_text(encoding="utf-8"))["plan"]
    from lrc.runtime.lock import codeprint

    running = {c.id: c.ref for c in codeprint.discover().values()}
    for component in ("extract.invoice.generator", "extract.invoice.grading", "reconcile.ledger.tools"):
        assert running[component] in plan["code"]
    out, done = demo_run
    assert done.returncode == 0, done.stderr[-3000:]
    with open(out / "cells.csv", newline="", encoding="utf-8") as fh:
        cells = {(r["workload"], r["model"], r["system"]): int(r["passes"]) for r in csv.DictReader(fh)}
    for workload in (pinned("extract.invoice"), pinned("reconcile.ledger")):
        for system in ("single-shot", "agentic"):
            assert cells[(workload, "lrc/oracle", system)] == 15, (workload, system)
            assert cells[(workload, "lrc/null", system)] == 0, (workload, system)
            assert 0 < cells[(workload, "lrc/baseline", system)] < 15, (workload, system)
    listed = json.loads((out / "items" / pinned("extract.invoice") / "invoice-01" / "files.json").read_text(encoding="utf-8"))
    pdf = out / "items" / "blobs" / "sha256" / listed["invoice.pdf"]["sha256"]  # item files are stored by content
    assert hashlib.sha256(pdf.read_bytes()).hexdigest() == listed["invoice.pdf"]["sha256"] == json.loads(
        (out / "items" / pinned("extract.invoice") / "invoice-01" / "item.json").read_text(encoding="utf-8"))["context"]["pdf_sha256"]
