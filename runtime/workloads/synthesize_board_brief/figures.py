"""Reading the figures a text cites, under declared rules (board-brief's copy until checks/figures.py lands).

This is plain code of the grading and reference components (not a component itself): a change here
changes their fingerprints. The shared `lrc.runtime.checks.figures` of the variance-commentary
workload is meant to replace it; the rules below are the ones the board-brief spec declares.

Rules:

1. Text is NFKC-normalized; a figure is a run of digits with optional well-formed
   thousands grouping ("1,240"; every group after the first has three digits) and an
   optional decimal part, on *number boundaries*: not touching a letter, digit, "." or ","
   on either side except a declared suffix. So "100" is never read out of "1,000", and
   "Q3", "FY2027", "F01", "R03" or "2nd" cite no figure.
2. Scale: a suffix "m", "mn", "million" multiplies by 10^6; "bn", "billion" by 10^9; "k",
   "thousand" by 10^3 ("$48.2m" = "48.2 million" = 48,200,000). "%", "per cent" and
   "percent" make it a percentage (compared only with percentages); "p" (pence) and "x"
   (times) are read as units of 1.
3. Currency signs ($, €, £) and signs (-, −, parentheses) are dropped: a figure is compared by
   magnitude, so "fell by 3.2%" and "-3.2%" cite the same figure.
4. Not figures: a bare integer from 1900 to 2100 (a year), an integer of 1-31 next to a month
   name (a day), and an integer followed by "." or ")" at the start of a line (a list marker).
5. A cited figure is *supported* by a set of source figures when one has the same kind and
   value, or rounds half-up to it at the precision the citation is written in ("$48m" for
   $48.2m, "12%" for 12.4%). That rounding is the only declared derivation.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal, InvalidOperation

MAX_TEXT_CHARS = 2_000_000
"""Longer texts are read up to this many characters (a brief this long fails its length check anyway)."""

_MONTH = r"(?:January|February|March|April|May|June|July|August|September|October|November|December|Jan|Feb|Mar|Apr|Jun|Jul|Aug|Sep|Sept|Oct|Nov|Dec)"
_NUMBER = re.compile(
    r"(?<![\w.,])(?P<num>\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?)"
    r"(?:(?P<tight>%|mn|bn|m|k|p|x)|\s?(?P<word>million|billion|thousand|per cent|percent)|)"
    r"(?![\w%])(?!,\d)(?!\.\d)",
    re.I,
)
_SCALE = {"m": Decimal(10) ** 6, "mn": Decimal(10) ** 6, "million": Decimal(10) ** 6, "bn": Decimal(10) ** 9,
          "billion": Decimal(10) ** 9, "k": Decimal(10) ** 3, "thousand": Decimal(10) ** 3}
_PERCENT = {"%", "per cent", "percent"}
_MONTH_BEFORE = re.compile(_MONTH + r"\.?\s+$", re.I)
_MONTH_AFTER = re.compile(r"^(?:st|nd|rd|th)?\s+(?:of\s+)?" + _MONTH + r"\b", re.I)
_LIST_MARKER = re.compile(r"^[ \t]*$")


@dataclass(frozen=True)
class Figure:
    """One cited figure: its text, magnitude (scaled), kind, and the precision it is written to."""

    text: str
    value: Decimal
    percent: bool
    quantum: Decimal


def _ignored(text: str, match: re.Match[str], suffix: str) -> bool:
    raw = match.group("num")
    if suffix or "," in raw or "." in raw:
        return False
    n = int(raw)
    if 1900 <= n <= 2100:
        return True
    if 1 <= n <= 31 and (_MONTH_BEFORE.search(text[max(0, match.start() - 12):match.start()])
                         or _MONTH_AFTER.match(text[match.end():match.end() + 16])):
        return True
    after = text[match.end():match.end() + 2]
    line_start = text.rfind("\n", 0, match.start()) + 1
    return after[:1] in (".", ")") and after[1:2] in (" ", "\t", "\n", "") and bool(_LIST_MARKER.match(text[line_start:match.start()]))


def extract(text: str) -> list[Figure]:
    """Every figure `text` cites, in order, under the rules above. Never raises."""
    if not isinstance(text, str):
        return []
    text = unicodedata.normalize("NFKC", text[:MAX_TEXT_CHARS])
    out: list[Figure] = []
    for match in _NUMBER.finditer(text):
        suffix = (match.group("tight") or match.group("word") or "").lower()
        if _ignored(text, match, suffix):
            continue
        raw = match.group("num").replace(",", "")
        try:
            number = Decimal(raw)
        except InvalidOperation:  # pragma: no cover - the pattern only admits digits
            continue
        scale = _SCALE.get(suffix, Decimal(1))
        decimals = len(raw.partition(".")[2])
        out.append(Figure(match.group(0), number * scale, suffix in _PERCENT, Decimal(1).scaleb(-decimals) * scale))
    return out


def figure_set(text: str) -> dict[bool, set[Decimal]]:
    """The magnitudes of every figure `text` cites, by kind (True = percentage)."""
    found: dict[bool, set[Decimal]] = {True: set(), False: set()}
    for f in extract(text):
        found[f.percent].add(f.value)
    return found


def supported(cited: Figure, source: dict[bool, set[Decimal]]) -> bool:
    """Rule 5: the same value, or a source value rounded half-up to the citation's precision."""
    values = source.get(cited.percent, set())
    if cited.value in values:
        return True
    return any((v / cited.quantum).quantize(Decimal(1), rounding=ROUND_HALF_UP) * cited.quantum == cited.value for v in values)


def cites(text_figures: list[Figure], wanted: Figure) -> bool:
    """True when a figure of the same kind and exact value is among `text_figures` (no rounding)."""
    return any(f.percent == wanted.percent and f.value == wanted.value for f in text_figures)
