"""Embedded reference models of synthesize.board-brief: oracle, heuristic baseline, reference judge.

Why these three:

- `oracle` is the infrastructure check (DESIGN §4): it writes a brief of the checklist
  facts from the answer key, but only the facts whose sentence it can *see* in the prompt;
  if the plumbing drops a document or page, the oracle drops its facts and fails.
- `baseline` is an honest, deterministic, non-LLM summarizer. It sees only the prompt: it
  takes the bullets of every document's "Key points" box, then fills the remaining word
  budget with the body sentences that carry the most figures. Copying sentences never
  fabricates a figure, and a pack whose key facts are mostly in the boxes gives it a pass;
  a pack with several facts buried in body text does not. That is the floor.
- `judge` is the embedded reference judge `lrc/judge` (deterministic, labelled as such): a
  fact is present when the brief cites every one of the fact's key figures with the same
  magnitude and kind (read by lrc.runtime.checks.figures, small counts included; exact, no
  rounding: "$48.2 million" is "$48.2m", "$48m" is not) and names every one of its key-term groups (one
  alternative, case-insensitive, at the start of a word: "acqui" matches "acquisition").
  It reads only the anonymized brief and the item's answer key.
"""

from __future__ import annotations

import json
import re
from typing import Any, Mapping, Sequence

from lrc.runtime.checks import figures
from lrc.runtime.workloads.base import Item, Reply
from lrc.runtime.workloads.kit import message_text

COMPONENT_ID = "synthesize.board-brief.reference"
COMPONENT_VERSION = 2

Message = Mapping[str, Any]

MAX_WORDS = 400
MAX_CHARS = 3000
EVIDENCE_CHARS = 280

_DOCUMENT = re.compile(r"^=== DOCUMENT (?P<file>[^\s:]+)[^\n]*===\n(?P<text>.*?)\n=== END DOCUMENT (?P=file) ===$", re.M | re.S)
_PAGE_MARK = re.compile(r"^--- page \d+ of \d+ ---$", re.M)
_SENTENCE = re.compile(r"(?<=[.;!?])\s+(?=[A-Z$])")


def _prompt(messages: Sequence[Message]) -> str:
    return "\n".join(message_text(m.get("content")) for m in messages if m.get("role") == "user")


def _flat(text: str) -> str:
    return " ".join(text.split())


def _reply(brief: str) -> Reply:
    return Reply(json.dumps({"brief": brief}, ensure_ascii=False))


# --------------------------------------------------------------------------------------
# oracle


def oracle(messages: Sequence[Message], tools: Any, item: Item) -> Reply:
    """A brief of every checklist fact whose sentence reached the prompt, one per line."""
    seen = _flat(_prompt(messages))
    lines = [f"- {f['text']}" for f in item.answer_key["facts"] if _flat(f["text"]) in seen]
    return _reply("\n".join(lines))


# --------------------------------------------------------------------------------------
# baseline


def _blocks(text: str) -> list[list[str]]:
    """A document's text as blocks of lines (blank lines and page marks separate blocks)."""
    blocks: list[list[str]] = [[]]
    for line in _PAGE_MARK.sub("", text).split("\n"):
        if line.strip():
            blocks[-1].append(line)
        elif blocks[-1]:
            blocks.append([])
    return [b for b in blocks if b]


def _key_points(block: list[str]) -> list[str]:
    """The bullets of a "Key points" block (continuation lines joined), else []."""
    if block[0].strip() != "Key points":
        return []
    bullets: list[str] = []
    for line in block[1:]:
        if line.startswith("- "):
            bullets.append(line[2:].strip())
        elif bullets:
            bullets[-1] += " " + line.strip()
    return bullets


def _fits(lines: list[str], extra: str) -> bool:
    text = "\n".join(f"- {line}" for line in [*lines, extra])
    return len(text.split()) <= MAX_WORDS and len(text) <= MAX_CHARS


def baseline(messages: Sequence[Message], tools: Any) -> Reply:
    """Key-points bullets of every document, then the most figure-dense body sentences, within the limit."""
    prompt = _prompt(messages)
    headline: list[str] = []
    body: list[tuple[int, int, str]] = []
    for doc in _DOCUMENT.finditer(prompt):
        for block in _blocks(doc.group("text")):
            bullets = _key_points(block)
            if bullets:
                headline.extend(bullets)
                continue
            prose = [line for line in block if len(line.split()) > 4]
            if prose and not any("  " in line for line in block):  # tables keep columns apart with runs of spaces
                for sentence in _SENTENCE.split(_flat(" ".join(prose))):
                    body.append((-len(_numbers(sentence)), len(body), sentence))
    lines: list[str] = []
    for sentence in headline + [s for _, _, s in sorted(body)]:
        if sentence not in lines and _fits(lines, sentence):
            lines.append(sentence)
    return _reply("\n".join(f"- {s}" for s in lines))


# --------------------------------------------------------------------------------------
# reference judge


_JUDGE_RULES = figures.Rules(count_max=None)
"""The reference judge reads small integers as numbers too (a fact's figure may be one)."""


def _numbers(text: str) -> list[tuple[bool, Any]]:
    """(percent, magnitude) of every number `text` cites (figures and counts); [] if unreadable."""
    try:
        found = figures.scan(text, _JUDGE_RULES)
    except (figures.TextTooLong, TypeError):
        return []
    return [(f.percent, abs(f.value)) for f in found if f.kind in ("figure", "count") and not f.overlong]


def _names(text: str, term: str) -> bool:
    return re.search(r"(?<![A-Za-z0-9])" + re.escape(term), text, re.I) is not None


def _evidence(brief: str, wanted: list[tuple[bool, Any]], terms: list[list[str]]) -> str:
    """The first brief line or sentence that cites a key figure (or names a key term)."""
    for part in re.split(r"\n|(?<=[.;!?])\s+", brief):
        if wanted and wanted[0] in _numbers(part) or not wanted and terms and any(_names(part, t) for t in terms[0]):
            return part.strip()[:EVIDENCE_CHARS]
    return ""


def fact_present(brief: str, fact: Mapping[str, Any], cited: set[tuple[bool, Any]] | None = None) -> tuple[bool, str]:
    """The declared matching rule: every key figure cited with its value, every term group named.

    `cited` is `set(_numbers(brief))` when the caller has read the brief already (the judge
    reads it once for all the facts of a checklist)."""
    cited = set(_numbers(brief)) if cited is None else cited
    wanted = [n for text in fact.get("figures", []) for n in _numbers(str(text))]
    terms = [[str(t) for t in group] for group in fact.get("terms", [])]
    ok = all(w in cited for w in wanted) and all(any(_names(brief, t) for t in group) for group in terms)
    return ok, _evidence(brief, wanted, terms) if ok else ""


def judge(material: Mapping[str, Any], item: Item) -> dict[str, Any]:
    """A judgment of the board-brief rubric's shape: one entry per checklist fact shown."""
    brief = material.get("output") if isinstance(material, Mapping) else ""
    brief = brief if isinstance(brief, str) else ""
    facts = {str(f["id"]): f for f in item.answer_key["facts"]}
    out: list[dict[str, Any]] = []
    cited = set(_numbers(brief))
    for check in material.get("checks", []) if isinstance(material, Mapping) else []:
        fact = facts.get(str(check.get("id"))) if isinstance(check, Mapping) else None
        if fact is None:
            continue
        present, evidence = fact_present(brief, fact, cited)
        out.append({"id": str(fact["id"]), "present": present, "evidence": evidence})
    return {"facts": out}
