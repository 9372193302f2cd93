"""Formulas as text: checked before a tool writes one, shifted when rows or columns are inserted.

Why: a formula an agent writes is hostile text, and nothing in lrc ever evaluates it while
the agent works (the recalculation engine runs only when a validator judges the saved file).
So a formula is *checked*, not run: it must tokenize (openpyxl's tokenizer, a parser that
evaluates nothing) with balanced parentheses, and it is refused when it could reach outside
the workbook or make Excel do so when a person opens it later:

- an external reference: `[1]Sheet!A1`, `'[book.xlsx]Sheet'!A1`, `'C:\\dir\\[b.xlsx]S'!A1`,
  `'http://host/[b.xlsx]S'!A1` — any `[`, `\\` or `://` in a reference (structured table
  references `Table1[Col]` are refused with them: the generated models have no tables);
- DDE (`=cmd|' /C calc'!A0`): any `|` outside a string literal;
- functions that fetch, call or build references at run time: WEBSERVICE, FILTERXML, RTD,
  CALL, REGISTER, REGISTER.ID, EXEC, HYPERLINK, IMAGE, STOCKHISTORY, INDIRECT;
- any function outside `ALLOWED_FUNCTIONS`: the finance, arithmetic, statistics, logic,
  lookup, date and text functions whose cost grows with the cells they read, and whose value
  is the same on every day and machine. Why an allow-list: the engine that grades the saved
  file implements ~640 functions, and one short formula can make it work for its whole CPU
  limit (`REGEXTEST(REPT("a",40)&"b","^(a+)+$")`: catastrophic backtracking, 60 s of CPU on
  every recalculation, measured 2026-12-07), build a huge array from nothing (`MUNIT(50000)`,
  `MAKEARRAY`, `SEQUENCE`), recurse (`LAMBDA`), or answer differently tomorrow (`TODAY`,
  `NOW`, `RAND`): a grade that would depend on the day, or a minute of one run's CPU held
  against every other run. `recalc_worker.scan` refuses the same functions in a saved book.

Insertion. openpyxl's `insert_rows` / `insert_cols` move cells and nothing else: no formula,
defined name, merged range, chart or validation is adjusted. `shift` does what Excel does to
the *references* in formula text: on the sheet where rows are inserted at `at`, every row
number ≥ `at` moves down by `n` (absolute or not; a range that straddles `at` grows), whole
rows `4:4` move, whole columns `C:C` are untouched — and the same for columns. References to
other sheets, defined names used in a formula (`TaxRate`) and text in string literals are left
alone. The toolbox applies it to every formula of every sheet and to every defined name.
"""

from __future__ import annotations

import re
from typing import Callable

from openpyxl.formula.tokenizer import Token, Tokenizer, TokenizerError
from openpyxl.utils import column_index_from_string, get_column_letter

MAX_FORMULA_CHARS = 2_000
BLOCKED_FUNCTIONS = frozenset({"WEBSERVICE", "FILTERXML", "RTD", "CALL", "REGISTER", "REGISTER.ID", "EXEC", "HYPERLINK",
                               "IMAGE", "STOCKHISTORY", "INDIRECT"})
