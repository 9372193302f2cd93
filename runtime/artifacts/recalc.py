"""Recalculate a workbook's formulas without Excel, so an edited model's numbers can be judged.

Why: openpyxl never computes a formula, and a workbook an agent saved with openpyxl has no
cached values at all (one saved by Excel may have stale ones). Every check of a number —
identities, roll-forwards, signs, "perturb an input and its dependents move" — needs the
values the formulas give now, so they are recomputed here and cached values are ignored.

The engine is the `formulas` package (1.3.4), chosen after measuring the three candidates on
this machine (2026-12, the generated model of `model.py`: 7 sheets, ~400 cells):

| engine | install | result on the model | time |
|---|---|---|---|
| formulas 1.3.4 (PyPI) | +27 s cold with python-pptx and defusedxml, ~300 MB (numpy 73 MB and scipy 143 MB of it; schedula, numpy-financial, regex; all wheels, hash-locked) | every cell right (matches `model.reference_values` to the cent), defined names resolved, 645 functions | ~1.4–2 s first book in a process (imports), ~0.45 s each after |
| pycel 1.0b30 (PyPI, pre-release only) | +17 s, +~120 MB (networkx 2.6) | crashes on any defined name with openpyxl 3.1 (`'DefinedNameDict' object has no attribute 'definedName'`); our tax formula uses one | — |
| LibreOffice 7.4 headless (Debian) | 58 packages, 277 MB, apt only (not in requirements.lock, no hashes) | correct once the profile sets `OOXMLRecalcMode=0` | 1.2–1.5 s per file, a process per file |

pycel cannot read the model; LibreOffice is the heaviest, cannot be hash-locked with the rest,
and costs a process per file. `formulas` is pure Python wheels from the lock, evaluates every
function the generators use (SUM, ROUND, unary minus, + - *, cross-sheet references, the
`TaxRate` defined name) and runs in-process. It computes in binary floats, so every number is
turned into a Decimal by its shortest repr and rounded to 9 decimal places (float noise such as
278.44999999999993 becomes 278.45); validators then compare at their declared tolerance.
Its ROUND is replaced by `excel_round` in the worker: `formulas` rounds the binary float
(ROUND(474.45*0.3,2) = ROUND(142.33499999999998,2) = 142.33), Excel rounds the 15 digits it
holds, half away from zero (142.34), as `model.reference_values` does in exact Decimal — so the
oracle's deck figures and the recalculated model agree to the cent for every seed.

Hostile books. An agent's workbook is untrusted, so the engine never runs in the grading
process unbounded: `recalc_worker.scan` refuses a book whose formulas are too many, too long,
too deep or cover too many cells, and the engine runs in a forked worker with memory, CPU and
wall-clock limits (`recalc_worker.Limits`); either refusal is a `Recalc.failure`.

Fail closed. A formula using a function the engine does not implement, a workbook the engine
cannot load, or a calculation that raises gives `Recalc.unsupported` entries / `Recalc.failure`,
and validators turn those into `status: "error"` — never a pass. Excel error values the
formulas produce (#REF!, #DIV/0!, #NAME?, #VALUE!, #N/A, #NUM!, #NULL!) are kept as `XlError`
values for the reference-integrity validator.
"""

from __future__ import annotations

import contextlib
import io
import math
import re
import tempfile
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation
from pathlib import Path
from typing import Any

from lrc.runtime.artifacts import recalc_worker

ENGINE = "formulas"
ENGINE_VERSION = "1.3.4"
ERROR_CODES = ("#REF!", "#DIV/0!", "#NAME?", "#VALUE!", "#N/A", "#NUM!", "#NULL!")
NOISE = Decimal("1e-9")
_FUNCTION = re.compile(r"(?<![A-Za-z0-9_.!$])([A-Za-z][A-Za-z0-9_.]*)\s*\(")
_STRING = re.compile(r'"(?:[^"]|"")*"')
_KEY = re.compile(r"^'?\[[^\]]*\](.+?)'?!([A-Z]+[0-9]+)$")


@dataclass(frozen=True)
class XlError:
    code: str

    def __str__(self) -> str:
        return self.code


@dataclass
class Recalc:
    """Values after recalculation: (sheet, coordinate) -> Decimal | str | bool | XlError | None."""

    values: dict[tuple[str, str], Any] = field(default_factory=dict)
    unsupported: list[tuple[str, str, str]] = field(default_factory=list)  # (sheet, coord, function)
    failure: str = ""  # the engine could not load or calculate the workbook at all

    @property
    def ok(self) -> bool:
        return not self.failure and not self.unsupported

    def get(self, sheet: str, coord: str) -> Any:
        return self.values.get((sheet, coord))


def functions_used(formula: str) -> set[str]:
    """The function names a formula calls (upper case), string literals ignored."""
    return {m.group(1).upper() for m in _FUNCTION.finditer(_STRING.sub('""', formula))}


def supported_functions() -> frozenset[str]:
    import formulas

    return frozenset(k.upper() for k in formulas.get_functions())


def _number(x: Any) -> Any:
    if isinstance(x, bool) or x is None:
        return x
    if isinstance(x, (int, float)) or type(x).__module__ == "numpy":
        try:
            value = Decimal(repr(float(x)) if not isinstance(x, int) else x)
        except (InvalidOperation, ValueError, TypeError):
            return XlError("#NUM!")
        if not value.is_finite():
            return XlError("#NUM!")
        return value.quantize(NOISE) if abs(value) < Decimal("1e15") else value
    text = str(x)
    if text in ERROR_CODES:
        return XlError(text)
    if text in ("", "empty") or type(x).__name__ in ("Token", "EmptyValue"):
        return None
    return text


