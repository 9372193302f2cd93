"""The jsonschema-rs fast path never accepts a schema Python jsonschema refuses, and every
regex in a spec schema is judged by the linear-time engine (lrc.runtime.lock.safe_regex)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st
from jsonschema import Draft202012Validator
from jsonschema.exceptions import SchemaError

from lrc.compiler import schemacheck

REPO = Path(__file__).resolve().parents[2]


def python_accepts(schema) -> bool:
    """Python jsonschema's metaschema check, `format: regex` being the linear-time engine's."""
    return not list(schemacheck._meta_validator().iter_errors(schema))


def test_the_fast_path_is_in_use():
    assert schemacheck._rs_meta(), "jsonschema-rs is locked in requirements.lock; the fast path should be available"
    assert schemacheck.fast_accept({"type": "object", "properties": {"a": {"type": "string", "pattern": "^[a-z]+$"}}})


@pytest.mark.parametrize("schema", [
    {"type": "strin"},
    {"minLength": -1},
    {"minLength": 1.5},
    {"$schema": "http://json-schema.org/draft-04/schema#", "maximum": 3, "exclusiveMaximum": True},
    {"required": "a"},
    {"items": [{"type": "string"}], "additionalItems": 3},
    {"$defs": {"x": {"type": 7}}},
    {"enum": "not-a-list"},
])
def test_invalid_schemas_are_refused_with_pythons_words(schema):
    assert not python_accepts(schema)
    assert not schemacheck.fast_accept(schema)
    error = schemacheck.schema_error(schema)
    with pytest.raises(SchemaError) as expected:
        Draft202012Validator.check_schema(schema)
    assert error is not None and error.message == expected.value.message
    assert not schemacheck.check(schema).bad_regexes


@pytest.mark.parametrize("schema, path, problem", [
    ({"pattern": "(("}, ("pattern",), "not a valid regular expression"),
    ({"patternProperties": {"((": {}}}, ("patternProperties", "(("), "not a valid regular expression"),
    ({"properties": {"a": {"pattern": "[z-a]"}}}, ("properties", "a", "pattern"), "not a valid regular expression"),
    ({"pattern": "^(a)\\1$"}, ("pattern",), "backreference"),
    ({"pattern": "(?<name>a)\\k<name>"}, ("pattern",), "backreference"),
    ({"items": {"pattern": "a(?=b)"}}, ("items", "pattern"), "look-around"),
    ({"properties": {"pattern": {"pattern": "(?<!x)y"}}}, ("properties", "pattern", "pattern"), "look-around"),
    ({"$defs": {"d": {"patternProperties": {"^(?!x)": True}}}}, ("$defs", "d", "patternProperties", "^(?!x)"), "look-around"),
    ({"anyOf": [{"type": "string"}, {"pattern": "(x)\\1"}]}, ("anyOf", 1, "pattern"), "backreference"),
    ({"pattern": "(a{1000}){1000}"}, ("pattern",), "larger than"),
])
def test_regexes_the_linear_engine_cannot_compile_are_located(schema, path, problem):
    """Python's `re` compiles most of these; none may pass, each is reported where it is written."""
    assert not schemacheck.fast_accept(schema)
    verdict = schemacheck.check(schema)
    assert verdict.error is None and not verdict.ok
    assert [b.path for b in verdict.bad_regexes] == [path]
    assert problem in verdict.bad_regexes[0].problem
    assert schemacheck.schema_error(schema) is not None


def test_a_refused_regex_and_another_error_are_both_reported():
    verdict = schemacheck.check({"type": "strin", "properties": {"a": {"pattern": "(a)\\1"}}})
    assert verdict.error is not None and verdict.error.validator != "format"
    assert [b.path for b in verdict.bad_regexes] == [("properties", "a", "pattern")]


def test_every_schema_in_the_repository_is_accepted_by_both():
    found = 0
    for path in sorted((REPO / "specs").rglob("*.schema.json")):
        schema = json.loads(path.read_text(encoding="utf-8"))
        assert python_accepts(schema), path
        assert schemacheck.fast_accept(schema), path
        found += 1
    assert found >= 5


