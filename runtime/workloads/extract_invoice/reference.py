"""Policies of the embedded reference models for extract.invoice.

Why two models:

- `oracle` is the infrastructure check: it answers from the answer key, but only with what
  it can *see* in the conversation — the page blocks of the rendered prompt, the pages the
  tools returned, or a PDF attached as a file part (read with checks.pdf). Without the
  printed invoice number in view it gives no answer, and it lists only the line items whose
  description it saw. If the plumbing drops the document or a page, the oracle fails, so a
  100% oracle pass proves every page reached the model.
- `baseline` is an honest, deterministic, non-LLM regex extractor of the kind a team writes
  for its main supplier's layout: "Invoice No." / "Invoice Date" labels, US number format
  (1,234.56), rows "description  qty  unit price  amount". It sees exactly what a model sees
  (never the key or the generator) and misses what such a script misses: "Ref" labels,
  labels above their values, decimal commas, apostrophe grouping, quantity-first tables,
  credit-note labels.

Both speak OpenAI message semantics; tool-call ids derive from the turn number.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
from typing import Any, Iterator, Mapping, Sequence

from lrc.runtime.checks.dates import MONTHS
from lrc.runtime.checks.money import MoneyError, parse_amount, plain
from lrc.runtime.checks.pdf import PdfError, extract_pages
from lrc.runtime.workloads.base import Item, Reply, ToolCall
from lrc.runtime.workloads.kit import message_text, next_turn, tool_results

COMPONENT_ID = "extract.invoice.reference"
COMPONENT_VERSION = 2

Message = Mapping[str, Any]

_PAGE = re.compile(r"^=== PAGE (?P<n>\d+) of (?P<of>\d+) ===\n(?P<text>.*?)\n?=== END PAGE (?P=n) ===$", re.M | re.S)
_PDF_DATA = "data:application/pdf;base64,"

# --------------------------------------------------------------------------------------
# reading the conversation


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, Mapping):
        for v in value.values():
            yield from _strings(v)
    elif isinstance(value, list):
        for v in value:
            yield from _strings(v)


def _attached_pdf_text(content: Any) -> list[str]:
    """Text of PDFs attached as data URLs in content parts (file mode)."""
    out: list[str] = []
    if not isinstance(content, list):
        return out
    for s in _strings(content):
        if s.startswith(_PDF_DATA):
            try:
                out.extend(extract_pages(base64.b64decode(s[len(_PDF_DATA):], validate=True)))
            except (PdfError, binascii.Error, ValueError):
                continue
    return out


def _result_texts(messages: Sequence[Message], name: str) -> list[str]:
    """Text of every tool result for tool `name`, in order (the arguments are not needed)."""
    return [text for _, text in tool_results(messages, name)]


def _prompt_pages(messages: Sequence[Message]) -> dict[int, str]:
    pages: dict[int, str] = {}
    for m in messages:
        if m.get("role") == "user":
            for block in _PAGE.finditer(message_text(m.get("content"))):
                pages.setdefault(int(block.group("n")), block.group("text"))
            for n, text in enumerate(_attached_pdf_text(m.get("content")), 1):
                pages.setdefault(n, text)
    return pages


def _read_pages(messages: Sequence[Message]) -> dict[int, str]:
    pages: dict[int, str] = {}
    for content in _result_texts(messages, "read_page"):
        try:
            body = json.loads(content)
        except ValueError:
            continue
        if isinstance(body, Mapping) and isinstance(body.get("page"), int) and isinstance(body.get("text"), str):
            pages[body["page"]] = body["text"]
    return pages


def _page_count(messages: Sequence[Message]) -> int | None:
    for content in _result_texts(messages, "get_document_info"):
        try:
            body = json.loads(content)
        except ValueError:
            continue
        if isinstance(body, Mapping) and isinstance(body.get("page_count"), int):
            return body["page_count"]
    return None


def _agentic_pages(messages: Sequence[Message]) -> tuple[Reply | None, dict[int, str]]:
    """Info, then every page in one turn; returns (next call, None) or (None, pages)."""
    step = next_turn(messages)
    count = _page_count(messages)
    if count is None:
        return Reply(None, [ToolCall(f"call_{step}_1", "get_document_info", {})]), {}
    pages = _read_pages(messages)
    if not pages and count > 0:
        return Reply(None, [ToolCall(f"call_{step}_{n}", "read_page", {"page": n}) for n in range(1, count + 1)]), {}
    return None, pages


def _submit(messages: Sequence[Message], answer: dict[str, Any]) -> Reply:
    return Reply(None, [ToolCall(f"call_{next_turn(messages)}_1", "submit_invoice", answer)])


# --------------------------------------------------------------------------------------
# oracle


def _oracle_answer(pages: Mapping[int, str], item: Item) -> dict[str, Any] | None:
    gold = item.answer_key["fields"]
    seen = "\n".join(pages[n] for n in sorted(pages))
    if gold["invoice_number"] not in seen:
        return None
    answer = dict(gold)
    answer["line_items"] = [dict(ln) for ln in gold["line_items"] if ln["description"] in seen]
    return answer


def oracle(messages: Sequence[Message], tools: Sequence[Mapping[str, Any]] | None, item: Item) -> Reply:
    """The answer key, limited to what the conversation shows."""
    if tools is None:
        answer = _oracle_answer(_prompt_pages(messages), item)
        return Reply(json.dumps(answer, ensure_ascii=False) if answer else "I cannot see the invoice.")
    pending, pages = _agentic_pages(messages)
    if pending is not None:
        return pending
    pages = {**_prompt_pages(messages), **pages}
    answer = _oracle_answer(pages, item)
    return _submit(messages, answer) if answer else Reply("I cannot see the invoice.")


# --------------------------------------------------------------------------------------
# baseline: a regex extractor for US-style invoices

_AMT = r"-?\$?-?\d{1,3}(?:,\d{3})+\.\d{2}|-?\$?-?\d+\.\d{2}"
_ROW = re.compile(rf"^\s*(?P<desc>\S.*?\S)\s{{2,}}(?P<qty>-?\d+(?:\.\d+)?)\s{{2,}}(?P<unit>{_AMT})\s{{2,}}(?P<amt>{_AMT})\s*$", re.M)
_NUMBER = re.compile(r"\binvoice\s*(?:no\.?|number|#)\s*:?\s*([A-Z0-9][A-Z0-9\-/]*)", re.I)
_ISSUED = re.compile(r"\b(?:Invoice Date|Issued)\s*:?\s+(\S.*?)(?=\s{2,}|$)", re.M)
_DUE = re.compile(r"\b(?:Due Date|Due)\s*:?\s+(\S.*?)(?=\s{2,}|$)", re.M)
_SUBTOTAL = re.compile(rf"\bSubtotal\s*:?\s+({_AMT})\s*$", re.M)
_TAX = re.compile(rf"\b(?:Sales Tax|Tax|VAT|GST)\b[^\n]*?\s({_AMT})\s*$", re.M)
_TOTAL = re.compile(rf"\bTotal(?: Due| Credit)?(?: \(?[A-Z]{{3}}\)?)?\s*:?\s+({_AMT})\s*$", re.M)
_CODE = re.compile(r"\b(USD|EUR|GBP|CHF|CAD)\b")
_MONTH = {m.casefold(): i for i, m in enumerate(MONTHS, 1)} | {m[:3].casefold(): i for i, m in enumerate(MONTHS, 1)}


def _us_date(text: str) -> str | None:
    """'November 3, 2026', '11/03/2026', '2026-11-03' or '3 Nov 2026' as ISO (US reading)."""
    text = text.strip()
    m = re.fullmatch(r"([A-Za-z]+)\.? (\d{1,2}), (\d{4})", text)
    if m and m.group(1).casefold() in _MONTH:
        return f"{int(m.group(3)):04d}-{_MONTH[m.group(1).casefold()]:02d}-{int(m.group(2)):02d}"
    m = re.fullmatch(r"(\d{1,2})/(\d{1,2})/(\d{4})", text)
    if m:
        return f"{int(m.group(3)):04d}-{int(m.group(1)):02d}-{int(m.group(2)):02d}"
    m = re.fullmatch(r"(\d{4})-(\d{2})-(\d{2})", text)
    if m:
        return text
    m = re.fullmatch(r"(\d{1,2}) ([A-Za-z]+) (\d{4})", text)
    if m and m.group(2).casefold() in _MONTH:
        return f"{int(m.group(3)):04d}-{_MONTH[m.group(2).casefold()]:02d}-{int(m.group(1)):02d}"
    return None


def _us_amount(text: str | None) -> str:
    if text is None:
        return "0.00"
    try:
        return plain(parse_amount(text, decimal_mark="."))
    except MoneyError:
        return "0.00"


def _first(pattern: re.Pattern[str], text: str) -> str | None:
    m = pattern.search(text)
    return m.group(1) if m else None


def extract(text: str) -> dict[str, Any]:
    """The baseline's reading of an invoice's text."""
    first_line = next((ln.strip() for ln in text.split("\n") if ln.strip()), "")
    vendor = re.split(r"\s{2,}", first_line)[0]
    code = _first(_CODE, text)
    if code is None:
        code = "EUR" if "€" in text else "GBP" if "£" in text else "USD"
    issued, due = _first(_ISSUED, text), _first(_DUE, text)
    lines = []
    for m in _ROW.finditer(text):
        try:
            qty = plain(parse_amount(m.group("qty"), decimal_mark="."))
        except MoneyError:
            continue
        lines.append({"description": m.group("desc"), "quantity": qty, "unit_price": _us_amount(m.group("unit")),
                      "amount": _us_amount(m.group("amt"))})
    return {
        "vendor": vendor,
        "invoice_number": _first(_NUMBER, text) or "",
        "invoice_date": (_us_date(issued) if issued else None) or "",
        "due_date": _us_date(due) if due else None,
        "currency": code,
        "line_items": lines,
        "subtotal": _us_amount(_first(_SUBTOTAL, text)),
        "tax": _us_amount(_first(_TAX, text)),
        "total": _us_amount(_first(_TOTAL, text)),
    }


def baseline(messages: Sequence[Message], tools: Sequence[Mapping[str, Any]] | None) -> Reply:
    """Regex extraction: answer at once (single-shot) or read every page, then submit."""
    if tools is None:
        pages = _prompt_pages(messages)
        return Reply(json.dumps(extract("\n".join(pages[n] for n in sorted(pages))), ensure_ascii=False))
    pending, pages = _agentic_pages(messages)
    if pending is not None:
        return pending
    return _submit(messages, extract("\n".join(pages[n] for n in sorted(pages))))
