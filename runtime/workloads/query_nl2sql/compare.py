"""Result comparison of query.nl2sql: one definition for the grader and the generator.

The generator uses the very comparison the grader applies to decide whether a question is
worth asking: a question whose reference result on some variant database does not differ
*as graded* from the primary's could be answered by literals read from the primary once
(`SELECT 'Kestrel Freight', 1234.50`), so the generator draws another one.

Rules (see grading.py for why they are stricter than BIRD and Spider):

- a cell is None (NULL), ("s", NFC-trimmed text), ("b", hex of a blob) or ("n", Decimal):
  numbers (and text that is a plain decimal number) are read exactly from their decimal
  string (a float through its shortest repr) and stripped of binary noise below 1e-6;
- numbers compare at the column's declared tolerance around the exact reference,
  symmetric: |observed - expected| <= tolerance (money columns: half a cent, so 12.335 and
  12.345 both match 12.34, 12.3449 and 12.3351 too, 12.3451 does not; integer columns such as
  counts and ranks: exact). Nothing is rounded half-up on either side;
- rows are compared as a multiset (a maximum one-to-one matching of expected rows to
  returned rows; duplicates count) or, when the question asks for an order, position by
  position.
"""

from __future__ import annotations

import bisect
import re
import unicodedata
from collections import defaultdict
from decimal import ROUND_HALF_EVEN, Decimal, InvalidOperation, localcontext
from typing import Any, Mapping, Sequence

from lrc.runtime.checks.money import MONEY_TOLERANCE, within

EXACT = Decimal("0")
_NOISE = Decimal("0.000001")
_NUMERIC_TEXT = re.compile(r"^[+-]?(\d+(\.\d*)?|\.\d+)$")
SHOW = 3  # rows quoted in a failure message
AUGMENT_LIMIT = 200_000  # candidate pairs examined while matching within tolerance
MAX_DEPTH = 200  # longest augmenting path followed (far below Python's recursion limit)

Cell = Any


def cell(value: Any) -> Cell:
    """A comparable form of one result cell: ('n', Decimal), ('s', 'text'), ('b', hex) or None."""
    if value is None:
        return None
    if isinstance(value, bool):
        value = int(value)
    if isinstance(value, (int, float)):
        return _number(value)
    if isinstance(value, (bytes, bytearray)):
        return ("b", bytes(value).hex())
    text = unicodedata.normalize("NFC", str(value)).strip()
    if _NUMERIC_TEXT.match(text):
        return _number(text)
    return ("s", text)


def _number(value: int | float | str) -> Cell:
    try:
        d = Decimal(repr(value)) if isinstance(value, float) else Decimal(value)
        if not d.is_finite() or d.adjusted() > 30:
            return ("n", repr(value))
        with localcontext() as ctx:  # exact up to 31 digits and 6 decimals: 28 digits would make 10**28 + 1 equal 10**28
            ctx.prec = 40
            out = d.quantize(_NOISE, rounding=ROUND_HALF_EVEN) if d.as_tuple().exponent < -6 else d
            return ("n", out.normalize() + 0 if out.is_zero() else out.normalize())
    except (InvalidOperation, ValueError):  # inf, huge magnitudes: compare the text form
        return ("n", repr(value))


def show_cell(c: Cell) -> Any:
    if c is None:
        return None
    if c[0] == "n" and isinstance(c[1], Decimal):
        return format(c[1], "f")
    return c[1]


def show(row: Sequence[Cell]) -> list[Any]:
    """A row as readable JSON values for messages."""
    return [show_cell(c) for c in row]


def tolerances(result: Mapping[str, Any]) -> list[str]:
    """The declared tolerance of each column of a reference result: exact for integer columns
    (counts, ranks, quarters), half a cent for any other number column (money)."""
    out = []
    for i, _ in enumerate(result["columns"]):
        values = [row[i] for row in result["rows"] if row[i] is not None]
        integral = all(isinstance(v, int) for v in values)
        out.append(str(EXACT if integral else MONEY_TOLERANCE))
    return out


def cells_equal(want: Cell, got: Cell, tolerance: Decimal) -> bool:
    if want is None or got is None:
        return want is got
    if want[0] == "n" and got[0] == "n" and isinstance(want[1], Decimal) and isinstance(got[1], Decimal):
        return within(got[1], want[1], tolerance)
    return want == got


def rows_equal(want: Sequence[Cell], got: Sequence[Cell], tol: Sequence[Decimal]) -> bool:
    return len(want) == len(got) and all(cells_equal(w, g, t) for w, g, t in zip(want, got, tol))


def _signature(row: Sequence[Cell]) -> tuple:
    """Everything that must be equal exactly: non-numbers, and which cells are numbers."""
    return tuple(("n",) if c is not None and c[0] == "n" and isinstance(c[1], Decimal) else c for c in row)


def _first_number(row: Sequence[Cell]) -> Decimal:
    for c in row:
        if c is not None and c[0] == "n" and isinstance(c[1], Decimal):
            return c[1]
    return Decimal(0)


