"""Grading of synthesize.board-brief answers: deterministic checks, then the judge's fact checklist.

Why it is built this way:

- §4.5 passes a brief only if it holds >= 90% of the 20 checklist facts (judge-matched),
  cites zero fabricated figures, and fits one page. The two deterministic checks run first
  (VALIDATORS); the runtime calls the judge only when both pass, and a deterministic fail is
  a fail whatever the judge says.
- no-fabricated-figures reads every number the brief cites with the shared declared rules of
  `lrc.runtime.checks.figures` (R1-R15: number boundaries, scale words, percentages; years,
  dates, days, list markers, identifiers such as "Q3"/"FY2027" and small counts are not
  figures) and requires each to match a figure of the pack (every number on every page of
  the five documents, counts included) at the precision the brief writes it (M1-M4: "$48m"
  for $48.2m; magnitudes, so "down 3.2%" and "-3.2%" agree). That rounding is the only
  declared derivation. "100" never matches "1,000", and a superseded pre-read number is in
  the pack, so citing it is wrong (the judge finds the fact missing) but not fabricated.
- length-limit counts words (whitespace-separated) and characters against the limits the
  spec declares, so "one page" is a number, not an opinion.
- `judge_material` shows the judge the brief and the 20 facts' texts (never the figures
  list or locations, which are the answer key's), and `judge_results` turns a judgment of
  the rubric's shape into the blocking result: pass iff the share of facts marked present
  is >= min_fact_share. It reads the judgment only, so a human's grade of the same shape
  goes through the same rule.
- Model output is hostile input: `normalize` and every function here accept any shape and
  never raise.
"""

from __future__ import annotations

import functools

from decimal import Decimal, InvalidOperation
from typing import Any, Mapping

from lrc.runtime.checks import figures
from lrc.runtime.checks.results import ValidatorResult, result
from lrc.runtime.workloads.base import Item

COMPONENT_ID = "synthesize.board-brief.grading"
COMPONENT_VERSION = 2

NO_FABRICATED_FIGURES = "synthesize.board-brief.no-fabricated-figures"
LENGTH_LIMIT = "synthesize.board-brief.length-limit"
FACT_SHARE = "synthesize.board-brief.fact-share"

DEFAULT_MAX_WORDS = 400
DEFAULT_MAX_CHARS = 3000
MAX_LISTED = 20
"""At most this many offending figures are listed in a result (the count is always exact)."""


def normalize(answer: Any) -> Any:
    """Strip surrounding whitespace from the brief; anything unexpected comes back unchanged."""
    try:
        if isinstance(answer, Mapping) and isinstance(answer.get("brief"), str):
            out = dict(answer)
            out["brief"] = answer["brief"].strip()
            return out
    except Exception:  # noqa: BLE001 - normalization must never raise; the contract check decides
        return answer
    return answer


def brief_text(answer: Any) -> str:
    """The brief of an answer, or "" for any other shape."""
    if isinstance(answer, Mapping):
        brief = answer.get("brief")
        if isinstance(brief, str):
            return brief
    return ""


def pack_pages(item: Item) -> list[str]:
    """The text of every page of every document of the pack, as the model received it."""
    docs = item.context.get("documents") if isinstance(item.context, Mapping) else None
    return [str(page.get("text", "")) for doc in docs or [] for page in doc.get("pages", [])]


def pack_text(item: Item) -> str:
    """The whole pack as one text (pages separated by blank lines)."""
    return "\n\n".join(pack_pages(item))


def pack_figures(item: Item) -> tuple[frozenset[Decimal], frozenset[Decimal]]:
    """(plain, percent) magnitudes of every number of the pack: its figures and its counts.

    Read page by page (each page is far below figures.MAX_TEXT_CHARS); a count in the pack
    ("7 support hubs") is a number the brief may repeat. Every cell grades the same packs, so
    the figures of a pack are read once per process (keyed by the pages' text).
    """
    return _figures_of_pages(tuple(pack_pages(item)))


@functools.lru_cache(maxsize=64)
def _figures_of_pages(pages: tuple[str, ...]) -> tuple[frozenset[Decimal], frozenset[Decimal]]:
    plain: set[Decimal] = set()
    percent: set[Decimal] = set()
    for text in pages:
        for f in figures.scan(text):
            if f.kind in ("figure", "count") and not f.overlong:
                (percent if f.percent else plain).add(abs(f.value))
    return frozenset(plain), frozenset(percent)


