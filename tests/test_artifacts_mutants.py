"""Planted mutants (issue 13's calibration list): each fault, planted in an oracle output, fails
exactly the validator that owns it — every other check passes — at the planted location
(sheet!cell, a defined name, or slide/shape)."""

from __future__ import annotations

import io
from decimal import Decimal

import pytest

from helpers.artifacts import task as make_task
from lrc.runtime.artifacts import deck, model, tasks, validators
from lrc.runtime.artifacts.deterministic import presentation_bytes, workbook_bytes
from lrc.runtime.artifacts.views import Submission

SEED = "calibration"


@pytest.fixture(scope="module")
def made() -> dict[str, tasks.Task]:
    return {kind: make_task(kind, SEED) for kind in ("extend-quarter", "refresh-deck-table")}


def grade(task: tasks.Task, output: bytes) -> list[dict]:
    return validators.run_all(task.checks, Submission(task.inputs, {task.output: output}))


def failing(results) -> dict[str, str]:
    return {r["id"]: r["location"] for r in results if r["status"] != "pass"}


# -- mutants ----------------------------------------------------------------------------------

def _book(data: bytes):
    from openpyxl import load_workbook

    return load_workbook(io.BytesIO(data))


def formula_to_value(task):
    wb = _book(task.oracle)
    a = model.assumptions(SEED, 5)
    wb["CF"]["G8"] = model.reference_values(a)[("CF", "G8")]  # the right number, pasted
    return workbook_bytes(wb)


def cell_outside_region(task):
    wb = _book(task.oracle)
    wb["Inputs"]["C6"] = Decimal(str(wb["Inputs"]["C6"].value)) + 1
    return workbook_bytes(wb)


def unbalanced_by_one(task):
    wb = _book(task.oracle)
    wb["BS"]["G11"] = "=F11+1"
    return workbook_bytes(wb)


def broken_name(task):
    from openpyxl.workbook.defined_name import DefinedName

    wb = _book(task.oracle)
    wb.defined_names["NetIncome"] = DefinedName("NetIncome", attr_text="IS!#REF!")
    return workbook_bytes(wb)


def sign_flipped(task):
    wb = _book(task.oracle)
    wb["IS"]["G7"] = "=Inputs!G6"
    return workbook_bytes(wb)


def header_out_of_order(task):
    wb = _book(task.oracle)
    wb["IS"]["G3"] = wb["IS"]["E3"].value
    return workbook_bytes(wb)


def _deck(data: bytes):
    from pptx import Presentation

    return Presentation(io.BytesIO(data))


def chart_to_picture(task):
    from PIL import Image

    prs = _deck(task.oracle)
    slide = prs.slides[2]
    chart = next(s for s in slide.shapes if s.name == deck.CHART_SHAPE)
    png = io.BytesIO()
    Image.new("RGB", (4, 3), (40, 90, 160)).save(png, format="PNG")
    png.seek(0)
    picture = slide.shapes.add_picture(png, chart.left, chart.top, chart.width, chart.height)
    picture.name = deck.CHART_SHAPE
    chart._element.addprevious(picture._element)  # where the chart stood in the shape tree
    chart._element.getparent().remove(chart._element)
    return presentation_bytes(prs)


def slide_deleted(task):
    prs = _deck(task.oracle)
    ids = prs.slides._sldIdLst
    entry = list(ids)[2]
    prs.part.drop_rel(entry.rId)
    ids.remove(entry)
    return presentation_bytes(prs)


def _g(sheet: str, label: str) -> str:
    row = next(r for r, l, _ in model.STATEMENTS[sheet] if l == label)
    return f"{sheet}!G{row}"


MUTANTS = [
    # (mutant, task kind, the one validator that fails, its location)
    (formula_to_value, "extend-quarter", "fa.formula-presence", _g("CF", "Cash from operations")),
    (cell_outside_region, "extend-quarter", "fa.unchanged-outside", "Inputs!C6"),
    (unbalanced_by_one, "extend-quarter", "fa.identities", _g("BS", "Total liabilities and equity")),
    (broken_name, "extend-quarter", "fa.reference-integrity", 'name "NetIncome"'),
    (sign_flipped, "extend-quarter", "fa.conventions", _g("IS", "Operating expenses")),
    (header_out_of_order, "extend-quarter", "fa.conventions", "IS!G3"),
    (chart_to_picture, "refresh-deck-table", "fa.preservation", f'slide 3/shape "{deck.CHART_SHAPE}"'),
    (slide_deleted, "refresh-deck-table", "fa.required-parts", "slide 3"),
]


@pytest.mark.parametrize("mutant,kind,validator,location", MUTANTS, ids=[m[0].__name__ for m in MUTANTS])
def test_each_mutant_fails_exactly_its_validator(made, mutant, kind, validator, location):
    task = made[kind]
    results = grade(task, mutant(task))
    assert failing(results) == {validator: location}, [r["message"] for r in results if r["status"] != "pass"]
    (bad,) = [r for r in results if r["status"] != "pass"]
    assert bad["status"] == "fail" and bad["severity"] == "error" and bad["message"]


def test_unbalanced_by_one_reports_the_difference(made):
    task = made["extend-quarter"]
    (bad,) = [r for r in grade(task, unbalanced_by_one(task)) if r["status"] != "pass"]
    observed = bad["observed"]
    assert Decimal(observed["liabilities_and_equity"]) - Decimal(observed["assets"]) == Decimal("1")


def test_the_eight_mutants_cover_every_family_but_the_roll_forward():
    missing = set(validators.FAMILIES) - {v for _, _, v, _ in MUTANTS}
    assert missing == {"fa.rollforward", "fa.summary-ties"}  # the null outputs of roll-*-forward and refresh-deck-* (test_artifacts_calibration.py)