def match_multiset(want: Sequence[tuple], got: Sequence[tuple], tol: Sequence[Decimal]) -> tuple[list[int], list[int]]:
    """A maximum one-to-one matching of expected rows to returned rows within tolerance.

    Returns (indexes of unmatched expected rows, indexes of unmatched returned rows). Exact
    pairs are taken first; the rest are matched by augmenting paths, restricted to rows of
    the same signature whose first number is within the largest tolerance.
    """
    match_got: dict[int, int] = {}   # got index -> want index
    match_want: dict[int, int] = {}  # want index -> got index
    exact: dict[tuple, list[int]] = defaultdict(list)
    for j, g in enumerate(got):
        exact[g].append(j)
    for i, w in enumerate(want):
        pool = exact.get(w)
        if pool:
            j = pool.pop()
            match_got[j], match_want[i] = i, j
    if len(match_want) == len(want) or len(match_got) == len(got):
        return [i for i in range(len(want)) if i not in match_want], [j for j in range(len(got)) if j not in match_got]
    widest = max(tol, default=EXACT)
    buckets: dict[tuple, list[tuple[Decimal, int]]] = defaultdict(list)
    for j, g in enumerate(got):
        buckets[_signature(g)].append((_first_number(g), j))
    for b in buckets.values():
        b.sort()
    budget = [AUGMENT_LIMIT]

    def candidates(i: int) -> list[int]:
        bucket = buckets.get(_signature(want[i]), [])
        x = _first_number(want[i])
        lo = bisect.bisect_left(bucket, (x - widest, -1))
        out = []
        for k in range(lo, len(bucket)):
            value, j = bucket[k]
            if value > x + widest:
                break
            budget[0] -= 1
            if rows_equal(want[i], got[j], tol):
                out.append(j)
        return out

    def augment(i: int, seen: set[int], depth: int) -> bool:
        options = candidates(i)
        for j in options:  # a free row first: rows shifted by up to the tolerance then match in one pass
            if j not in match_got and j not in seen:
                seen.add(j)
                match_got[j], match_want[i] = i, j
                return True
        if depth >= MAX_DEPTH:
            return False
        for j in options:
            if j in seen or budget[0] <= 0:
                continue
            seen.add(j)
            if augment(match_got[j], seen, depth + 1):
                match_got[j], match_want[i] = i, j
                return True
        return False

    for i in range(len(want)):
        if i not in match_want and budget[0] > 0:
            augment(i, set(), 0)
    return [i for i in range(len(want)) if i not in match_want], [j for j in range(len(got)) if j not in match_got]


def _column_map(expected: Sequence[str], got: Sequence[str]) -> list[int] | None:
    """Indexes into `got` for each expected column, by name, if the names are a permutation."""
    want = [c.strip().casefold() for c in expected]
    have = [c.strip().casefold() for c in got]
    if len(set(have)) != len(have) or sorted(want) != sorted(have) or want == have:
        return None
    return [have.index(c) for c in want]


def compare(expected: Mapping[str, Any], columns: Sequence[str], rows: Sequence[Sequence[Any]], ordered: bool,
            tolerance: Sequence[str] | None = None) -> dict[str, Any] | None:
    """None when the result matches the expected one; else {message, location, observed, expected}.

    `tolerance`: the declared tolerance of each expected column (default: `tolerances(expected)`).
    """
    exp_cols = list(expected["columns"])
    if len(columns) != len(exp_cols):
        return {"message": f"expected {len(exp_cols)} column(s) ({', '.join(exp_cols)}), got {len(columns)} "
                           f"({', '.join(map(str, columns))})",
                "location": {"columns": list(columns)}, "observed": f"{len(columns)} columns", "expected": f"{len(exp_cols)} columns"}
    tol = [Decimal(t) for t in (tolerance if tolerance is not None else tolerances(expected))]
    mapping = _column_map(exp_cols, columns)
    got = [tuple(cell(row[i]) for i in mapping) if mapping else tuple(cell(v) for v in row) for row in rows]
    want = [tuple(cell(v) for v in row) for row in expected["rows"]]
    if ordered:
        for i, (w, g) in enumerate(zip(want, got)):
            if not rows_equal(w, g, tol):
                return {"message": f"row {i + 1} differs (row order matters for this question): expected {show(w)}, got {show(g)}",
                        "location": {"row": i + 1}, "observed": show(g), "expected": show(w)}
        if len(want) != len(got):
            i = min(len(want), len(got))
            extra = got[i:i + SHOW] if len(got) > len(want) else []
            missing = want[i:i + SHOW] if len(want) > len(got) else []
            what = f"first extra row(s): {[show(r) for r in extra]}" if extra else f"first missing row(s): {[show(r) for r in missing]}"
            return {"message": f"expected {len(want)} row(s), got {len(got)}; {what}", "location": {"row": i + 1},
                    "observed": f"{len(got)} rows", "expected": f"{len(want)} rows"}
        return None
    missing_ix, extra_ix = match_multiset(want, got, tol)
    if not missing_ix and not extra_ix:
        return None
    missing = sorted((show(want[i]) for i in missing_ix), key=repr)
    extra = sorted((show(got[j]) for j in extra_ix), key=repr)
    parts = [f"expected {len(want)} row(s), got {len(got)} (compared as a multiset: duplicates count, order ignored)"]
    if missing:
        parts.append(f"{len(missing)} expected row(s) missing, e.g. {missing[:SHOW]}")
    if extra:
        parts.append(f"{len(extra)} unexpected row(s), e.g. {extra[:SHOW]}")
    return {"message": "; ".join(parts),
            "location": {"rows_missing": missing[:SHOW], "rows_unexpected": extra[:SHOW]},
            "observed": f"{len(got)} rows", "expected": f"{len(want)} rows"}
