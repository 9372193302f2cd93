"""Every property of every JSON Schema in schemas/ is described (issue 9 §3), its examples
are valid values of it, and no spec uses a key YAML 1.1 tools read as a boolean."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any, Iterator

import jsonschema
import pytest

REPO = Path(__file__).resolve().parents[2]
SCHEMAS = sorted((REPO / "schemas").glob("*.schema.json"))


def properties(node: Any, pointer: str = "") -> Iterator[tuple[str, dict]]:
    """(pointer, schema) of every property schema, nested ones, $defs and oneOf branches included."""
    if isinstance(node, dict):
        props = node.get("properties")
        if isinstance(props, dict):
            for name, sub in props.items():
                if isinstance(sub, dict):
                    yield f"{pointer}/properties/{name}", sub
        for key, value in node.items():
            yield from properties(value, f"{pointer}/{key}")
    elif isinstance(node, list):
        for i, value in enumerate(node):
            yield from properties(value, f"{pointer}/{i}")


def test_every_schema_is_walked():
    names = {p.name.removesuffix(".schema.json") for p in SCHEMAS}
    assert {"workload", "edition", "system", "rubric", "task", "taxonomy", "standard", "lock", "diagnostics"} <= names
    for path in SCHEMAS:
        assert len(list(properties(json.loads(path.read_text(encoding="utf-8"))))) > 3, path.name


@pytest.mark.parametrize("path", SCHEMAS, ids=lambda p: p.name)
def test_every_property_has_a_description(path: Path):
    schema = json.loads(path.read_text(encoding="utf-8"))
    missing = [ptr for ptr, sub in properties(schema)
               if not (isinstance(sub.get("description"), str) and len(sub["description"].strip()) >= 8)]
    assert not missing, f"{path.name}: properties without a description: {missing}"


@pytest.mark.parametrize("path", SCHEMAS, ids=lambda p: p.name)
def test_examples_are_valid_values(path: Path):
    schema = json.loads(path.read_text(encoding="utf-8"))
    for ptr, sub in properties(schema):
        if "examples" not in sub:
            continue
        assert isinstance(sub["examples"], list) and sub["examples"], f"{path.name}{ptr}: examples must be a non-empty list"
        check = {k: v for k, v in sub.items() if k not in ("examples", "description")}
        check["$defs"] = schema.get("$defs", {})
        validator = jsonschema.Draft202012Validator(check)
        for example in sub["examples"]:
            errors = [e.message for e in validator.iter_errors(example)]
            assert not errors, f"{path.name}{ptr}: example {example!r} is invalid: {errors}"


def test_the_walk_finds_an_undescribed_property():
    """The check is not vacuous: a property without a description anywhere is found."""
    bad = {"properties": {"a": {"description": "described here", "properties": {"b": {"type": "string"}}}},
           "$defs": {"x": {"oneOf": [{"properties": {"c": {}}}]}}}
    found = [ptr for ptr, sub in properties(bad) if "description" not in sub]
    assert found == ["/properties/a/properties/b", "/$defs/x/oneOf/0/properties/c"]


# -- YAML 1.1 booleans as keys ----------------------------------------------------------------

YAML11_BOOLEANS = {"y", "n", "yes", "no", "on", "off", "true", "false"}
SPEC_FILES = sorted(p for p in (REPO / "specs").rglob("*") if p.suffix in (".yaml", ".yml"))
KEY = re.compile(r"""^(?:\s*-\s+|\s*)([^\s'"#{\[][^:#]*?|'[^']*'|"[^"]*")\s*:(?:\s|$)""")
FLOW_KEY = re.compile(r"""[{,]\s*([A-Za-z]+)\s*:""")


def unquoted_boolean_keys(text: str) -> list[tuple[int, str]]:
    """(line, key) of every plain (unquoted) mapping key YAML 1.1 reads as a boolean."""
    found = []
    for n, line in enumerate(text.splitlines(), 1):
        if line.lstrip().startswith("#"):
            continue
        m = KEY.match(line)
        if m and m.group(1).lower() in YAML11_BOOLEANS:
            found.append((n, m.group(1)))
        for flow in FLOW_KEY.finditer(line.split(" #", 1)[0]):
            if flow.group(1).lower() in YAML11_BOOLEANS:
                found.append((n, flow.group(1)))
    return found


@pytest.mark.parametrize("text,expected", [
    ("retries:\n  on: [tool-error]\n", [(2, "on")]),
    ("- off: 1\n", [(1, "off")]),
    ("a: {yes: 1, b: 2}\n", [(1, "yes")]),
    ("N: 3\nY: 4\n", [(1, "N"), (2, "Y")]),
    ('retries:\n  "on": [tool-error]\n', []),
    ("retries:\n  'on': [tool-error]\n", []),
    ("online: true\nnote: on\n# on: x\n", []),
])
def test_the_lint_finds_boolean_keys(text: str, expected: list):
    assert unquoted_boolean_keys(text) == expected


@pytest.mark.parametrize("path", SPEC_FILES, ids=lambda p: p.relative_to(REPO).as_posix())
def test_no_spec_has_an_unquoted_yaml11_boolean_key(path: Path):
    found = unquoted_boolean_keys(path.read_text(encoding="utf-8"))
    assert not found, f"{path.relative_to(REPO)}: keys YAML 1.1 tools read as booleans (quote them): {found}"
