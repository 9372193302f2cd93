"""jsonschema-rs may only accept: a spec (or a sample item) it accepts, Python jsonschema
accepts too, so every refusal and every message stays Python jsonschema's."""

from __future__ import annotations

import copy
import json
from pathlib import Path

from hypothesis import given, settings, strategies as st

from lrc.compiler import schemacheck
from lrc.compiler.diagnostics import Diagnostics
from lrc.compiler.load import load_file
from lrc.compiler.validate import KINDS, SchemaSet

REPO = Path(__file__).resolve().parents[2]
SCHEMAS = SchemaSet.load(REPO / "schemas")
SPECS = [(KINDS[p.relative_to(REPO / "specs").parts[0]], load_file(p, p.relative_to(REPO).as_posix(), Diagnostics()).data)
         for p in sorted((REPO / "specs").rglob("*.yaml"))]


def python_valid(kind: str, data) -> bool:
    return not list(SCHEMAS.validator(kind).iter_errors(data))


def test_every_repository_spec_takes_the_fast_path():
    assert len(SPECS) >= 15
    for kind, data in SPECS:
        assert SCHEMAS.fast_valid(kind, data), kind
        assert python_valid(kind, data), kind


LEAVES = st.none() | st.booleans() | st.integers(-2, 3) | st.floats(-1, 2, allow_nan=False) | st.sampled_from(
    ["", "x", "0.5", "2026-02-30", "2026-01-02", "demo.v1", "demo", "sha256:" + "0" * 64, "lrc/oracle", "held-out",
     "public", "classify", "agentic", "../x", "LRC1001", "1.0.0", "https://ledgerrate.dev/x"]) | st.just([]) | st.just({})


def _paths(value, prefix=()):
    yield prefix
    if isinstance(value, dict):
        for k, v in value.items():
            yield from _paths(v, prefix + (k,))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from _paths(v, prefix + (i,))


@st.composite
def mutated_specs(draw):
    kind, data = draw(st.sampled_from(SPECS))
    data = copy.deepcopy(data)
    for _ in range(draw(st.integers(1, 3))):
        paths = [p for p in _paths(data) if p]
        path = draw(st.sampled_from(paths))
        parent = data
        for part in path[:-1]:
            parent = parent[part]
        action = draw(st.sampled_from(["replace", "delete", "add"]))
        if action == "replace":
            parent[path[-1]] = draw(LEAVES)
        elif action == "delete":
            del parent[path[-1]]
        elif isinstance(parent, dict):
            parent[draw(st.sampled_from(["extra", "versionn", "prompt", "id"]))] = draw(LEAVES)
        else:
            parent.append(draw(LEAVES))
    return kind, data


@settings(max_examples=400, deadline=None)
@given(mutated_specs())
def test_a_mutated_spec_is_never_accepted_by_the_fast_path_alone(case):
    kind, data = case
    if SCHEMAS.fast_valid(kind, data):
        assert python_valid(kind, data), json.dumps(data)[:400]


ITEM_SCHEMA = {"type": "object", "required": ["id", "amount"], "additionalProperties": False,
               "properties": {"id": {"type": "string", "pattern": "^[A-Z]{2}-[0-9]{3}$"},
                              "amount": {"type": "string", "pattern": "^-?[0-9]+\\.[0-9]{2}$"},
                              "tags": {"type": "array", "items": {"type": "string"}, "maxItems": 2},
                              "due": {"type": "string", "format": "date"}}}


@settings(max_examples=400, deadline=None)
@given(st.fixed_dictionaries({}, optional={"id": st.sampled_from(["AB-123", "AB-123\n", "ab-123", "AB-1234", 5]),
                                           "amount": st.sampled_from(["10.00", "-3.50", "10.0", "1e3", 10]),
                                           "tags": st.lists(st.sampled_from(["a", 1]), max_size=3),
                                           "due": st.sampled_from(["2026-02-30", "not a date", "2026-01-02"]),
                                           "other": st.none()}))
def test_a_sample_is_decided_by_the_linear_engine_as_python_would_decide_it(sample):
    """Sample items are checked only by the linear-time engine now (lrc.runtime.lock.safe_regex);
    on a schema whose regexes mean the same in both dialects, its verdict is Python jsonschema's.
    The one dialect difference in play: ECMA-262 `$` does not match before a final newline."""
    from jsonschema import Draft202012Validator

    assert schemacheck.schema_error(ITEM_SCHEMA) is None
    errors = schemacheck.instance_errors(ITEM_SCHEMA, sample)
    python_valid = not list(Draft202012Validator(ITEM_SCHEMA).iter_errors(sample))
    if sample.get("id") == "AB-123\n":
        assert errors and any(e.path == ("id",) and e.keyword == "pattern" for e in errors)
    else:
        assert (not errors) == python_valid, (sample, errors)
    assert all(isinstance(e.message, str) and e.message for e in errors)


def _keys(value):
    if isinstance(value, dict):
        for key, child in value.items():
            yield key
            yield from _keys(child)
    elif isinstance(value, list):
        for child in value:
            yield from _keys(child)


def test_spec_validation_runs_no_regex_through_a_backtracking_engine():
    """Both validators of specs/ decide `pattern` and `format: regex` with the linear-time engine;
    patternProperties (which Python jsonschema would still match with `re`, also inside
    additionalProperties) is absent from the project's schemas."""
    import time

    from lrc.compiler import validate

    for name, schema in SCHEMAS.schemas.items():
        assert not {"patternProperties", "unevaluatedProperties"} & set(_keys(schema)), name
    hostile = {"type": "string", "pattern": "^(a+)+$", "format": "regex"}
    python = validate._linear_python_validator()(hostile, format_checker=validate._linear_format_checker())
    for value in ("a" * 2000 + "!", "a" * 2000, "(a)\\1"):  # a 2,500-character literal regex already exceeds SIZE_LIMIT
        start = time.perf_counter()
        errors = list(python.iter_errors(value))
        assert time.perf_counter() - start < 0.1
        assert {e.validator for e in errors} == ({"pattern"} if value != "a" * 2000 else set()) | ({"format"} if value == "(a)\\1" else set())
    assert "does not match '^(a+)+$'" in next(python.iter_errors("b")).message  # Python jsonschema's words
