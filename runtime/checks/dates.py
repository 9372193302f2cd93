"""Calendar dates for generators and validators, without the clock, the locale or the TZ.

Validators compare dates as ISO 8601 calendar dates. `parse_iso` accepts exactly the two
ISO 8601 calendar-date forms, extended `YYYY-MM-DD` and basic `YYYYMMDD` (surrounding
whitespace ignored), and nothing else: a day-first or month-first date such as 03/11/2026
is ambiguous, so reading it is the model's job, not the grader's. Month names are
spelled here, not taken from the `locale` module, so printing never depends on the machine.
"""

from __future__ import annotations

import datetime as _dt
import re
from typing import Any

MONTHS: tuple[str, ...] = ("January", "February", "March", "April", "May", "June", "July", "August",
                           "September", "October", "November", "December")

_EXTENDED = re.compile(r"^([0-9]{4})-([0-9]{2})-([0-9]{2})$")  # ASCII digits only: `\d` matches any Unicode digit
_BASIC = re.compile(r"^([0-9]{4})([0-9]{2})([0-9]{2})$")


class DateError(ValueError):
    """A value that is not an ISO 8601 calendar date."""


def parse_iso(value: Any) -> _dt.date:
    """The date an ISO 8601 calendar date string denotes. Raises DateError."""
    if not isinstance(value, str):
        raise DateError(f"not an ISO 8601 date: {value!r}")
    text = value.strip()
    match = _EXTENDED.match(text) or _BASIC.match(text)
    if not match:
        raise DateError(f"not an ISO 8601 date (YYYY-MM-DD): {value!r}")
    try:
        return _dt.date(int(match.group(1)), int(match.group(2)), int(match.group(3)))
    except ValueError as exc:
        raise DateError(f"not a calendar date: {value!r}") from exc


def iso(day: _dt.date) -> str:
    return f"{day.year:04d}-{day.month:02d}-{day.day:02d}"


def month_days(year: int, month: int) -> int:
    """Number of days in a month."""
    nxt = _dt.date(year + (month == 12), month % 12 + 1, 1)
    return (nxt - _dt.date(year, month, 1)).days


def add_months(day: _dt.date, months: int) -> _dt.date:
    """Same day `months` later, clamped to the month's last day."""
    k = day.year * 12 + day.month - 1 + months
    year, month = divmod(k, 12)
    return _dt.date(year, month + 1, min(day.day, month_days(year, month + 1)))


def is_business_day(day: _dt.date) -> bool:
    return day.weekday() < 5
