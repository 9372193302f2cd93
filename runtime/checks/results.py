"""The one shape every validator returns.

Seed 000 requires a machine-readable result with an identifier, version, severity, observed
value, expected condition and affected location; DESIGN §4.5 fixes the field names. Values
must be JSON-able (money as strings) because results go into traces verbatim.
"""

from __future__ import annotations

from typing import Any, Literal, TypedDict

Status = Literal["pass", "fail", "error", "not_applicable"]
Severity = Literal["error", "warning", "info"]


class ValidatorResult(TypedDict):
    id: str
    version: int
    status: Status
    severity: Severity
    observed: Any
    expected: Any
    location: Any
    message: str


def result(
    id: str,
    version: int,
    status: Status,
    *,
    severity: Severity = "error",
    observed: Any = None,
    expected: Any = None,
    location: Any = None,
    message: str = "",
) -> ValidatorResult:
    return ValidatorResult(
        id=id, version=version, status=status, severity=severity,
        observed=observed, expected=expected, location=location, message=message,
    )


def blocking_failures(results: list[ValidatorResult]) -> list[ValidatorResult]:
    """Results that make a run fail: error-severity results that did not pass."""
    return [r for r in results if r["severity"] == "error" and r["status"] in ("fail", "error")]
