"""The eight deterministic validator families of seed 000, over a task's workbook and deck.

Why: seed 000 wants the decision carried by deterministic checks wherever correctness is
computable, each returning a machine-readable result with an id, version, severity, observed
value, expected condition and location (`lrc.runtime.checks.results.result`). Each family here
is one validator id (family 2 has two: roll-forwards in a workbook, and a deck table tied to
the model); `run(check, submission)` runs one declared check `{"validator": id, "params": …}`.

| family | id | reads |
|---|---|---|
| 1 identities | fa.identities | A = L + E per period; cash-flow net change = Δ balance-sheet cash; closing cash = balance-sheet cash; declared ties (a valuation's total = the sum of its parts) |
| 2 reconciliation | fa.rollforward, fa.summary-ties | opening + additions − reductions = closing, opening = previous closing, the summary row takes the closing; a deck table's figures, a chart's points, a text's quoted figures = the model's |
| 3 formulas | fa.formula-presence | a required cell is a formula of the declared shape, not a pasted value |
| 4 references | fa.reference-integrity | after recalculation no #REF!/#DIV/0!/#NAME?/#VALUE!/…; defined names resolve and cover every period |
| 5 existence | fa.required-parts | required sheets, row labels, slides (by title) and the objects on them |
| 6 conventions | fa.conventions | the unit line, the expense sign, the period headers (the declared ones, consecutive quarters) |
| 7 preservation | fa.preservation | sheets and styles kept (a new period column takes its neighbour's number format); in a deck, layouts and masters unchanged, a chart stays a chart with its data range, a table stays a table |
| 8 change | fa.unchanged-outside | every cell's value, formula and style, every defined name, and every slide shape, outside the permitted region, equal to the input (a whole sheet, or `{"new_slide": title}`, in the region may be new) |

One finding, one family. Families do not report what another family owns, so a planted fault
fails exactly one validator (tests/test_artifacts_calibration.py): a missing sheet or slide is
family 5's (7 and 8 compare what exists in both), and a shape whose kind changed (a chart
become a picture) is family 7's (8 compares the content of shapes that kept their kind).
Every family still fails the run on its own: a deterministic fail is a fail.

Status. `fail` when the artifact breaks the check (a file that is missing or refused by
`safezip` is the agent's invalid output: a fail); `error` when the check could not be decided
(the recalculation engine cannot evaluate a formula or load the book, a declared parameter
names nothing) — never a pass. Numbers are compared in Decimal at the declared tolerance
(money: 0.005). One result per check: the location is the first failure in reading order,
`observed` says how many more.
"""

from __future__ import annotations

from typing import Any, Callable

from lrc.runtime.artifacts.validators.common import VERSION, Finding, Undecidable, Unreadable, finish
from lrc.runtime.artifacts.validators.financial import conventions, identities, parse_figure, rollforward, summary_ties
from lrc.runtime.artifacts.validators.preservation import preservation, unchanged_outside
from lrc.runtime.artifacts.validators.structure import formula_presence, reference_integrity, required_parts
from lrc.runtime.artifacts.views import Submission
from lrc.runtime.checks.results import ValidatorResult, result

__all__ = ["FAMILIES", "VERSION", "parse_figure", "run", "run_all"]


# -- the registry -----------------------------------------------------------------------------

FAMILIES: dict[str, tuple[int, Callable[..., list[Finding]], str]] = {
    "fa.identities": (1, identities, "balance-sheet and cash-flow identities hold in every period"),
    "fa.rollforward": (2, rollforward, "every schedule rolls forward and the summary takes its closing"),
    "fa.summary-ties": (2, summary_ties, "the deck table shows the model's figures"),
    "fa.formula-presence": (3, formula_presence, "every required cell is a formula of the declared shape"),
    "fa.reference-integrity": (4, reference_integrity, "no error values; defined names resolve and cover every period"),
    "fa.required-parts": (5, required_parts, "every required sheet, row and slide is present"),
    "fa.conventions": (6, conventions, "unit, expense sign and period headers are consistent"),
    "fa.preservation": (7, preservation, "template, styles and editable objects are preserved"),
    "fa.unchanged-outside": (8, unchanged_outside, "nothing changed outside the permitted region"),
}


def run(check: dict[str, Any], sub: Submission) -> ValidatorResult:
    """Run one declared check `{"validator": id, "params": {...}}` on a submission."""
    vid = check["validator"]
    if vid not in FAMILIES:
        return result(vid, VERSION, "error", message=f"unknown validator {vid}")
    _family, fn, checked = FAMILIES[vid]
    params = check.get("params", {})
    location = params.get("file")
    try:
        findings = fn(sub, **params)
    except Unreadable as exc:
        return result(vid, VERSION, "fail", observed="unreadable", expected="a readable Office file",
                      location=location, message=str(exc))
    except Undecidable as exc:
        return result(vid, VERSION, "error", location=location, message=str(exc))
    except (KeyError, TypeError, ValueError, IndexError) as exc:
        return result(vid, VERSION, "error", location=location, message=f"the check could not run: {type(exc).__name__}: {exc}")
    return finish(vid, findings, checked)


def run_all(checks: list[dict[str, Any]], sub: Submission) -> list[ValidatorResult]:
    return [run(c, sub) for c in checks]
