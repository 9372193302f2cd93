"""Is a value a valid JSON Schema (Draft 2020-12)? Does a sample match one? Every regex linear.

Output schemas, item schemas, tool parameters and rubric answer formats come from specs, so
each regex in them is decided by the linear-time engine of `lrc.runtime.lock.safe_regex`,
never by Python's backtracking `re` (a nested quantifier against a near-matching value would
stall CI for hours):

- A spec schema is checked against the 2020-12 metaschema, where its regexes are *data*: the
  only place a metaschema looks at them is `format: regex` (on `pattern` values and
  `patternProperties` names), and that format is decided by the linear-time engine in both
  checkers below. A regex the engine cannot compile (a backreference, look-around, a syntax
  error) is reported on its own, located at the regex (`check`, LRC3020).
- jsonschema-rs, built from the crate's own metaschema with no network (`offline=True`),
  checks in microseconds; it is used only to *accept*, together with a linear compile of
  every string under a `pattern` key and every `patternProperties` name (a superset of the
  places the metaschema marks). Anything else goes to Python jsonschema's metaschema
  validator, which decides and words the error (LRC3006), so the answer never depends on
  jsonschema-rs: a schema it wrongly refused costs 1.5 ms, nothing more.
- A sample item is checked against its item schema (`instance_errors`) only by the
  linear-time engine, whose messages are the ones reported: Python jsonschema is never given
  a spec schema *as a schema*, so it cannot evaluate a spec's regex.

Python jsonschema is imported only when a schema is refused.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from lrc.runtime.lock import safe_regex

if TYPE_CHECKING:
    from jsonschema.exceptions import SchemaError

DRAFT_2020_12 = "https://json-schema.org/draft/2020-12/schema"
_RS_META: Any = None


def _rs_meta() -> Any:
    """A jsonschema-rs validator for the 2020-12 metaschema, built once (about 2 ms)."""
    global _RS_META
    if _RS_META is None:
        try:
            import jsonschema_rs

            _RS_META = jsonschema_rs.Draft202012Validator({"$ref": DRAFT_2020_12}, validate_formats=False, offline=True)
        except Exception:  # noqa: BLE001 - not installed or not buildable: Python decides every schema
            _RS_META = False
    return _RS_META


def _regexes_compile(value: Any) -> bool:
    """Every string under a `pattern` key and every key of a `patternProperties` mapping,
    anywhere in `value`, compiles with the linear-time engine."""
    stack = [value]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            for key, child in node.items():
                if key == "pattern" and isinstance(child, str) and safe_regex.compile_problem(child) is not None:
                    return False
                if key == "patternProperties" and isinstance(child, dict) and any(safe_regex.compile_problem(k) is not None for k in child):
                    return False
                stack.append(child)
        elif isinstance(node, list):
            stack.extend(node)
    return True


def fast_accept(schema: Any) -> bool:
    """True only when `schema` is certainly valid (see the module docstring)."""
    meta = _rs_meta()
    if not meta:
        return False
    try:
        valid = meta.is_valid(schema)
    except Exception:  # noqa: BLE001 - a value jsonschema-rs cannot take: let Python decide
        return False
    return bool(valid) and _regexes_compile(schema)


@dataclass
class BadRegex:
    """A regex in a spec schema that the linear-time engine cannot compile."""

    path: tuple[str | int, ...]  # inside the schema: .../pattern, or .../patternProperties/<name>
    pattern: str
    problem: str


@dataclass
class Verdict:
    error: "SchemaError | None" = None  # Python jsonschema's best error, regexes aside
    bad_regexes: list[BadRegex] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return self.error is None and not self.bad_regexes


def _meta_validator() -> Any:
    """Python jsonschema's 2020-12 metaschema validator, formats asserted as `check_schema`
    asserts them, except that `format: regex` is the linear-time engine's verdict."""
    from jsonschema import Draft202012Validator, FormatChecker

    checker = FormatChecker()
    checker.checkers = dict(Draft202012Validator.FORMAT_CHECKER.checkers)
    checker.checkers["regex"] = (safe_regex.is_regex, ())
    return Draft202012Validator(Draft202012Validator.META_SCHEMA, format_checker=checker)


def check(schema: Any) -> Verdict:
    """Is `schema` a valid Draft 2020-12 JSON Schema whose every regex the linear-time engine
    compiles? Regexes it cannot compile are listed one by one, each at its place."""
    if fast_accept(schema):
        return Verdict()
    from jsonschema.exceptions import best_match

    verdict = Verdict()
    others = []
    for error in _meta_validator().iter_errors(schema):
        if error.validator == "format" and error.validator_value == "regex" and isinstance(error.instance, str):
            path = tuple(error.absolute_path)
            if len(error.schema_path) >= 2 and list(error.schema_path)[-2] == "propertyNames":
                path = path + (error.instance,)  # a patternProperties name: locate the key itself
            problem = safe_regex.compile_problem(error.instance) or "the linear-time engine refuses it"
            verdict.bad_regexes.append(BadRegex(path, error.instance, problem))
        else:
            others.append(error)
    if others:
        verdict.error = best_match(others)
    return verdict


def schema_error(schema: Any) -> "SchemaError | None":
    """None when `schema` is a valid Draft 2020-12 JSON Schema (every regex compiling with the
    linear-time engine), else Python jsonschema's error for the first problem."""
    verdict = check(schema)
    if verdict.error is not None or not verdict.bad_regexes:
        return verdict.error
    from jsonschema.exceptions import SchemaError

    bad = verdict.bad_regexes[0]
    return SchemaError(f"{bad.pattern!r} is not a 'regex'", validator="format", validator_value="regex", instance=bad.pattern, path=bad.path)


_DATA_KEYWORDS = frozenset({"const", "enum", "default", "examples"})


def overlong_pattern_lengths(schema: Any) -> list[tuple[tuple[str | int, ...], int]]:
    """Every `maxLength` above safe_regex.SUBJECT_LIMIT beside a `pattern`: (path of the
    `maxLength` inside the schema, its value). Such a schema admits strings lrc never checks
    against the pattern (they fail with the subject-length message), so it is refused (LRC3021)."""
    found = []
    stack: list[tuple[tuple[str | int, ...], Any]] = [((), schema)]
    while stack:
        path, node = stack.pop()
        if isinstance(node, dict):
            limit = node.get("maxLength")
            if isinstance(node.get("pattern"), str) and isinstance(limit, int) and not isinstance(limit, bool) and limit > safe_regex.SUBJECT_LIMIT:
                found.append((path + ("maxLength",), limit))
            stack.extend((path + (key,), child) for key, child in node.items() if key not in _DATA_KEYWORDS)
        elif isinstance(node, list):
            stack.extend((path + (i,), child) for i, child in enumerate(node))
    return sorted(found, key=lambda f: [str(p) for p in f[0]])


def usable_error(schema: Any) -> str | None:
    """None when the linear-time engine builds a validator for the (already checked) schema,
    else why not (a `$ref` it cannot resolve offline)."""
    try:
        safe_regex.validator(schema)
    except safe_regex.SchemaUnusable as exc:
        return str(exc)
    return None


def instance_errors(schema: Any, instance: Any) -> list[safe_regex.Violation]:
    """The linear-time engine's violations of `schema` by `instance`, by position."""
    return safe_regex.violations(schema, instance, built=safe_regex.validator(schema))