#: What a formula may call (see the module docstring). Excel's names; `_xlfn.` prefixes are
#: read without it.
ALLOWED_FUNCTIONS = frozenset("""
    SUM SUMIF SUMIFS SUMPRODUCT SUMSQ PRODUCT ROUND ROUNDUP ROUNDDOWN MROUND CEILING FLOOR
    CEILING.MATH FLOOR.MATH INT TRUNC ABS SIGN MOD QUOTIENT POWER SQRT EXP LN LOG LOG10 PI EVEN ODD
    AVERAGE AVERAGEA AVERAGEIF AVERAGEIFS MEDIAN MIN MINA MAX MAXA MINIFS MAXIFS COUNT COUNTA
    COUNTBLANK COUNTIF COUNTIFS STDEV STDEV.S STDEV.P STDEVP VAR VAR.S VAR.P LARGE SMALL RANK
    RANK.EQ GEOMEAN
    IF IFS IFERROR IFNA AND OR NOT XOR TRUE FALSE SWITCH CHOOSE
    INDEX MATCH VLOOKUP HLOOKUP LOOKUP XLOOKUP XMATCH ROW ROWS COLUMN COLUMNS
    NPV XNPV IRR XIRR MIRR PMT IPMT PPMT FV PV RATE NPER EFFECT NOMINAL SLN DB DDB SYD CUMIPMT CUMPRINC
    DATE YEAR MONTH DAY EOMONTH EDATE DAYS DATEVALUE WEEKDAY YEARFRAC
    ISNUMBER ISBLANK ISERROR ISERR ISNA ISTEXT ISLOGICAL N NA
    LEFT RIGHT MID LEN TRIM UPPER LOWER PROPER CONCATENATE CONCAT TEXT VALUE FIND SEARCH EXACT REPLACE
""".split())
_FUNCTION_PREFIXES = ("_XLFN._XLWS.", "_XLFN.", "_XLWS.")
_SHEET_REF = re.compile(r"^(?P<sheet>'(?:[^']|'')+'|[^'!]+)!(?P<ref>.+)$")
_STRING = re.compile(r'"(?:[^"]|"")*"')
_PART = re.compile(r"^(?P<cd>\$?)(?P<col>[A-Za-z]{1,3})?(?P<rd>\$?)(?P<row>[0-9]{1,7})?$")


class FormulaRefused(ValueError):
    """A formula the toolbox will not write (the message says why)."""


def _tokens(text: str) -> list[Token]:
    try:
        return Tokenizer(text).items
    except IndexError:  # the tokenizer pops a closing parenthesis that was never opened
        raise FormulaRefused("the formula's parentheses do not balance") from None
    except (TokenizerError, ValueError) as exc:
        raise FormulaRefused(f"the formula does not parse ({exc})") from None


def function_name(name: str) -> str:
    """A function's name as ALLOWED_FUNCTIONS spells it: upper case, no `_xlfn.` prefix."""
    name = name.upper()
    for prefix in _FUNCTION_PREFIXES:
        if name.startswith(prefix):
            return name[len(prefix):]
    return name


def refusal_of_function(name: str) -> str:
    """Why a formula may not call `name` (ALLOWED_FUNCTIONS spelling), or "" when it may."""
    if name in BLOCKED_FUNCTIONS:
        return f"{name} is not allowed: it reaches outside the workbook or builds references at run time"
    if name not in ALLOWED_FUNCTIONS:
        return (f"{name[:40]} is not among the functions a formula may use here (finance, arithmetic, statistics, logic, "
                f"lookup, date and text functions whose result is the same every day): {', '.join(sorted(ALLOWED_FUNCTIONS))}")
    return ""


def check(text: object) -> str:
    """`text` if it is a formula the toolbox may write; FormulaRefused otherwise."""
    if not isinstance(text, str):
        raise FormulaRefused("a formula must be a string starting with '='")
    if not text.startswith("=") or len(text) < 2:
        raise FormulaRefused("a formula must start with '=' and have a body")
    if len(text) > MAX_FORMULA_CHARS:
        raise FormulaRefused(f"the formula is {len(text):,} characters long (the limit is {MAX_FORMULA_CHARS:,})")
    if any(ord(ch) < 32 or ord(ch) == 127 for ch in text):
        raise FormulaRefused("the formula contains a control character")
    if text.startswith("={") or text.startswith("=="):
        raise FormulaRefused("array and doubled formulas are not written; write a plain formula")
    if "|" in _STRING.sub('""', text):
        raise FormulaRefused("'|' (a DDE link) is not allowed in a formula")
    depth = 0
    for token in _tokens(text):
        if token.type == Token.OPERAND and token.subtype == Token.TEXT:
            continue
        value = token.value
        if token.type == Token.FUNC and token.subtype == Token.OPEN:
            refused = refusal_of_function(function_name(value[:-1]))
            if refused:
                raise FormulaRefused(refused)
        if token.subtype == Token.OPEN:
            depth += 1
        elif token.subtype == Token.CLOSE:
            depth -= 1
            if depth < 0:
                raise FormulaRefused("the formula's parentheses do not balance")
        if "|" in value:
            raise FormulaRefused("'|' (a DDE link) is not allowed in a formula")
        if token.type == Token.OPERAND and token.subtype == Token.RANGE and ("[" in value or "\\" in value or "://" in value):
            raise FormulaRefused(f"{value} refers to another file or a link: external references are never written")
        if token.type == Token.OPERAND and token.subtype == Token.ERROR and value.upper() not in (
                "#REF!", "#DIV/0!", "#N/A", "#NAME?", "#NULL!", "#NUM!", "#VALUE!"):
            raise FormulaRefused(f"{value} is not an Excel error value")
    if depth != 0:
        raise FormulaRefused("the formula's parentheses do not balance")
    return text


