"""Embedded reference models of generate.variance-commentary: oracle, baseline, reference judge.

Why three:

- `oracle` is the infrastructure check: it answers from the answer key (true drivers, their
  variance and % variance, the note that explains each, or "not explained"), in a commentary
  that cites only allowed figures. Through the deterministic checks and the judge it must pass
  every item, so a failing oracle means broken plumbing.
- `baseline` is an honest, deterministic, non-LLM heuristic that sees only the prompt: it reads
  the table, computes every variance exactly as declared, ranks the lines, and for each driver
  copies the first note that names the line (or says none explains it). It gets every figure
  and the top 3 right, and is fooled by distractor notes (a note that names a line without
  explaining it), so it passes the items without such a trap and fails the others: the floor.
- `judge` is the embedded reference judge `lrc/judge` (deterministic, labelled as such in its
  justification): it scores the anonymized output text against the answer key.
    cause_attribution: per true driver, the submitted driver line must cite the true note and
      share at least two distinctive words (5+ letters) with its cause (one when the cause has
      fewer), or, for a driver no note explains, cite no note and say so (UNEXPLAINED phrases).
      0 wrong -> 5, 1 -> 3 ("one cause unsupported"), 2 -> 2, 3 -> 1.
    clarity: from 5, minus 1 per true driver the commentary does not name, minus 1 if any
      sentence runs over 40 words, minus 1 if fewer than three magnitudes carry a unit ($, %,
      k/m/bn), minus 2 if the commentary has fewer than 12 words; at least 1.
"""

from __future__ import annotations

import json
from decimal import Decimal, InvalidOperation
from typing import Any, Mapping, Sequence

from lrc.runtime.checks import figures
from lrc.runtime.workloads.base import Item, Reply
from lrc.runtime.workloads.generate_variance_commentary import derive
from lrc.runtime.workloads.generate_variance_commentary.grading import DRIVERS_HEADING
from lrc.runtime.workloads.kit import message_text

COMPONENT_ID = "generate.variance-commentary.reference"
COMPONENT_VERSION = 2

Message = Mapping[str, Any]
UNEXPLAINED = ("not explained", "unexplained", "no note", "no explanation", "not given", "not stated", "unknown",
               "do not explain", "does not explain", "not identified")
NOT_EXPLAINED = "Not explained by the notes."
LONG_SENTENCE = 40


# --------------------------------------------------------------------------------------
# reading the prompt


def _section(text: str, name: str) -> list[str]:
    start, end = f"=== {name} ===", f"=== END {name} ==="
    if start not in text:
        return []
    body = text.split(start, 1)[1].split(end, 1)[0]
    return [line for line in body.split("\n") if line.strip()]


def _prompt(messages: Sequence[Message]) -> tuple[str, list[dict[str, Any]], list[tuple[str, str]]]:
    """(heading, table rows {id, name, category, budget, actual}, notes (id, text)) from the user messages."""
    text = "\n".join(message_text(m.get("content")) for m in messages if m.get("role") == "user")
    rows: list[dict[str, Any]] = []
    for line in _section(text, "TABLE"):
        cells = [c.strip() for c in line.split("|")]
        if len(cells) != 5:
            continue
        try:
            rows.append({"id": cells[0], "name": cells[1], "category": cells[2], "budget": Decimal(cells[3]), "actual": Decimal(cells[4])})
        except InvalidOperation:
            continue  # the header
    notes = []
    for line in _section(text, "NOTES"):
        note_id, sep, body = line.partition(":")
        if sep:
            notes.append((note_id.strip(), body.strip()))
    heading = text.strip().split("\n", 1)[0].removeprefix("Budget versus actual for ").partition(". Amounts")[0].rstrip(".")
    return heading, rows, notes


# --------------------------------------------------------------------------------------
# writing an answer


def _answer(heading: str, drivers: list[dict[str, Any]]) -> str:
    """The JSON answer: drivers [{line, name, category, variance, pct, cause, note}], commentary from them."""
    out = []
    sentences = [f"{heading}: the three largest variances to budget were "
                 f"{', '.join(d['name'] for d in drivers[:-1])} and {drivers[-1]['name']}." if drivers else f"{heading}."]
    for d in drivers:
        var, pct = d["variance"], d["pct"]
        side = "above" if var > 0 else "below"
        effect = "favourable" if (var > 0) == (d["category"] == "revenue") else "unfavourable"
        cause = d["cause"] or NOT_EXPLAINED
        out.append({"line": d["line"], "variance": derive.money_text(var, signed=True), "variance_pct": derive.pct_text(pct),
                    "cause": cause, "cause_note": d["note"]})
        because = f" Cause: {cause}" if d["cause"] else " The notes do not explain this variance."
        sentences.append(f"{d['name']} came in ${derive.money_text(abs(var))} {side} budget ({derive.pct_text(pct)}), "
                         f"which is {effect}.{because}")
    return json.dumps({"drivers": out, "commentary": "\n".join(sentences)}, ensure_ascii=False)


