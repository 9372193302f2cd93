"""The recalculation engine computes the generated model as its formulas say, moves dependents
when an input is perturbed, and fails closed on what it cannot evaluate."""

from __future__ import annotations

from decimal import Decimal

import pytest

from lrc.runtime.artifacts import model, recalc, safezip
from lrc.runtime.artifacts.deterministic import workbook_bytes


def opened(data: bytes):
    wb, pkg = safezip.open_workbook(data)
    assert wb is not None, pkg.reason
    return wb


@pytest.mark.parametrize("seed", ["canary", pytest.param("coverage-1", marks=pytest.mark.slow),
                                  pytest.param("coverage-2", marks=pytest.mark.slow)])
def test_the_engine_matches_the_decimal_reference_to_the_cent(seed):
    a = model.assumptions(seed, 5)
    data = workbook_bytes(model.build(a))
    got = recalc.recalculate(data, opened(data))
    assert got.ok, (got.failure, got.unsupported)
    reference = model.reference_values(a)
    wrong = {k: (v, got.values.get(k)) for k, v in reference.items() if got.values.get(k) != v}
    assert wrong == {}


def test_every_function_the_generators_use_is_supported():
    wb = opened(model.three_statement("canary"))
    used = {fn for ws in wb.worksheets for row in ws.iter_rows() for c in row
            if c.data_type == "f" for fn in recalc.functions_used(c.value)}
    assert used == {"SUM", "ROUND"}
    assert used <= recalc.supported_functions()


def test_perturbing_an_input_moves_its_dependents_as_the_formulas_say():
    a = model.assumptions("canary", 4)
    data = workbook_bytes(model.build(a))
    wb = opened(data)
    base = recalc.recalculate(data, wb)
    bumped = a.inputs["opex"][1] + Decimal("100")
    moved = recalc.recalculate(data, wb, overrides={("Inputs", "D6"): bumped})
    expected = model.reference_values(model.with_input(a, "opex", 1, bumped))
    for coord in (("IS", "D7"), ("IS", "D13"), ("BS", "D12"), ("CF", "D17"), ("BS", "F4"), ("BS", "F14")):
        assert moved.values[coord] == expected[coord] != base.values[coord], coord
    assert moved.values[("IS", "C13")] == base.values[("IS", "C13")]  # the quarter before does not move
    assert moved.values[("BS", "D7")] == moved.values[("BS", "D14")]  # and the balance sheet still balances


def test_an_unsupported_function_is_reported_not_evaluated():
    wb = model.build(model.assumptions("canary", 4))
    wb["IS"]["C20"] = "=CUBEVALUE(\"x\",\"y\")+LRCNOPE(1)"
    data = workbook_bytes(wb)
    got = recalc.recalculate(data, opened(data))
    assert not got.ok and got.values == {}
    assert ("IS", "C20", "LRCNOPE") in got.unsupported


def test_excel_errors_are_values():
    wb = model.build(model.assumptions("canary", 4))
    wb["IS"]["C20"] = "=1/0"
    data = workbook_bytes(wb)
    got = recalc.recalculate(data, opened(data))
    assert got.values[("IS", "C20")] == recalc.XlError("#DIV/0!")


def test_string_literals_are_not_function_calls():
    assert recalc.functions_used('=IF(A1>0,"SUM(",ROUND(A1,2))') == {"IF", "ROUND"}


def test_an_engine_failure_is_a_failure_value():
    got = recalc.recalculate(b"PK\x03\x04 not a workbook")
    assert got.failure.startswith("the recalculation engine") and not got.ok


def test_perturbing_the_wacc_moves_the_dcf_as_its_sensitivity_grid_predicts():
    from lrc.runtime.artifacts import kinds_dcf, tasks

    task = tasks.make("add-sensitivity-table", "canary")
    data = task.oracle
    wb = opened(data)
    base = recalc.recalculate(data, wb)
    wacc = kinds_dcf.rates("canary")[0]
    moved = recalc.recalculate(data, wb, overrides={("Inputs", kinds_dcf.WACC_CELL): wacc + Decimal("0.01")})
    assert base.ok and moved.ok
    ev, ev_moved = base.values[("DCF", "C11")], moved.values[("DCF", "C11")]
    assert ev_moved < ev  # a dearer capital, a lower value
    assert base.values[("Sensitivity", "E7")] == ev  # the grid's centre is the DCF's case
    assert abs(ev_moved - base.values[("Sensitivity", "E8")]) <= Decimal("0.005")  # one row down is WACC + 1%
    assert moved.values[("DCF", "C4")] == base.values[("DCF", "C4")]  # cash flows do not depend on the WACC