def _unquote(sheet: str) -> str:
    return sheet[1:-1].replace("''", "'") if sheet.startswith("'") else sheet


def _shift_part(part: str, axis: str, at: int, n: int) -> str:
    m = _PART.match(part)
    if m is None or (m.group("col") is None and m.group("row") is None):
        return part
    col, row = m.group("col"), m.group("row")
    if axis == "row" and row is not None and int(row) >= at:
        row = str(int(row) + n)
    if axis == "col" and col is not None and column_index_from_string(col.upper()) >= at:
        col = get_column_letter(column_index_from_string(col.upper()) + n)
    return f"{m.group('cd')}{col or ''}{m.group('rd')}{row or ''}"


def _shift_ref(ref: str, axis: str, at: int, n: int) -> str:
    parts = ref.split(":")
    if len(parts) > 2 or not all(_PART.match(p) for p in parts):
        return ref  # a defined name, an error, something not a plain reference: untouched
    if len(parts) == 2 and axis == "row" and all(_PART.match(p).group("row") is None for p in parts):
        return ref  # whole columns C:C keep their rows
    if len(parts) == 2 and axis == "col" and all(_PART.match(p).group("col") is None for p in parts):
        return ref  # whole rows 4:4 keep their columns
    if len(parts) == 1 and (_PART.match(parts[0]).group("col") is None or _PART.match(parts[0]).group("row") is None):
        return ref  # a lone "C" or "4" is a name, not a reference
    return ":".join(_shift_part(p, axis, at, n) for p in parts)


def shift_reference(text: str, own_sheet: str | None, target: str, axis: str, at: int, n: int) -> str:
    """One reference (`C4`, `IS!$C$4:C9`, `'My sheet'!4:4`) shifted for an insertion on `target`;
    `own_sheet` is the sheet the reference is written in (None for a defined name, which
    always names its sheet)."""
    m = _SHEET_REF.match(text)
    if m is not None:
        if _unquote(m.group("sheet")) != target:
            return text
        return f"{m.group('sheet')}!{_shift_ref(m.group('ref'), axis, at, n)}"
    if own_sheet != target:
        return text
    return _shift_ref(text, axis, at, n)


def shift(formula: str, own_sheet: str | None, target: str, axis: str, at: int, n: int) -> str:
    """`formula` with every reference shifted for `n` rows (axis "row") or columns ("col")
    inserted at index `at` of sheet `target` (see the module docstring)."""
    return _rewrite(formula, lambda ref: shift_reference(ref, own_sheet, target, axis, at, n))


def _rewrite(formula: str, fn: Callable[[str], str]) -> str:
    try:
        tokens = Tokenizer(formula).items
    except (TokenizerError, ValueError, IndexError):
        return formula  # an unparseable formula already in the file is left as it is
    changed = False
    for token in tokens:
        if token.type == Token.OPERAND and token.subtype == Token.RANGE:
            new = fn(token.value)
            if new != token.value:
                token.value, changed = new, True
    if not changed:
        return formula
    return "=" + "".join(t.value for t in tokens)
