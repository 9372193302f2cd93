"""Every regular expression that comes from a spec, decided by one linear-time engine.

Specs arrive in pull requests and model answers are hostile, so a spec's regex is never run
by a backtracking engine: a nested quantifier (`(a+)+$`) against a value that almost matches
would take time exponential in the value's length. The engine is the Rust `regex` crate
(finite automata, time linear in the value), reached through jsonschema-rs with
`RegexOptions`; the crate has no backreferences and no look-around, so a pattern using them
does not compile and is refused at compile time (LRC3020), never handed to another engine.

Both halves of lrc use this module: the compiler to check item, output, tool-parameter and
answer-format schemas and the sample item, the runtime to check generated items and model
answers, and any validator whose spec parameters hold a regex (`search`, `fullmatch`). A JSON
Schema built from a spec is only ever evaluated by `validator()` here, so its `pattern`,
`patternProperties` and `format: regex` all go through the same engine, and every error
message comes from that one evaluation. Python's `re` and Python jsonschema never see a spec
schema as a schema.

Syntax is ECMA-262 as JSON Schema asks (jsonschema-rs translates it): `\\d` and `\\w` are ASCII.
jsonschema-rs is imported on first use, so importing this module stays cheap.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

SIZE_LIMIT = 64 * 1024
"""Largest compiled program the engine builds, in bytes (the crate's default is 10 MiB).
Matching is linear in the value for a fixed program, but when the lazy DFA's cache thrashes
the engine falls back to simulating the NFA, costing (program states) x (value length): the
program grows with counted repetitions (`(?:\\w{1,20}a\\w{1,20}){1,20}c` took 282 s on a
1,000,000-character value at 2 MiB), so this cap is what bounds the constant. The
project's own patterns compile to a few KiB."""
DFA_SIZE_LIMIT = 16 * 1024 * 1024

SUBJECT_LIMIT = 4096
"""Longest string (in characters) ever handed to the engine. Even linear, the fallback costs
(program size) x (value length): the slowest pattern found under SIZE_LIMIT
(`(?:\\w{1,20}a\\w{1,20}){1,10}c`) takes about 0.09 s on 4,096 near-matching characters,
0.2 s on 10,000 and 2.6 s on 100,000. A longer string checked against a `pattern` (or a longer
object key, when the schema has `patternProperties`) is a violation with its own message,
decided without running the regex; `search`/`fullmatch` raise SubjectTooLong."""


class UnsupportedPattern(ValueError):
    """A regex the linear-time engine cannot compile."""


class SubjectTooLong(ValueError):
    """A string longer than SUBJECT_LIMIT, which no regex check is run on."""


def too_long(text: str, what: str = "string") -> str | None:
    """The refusal message for a regex subject over SUBJECT_LIMIT, else None."""
    if len(text) <= SUBJECT_LIMIT:
        return None
    return f"{what} of {len(text):,} characters exceeds the {SUBJECT_LIMIT:,}-character limit for pattern checks"


@lru_cache(maxsize=1)
def _rs() -> Any:
    import jsonschema_rs

    return jsonschema_rs


def pattern_options() -> Any:
    rs = _rs()
    return rs.RegexOptions(size_limit=SIZE_LIMIT, dfa_size_limit=DFA_SIZE_LIMIT)


@lru_cache(maxsize=4096)
def _one(pattern: str) -> Any:
    """A jsonschema-rs validator for {"pattern": pattern}: the engine's compiled regex."""
    rs = _rs()
    try:
        return rs.Draft202012Validator({"type": "string", "pattern": pattern}, pattern_options=pattern_options(), offline=True)
    except (rs.ValidationError, ValueError) as exc:
        raise UnsupportedPattern(problem_of(pattern)) from exc


_BACKREF = re.compile(r"\\(?:[1-9]|k<)")
_LOOKAROUND = re.compile(r"\(\?<?[=!]")


def problem_of(pattern: str) -> str:
    """Why the linear-time engine refuses `pattern` (a short phrase for a diagnostic).

    The pattern is only scanned as text here (by fixed, linear expressions) and, to tell a
    typo from an unsupported feature, compiled but never run by the backtracking engine."""
    features = []
    if _BACKREF.search(pattern):
        features.append("a backreference")
    if _LOOKAROUND.search(pattern):
        features.append("look-around")
    if features:
        return f"it uses {' and '.join(features)}, which a linear-time regex engine cannot evaluate"
    rs = _rs()
    try:
        rs.Draft202012Validator({"pattern": pattern}, pattern_options=rs.FancyRegexOptions(), offline=True)
    except (rs.ValidationError, ValueError):
        return f"it is not a valid regular expression, or compiles larger than {SIZE_LIMIT // 1024} KiB"
    return f"it uses syntax the linear-time engine does not support, or compiles larger than its {SIZE_LIMIT // 1024} KiB limit"


def compile_problem(pattern: str) -> str | None:
    """None when the linear-time engine compiles `pattern`, else why not."""
    try:
        _one(pattern)
    except UnsupportedPattern as exc:
        return str(exc)
    return None


def is_regex(value: Any) -> bool:
    """The `format: regex` check: a string is a regex when the linear-time engine compiles it
    (non-strings are not this format's business)."""
    return not isinstance(value, str) or compile_problem(value) is None


def search(pattern: str, text: str, *, limit: bool = True) -> bool:
    """Does `pattern` match somewhere in `text` (JSON Schema `pattern` semantics)?
    Raises UnsupportedPattern when the engine cannot compile it, SubjectTooLong (with the
    message to report) when `text` is longer than SUBJECT_LIMIT. `limit=False` is only for
    lrc's own small patterns (schemas/), never for a spec's."""
    engine = _one(pattern)
    refusal = too_long(text) if limit else None
    if refusal is not None:
        raise SubjectTooLong(refusal)
    return bool(engine.is_valid(text))


def fullmatch(pattern: str, text: str) -> bool:
    """Does `pattern` match the whole of `text`?"""
    return search(f"^(?:{pattern})$", text)


@dataclass(frozen=True)
class Violation:
    """One way an instance breaks a schema: where (instance path), which keyword, and the
    engine's own message."""

    path: tuple[str | int, ...]
    keyword: str
    message: str

    @property
    def pointer(self) -> str:
        return "".join("/" + str(p).replace("~", "~0").replace("/", "~1") for p in self.path) or "/"


class SchemaUnusable(ValueError):
    """A schema the engine cannot build (a regex it cannot compile, an unresolvable $ref)."""


class _CappedPattern:
    """The `pattern` keyword of every spec schema: a string over SUBJECT_LIMIT fails with its
    own message and is never handed to the engine; any other string is decided, and its
    message written, by the engine's own `pattern` check (`_one`)."""

    def __init__(self, parent_schema: Any, value: Any, schema_path: Any) -> None:
        if not isinstance(value, str):
            raise ValueError(f"pattern {value!r} is not a string")
        self.engine = _one(value)  # UnsupportedPattern (a ValueError) when it cannot compile

    def validate(self, instance: Any) -> None:
        if not isinstance(instance, str):
            return
        refusal = too_long(instance)
        if refusal is not None:
            raise ValueError(refusal)
        if not self.engine.is_valid(instance):
            raise ValueError(next(iter(self.engine.iter_errors(instance))).message)


def _is_regex_value(value: Any) -> bool:
    """`format: regex` on an instance: a string over SUBJECT_LIMIT is not compiled."""
    return not isinstance(value, str) or (too_long(value) is None and is_regex(value))


def validator(schema: Any, *, formats: bool = False) -> Any:
    """A Draft 2020-12 validator for a spec-supplied schema, every regex in it decided by the
    linear-time engine (`format: regex` too, when formats are asserted), and no string longer
    than SUBJECT_LIMIT checked against a `pattern`. No network."""
    rs = _rs()
    kwargs: dict[str, Any] = {"validate_formats": True, "formats": {"regex": _is_regex_value}} if formats else {"validate_formats": False}
    try:
        return rs.Draft202012Validator(schema, pattern_options=pattern_options(), offline=True, keywords={"pattern": _CappedPattern}, **kwargs)
    except (rs.ValidationError, rs.ReferencingError, ValueError) as exc:
        raise SchemaUnusable(getattr(exc, "message", None) or str(exc).splitlines()[0]) from exc


@lru_cache(maxsize=64)
def _cached(schema_json: str) -> Any:
    return validator(json.loads(schema_json))


def cached_validator(schema: Any) -> Any:
    """`validator(schema)`, built once per distinct schema."""
    return _cached(json.dumps(schema, sort_keys=True, ensure_ascii=False))


def violations(schema: Any, instance: Any, *, built: Any = None) -> list[Violation]:
    """Every violation of `schema` by `instance`, ordered by instance path. An instance the
    engine cannot take (nested too deeply, a non-string key) is one violation at the root."""
    v = built if built is not None else cached_validator(schema)
    if _has_pattern_properties(schema):
        long_keys = _long_keys(instance)
        if long_keys:
            return long_keys  # never hand such a key to `patternProperties`
    try:
        found = [Violation(tuple(e.instance_path), e.kind.name, e.message) for e in v.iter_errors(instance)]
    except ValueError as exc:  # jsonschema-rs: recursion limit, unsupported Python value
        return [Violation((), "instance", f"the value cannot be validated: {exc}")]
    return sorted(found, key=lambda e: [str(p) for p in e.path])


def _has_pattern_properties(schema: Any) -> bool:
    """Does a `patternProperties` key appear anywhere in `schema` (conservatively: also as a
    property's name)?"""
    stack = [schema]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            if "patternProperties" in node:
                return True
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)
    return False


def _long_keys(instance: Any) -> list[Violation]:
    """A violation for every object key over SUBJECT_LIMIT, at the object holding it."""
    found = []
    stack: list[tuple[tuple[str | int, ...], Any]] = [((), instance)]
    while stack:
        path, node = stack.pop()
        if isinstance(node, dict):
            for key, child in node.items():
                if isinstance(key, str) and (refusal := too_long(key, "a property name")) is not None:
                    found.append(Violation(path, "patternProperties", refusal))
                else:
                    stack.append((path + (key,), child))
        elif isinstance(node, list):
            stack.extend((path + (i,), child) for i, child in enumerate(node))
    return sorted(found, key=lambda e: [str(p) for p in e.path])
