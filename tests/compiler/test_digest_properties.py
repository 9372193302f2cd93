"""Property tests of the spec digest (DESIGN §2): formatting is not content, content is.

A spec's digest is sha256 over the canonical JSON of its normalized form. Here random
spec-like documents are rendered to YAML text by two (three) independent emitters written
below -- block style with comments and literal scalars, flow style with shuffled keys and
odd indentation -- loaded with `lrc.compiler.load.load_text`, normalized with
`apply_defaults`, and hashed with `lrc.runtime.lock.canonical.digest`. Comments, key order,
whitespace, indentation and flow-vs-block style must not change the digest; any changed
scalar must. The real spec files get the same treatment through their own schemas.
"""

from __future__ import annotations

import json
import random
import re
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from lrc.compiler.defaults import apply_defaults
from lrc.compiler.diagnostics import Diagnostics
from lrc.compiler.load import load_text
from lrc.compiler.validate import SchemaSet, validate
from lrc.runtime.lock.canonical import digest

REPO = Path(__file__).resolve().parents[2]
SETTINGS = settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
RESERVED = {"true", "false", "null", "yes", "no", "on", "off", "y", "n", "nan", "inf"}

# -- documents ---------------------------------------------------------------------------------

keys = st.from_regex(r"[a-z][a-z0-9_]{0,8}", fullmatch=True).filter(lambda k: k not in RESERVED)
texts = st.one_of(
    st.text(alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="\ufeff"), max_size=20),
    st.sampled_from(["1", "true", "null", "~", "1.5", "2026-01-01", "0x10", "- a", "a: b", "# no comment", "  padded  ", "'", '"', "\\", "{}", "*ref", "&anchor", "!tag", "%YAML"]),
    st.lists(st.from_regex(r"[A-Za-z0-9][A-Za-z0-9 ,.]{0,15}[A-Za-z0-9.]", fullmatch=True), min_size=2, max_size=4).map("\n".join),
)
scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(10**15), max_value=10**15),
    st.integers(min_value=-10_000, max_value=10_000).filter(lambda k: k % 100 != 0).map(lambda k: k / 100),
    texts,
)
documents = st.dictionaries(
    keys,
    st.recursive(scalars, lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(keys, inner, max_size=4)), max_leaves=15),
    min_size=1,
    max_size=6,
)

# -- two emitters ----------------------------------------------------------------------------

LITERAL = re.compile(r"[A-Za-z0-9][A-Za-z0-9 ,.]*[A-Za-z0-9.](\n[A-Za-z0-9][A-Za-z0-9 ,.]*[A-Za-z0-9.])+")


def _double_quoted(value: str) -> str:
    """A YAML double-quoted scalar: ASCII only, `\\uXXXX` in the BMP and `\\UXXXXXXXX` above it.

    (Not json.dumps: JSON escapes non-BMP characters as surrogate pairs, which YAML reads
    as two lone surrogates -- and lrc rightly refuses those, see the bad-spec corpus.)
    """
    out = []
    for ch in value:
        code = ord(ch)
        if ch in '"\\':
            out.append("\\" + ch)
        elif 0x20 <= code < 0x7F:
            out.append(ch)
        elif code < 0x10000:
            out.append(f"\\u{code:04x}")
        else:
            out.append(f"\\U{code:08x}")
    return '"' + "".join(out) + '"'


def _quoted(value: str, rnd: random.Random) -> str:
    printable = all(ch.isprintable() and ch not in "\u2028\u2029\x85" for ch in value)
    if printable and rnd.random() < 0.5:
        return "'" + value.replace("'", "''") + "'"
    return _double_quoted(value)


def _scalar(value: Any, rnd: random.Random, flow: bool) -> str:
    if value is None:
        return rnd.choice(["null", "~", "Null"] if not flow else ["null"])
    if isinstance(value, bool):
        return rnd.choice(["true", "True"] if value else ["false", "False"])
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return repr(value)
    if isinstance(value, str):
        return _quoted(value, rnd) if not flow else _double_quoted(value)
    if isinstance(value, dict):
        assert not value
        return "{}"
    assert isinstance(value, list) and not value
    return "[]"


