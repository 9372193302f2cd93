"""JSON from a model, parsed with limits: the one parser for replies and tool arguments.

A model's reply and the arguments of its tool calls are hostile input. Python's `json`
parses them without limits of its own, and what it builds can crash whatever touches it
later: an integer of 5,000 digits raises ValueError when it is turned back into text
(Python's int-string limit, 4,300 digits — so in `json.dumps` of the journal, the trace,
the report), 5,000 levels of nesting raise RecursionError (in the parser, in jsonschema, in
`json.dumps`), and a multi-megabyte text costs memory everywhere it is copied.

`loads` refuses, with `Unparseable` (a ValueError), anything over a limit — text length,
nesting depth, digits of a number, the non-JSON constants NaN and Infinity — as well as
anything that is not JSON. Callers treat `Unparseable` as the model's invalid output, never
as an internal error. `bounded` applies the same limits to a value that was built some other
way (a dict handed over in-process), and `dumps` writes any value lrc records, turning what
JSON cannot hold (a huge integer, nesting past the limit) into a visible marker string
instead of failing: the journal and the traces must stay writable and readable whatever a
model sent.

Plain shared code (no COMPONENT_ID): the systems, the output contract and the workloads'
kit import it, so a change here changes their fingerprints.
"""

from __future__ import annotations

import json
import re
from itertools import accumulate
from typing import Any

MAX_CHARS = 1_000_000
MAX_DEPTH = 64
MAX_NUMBER_CHARS = 100  # digits (and sign, point, exponent) of one number
MAX_DECODE_ATTEMPTS = 1000  # `raw_decode_first`: start positions tried in prose around the JSON

_STRING = re.compile(r'"(?:[^"\\]|\\.)*"', re.DOTALL)
_BRACKET = re.compile(r"[\[\]{}]")
_STEP = {"[": 1, "{": 1, "]": -1, "}": -1}


class Unparseable(ValueError):
    """The text is not one bounded JSON value; the message says why (for the model's record)."""


def _number(text: str) -> None:
    if len(text) > MAX_NUMBER_CHARS:
        digits = sum(c.isdigit() for c in text)
        raise Unparseable(f"a number has {digits} digits (the limit is {MAX_NUMBER_CHARS} characters)")


def _int(text: str) -> int:
    _number(text)
    return int(text)


def _float(text: str) -> float:
    _number(text)
    return float(text)


def _constant(name: str) -> Any:
    raise Unparseable(f"{name} is not a JSON value")


_DECODER = json.JSONDecoder(parse_int=_int, parse_float=_float, parse_constant=_constant)


def _check_text(text: Any) -> str:
    if isinstance(text, (bytes, bytearray)):
        try:
            text = bytes(text).decode("utf-8")
        except UnicodeDecodeError as exc:
            raise Unparseable(f"not UTF-8 ({exc.reason})") from None
    if not isinstance(text, str):
        raise Unparseable(f"expected JSON text, got {type(text).__name__}")
    if len(text) > MAX_CHARS:
        raise Unparseable(f"the text is {len(text)} characters long (the limit is {MAX_CHARS})")
    return text


def nesting(text: str) -> int:
    """The deepest bracket nesting of `text` outside string literals (an upper bound of what
    parsing it can build; unmatched closers never lower it below zero)."""
    brackets = _BRACKET.findall(_STRING.sub('""', text))
    if not brackets:
        return 0
    return max(accumulate(map(_STEP.__getitem__, brackets), lambda depth, step: max(0, depth + step), initial=0))


def _depth_ok(text: str) -> None:
    depth = nesting(text)
    if depth > MAX_DEPTH:
        raise Unparseable(f"nested {depth} levels deep (the limit is {MAX_DEPTH})")


def _decode(text: str, start: int = 0) -> tuple[Any, int]:
    try:
        return _DECODER.raw_decode(text, start)
    except RecursionError:
        raise Unparseable(f"nested too deeply (the limit is {MAX_DEPTH})") from None


