"""Policies of the embedded reference models for triage.ap-inbox.

Why two models:

- `oracle` is the infrastructure check (DESIGN §4): it answers from the answer key, but only
  for the emails it can actually *see* in the conversation (the `=== EMAIL <id> ===` blocks
  of the rendered prompt, or the ids a `list_emails` result returned). If the plumbing drops
  an email, the oracle drops it too and the run fails, so a 100% oracle pass proves every
  email reached the model.
- `baseline` is an honest, deterministic, non-LLM keyword classifier. It sees exactly what a
  model sees (the prompt or the tool results), never the answer key or the generator, and is
  right on plain emails while tripping on hard cases, so the benchmark has a floor.

Both speak OpenAI message semantics: a reply is text (single-shot) or tool calls (agentic).
Tool-call ids are derived from the turn number, never from randomness or the clock.
"""

from __future__ import annotations

import json
import re
from typing import Any, Mapping, Sequence

from lrc.runtime.workloads.base import Item, Reply, ToolCall
from lrc.runtime.workloads.kit import message_text, next_turn, tool_results

COMPONENT_ID = "triage.ap-inbox.reference"
COMPONENT_VERSION = 2

Message = Mapping[str, Any]

_BLOCK = re.compile(r"^=== EMAIL (?P<id>\S+) ===\n(?P<text>.*?)\n=== END EMAIL (?P=id) ===$", re.M | re.S)
_ID_IN_JSON = re.compile(r'"id"\s*:\s*"((?:[^"\\]|\\.)*)"')

# --------------------------------------------------------------------------------------
# reading the conversation


def _prompt_emails(messages: Sequence[Message]) -> list[dict[str, str]]:
    """Emails rendered as blocks in user messages, in order: {id, subject, body}."""
    out: list[dict[str, str]] = []
    for m in messages:
        if m.get("role") != "user":
            continue
        for block in _BLOCK.finditer(message_text(m.get("content"))):
            head, _, body = block.group("text").partition("\n\n")
            subject = ""
            for line in head.split("\n"):
                if line.startswith("Subject:"):
                    subject = line[len("Subject:"):].strip()
            out.append({"id": block.group("id"), "subject": subject, "body": body})
    return out


def _listed_ids(messages: Sequence[Message]) -> list[str] | None:
    """Email ids from list_emails results (None if no result yet). Survives truncation."""
    results = tool_results(messages, "list_emails")
    if not results:
        return None
    ids: list[str] = []
    for _, content in results:
        try:
            rows = json.loads(content)
            found = [str(r["id"]) for r in rows if isinstance(r, Mapping) and "id" in r]
        except (ValueError, TypeError, KeyError):
            found = [json.loads(f'"{m}"') for m in _ID_IN_JSON.findall(content)]
        ids.extend(i for i in found if i not in ids)
    return ids


def _answer(labels: Sequence[tuple[str, str]]) -> dict[str, Any]:
    return {"labels": [{"email_id": i, "label": lab} for i, lab in labels]}


def _submit(messages: Sequence[Message], answer: dict[str, Any]) -> Reply:
    step = next_turn(messages)
    return Reply(None, [ToolCall(f"call_{step}_1", "submit_labels", answer)])


def _list(messages: Sequence[Message]) -> Reply:
    step = next_turn(messages)
    return Reply(None, [ToolCall(f"call_{step}_1", "list_emails", {})])


# --------------------------------------------------------------------------------------
# oracle


def oracle(messages: Sequence[Message], tools: Sequence[Mapping[str, Any]] | None, item: Item) -> Reply:
    """Label every email visible in the conversation with the answer key's label."""
    key: Mapping[str, str] = item.answer_key["labels"]
    if tools is None:
        seen = [e["id"] for e in _prompt_emails(messages)]
        return Reply(json.dumps(_answer([(i, key[i]) for i in seen if i in key]), ensure_ascii=False))
    listed = _listed_ids(messages)
    if listed is None:
        return _list(messages)
    return _submit(messages, _answer([(i, key[i]) for i in listed if i in key]))


# --------------------------------------------------------------------------------------
# baseline: ordered keyword rules, first match wins

_RULES: tuple[tuple[str, str, re.Pattern[str]], ...] = (
    # (label, where: "text" = subject + body | "subject", pattern)
    ("other", "text", re.compile(r"remittance advice|payment advice|have been paid|has been paid|out of (?:the )?office|w-9|unsubscribe")),
    ("dunning_notice", "text", re.compile(r"overdue|past due|reminder|final notice|final demand|second notice|collections?\b|credit hold")),
    ("statement", "subject", re.compile(r"statement(?! of work)")),
    ("statement", "text", re.compile(r"statement of (?:account|open items)|account statement")),
    ("invoice", "subject", re.compile(r"invoice|\binv\b|credit (?:note|memo)|\bbill\b")),
    ("po_response", "text", re.compile(r"purchase order|\bp\.?o\b|\bpo\d|order (?:acknowledg|confirm)|backorder")),
    ("invoice", "text", re.compile(r"invoice|credit note|amount due")),
)


def classify(subject: str, body: str) -> str:
    """The baseline's label for one email: the first keyword rule that matches."""
    subject_l = subject.casefold()
    text = subject_l + "\n" + body.casefold()
    for label, where, pattern in _RULES:
        if pattern.search(subject_l if where == "subject" else text):
            return label
    return "other"


def _read_results(messages: Sequence[Message]) -> dict[str, dict[str, str]]:
    """email id -> {subject, body} from successful read_email results."""
    out: dict[str, dict[str, str]] = {}
    for args, content in tool_results(messages, "read_email"):
        try:
            email = json.loads(content)
        except ValueError:
            continue
        if isinstance(email, Mapping) and isinstance(email.get("id"), str):
            out[email["id"]] = {"subject": str(email.get("subject", "")), "body": str(email.get("body", ""))}
    return out


def baseline(messages: Sequence[Message], tools: Sequence[Mapping[str, Any]] | None) -> Reply:
    """Keyword triage: answer at once (single-shot) or list, read all in one turn, submit."""
    if tools is None:
        emails = _prompt_emails(messages)
        labels = [(e["id"], classify(e["subject"], e["body"])) for e in emails]
        return Reply(json.dumps(_answer(labels), ensure_ascii=False))
    listed = _listed_ids(messages)
    if listed is None:
        return _list(messages)
    if not tool_results(messages, "read_email"):
        step = next_turn(messages)
        calls = [ToolCall(f"call_{step}_{n}", "read_email", {"email_id": i}) for n, i in enumerate(listed, 1)]
        return Reply(None, calls) if calls else _submit(messages, _answer([]))
    read = _read_results(messages)
    labels = [(i, classify(read[i]["subject"], read[i]["body"]) if i in read else "other") for i in listed]
    return _submit(messages, _answer(labels))
