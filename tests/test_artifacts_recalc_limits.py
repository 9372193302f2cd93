"""A hostile workbook cannot exhaust the grader: it is refused before recalculation (huge
ranges, deep nesting, too many or too long formulas) or stopped by the worker's limits
(memory, CPU, wall clock), and either way the validators say `error`, never `pass`."""

from __future__ import annotations

import pytest
from openpyxl import Workbook
from openpyxl.workbook.defined_name import DefinedName

from helpers.artifacts import task as make_task
from lrc.runtime.artifacts import recalc, recalc_worker, safezip, tasks, validators
from lrc.runtime.artifacts.deterministic import workbook_bytes
from lrc.runtime.artifacts.views import Submission


def book(cells: dict[str, str], names: dict[str, str] | None = None) -> tuple[bytes, object]:
    wb = Workbook()
    ws = wb.active
    ws.title = "S"
    ws["A1"] = 1
    for coord, value in cells.items():
        ws[coord] = value
    for name, text in (names or {}).items():
        wb.defined_names[name] = DefinedName(name, attr_text=text)
    data = workbook_bytes(wb)
    opened, pkg = safezip.open_workbook(data)
    assert opened is not None, pkg.reason
    return data, opened


def chain(n: int) -> dict[str, str]:
    return {f"A{i}": f"=A{i - 1}+1" for i in range(2, n + 1)}


@pytest.mark.parametrize("cells,names,why", [
    ({"B1": "=SUM(A1:XFD1048576)"}, None, "cover more than 1000000 cells"),
    ({"B1": "=SUM(A:A)+SUM(B:B)"}, None, "cover more than 1000000 cells"),
    ({"B1": "=SUM(1:100)"}, None, "cover more than 1000000 cells"),
    ({"B1": "=SUM(S!A1:Z50000)"}, None, "cover more than 1000000 cells"),
    ({"B1": "=1"}, {"Everything": "S!$A:$XFD"}, "the defined name Everything"),
    ({"B1": "=" + "(" * 200 + "1" + ")" * 200}, None, "nests 200 levels deep"),
    ({"B1": "=" + "+".join(["A1"] * 3_000)}, None, "characters long"),
], ids=["whole-sheet", "whole-columns", "whole-rows", "sheet-qualified", "defined-name", "deep-nesting", "long-formula"])
def test_a_hostile_book_is_refused_before_the_engine_runs(cells, names, why):
    data, wb = book(cells, names)
    got = recalc.recalculate(data, wb)
    assert got.failure.startswith("the workbook was not recalculated") and why in got.failure, got.failure
    assert got.values == {} and not got.ok


def test_too_many_formulas_are_refused():
    data, wb = book(chain(300))
    got = recalc.recalculate(data, wb, limits=recalc_worker.Limits(max_formulas=100))
    assert "more than 100 formulas" in got.failure


# A book within the static bounds that the engine needs far more than 200 MiB for, and needs
# it at once (one range of a million cells, loaded as one array): under a 20 MiB limit the
# memory limit is reached within a second, long before the CPU (60 s) or wall-clock (120 s)
# limits could be. The chain below grows its memory slowly over ~10-40 s of engine time, so
# under load the CPU or wall clock could win that race: it proves those two limits instead.
WIDE = {"B1": "=SUM(A1:J100000)"}


@pytest.mark.parametrize("cells,limits,why", [
    (chain(3_000), recalc_worker.Limits(cpu_seconds=1), "more than 1 s of CPU"),
    (WIDE, recalc_worker.Limits(memory_bytes=20 * 2**20, cpu_seconds=60, wall_seconds=120.0), "more than 20 MiB of memory"),
    (chain(3_000), recalc_worker.Limits(wall_seconds=0.2), "past the 0.2 s wall-clock limit"),
], ids=["cpu", "memory", "wall-clock"])
def test_the_worker_stops_an_engine_that_exceeds_its_limits(cells, limits, why):
    data, wb = book(cells)
    got = recalc.recalculate(data, wb, limits=limits)
    assert got.failure.startswith("the recalculation engine") and why in got.failure, got.failure
    assert got.values == {}


def test_the_memory_limit_is_what_stops_a_hungry_worker():
    """The same allocation fails under the limit and succeeds above it: the limit, not the
    machine or the load, decides (256 MiB, touched so it is really mapped)."""
    def hungry() -> int:
        block = bytearray(256 * 2**20)
        block[:: 2**20] = b"x" * 256
        return len(block)

    assert recalc_worker.run_limited(hungry, recalc_worker.Limits(memory_bytes=64 * 2**20)) == \
        (None, "it needed more than 64 MiB of memory")
    assert recalc_worker.run_limited(hungry, recalc_worker.Limits(memory_bytes=1_024 * 2**20)) == (256 * 2**20, "")


def test_a_refused_book_is_an_error_for_every_numeric_validator():
    task = make_task("fix-sign", "limits")
    from openpyxl import load_workbook
    import io

    wb = load_workbook(io.BytesIO(task.oracle))
    wb["IS"]["C30"] = "=SUM(A:XFD)"
    out = workbook_bytes(wb)
    for check in task.checks:
        if check["validator"] in ("fa.identities", "fa.rollforward", "fa.conventions", "fa.reference-integrity"):
            got = validators.run(check, Submission(task.inputs, {task.output: out}))
            assert got["status"] == "error" and "not recalculated" in got["message"], got


def test_the_worker_gives_the_same_values_as_the_formulas_say():
    data, wb = book({"B1": "=A1*2", "B2": "=1/0", "B3": '="x"&"y"'})
    got = recalc.recalculate(data, wb)
    assert got.values[("S", "B1")] == 2 and got.values[("S", "B2")] == recalc.XlError("#DIV/0!")
    assert got.values[("S", "B3")] == "xy"


@pytest.mark.parametrize("formula,cells", [
    ("=SUM(C4:C6)", 3), ("=A1+B2", 0), ("=SUM($C$4:$F$4)", 4), ("=SUM(A:B)", 2 * 1_048_576),
    ("=SUM(IS!C4:C6)+'My sheet'!A1:A2", 5), ('=IF(A1>0,"A1:Z99",0)', 0), ("=LOG10(4)", 0),
])
def test_range_cells_counts_what_a_formula_covers(formula, cells):
    assert recalc_worker.range_cells(formula) == cells


def test_nesting_ignores_parentheses_in_strings():
    assert recalc_worker.nesting('=ROUND((1+2)*3,2)&"((((("') == 2
