"""Validator behaviour beyond the mutant table: the result shape, fail vs error, roll-forwards,
a deck figure's parsing, and an unreadable or hostile output graded as a fail, never a traceback."""

from __future__ import annotations

import io
import json
import zipfile
from decimal import Decimal

import pytest

from helpers.artifacts import task as make_task
from lrc.runtime.artifacts import model, tasks, validators
from lrc.runtime.artifacts.deterministic import workbook_bytes
from lrc.runtime.artifacts.views import Submission

SEED = "validators"


@pytest.fixture(scope="module")
def extend() -> tasks.Task:
    return make_task("extend-quarter", SEED)


def check(task: tasks.Task, vid: str) -> dict:
    return next(c for c in task.checks if c["validator"] == vid)


def grade_one(task, vid, output):
    return validators.run(check(task, vid), Submission(task.inputs, {task.output: output}))


def test_results_have_the_project_shape_and_are_json(extend):
    results = validators.run_all(extend.checks, Submission(extend.inputs, {extend.output: extend.inputs[extend.output]}))
    for r in results:
        assert set(r) == {"id", "version", "status", "severity", "observed", "expected", "location", "message"}
        assert r["status"] in ("pass", "fail", "error")
    json.dumps(results)


def test_a_schedule_that_does_not_foot_fails_the_rollforward(extend):
    from openpyxl import load_workbook

    wb = load_workbook(io.BytesIO(extend.oracle))
    wb["Debt"]["G7"] = "=G4+G5"  # repayments left out of the closing
    got = grade_one(extend, "fa.rollforward", workbook_bytes(wb))
    assert got["status"] == "fail" and got["location"] == "Debt!G7"
    assert "does not foot" in got["message"]


def test_a_summary_that_does_not_take_the_schedule_fails_the_rollforward(extend):
    from openpyxl import load_workbook

    wb = load_workbook(io.BytesIO(extend.oracle))
    wb["BS"]["G9"] = "=Debt!F7"
    got = grade_one(extend, "fa.rollforward", workbook_bytes(wb))
    assert (got["status"], got["location"]) == ("fail", "BS!G9")


def test_an_unevaluable_formula_is_an_error_never_a_pass(extend):
    from openpyxl import load_workbook

    wb = load_workbook(io.BytesIO(extend.oracle))
    wb["IS"]["G13"] = "=G11+G12+LRCNOPE(0)"
    out = workbook_bytes(wb)
    for vid in ("fa.identities", "fa.reference-integrity", "fa.conventions"):
        got = grade_one(extend, vid, out)
        assert got["status"] == "error", got
        assert "LRCNOPE" in got["message"] and "cannot be decided" in got["message"]


def bomb() -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("[Content_Types].xml", b"<Types/>")
        z.writestr("xl/workbook.xml", b"<a>" + b" " * 3_000_000 + b"</a>")
    return buf.getvalue()


@pytest.mark.parametrize("output", [None, b"", b"plain text", bomb()], ids=["missing", "empty", "text", "zip-bomb"])
def test_an_unreadable_output_fails_every_check_with_a_reason(extend, output):
    outputs = {} if output is None else {extend.output: output}
    for r in validators.run_all(extend.checks, Submission(extend.inputs, outputs)):
        assert r["status"] == "fail" and r["observed"] == "unreadable" and r["location"] == tasks.MODEL
        assert r["message"].startswith(tasks.MODEL + ":")


def test_an_unknown_validator_is_an_error():
    got = validators.run({"validator": "fa.nope", "params": {}}, Submission({}, {}))
    assert got["status"] == "error"


def test_wrong_params_are_an_error_not_a_traceback(extend):
    got = validators.run({"validator": "fa.identities", "params": {"file": tasks.MODEL}},
                         Submission(extend.inputs, {extend.output: extend.oracle}))
    assert got["status"] == "error" and "could not run" in got["message"]


@pytest.mark.parametrize("text,value", [("1,234.56", "1234.56"), ("(12.00)", "-12.00"), ("-3.5", "-3.5"), ("0.00", "0.00")])
def test_deck_figures_parse_exactly(text, value):
    assert validators.parse_figure(text) == Decimal(value)


@pytest.mark.parametrize("text", ["", "n/a", "1.2.3", "12%", "1e5"])
def test_non_figures_do_not_parse(text):
    assert validators.parse_figure(text) is None


def test_a_deck_table_turned_into_text_fails_preservation_and_ties():
    from pptx import Presentation
    from pptx.util import Inches

    from lrc.runtime.artifacts import deck
    from lrc.runtime.artifacts.deterministic import presentation_bytes

    task = make_task("refresh-deck-table", SEED)
    prs = Presentation(io.BytesIO(task.oracle))
    slide = prs.slides[1]
    frame = next(s for s in slide.shapes if s.name == deck.TABLE_SHAPE)
    box = slide.shapes.add_textbox(frame.left, frame.top, Inches(4), Inches(1))
    box.name = deck.TABLE_SHAPE
    box.text_frame.text = "Revenue 1,000.00"
    frame._element.getparent().remove(frame._element)
    results = {r["id"]: r for r in validators.run_all(task.checks, Submission(task.inputs, {task.output: presentation_bytes(prs)}))}
    assert results["fa.preservation"]["status"] == "fail"
    assert results["fa.preservation"]["location"] == f'slide 2/shape "{deck.TABLE_SHAPE}"'
    assert results["fa.summary-ties"]["status"] == "fail"  # nothing left to tie
    assert results["fa.unchanged-outside"]["status"] == "pass"  # the table is the permitted region


def test_the_model_with_more_quarters_still_passes_its_own_identities():
    a = model.assumptions("validators-8", 8)
    data = workbook_bytes(model.build(a))
    task = make_task("extend-quarter", SEED)
    got = validators.run(check(task, "fa.identities"), Submission({tasks.MODEL: data}, {tasks.MODEL: data}))
    assert got["status"] == "pass"