def _is_leaf(value: Any) -> bool:
    return not isinstance(value, (dict, list)) or not value


def _comment(rnd: random.Random) -> str:
    # (Not a tab before `#`: YAML allows it, ruamel.yaml does not; lrc reports LRC1001 then.)
    return rnd.choice(["", "", "  # a comment", "   #: odd comment -- with: colons", " #"])


def _block(value: Any, indent: int, step: int, rnd: random.Random) -> list[str]:
    """Block-style lines of a non-empty dict or list at `indent`."""
    sp = " " * indent
    out: list[str] = []
    if isinstance(value, dict):
        for i, (key, item) in enumerate(value.items()):
            if i and rnd.random() < 0.3:
                out.append(sp + "# " + rnd.choice(["comment", "key: value", "- not an item"]))
            if rnd.random() < 0.2:
                out.append("")
            if isinstance(item, str) and LITERAL.fullmatch(item) and rnd.random() < 0.7:
                out.append(f"{sp}{key}: |-")
                out.extend(" " * (indent + step) + line for line in item.split("\n"))
            elif _is_leaf(item):
                out.append(f"{sp}{key}: {_scalar(item, rnd, False)}{_comment(rnd)}")
            else:
                out.append(f"{sp}{key}:{_comment(rnd)}")
                out.extend(_block(item, indent + step, step, rnd))
        return out
    for item in value:
        if isinstance(item, str) and LITERAL.fullmatch(item) and rnd.random() < 0.7:
            out.append(f"{sp}- |-")
            out.extend(" " * (indent + 2 + step) + line for line in item.split("\n"))
        elif _is_leaf(item):
            out.append(f"{sp}- {_scalar(item, rnd, False)}{_comment(rnd)}")
        else:
            inner = _block(item, indent + 2, step, rnd)
            inner[0] = f"{sp}- {inner[0].lstrip()}"
            out.extend(inner)
    return out


def _shuffled(value: Any, rnd: random.Random) -> Any:
    if isinstance(value, dict):
        items = list(value.items())
        rnd.shuffle(items)
        return {k: _shuffled(v, rnd) for k, v in items}
    if isinstance(value, list):
        return [_shuffled(v, rnd) for v in value]
    return value


def block_yaml(doc: dict, rnd: random.Random, step: int = 2, shuffle: bool = False) -> str:
    if shuffle:
        doc = _shuffled(doc, rnd)
    lines = ["# yaml-language-server: $schema=../../schemas/x.schema.json", "# block style"]
    lines += _block(doc, 0, step, rnd)
    return "\n".join(lines) + "\n" * rnd.randint(1, 3)


def _flow(value: Any, rnd: random.Random, depth: int) -> str:
    pad = "\n" + " " * rnd.randint(1, 6) * (depth + 1) if rnd.random() < 0.4 else " " * rnd.randint(0, 2)
    if isinstance(value, dict) and value:
        items = list(value.items())
        rnd.shuffle(items)
        body = ("," + pad).join(f"{json.dumps(k)}: {_flow(v, rnd, depth + 1)}" for k, v in items)
        return "{" + pad + body + pad + "}"
    if isinstance(value, list) and value:
        return "[" + pad + ("," + pad).join(_flow(v, rnd, depth + 1) for v in value) + pad + "]"
    return _scalar(value, rnd, True)


def flow_yaml(doc: dict, rnd: random.Random) -> str:
    return "# flow style, keys shuffled\n\n" + _flow(doc, rnd, 0) + "\n"


# -- the digest under test ----------------------------------------------------------------------


def load(text: str) -> Any:
    diags = Diagnostics()
    doc = load_text(text, "specs/x.yaml", Path("x.yaml"), diags)
    assert doc is not None and not diags.items, (text, diags.sorted())
    return doc.data


def spec_digest_of(text: str, schema: dict | None = None, kind: str = "workload") -> str:
    return digest(f"spec:{kind}", apply_defaults(load(text), schema or {}))


def _digest(data: Any) -> str:
    return digest("spec:workload", apply_defaults(data, {}))


