"""Is a value a valid JSON Schema (Draft 2020-12)? Does a sample match one? Fast when yes.

Output schemas, item schemas, tool parameters and rubric answer formats are checked against
the 2020-12 metaschema. Python jsonschema's `check_schema` takes about 1.5 ms per schema (it
walks the metaschema's `$dynamicRef`s through `referencing`); jsonschema-rs validates against
the same metaschema, built in from the crate and with no network (`offline=True`), in
microseconds. It is used only to *accept*:

- jsonschema-rs says the value is valid against the 2020-12 metaschema (forced, whatever
  `$schema` the value names, exactly as `Draft202012Validator.check_schema` does), and
- every regular expression the metaschema marks `format: regex` compiles with Python's `re`
  (the one format Python jsonschema enforces there; it checks `pattern` values and
  `patternProperties` names, and so does `_regexes_compile`, on a superset of places).

Anything else goes to Python jsonschema, which decides and words the error, so the answer
never depends on jsonschema-rs: a schema it wrongly refused costs 1.5 ms, nothing more.
The same holds for a workload's sample item against its item schema (`instance_fast_valid`,
`instance_errors`), with formats not asserted, as Python's plain validator does; the fast
path is only taken for schemas that name no other draft than 2020-12. Python jsonschema is
imported only when it has to decide.
"""

from __future__ import annotations

import re
from typing import Any

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from jsonschema.exceptions import SchemaError, ValidationError

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
    anywhere in `value`, compiles with Python's `re`."""
    stack = [value]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            for key, child in node.items():
                try:
                    if key == "pattern" and isinstance(child, str):
                        re.compile(child)
                    elif key == "patternProperties" and isinstance(child, dict):
                        for name in child:
                            re.compile(name)
                except (re.error, RecursionError, OverflowError, ValueError):
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


def schema_error(schema: Any) -> "SchemaError | None":
    """None when `schema` is a valid Draft 2020-12 JSON Schema, else Python jsonschema's error."""
    if fast_accept(schema):
        return None
    from jsonschema import Draft202012Validator
    from jsonschema.exceptions import SchemaError

    try:
        Draft202012Validator.check_schema(schema)
    except SchemaError as exc:
        return exc
    return None


def instance_fast_valid(schema: Any, instance: Any) -> bool:
    """True only when jsonschema-rs finds `instance` valid against the (already checked)
    2020-12 `schema`, formats not asserted."""
    if not isinstance(schema, dict) or schema.get("$schema", DRAFT_2020_12) != DRAFT_2020_12 or not _rs_meta():
        return False
    try:
        import jsonschema_rs

        return bool(jsonschema_rs.Draft202012Validator(schema, validate_formats=False, offline=True).is_valid(instance))
    except Exception:  # noqa: BLE001 - let Python decide
        return False


def instance_errors(schema: Any, instance: Any) -> "list[ValidationError]":
    """Python jsonschema's errors for `instance` against `schema`, by position."""
    from jsonschema import Draft202012Validator

    return sorted(Draft202012Validator(schema).iter_errors(instance), key=lambda e: list(map(str, e.absolute_path)))
