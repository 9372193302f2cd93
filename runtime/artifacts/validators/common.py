"""What every validator family shares: opening the task's files as a fail or an error, the
recalculated number of a cell, and turning findings into one result (see `validators`'s
docstring for the contract)."""

from __future__ import annotations

import re
from decimal import Decimal
from typing import Any

from openpyxl.utils import column_index_from_string

from lrc.runtime.artifacts import recalc
from lrc.runtime.artifacts.views import BookView, DeckView, Submission, as_decimal, money
from lrc.runtime.checks.results import ValidatorResult, result

VERSION = 1
DEFAULT_TOLERANCE = "0.005"
Finding = tuple[str, Any, Any, str]  # (location, observed, expected, message)


class Undecidable(Exception):
    """The check cannot be decided (status error)."""


class Unreadable(Exception):
    """The agent's artifact cannot be read (status fail)."""


def _readable(view, name: str, side: str):
    """The view, or why not: an unreadable output is the agent's (fail), an unreadable input the task's (error)."""
    if not view.ok:
        if side == "input":
            raise Undecidable(f"the task's input {name} cannot be read: {view.reason}")
        raise Unreadable(f"{name}: {view.reason}")
    return view


def open_book(sub: Submission, name: str, side: str = "output") -> BookView:
    return _readable(sub.book(name, side), name, side)


def open_deck(sub: Submission, name: str, side: str = "output") -> DeckView:
    return _readable(sub.deck(name, side), name, side)


def calculated(view: BookView) -> recalc.Recalc:
    calc = view.calc()
    if calc.failure:
        raise Undecidable(calc.failure)
    if calc.unsupported:
        sheet, coord, fn = calc.unsupported[0]
        raise Undecidable(f"{sheet}!{coord} calls {fn}, which the recalculation engine ({recalc.ENGINE} "
                          f"{recalc.ENGINE_VERSION}) does not evaluate: the check cannot be decided")
    return calc


def number(view: BookView, sheet: str, coord: str) -> Decimal | None:
    calculated(view)
    return as_decimal(view.value(sheet, coord))


def row_of(view: BookView, sheet: str, label: str) -> int | None:
    return view.row(sheet, label)


def period_columns(view: BookView, sheet: str) -> list[str]:
    return [letter for letter, _ in view.periods(sheet)]


def close(a: Decimal | None, b: Decimal | None, tol: Decimal) -> bool:
    return a is not None and b is not None and abs(a - b) <= tol


def finish(vid: str, findings: list[Finding], checked: str) -> ValidatorResult:
    if not findings:
        return result(vid, VERSION, "pass", message=checked)
    location, observed, expected, message = findings[0]
    more = len(findings) - 1
    return result(vid, VERSION, "fail", observed=observed if not more else {"first": observed, "more_failures": more},
                  expected=expected, location=location, message=message + (f" ({more} more)" if more else ""))


def reading_order(location: str) -> tuple:
    sheet, _, coord = location.partition("!")
    m = re.match(r"([A-Z]+)(\d+)", coord)
    return (sheet, column_index_from_string(m.group(1)), int(m.group(2))) if m else (sheet, 0, 0)


def jsonable(value: Any) -> Any:
    if isinstance(value, Decimal):
        return money(value)
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    return str(value)