def _encode(value: Any) -> list:
    """A recalculated value as JSON the worker can send: [tag, text]."""
    if isinstance(value, XlError):
        return ["e", value.code]
    if isinstance(value, Decimal):
        return ["d", str(value)]
    if isinstance(value, bool):
        return ["b", value]
    return ["n", None] if value is None else ["s", str(value)]


def _decode(tag: str, text: Any) -> Any:
    return {"e": lambda: XlError(text) if text in ERROR_CODES else XlError("#VALUE!"), "d": lambda: Decimal(text),
            "b": lambda: bool(text), "n": lambda: None, "s": lambda: str(text)}.get(tag, lambda: None)()


EXCEL_DIGITS = 15  # Excel keeps 15 significant digits; its ROUND rounds what it shows


def excel_round(x: float, digits: float) -> float:
    """Excel's ROUND: half away from zero on the number as Excel holds it (15 significant
    digits), not on its binary float. Why: `formulas` rounds the exact binary value, so
    ROUND(864.595, 2), held as 864.59499999999991, gives 864.59 where Excel and
    `model.reference_values` (exact Decimal, ROUND_HALF_UP) give 864.60 — a one-cent
    disagreement between the oracle's figures and the recalculated model."""
    import decimal

    if not math.isfinite(x) or x == 0:
        return x
    d = max(-400, min(400, int(digits)))  # Excel truncates the digits; past ±400 nothing changes
    with decimal.localcontext() as ctx:
        ctx.prec = 1_000  # every quantize below is exact: a double has at most ~770 significant digits
        held = Decimal(repr(x))
        held = held.quantize(Decimal(1).scaleb(held.adjusted() - EXCEL_DIGITS + 1), rounding=decimal.ROUND_HALF_EVEN)
        if -d >= held.adjusted() - EXCEL_DIGITS + 1:  # rounding to fewer places than Excel holds
            held = held.quantize(Decimal(1).scaleb(-d), rounding=decimal.ROUND_HALF_UP)
        out = float(held)
    if not math.isfinite(out):
        raise ValueError("ROUND overflows")  # the engine turns it into an error value, never a number
    return out


def _install_excel_round() -> None:
    """Make the engine's ROUND `excel_round` (in the worker, before a model is compiled)."""
    import importlib

    from formulas.functions import wrap_ufunc

    # by module name: the package's attribute `math` is the standard library's module
    importlib.import_module("formulas.functions.math").FUNCTIONS["ROUND"] = wrap_ufunc(excel_round)
    functions = importlib.import_module("formulas.functions")
    clear = getattr(functions.get_functions, "cache_clear", None)  # get_functions is lru_cached
    if clear is not None:
        clear()


def _engine(path: Path, sheet_names: dict[str, str], overrides: dict[tuple[str, str], Any]) -> list[list]:
    """Runs in the limited worker: load, calculate, and every single cell's value, encoded."""
    import formulas

    _install_excel_round()
    with contextlib.redirect_stderr(io.StringIO()), contextlib.redirect_stdout(io.StringIO()):
        xl = formulas.ExcelModel().loads(str(path)).finish()
        inputs = {f"'[book.xlsx]{sheet.upper()}'!{coord}": float(v) for (sheet, coord), v in overrides.items()}
        solution = xl.calculate(inputs=inputs) if inputs else xl.calculate()
    out = []
    for key, ranges in solution.items():
        m = _KEY.match(key)
        if m is None:
            continue  # a range or a defined name, not a single cell
        sheet = sheet_names.get(m.group(1).upper(), m.group(1))
        value = getattr(ranges, "value", ranges)
        try:
            value = value[0, 0] if hasattr(value, "shape") else value
        except (IndexError, TypeError):
            pass
        out.append([sheet, m.group(2), *_encode(_number(value))])
    return out


def recalculate(data: bytes, wb=None, overrides: dict[tuple[str, str], Any] | None = None,
                limits: recalc_worker.Limits = recalc_worker.LIMITS) -> Recalc:
    """Recalculate the xlsx `data` (already passed through `safezip.inspect`).

    `wb` is the openpyxl workbook of the same bytes (formulas, not values), used to find
    unsupported functions and to bound the work (`recalc_worker.scan`) before the engine
    runs; `overrides` sets input cells first (a perturbation: (sheet, coordinate) -> number).
    The engine itself runs in a worker limited by `limits` (memory, CPU, wall clock)."""
    out = Recalc()
    if wb is not None:
        known = supported_functions()
        for ws in wb.worksheets:
            for row in ws.iter_rows():
                for cell in row:
                    if cell.data_type == "f" and isinstance(cell.value, str):
                        for fn in sorted(functions_used(cell.value) - known):
                            out.unsupported.append((ws.title, cell.coordinate, fn))
        if out.unsupported:
            return out
        too_big = recalc_worker.scan(wb, limits)
        if too_big:
            out.failure = f"the workbook was not recalculated: {too_big}"
            return out
        sheet_names = {ws.title.upper(): ws.title for ws in wb.worksheets}
    else:
        sheet_names = {}
    try:
        import formulas  # noqa: F401 - imported here so the forked worker inherits it
    except Exception as exc:  # noqa: BLE001
        out.failure = f"the recalculation engine ({ENGINE} {ENGINE_VERSION}) cannot be imported: {exc}"
        return out
    with tempfile.TemporaryDirectory(prefix="lrc-recalc-") as tmp:
        path = Path(tmp) / "book.xlsx"
        path.write_bytes(data)
        cells, why = recalc_worker.run_limited(lambda: _engine(path, sheet_names, dict(overrides or {})), limits)
    if why:
        out.failure = f"the recalculation engine ({ENGINE} {ENGINE_VERSION}) failed: {why}"
        return out
    for sheet, coord, tag, text in cells:
        out.values[(str(sheet), str(coord))] = _decode(tag, text)
    return out