def no_fabricated_figures(answer: Any, key: Mapping[str, Any], params: Mapping[str, Any],
                          item: Item | None = None) -> list[ValidatorResult]:
    """Every figure the brief cites is a pack figure or a declared rounding of one."""
    if item is None:
        return [result(NO_FABRICATED_FIGURES, COMPONENT_VERSION, "error", observed=None, expected="the pack's text",
                       message="The pack was not available to check the brief's figures against.")]
    try:
        cited = figures.cited_figures(brief_text(answer))
    except figures.TextTooLong as exc:
        return [result(NO_FABRICATED_FIGURES, COMPONENT_VERSION, "fail", observed=str(exc), expected="a brief the figure reader reads",
                       message=f"The brief's figures were not read: {exc}.")]
    plain, percent = pack_figures(item)
    foreign = figures.unmatched(cited, plain, percent)
    shown = [f.text for f in foreign[:MAX_LISTED]]
    ok = not foreign
    message = (f"All {len(cited)} figures cited are in the pack." if ok else
               f"{len(foreign)} of {len(cited)} figures cited are not in the pack (nor a rounding of a pack figure): {', '.join(shown)}"
               + (" ..." if len(foreign) > MAX_LISTED else "") + ".")
    return [result(NO_FABRICATED_FIGURES, COMPONENT_VERSION, "pass" if ok else "fail", observed=shown,
                   expected="every figure cited exists in the pack", location=shown, message=message)]


def _limit(params: Mapping[str, Any], name: str, default: int) -> int:
    value = params.get(name, default)
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else default


def length_limit(answer: Any, key: Mapping[str, Any], params: Mapping[str, Any]) -> list[ValidatorResult]:
    """The brief fits one page: at most max_words words and max_chars characters, and is not empty."""
    text = brief_text(answer)
    max_words, max_chars = _limit(params, "max_words", DEFAULT_MAX_WORDS), _limit(params, "max_chars", DEFAULT_MAX_CHARS)
    words, chars = len(text.split()), len(text)
    ok = 0 < words <= max_words and chars <= max_chars
    return [result(LENGTH_LIMIT, COMPONENT_VERSION, "pass" if ok else "fail", observed=f"{words} words, {chars} characters",
                   expected=f"1 to {max_words} words and at most {max_chars} characters",
                   message=("The brief fits the one-page limit." if ok else
                            "The brief is empty." if words == 0 else
                            f"The brief has {words} words and {chars} characters; the limit is {max_words} words and {max_chars} characters."))]


VALIDATORS = {"no-fabricated-figures": no_fabricated_figures, "length-limit": length_limit}


# --------------------------------------------------------------------------------------
# the judge step


def checklist(key: Mapping[str, Any]) -> list[dict[str, str]]:
    """The facts to look for, [{"id", "text"}], in checklist order."""
    facts = key.get("facts") if isinstance(key, Mapping) else None
    return [{"id": str(f["id"]), "text": str(f["text"])} for f in facts or [] if isinstance(f, Mapping) and "id" in f and "text" in f]


def judge_material(answer: Any, key: Mapping[str, Any], item: Item) -> dict[str, Any]:
    """The brief under judgment and the checklist facts; no source (the facts carry it)."""
    return {"output": brief_text(answer), "source": "", "checks": checklist(key)}


def _share(params: Mapping[str, Any]) -> Decimal:
    try:
        value = Decimal(str(params.get("min_fact_share", "0.90")))
    except (InvalidOperation, ValueError):
        value = Decimal("0.90")
    return value if value.is_finite() and Decimal(0) <= value <= Decimal(1) else Decimal("0.90")


def judge_results(judgment: Any, key: Mapping[str, Any], rubric: Mapping[str, Any], params: Mapping[str, Any]) -> list[ValidatorResult]:
    """Pass iff the share of checklist facts judged present is >= min_fact_share.

    A fact counts as present only when the judgment has an entry for it and every entry for
    that id says present; entries for ids outside the checklist count for nothing. Who
    judged (the judge model or a human) does not enter.
    """
    ids = [c["id"] for c in checklist(key)]
    entries = judgment.get("facts") if isinstance(judgment, Mapping) else None
    said: dict[str, list[bool]] = {}
    for entry in entries if isinstance(entries, list) else []:
        if isinstance(entry, Mapping) and isinstance(entry.get("id"), str):
            said.setdefault(entry["id"], []).append(entry.get("present") is True)
    present = [i for i in ids if said.get(i) and all(said[i])]
    missing = [i for i in ids if i not in present]
    need = _share(params)
    total = len(ids)
    ok = total > 0 and Decimal(len(present)) >= need * total
    return [result(FACT_SHARE, COMPONENT_VERSION, "pass" if ok else "fail", observed=f"{len(present)}/{total} facts present",
                   expected=f"share of facts present >= {need}", location=missing,
                   message=f"{len(present)} of {total} checklist facts are in the brief; at least {need} of them are needed."
                   + (f" Missing: {', '.join(missing)}." if missing else ""))]
