"""A formula may call only the functions of `formulatext.ALLOWED_FUNCTIONS`, at write time (the
toolbox) and before the engine recalculates a saved book (`recalc_worker.scan`).

Found by sending hostile tool arguments: `=REGEXTEST(REPT("a",40)&"b","^(a+)+$")` was written,
and every recalculation of the book (`read_range` with computed values, each validator) then
spent the worker's whole 60 s CPU limit on the regular expression's backtracking -- holding the
one artifact lock every other task run of the execute waits on. The class: the engine
implements ~640 functions, and many cost far more than the cells they read (MUNIT, MAKEARRAY,
SEQUENCE build arrays from nothing; LAMBDA recurses) or answer differently tomorrow (TODAY,
NOW, RAND), which would make a grade depend on the day it was computed. Also found: a range in
lower case (`c5:zz200000`, which the engine reads as Excel does) was not counted by the static
range bound.
"""

from __future__ import annotations

import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from openpyxl import Workbook

from helpers.artifacts import task as make_task
from lrc.runtime.artifacts import formulatext, recalc, recalc_worker, safezip
from lrc.runtime.artifacts.deterministic import workbook_bytes


def _engine_functions() -> set[str]:
    from formulas.functions import get_functions

    return {formulatext.function_name(name) for name in get_functions()}


ENGINE = sorted(_engine_functions())
OUTSIDE = [name for name in ENGINE if name not in formulatext.ALLOWED_FUNCTIONS]
VOLATILE = ["TODAY", "NOW", "RAND", "RANDBETWEEN", "RANDARRAY"]
COSTLY = ["REGEXTEST", "REGEXREPLACE", "REGEXEXTRACT", "REPT", "SUBSTITUTE", "MUNIT", "MAKEARRAY", "SEQUENCE",
          "LAMBDA", "MAP", "REDUCE", "SCAN", "OFFSET", "MMULT", "MINVERSE"]


def _book(formula: str) -> tuple[bytes, object]:
    wb = Workbook()
    ws = wb.active
    ws.title = "S"
    ws["A1"] = 1
    ws["B1"] = formula
    data = workbook_bytes(wb)
    opened, pkg = safezip.open_workbook(data)
    assert opened is not None, pkg.reason
    return data, opened


def test_the_engine_implements_more_than_is_allowed_and_the_named_hazards_are_outside():
    assert len(OUTSIDE) > 300, len(OUTSIDE)  # the class this guards against: most of what the engine has
    for name in VOLATILE + COSTLY:
        assert name not in formulatext.ALLOWED_FUNCTIONS, name
    assert not formulatext.ALLOWED_FUNCTIONS & formulatext.BLOCKED_FUNCTIONS


def test_every_engine_function_outside_the_list_is_refused_when_written_and_before_recalculation():
    wrong = []
    for name in OUTSIDE:
        for spelled in (name, name.lower(), "_xlfn." + name):
            formula = f"={spelled}(1)"
            try:
                formulatext.check(formula)
                wrong.append(f"{formula}: written")
            except formulatext.FormulaRefused as refused:
                if name[:40] not in str(refused):
                    wrong.append(f"{formula}: {refused}")
            why = recalc_worker.refused_function(formula)
            if not (why.startswith(name[:40]) and "not" in why):
                wrong.append(f"{formula}: scan says {why!r}")
    assert not wrong, wrong[:20]


def test_every_allowed_function_may_be_written():
    for name in sorted(formulatext.ALLOWED_FUNCTIONS):
        assert formulatext.check(f"={name}(1)") == f"={name}(1)"
        assert recalc_worker.refused_function(f"=1+{name.lower()}(1)") == ""


def test_a_function_name_inside_a_string_is_text_not_a_call():
    formula = '=IF(A1="REGEXTEST(x)",1,0)&"TODAY()"'
    assert formulatext.check(formula) == formula
    assert recalc_worker.refused_function(formula) == ""


def test_the_backtracking_formula_is_refused_before_the_engine_spends_its_cpu_limit():
    data, wb = _book('=REGEXTEST(REPT("a",40)&"b","^(a+)+$")')
    started = time.monotonic()
    got = recalc.recalculate(data, wb)
    assert time.monotonic() - started < 10  # it took 60 s of CPU in the engine before
    assert got.failure.startswith("the workbook was not recalculated") and "S!B1's formula calls REGEXTEST" in got.failure
    assert not got.ok and got.values == {}


def test_a_volatile_function_in_a_saved_book_is_an_error_for_the_numeric_validators():
    import io

    from openpyxl import load_workbook

    from lrc.runtime.artifacts import validators
    from lrc.runtime.artifacts.views import Submission

    task = make_task("fix-sign", "functions")
    wb = load_workbook(io.BytesIO(task.oracle))
    wb["IS"]["C30"] = "=TODAY()"
    out = workbook_bytes(wb)
    seen = 0
    for check in task.checks:
        if check["validator"] in ("fa.identities", "fa.rollforward", "fa.conventions", "fa.reference-integrity"):
            got = validators.run(check, Submission(task.inputs, {task.output: out}))
            assert got["status"] == "error" and "TODAY" in got["message"], got
            seen += 1
    assert seen


def test_the_toolbox_refuses_the_formula_and_leaves_the_book_as_it_was(tmp_path):
    from lrc.runtime.artifacts.toolbox import ArtifactToolbox

    box = ArtifactToolbox(tmp_path / "run", make_task("fix-sign", "functions").inputs)
    before = box.call("read_range", {"file": "model.xlsx", "sheet": "Inputs", "range": "H1"}).content
    got = box.call("write_cells", {"file": "model.xlsx", "cells": [{"cell": "Inputs!H1", "formula": "=MUNIT(50000)"}]})
    assert got.is_error and "MUNIT is not among the functions" in got.content
    assert box.call("read_range", {"file": "model.xlsx", "sheet": "Inputs", "range": "H1"}).content == before


_COLUMN = st.text(alphabet="ABCDEFGHIJKLMNOPQRSTUVWXYZ", min_size=1, max_size=2)


@settings(max_examples=60, deadline=None)
@given(c0=_COLUMN, c1=_COLUMN, r0=st.integers(1, 99_999), r1=st.integers(1, 99_999),
       case=st.lists(st.booleans(), min_size=4, max_size=4))
def test_a_range_covers_as_many_cells_in_any_letter_case(c0, c1, r0, r1, case):
    upper = f"=SUM({c0}{r0}:{c1}{r1})"
    mixed = "=SUM(" + "".join(ch.lower() if case[i % 4] else ch for i, ch in enumerate(f"{c0}{r0}:{c1}{r1}")) + ")"
    assert recalc_worker.range_cells(mixed) == recalc_worker.range_cells(upper) > 0


def test_a_lower_case_range_over_the_bound_is_refused_before_the_engine_runs():
    data, wb = _book("=sum(c5:zz200000)")
    got = recalc.recalculate(data, wb)
    assert got.failure.startswith("the workbook was not recalculated") and "cover more than 1000000 cells" in got.failure
