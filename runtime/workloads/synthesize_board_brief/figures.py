"""Reading the figures a text cites, under declared rules (board-brief's copy until checks/figures.py lands).

This is plain code of the grading and reference components (not a component itself): a change here
changes their fingerprints. The shared `lrc.runtime.checks.figures` of the variance-commentary
workload is meant to replace it; the rules below are the ones the board-brief spec declares.

Rules:

1. Text is NFKC-normalized; a figure is a run of digits with optional well-formed
   thousands grouping ("1,240"; every group after the first has three digits) and an
   optional decimal part ("." or, when the comma is no well-formed grouping, ","), on
   *number boundaries*: not touching a letter, digit, "." or "," on either side except a
   declared suffix. So "100" is never read out of "1,000", and "Q3", "FY2027", "F01",
   "R03" or "2nd" cite no figure. A digit run that is no number under these rules
   ("12,34,56", "1.2.3") still cites a figure, one no source supports.
2. Scale: a suffix "m", "mn", "million" multiplies by 10^6; "bn", "billion" by 10^9; "k",
   "thousand" by 10^3 ("$48.2m" = "48.2 million" = 48,200,000). "%", "per cent" and
   "percent" make it a percentage (compared only with percentages); "p" (pence) and "x"
   (times) are read as units of 1.
3. Currency signs ($, €, £) and signs (-, −, parentheses) are dropped: a figure is compared by
   magnitude, so "fell by 3.2%" and "-3.2%" cite the same figure.
4. Not figures: a bare integer from 1900 to 2100 (a year), an integer of 1-31 next to a month
   name (a day), a numeric date ("31/03/2027", "2027-03-31"), and an integer followed by "."
   or ")" at the start of a line (a list marker).
5. A cited figure is *supported* by a source when one of the source's figures has the same
   kind and value, or rounds half-up to it at the precision the citation is written in
   ("$48m" for $48.2m, "12%" for 12.4%). That rounding is the only declared derivation.
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
    r"(?<![\w.,])(?P<cur>[$€£])?(?<![\w.,])(?P<num>\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:[.,]\d+)?)"
    r"(?:(?P<tight>%|mn|bn|m|k|p|x)|\s?(?P<word>million|billion|thousand|per cent|percent)|)"
    r"(?![\w%])(?![.,]\d)",
    re.I,
)
_DIGIT_RUN = re.compile(r"(?<![\w.,])\d[\d.,]*\d(?!\w)|(?<![\w.,])\d(?!\w)")
_SCALE = {"m": Decimal(10) ** 6, "mn": Decimal(10) ** 6, "million": Decimal(10) ** 6, "bn": Decimal(10) ** 9,
          "billion": Decimal(10) ** 9, "k": Decimal(10) ** 3, "thousand": Decimal(10) ** 3}
_PERCENT = {"%", "per cent", "percent"}
_MONTH_BEFORE = re.compile(_MONTH + r"\.?\s+$", re.I)
_MONTH_AFTER = re.compile(r"^(?:st|nd|rd|th)?\s+(?:of\s+)?" + _MONTH + r"\b", re.I)
_NUMERIC_DATE = re.compile(r"(?<![\w.,/-])(?:\d{1,2}[/.-]\d{1,2}[/.-](?:\d{4}|\d{2})|\d{4}-\d{1,2}-\d{1,2})(?![\w/-])")
_LIST_MARKER = re.compile(r"^[ \t]*(\d{1,3})[.)](?=\s|$)", re.M)
_MAX_DIGITS = 40
"""A figure longer than this is read (and fails as unsupported), but not converted to an exact value."""


@dataclass(frozen=True)
class Figure:
    """One cited figure: its text, magnitude (scaled), kind, and the precision it is written to.

    `value` is None for a digit run that is no number under rules 1-2 (e.g. "12,34,56",
    "1.2.3"), or one too long to be a figure: it cites *something*, which no source supports.
    """

    text: str
    value: Decimal | None
    percent: bool
    quantum: Decimal


def _ignored(text: str, match: re.Match[str], suffix: str, markers: set[int]) -> bool:
    raw = match.group("num")
    if suffix or match.group("cur") or "," in raw or "." in raw or len(raw) > 4:
        return False
    n = int(raw)
    if 1900 <= n <= 2100 or match.start("num") in markers:
        return True
    return 1 <= n <= 31 and bool(_MONTH_BEFORE.search(text[max(0, match.start() - 12):match.start()])
                                 or _MONTH_AFTER.match(text[match.end():match.end() + 16]))


def extract(text: str) -> list[Figure]:
    """Every figure `text` cites, in order, under the rules above. Never raises."""
    if not isinstance(text, str):
        return []
    text = unicodedata.normalize("NFKC", text[:MAX_TEXT_CHARS])
    markers = {m.start(1) for m in _LIST_MARKER.finditer(text)}
    dates = {i for m in _NUMERIC_DATE.finditer(text) for i in range(m.start(), m.end())}
    out: list[tuple[int, Figure]] = []
    covered: set[int] = set()
    for match in _NUMBER.finditer(text):
        covered.add(match.start("num"))
        if match.start("num") in dates:
            continue
        suffix = (match.group("tight") or match.group("word") or "").lower()
        if _ignored(text, match, suffix, markers):
            continue
        raw = match.group("num")
        raw = raw.replace(",", "") if re.fullmatch(r"\d{1,3}(?:,\d{3})+(?:\.\d+)?", raw) else raw.replace(",", ".")
        scale = _SCALE.get(suffix, Decimal(1))
        decimals = len(raw.partition(".")[2])
        if len(raw) > _MAX_DIGITS:
            out.append((match.start(), Figure(match.group(0), None, suffix in _PERCENT, Decimal(1))))
            continue
        out.append((match.start(), Figure(match.group(0), Decimal(raw) * scale, suffix in _PERCENT, Decimal(1).scaleb(-decimals) * scale)))
    for run in _DIGIT_RUN.finditer(text):
        if run.start() not in covered and run.start() not in markers and run.start() not in dates:
            out.append((run.start(), Figure(run.group(0), None, False, Decimal(1))))
    return [f for _, f in sorted(out, key=lambda pair: pair[0])]


class Source:
    """The figures of a source text, ready to support citations (rule 5) quickly."""

    def __init__(self, text: str):
        self._values: dict[bool, set[Decimal]] = {True: set(), False: set()}
        for f in extract(text):
            if f.value is not None:
                self._values[f.percent].add(f.value)
        self._rounded: dict[tuple[bool, Decimal], set[Decimal]] = {}

    def values(self, percent: bool) -> set[Decimal]:
        return self._values[percent]

    def supports(self, cited: Figure) -> bool:
        """The same value, or a source value rounded half-up to the citation's precision."""
        if cited.value is None:
            return False
        if cited.value in self._values[cited.percent]:
            return True
        key = (cited.percent, cited.quantum)
        if key not in self._rounded:
            rounded: set[Decimal] = set()
            for v in self._values[cited.percent]:
                try:
                    rounded.add((v / cited.quantum).quantize(Decimal(1), rounding=ROUND_HALF_UP) * cited.quantum)
                except (InvalidOperation, ArithmeticError):
                    continue
            self._rounded[key] = rounded
        return cited.value in self._rounded[key]


def cites(text_figures: list[Figure], wanted: Figure) -> bool:
    """True when a figure of the same kind and exact value is among `text_figures` (no rounding)."""
    return wanted.value is not None and any(f.percent == wanted.percent and f.value == wanted.value for f in text_figures)