@pytest.mark.slow
@SETTINGS
@given(doc=documents, seed=st.integers(0, 2**32 - 1))
def test_digest_ignores_comments_order_whitespace_and_style(doc: dict, seed: int) -> None:
    rnd = random.Random(seed)
    renderings = [block_yaml(doc, rnd), block_yaml(doc, rnd, step=rnd.choice([3, 4, 7]), shuffle=True), flow_yaml(doc, rnd)]
    loaded = [load(text) for text in renderings]
    # The emitters are faithful (otherwise the property below would prove nothing) ...
    assert all(data == doc for data in loaded)
    # ... and the three texts, which differ in everything but content, hash alike.
    assert len({_digest(data) for data in loaded}) == 1


def _paths(value: Any, prefix: tuple = ()) -> list[tuple]:
    """Paths to every scalar (empty collections count as scalars)."""
    if isinstance(value, dict) and value:
        return [p for k, v in value.items() for p in _paths(v, prefix + (k,))]
    if isinstance(value, list) and value:
        return [p for i, v in enumerate(value) for p in _paths(v, prefix + (i,))]
    return [prefix]


def _changed(value: Any, rnd: random.Random) -> Any:
    if value is None:
        return rnd.choice([0, "", False, "null"])
    if isinstance(value, bool):
        return not value
    if isinstance(value, int):
        return value + rnd.choice([-1, 1])
    if isinstance(value, float):
        return value + 0.5
    if isinstance(value, str):
        return rnd.choice([value + "x", "x" + value, value + " ", value.upper() if value.upper() != value else value + "X"])
    return [None] if isinstance(value, dict) else {"k": None}


def _set(doc: Any, path: tuple, new: Any) -> Any:
    if not path:
        return new
    copy = json.loads(json.dumps(doc))
    node = copy
    for part in path[:-1]:
        node = node[part]
    node[path[-1]] = new
    return copy


@pytest.mark.slow
@SETTINGS
@given(doc=documents, seed=st.integers(0, 2**32 - 1), pick=st.integers(0, 10**6))
def test_digest_changes_with_any_changed_scalar(doc: dict, seed: int, pick: int) -> None:
    rnd = random.Random(seed)
    paths = _paths(doc)
    path = paths[pick % len(paths)]
    node: Any = doc
    for part in path:
        node = node[part]
    edited = _set(doc, path, _changed(node, rnd))
    assume(edited != doc)
    before, after = load(block_yaml(doc, rnd)), load(flow_yaml(edited, rnd))
    assert after == edited
    assert _digest(before) != _digest(after)


@pytest.mark.slow
@SETTINGS
@given(doc=documents, seed=st.integers(0, 2**32 - 1), pick=st.integers(0, 10**6))
def test_digest_changes_with_a_renamed_or_removed_key(doc: dict, seed: int, pick: int) -> None:
    rnd = random.Random(seed)
    key = sorted(doc)[pick % len(doc)]
    renamed = {(k + "_" if k == key else k): v for k, v in doc.items()}
    removed = {k: v for k, v in doc.items() if k != key}
    base = spec_digest_of(block_yaml(doc, rnd))
    assert base != spec_digest_of(flow_yaml(renamed, rnd))
    if removed:
        assert base != spec_digest_of(flow_yaml(removed, rnd))


# -- the real specs, through their schemas ----------------------------------------------------

SPEC_FILES = {
    "specs/standard/ledgerrate.yaml": "standard",
    "specs/systems/agentic.yaml": "system",
    "specs/systems/single-shot.yaml": "system",
    "specs/workloads/triage.ap-inbox/workload.yaml": "workload",
    "specs/editions/demo.yaml": "edition",
}
SCHEMAS = SchemaSet.load(REPO / "schemas")


def _real_digest(text: str, kind: str) -> str:
    diags = Diagnostics()
    doc = load_text(text, "specs/x.yaml", Path("x.yaml"), diags)
    assert doc is not None
    assert validate(doc, kind, SCHEMAS, diags), diags.sorted()
    return digest(f"spec:{kind}", apply_defaults(doc.data, SCHEMAS.schemas[kind]))