def loads(text: Any) -> Any:
    """One JSON value (whitespace around it allowed), within every limit; else `Unparseable`."""
    text = _check_text(text)
    _depth_ok(text)
    stripped = text.strip()
    if not stripped:
        raise Unparseable("the text is empty")
    try:
        value, end = _decode(stripped)
    except json.JSONDecodeError as exc:
        raise Unparseable(f"not valid JSON ({exc.msg} at line {exc.lineno} column {exc.colno})") from None
    if end != len(stripped):
        raise Unparseable(f"extra data after the JSON value (at character {end})")
    return bounded(value)


def raw_decode_first(text: Any) -> Any:
    """The first JSON object or array in `text`, tolerating prose and ``` fences around it.

    The whole text is checked against the limits first, so a reply holding an oversized
    number or nesting is refused as a whole (never half-read); `Unparseable` if no JSON
    object or array is found within MAX_DECODE_ATTEMPTS start positions.
    """
    text = _check_text(text)
    _depth_ok(text)
    attempts = 0
    for match in re.finditer(r"[{\[]", text):
        attempts += 1
        if attempts > MAX_DECODE_ATTEMPTS:
            break
        try:
            value, _ = _decode(text, match.start())
        except json.JSONDecodeError:
            continue
        return bounded(value)
    raise Unparseable("no JSON object found in the reply")


def bounded(value: Any) -> Any:
    """`value` itself if it is within the limits (depth, digits, plain JSON types); else `Unparseable`."""
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, (dict, list)):
            if depth > MAX_DEPTH:
                raise Unparseable(f"nested more than {MAX_DEPTH} levels deep")
            children = item.values() if isinstance(item, dict) else item
            if isinstance(item, dict) and not all(isinstance(k, str) for k in item):
                raise Unparseable("an object key is not a string")
            stack.extend((child, depth + 1) for child in children)
        elif isinstance(item, bool) or item is None or isinstance(item, str):
            continue
        elif isinstance(item, int):
            if item.bit_length() > MAX_NUMBER_CHARS * 4:  # ~ more than MAX_NUMBER_CHARS digits
                raise Unparseable(f"an integer has more than {MAX_NUMBER_CHARS} digits")
        elif isinstance(item, float):
            if item != item or item in (float("inf"), float("-inf")):
                raise Unparseable(f"{item} is not a JSON value")
        else:
            raise Unparseable(f"a {type(item).__name__} is not a JSON value")
    return value


# -- writing what lrc records ------------------------------------------------------------------

_INT_LIMIT_BITS = 4000 * 3  # well inside Python's 4,300-digit int-string limit


def representable(value: Any) -> Any:
    """A copy of `value` that `json.dumps` can always write: integers too long for text and
    nesting deeper than 4 * MAX_DEPTH become marker strings, other unknown types their str()."""
    limit = 4 * MAX_DEPTH

    def convert(item: Any, depth: int) -> Any:
        if isinstance(item, bool) or item is None or isinstance(item, (str, float)):
            return item
        if isinstance(item, int):
            return item if item.bit_length() <= _INT_LIMIT_BITS else f"<integer of about {int(item.bit_length() * 0.30103)} digits>"
        if isinstance(item, (dict, list, tuple)):
            if depth >= limit:
                return f"<nested deeper than {limit} levels>"
            if isinstance(item, dict):
                return {str(k): convert(v, depth + 1) for k, v in item.items()}
            return [convert(v, depth + 1) for v in item]
        return str(item)

    # Recursion is bounded by `limit` (256) frames: far below Python's recursion limit.
    return convert(value, 0)


def dumps(value: Any, **kwargs: Any) -> str:
    """`json.dumps(value, **kwargs)`, or of `representable(value)` when the value cannot be written as it is."""
    try:
        return json.dumps(value, **kwargs)
    except (ValueError, RecursionError, TypeError):
        return json.dumps(representable(value), **kwargs)