def _sentence(text: str) -> str:
    text = text.strip()
    return (text[:1].upper() + text[1:]) if text else text


def oracle(messages: Sequence[Message], tools: Sequence[Mapping[str, Any]] | None, item: Item) -> Reply:
    """The answer key, written as a commentary that cites only allowed figures."""
    heading = f"{item.context['entity']}, {item.context['period']}"
    drivers = [{"line": d["line"], "name": d["name"], "category": d["category"], "variance": Decimal(d["variance"]),
                "pct": Decimal(d["variance_pct"]), "cause": _sentence(d["cause"]) if d["cause"] else None, "note": d["cause_note"]}
               for d in item.answer_key["top3"]]
    return Reply(_answer(heading, drivers))


def baseline(messages: Sequence[Message], tools: Sequence[Mapping[str, Any]] | None) -> Reply:
    """Exact variances and ranking from the prompt's table; each cause copied from the first note naming the line."""
    heading, rows, notes = _prompt(messages)
    ranked = sorted(rows, key=lambda r: (-abs(derive.variance(r["budget"], r["actual"])), r["id"]))[:3]
    drivers = []
    for r in ranked:
        note = next(((i, t) for i, t in notes if r["name"].casefold() in t.casefold()), None)
        cause = note[1].split(":", 1)[-1] if note else None
        drivers.append({"line": r["id"], "name": r["name"], "category": r["category"],
                        "variance": derive.variance(r["budget"], r["actual"]), "pct": derive.variance_pct(r["budget"], r["actual"]),
                        "cause": _sentence(cause) if cause else None, "note": note[0] if note else None})
    return Reply(_answer(heading, drivers))


# --------------------------------------------------------------------------------------
# the reference judge


def _submitted(output: str) -> tuple[str, dict[str, tuple[str, str]]]:
    """(commentary, line id -> (cause, note)) from judge_material's output text."""
    commentary, sep, tail = output.rpartition("\n" + DRIVERS_HEADING)
    if not sep:
        return output, {}
    drivers: dict[str, tuple[str, str]] = {}
    for line in tail.split("\n"):
        number, dot, rest = line.partition(". ")
        if not (dot and number.isdigit()):
            continue
        line_id = rest.split(" ", 1)[0].rstrip(":")
        body, _, note = rest.rpartition(" [note: ")
        cause = body.partition("; cause: ")[2]
        drivers.setdefault(line_id, (cause, note.removesuffix("]").strip()))
    return commentary, drivers


def _distinctive(text: str) -> set[str]:
    words = "".join(ch if ch.isalnum() else " " for ch in text.casefold()).split()
    return {w for w in words if len(w) >= 5}


def _cause_ok(truth: Mapping[str, Any], submitted: tuple[str, str] | None) -> bool:
    if submitted is None:
        return False
    cause, note = submitted
    if truth["cause_note"] is None:
        return note == "none" and any(p in cause.casefold() for p in UNEXPLAINED)
    if note != truth["cause_note"]:
        return False
    need = min(2, len(_distinctive(truth["cause"] or "")))
    return len(_distinctive(truth["cause"] or "") & _distinctive(cause)) >= need


def _clarity(commentary: str, key: Mapping[str, Any]) -> tuple[int, list[str]]:
    score, why = 5, []
    low = commentary.casefold()
    unnamed = [d["line"] for d in key["top3"] if d["name"].casefold() not in low and d["line"].casefold() not in low]
    if unnamed:
        score -= len(unnamed)
        why.append(f"does not name {', '.join(unnamed)}")
    flat = commentary.replace("\n", " ")
    sentences = [s for part in flat.split(". ") for s in part.split("? ")]
    if any(len(s.split()) > LONG_SENTENCE for s in sentences):
        score -= 1
        why.append(f"a sentence runs over {LONG_SENTENCE} words")
    try:
        units = [f for f in figures.cited_figures(commentary) if f.currency or f.percent or f.scale]
    except figures.TextTooLong:
        units = []
    if len(units) < 3:
        score -= 1
        why.append("fewer than three magnitudes carry a unit")
    if len(commentary.split()) < 12:
        score -= 2
        why.append("under 12 words")
    return max(score, 1), why


def judge(material: dict, item: Item) -> dict:
    """The reference judgment {clarity, cause_attribution, justification} (module docstring)."""
    output = material.get("output") if isinstance(material, Mapping) else ""
    commentary, drivers = _submitted(output if isinstance(output, str) else "")
    key = item.answer_key
    wrong = [d["line"] for d in key["top3"] if not _cause_ok(d, drivers.get(d["line"]))]
    cause_score = {0: 5, 1: 3, 2: 2}.get(len(wrong), 1)
    clarity, why = _clarity(commentary, key)
    text = (f"Reference judge lrc/judge (deterministic, from the answer key): {3 - len(wrong)} of 3 causes supported"
            + (f" (not: {', '.join(wrong)})" if wrong else "") + "; clarity " + ("; ".join(why) if why else "clear") + ".")
    return {"clarity": clarity, "cause_attribution": cause_score, "justification": text[:600]}