names = st.sampled_from(["a", "b", "pattern", "type", "$ref"])
regexes = st.sampled_from(["^a+$", "((", "\\d{2}", "[z-a]", "(?<=a)b", "\\p{L}", "a{2,1}", "", "(a)\\1", "(a+)+$"])
types = st.sampled_from(["string", "object", "array", "integer", "number", "boolean", "null", "strin", "Object"])
numbers = st.integers(-2, 6) | st.floats(-1, 4, allow_nan=False) | st.booleans() | st.text(max_size=2)
schemas = st.deferred(lambda: st.booleans() | st.fixed_dictionaries({}, optional={
    "type": types | st.lists(types, max_size=3),
    "properties": st.dictionaries(names, schemas, max_size=3),
    "patternProperties": st.dictionaries(regexes, schemas, max_size=2),
    "additionalProperties": schemas,
    "items": schemas | st.lists(schemas, max_size=2),
    "prefixItems": st.lists(schemas, max_size=2),
    "required": st.lists(names, max_size=3) | names,
    "enum": st.lists(st.integers() | st.text(max_size=3), max_size=3) | st.text(max_size=3),
    "const": st.integers() | st.text(max_size=3) | st.none(),
    "minLength": numbers, "maxItems": numbers, "minimum": numbers, "exclusiveMaximum": numbers, "multipleOf": numbers,
    "pattern": regexes | st.integers(),
    "anyOf": st.lists(schemas, max_size=2), "oneOf": st.lists(schemas, max_size=2), "not": schemas,
    "$ref": st.sampled_from(["#", "#/$defs/a", "other.json", 3]),
    "$defs": st.dictionaries(names, schemas, max_size=2),
    "$schema": st.sampled_from(["https://json-schema.org/draft/2020-12/schema", "http://json-schema.org/draft-04/schema#", 1]),
    "format": st.sampled_from(["date", "email", "regex", 3]),
    "uniqueItems": st.booleans() | st.integers(0, 1),
    "dependentRequired": st.dictionaries(names, st.lists(names, max_size=2) | names, max_size=2),
    "propertyNames": schemas,
    "title": st.text(max_size=3) | st.integers(),
    "default": st.integers() | st.dictionaries(names, st.sampled_from(["((", "x"]), max_size=2),
}))


@pytest.mark.slow
@settings(max_examples=300, deadline=None)  # 1,500 examples agreed when this was written (236 valid)
@given(schemas)
def test_fast_acceptance_implies_python_acceptance(schema):
    if schemacheck.fast_accept(schema):
        assert python_accepts(schema), schema
    assert schemacheck.check(schema).ok == python_accepts(schema)


@pytest.mark.parametrize("schema, expected", [
    ({"pattern": "^a", "maxLength": 4096}, []),
    ({"pattern": "^a", "maxLength": 4097}, [(("maxLength",), 4097)]),
    ({"maxLength": 10_000}, []),  # no pattern: no regex check to bound
    ({"properties": {"a": {"type": "string", "pattern": "x", "maxLength": 5000}}}, [(("properties", "a", "maxLength"), 5000)]),
    ({"anyOf": [{"pattern": "x", "maxLength": 1}, {"pattern": "y", "maxLength": 99_999}]}, [(("anyOf", 1, "maxLength"), 99_999)]),
    ({"const": {"pattern": "x", "maxLength": 5000}, "enum": [{"pattern": "x", "maxLength": 5000}]}, []),  # data, not schema
    ({"properties": {"pattern": {"type": "string"}, "maxLength": {"type": "integer"}}}, []),  # property names
])
def test_overlong_pattern_lengths_find_each_maxlength_above_the_cap(schema, expected):
    from lrc.runtime.lock import safe_regex

    assert safe_regex.SUBJECT_LIMIT == 4096
    assert schemacheck.overlong_pattern_lengths(schema) == expected