@settings(max_examples=20, deadline=None)
@given(rel=st.sampled_from(sorted(SPEC_FILES)), seed=st.integers(0, 2**32 - 1))
def test_real_specs_digest_is_formatting_independent(rel: str, seed: int) -> None:
    rnd = random.Random(seed)
    kind = SPEC_FILES[rel]
    original = (REPO / rel).read_text(encoding="utf-8")
    data = load(original)
    expected = _real_digest(original, kind)
    assert _real_digest(block_yaml(data, rnd, step=rnd.choice([2, 4]), shuffle=True), kind) == expected
    assert _real_digest(flow_yaml(data, rnd), kind) == expected


def _defaulted(schema: dict) -> list[str]:
    return [name for name, sub in schema.get("properties", {}).items() if isinstance(sub, dict) and "default" in sub]


@settings(max_examples=15, deadline=None)
@given(rel=st.sampled_from(sorted(SPEC_FILES)), seed=st.integers(0, 2**32 - 1))
def test_writing_or_omitting_top_level_defaults_keeps_the_digest(rel: str, seed: int) -> None:
    rnd = random.Random(seed)
    kind = SPEC_FILES[rel]
    schema = SCHEMAS.schemas[kind]
    data = load((REPO / rel).read_text(encoding="utf-8"))
    expected = _real_digest(block_yaml(data, rnd), kind)
    variant = dict(data)
    for name in _defaulted(schema):
        default = schema["properties"][name]["default"]
        if name not in variant:
            if rnd.random() < 0.5:
                variant[name] = default  # spelled out
        elif variant[name] == default and rnd.random() < 0.5:
            del variant[name]  # left to the default
    assert _real_digest(block_yaml(variant, rnd, shuffle=True), kind) == expected


# -- canonical.digest itself ---------------------------------------------------------------------

json_values = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(-(2**53) + 1, 2**53 - 1), st.text(max_size=10)),
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=6), inner, max_size=4)),
    max_leaves=20,
)


def _reinserted(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _reinserted(value[k]) for k in reversed(list(value))}
    if isinstance(value, list):
        return [_reinserted(v) for v in value]
    return value


@SETTINGS
@given(value=json_values)
def test_canonical_digest_ignores_dict_insertion_order(value: Any) -> None:
    assert digest("spec:workload", value) == digest("spec:workload", _reinserted(value))


@SETTINGS
@given(value=json_values, kinds=st.lists(st.from_regex(r"[a-z:-]{1,12}", fullmatch=True), min_size=2, max_size=2, unique=True))
def test_canonical_digest_separates_kinds(value: Any, kinds: list[str]) -> None:
    assert digest(kinds[0], value) != digest(kinds[1], value)


def test_canonical_digest_separates_types() -> None:
    values = [1, "1", True, None, "null", [], {}, [1], {"1": 1}, "", 0, False]
    digests = {digest("spec:x", v) for v in values}
    assert len(digests) == len(values)
    # JCS writes 1.0 as 1: an integer-valued float is the same number.
    assert digest("spec:x", {"t": 0}) == digest("spec:x", {"t": 0.0})


# -- the loader has no state ------------------------------------------------------------------------


def test_loads_do_not_leak_state() -> None:
    """A refused `%YAML 1.1` document must not switch the next load to YAML 1.1 typing.

    (`load_text` here is the real function, imported at collection time, before conftest's
    session-wide memo wraps `lrc.compiler.load.load_text`.)
    """
    assert load_text.__module__ == "lrc.compiler.load"
    plain = "a: yes\nb: 010\nd: 0o17\n"  # YAML 1.1 would read True, 8 and "0o17"
    expected = {"a": "yes", "b": 10, "d": 15}
    for hostile in ("%YAML 1.1\n---\na: yes\n", "%YAML 1.1\n---\na: !!python/object:os.system yes\n", "a: &x 1\nb: *x\n"):
        diags = Diagnostics()
        assert load_text(hostile, "specs/h.yaml", Path("h.yaml"), diags) is None and diags.has_errors
        diags = Diagnostics()
        doc = load_text(plain, "specs/p.yaml", Path("p.yaml"), diags)
        assert doc is not None and not diags.items
        assert doc.data == expected
