"""The fast YAML path (libyaml events, fast scalar typing) gives exactly what the pure path
gives: the same data (types included), positions, key positions and diagnostics.

`load._FAST_PATH = False` forces today's pure path (ruamel's pure parser, resolver and safe
constructor for every scalar); each input is loaded both ways and compared. Inputs: every YAML
file of specs/ and tests/compiler/bad_specs/, inputs on which libyaml and the pure parser are
known to differ, and hypothesis-generated documents and mutations of them.
"""

from __future__ import annotations

import math
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st
from ruamel.yaml import events as ev

from lrc.compiler import load
from lrc.compiler.diagnostics import Diagnostics
from support import REPO

YAML_FILES = sorted(p for base in (REPO / "specs", REPO / "tests" / "compiler" / "bad_specs")
                    for p in base.rglob("*") if p.suffix in (".yaml", ".yml") and p.is_file())


def _load(text: str, fast: bool):
    saved = load._FAST_PATH
    load._FAST_PATH = fast
    try:
        diags = Diagnostics()
        doc = load._load_text(text, "x.yaml", Path("/x.yaml"), diags)
    finally:
        load._FAST_PATH = saved
    result = None if doc is None else (repr(doc.data), doc.values, doc.keys)
    return result, diags.items


def _same(text: str) -> None:
    fast, pure = _load(text, True), _load(text, False)
    assert fast == pure, text


def test_the_c_parser_is_installed_and_used_for_the_specs():
    assert load._CParser is not None, "ruamel.yaml.clib is in requirements.lock"
    for path in (REPO / "specs").rglob("*.yaml"):
        assert load._c_events(path.read_text(encoding="utf-8")) is not None, path


@pytest.mark.parametrize("path", YAML_FILES, ids=lambda p: p.relative_to(REPO).as_posix())
def test_spec_files_load_the_same_both_ways(path: Path):
    try:
        text = path.read_bytes().decode("utf-8")
    except UnicodeDecodeError:
        pytest.skip("not UTF-8: refused before parsing")
    _same(text)
    _same(text.replace("\r\n", "\n"))


DIVERGENT = [
    # libyaml (YAML 1.1) and ruamel's pure parser (YAML 1.2) differ on these, or mark them differently
    "a: |#\n  text\n", "a: >-#c\n  text\n", "a: b\t\n", "a:\tb\n", "\ta: b\n", "a: [b,\tc]\n",
    "%YAML 1.2\n---\na: 1\n", "%YAML 1.1\n---\na: 1\n", "%TAG ! tag:x,2000:\n---\na: 1\n", "%FOO bar\n---\na: 1\n",
    "a: 1\n...\n", "a?\n...\n...", "a: 1\n...\n...\n", "a: 1\n---\nb: 2\n",
    'a: "\\/"\n', 'a: "\\ud800"\n', 'a: "\\ud83d\\ude00"\n', 'a: "\\udfff x"\n', '"\\ud800": 1\n',
    "\ufeffa: 1\n", "a: 1\n\ufeffb: 2\n", "a: b\x00\n", "a: \x07\n", "a: \x85b\n", "\u2028a: b\n", "a: b\u2029c\n",
    "a: 1\r\nb: 2\r\n", "a: 1\rb: 2\r",
    "k" * 1023 + ": 1\n", "k" * 1024 + ": 1\n", "k" * 1100 + ": 1\n", '"' + "k" * 1100 + '": 1\n',
    "a:\n", "a: \nb: 1\n", "? a\n", "a: {b: }\n", "a: [b, ]\n", "- \n", "a: ~\n",
    "a: &x 1\nb: *x\n", "a: !!str 1\n", "a: !x 1\n", "<<: {a: 1}\n", "a: {<<: 1}\n", "'<<': 1\n", "a: <<\n",
    "a: {b: c:d}\n", "a: [b:c]\n", 'a: {"b":c}\n', "a: [? b]\n", "? [a]\n: b\n", "a: 'x' y\n", "a: -\n", "a: - b\n",
    "a:\n" + "  " * 0 + "".join("- " * 1 for _ in range(1)) + "[" * 45 + "]" * 45 + "\n",
    "é: 😀\n😀x: 'é😀\\x41'\nc: \"😀\\U0001F600\"\n", "a: \"\\N\\_\\L\\P\\e\\a\\v\\0\\ \\x41\"\n",
    "a: >\n  x\n\n   y\n  z\n", "a: |2\n   x\n  y\n", "a: |+\n  x\n\n", "a: 'x\n\n  y'\n", "a: x\n  y\n\n  z\n",
    "1: a\n", "true: a\n", "2026-01-02: a\n", "null: a\n", "a: 1\na: 2\n", "a: [1, 2]\n[b]: 1\n", "{a: 1}: 2\n",
    "a: 9007199254740993\n", "a: .inf\n", "a: -.nan\n", "a: 2026-13-45\n", "a: " + "1" * 5000 + "\n",
]


@pytest.mark.parametrize("text", DIVERGENT, ids=lambda t: repr(t[:40]))
def test_known_divergences_load_the_same_both_ways(text: str):
    _same(text)


def test_unsafe_texts_never_reach_the_c_parser():
    for text in ["a: |#\n", "a: b\t\n", "%YAML 1.2\n---\na: 1\n", "a: 1\n...\n", "\ufeffa: 1\n", "a: \x85\n",
                 "a: \u2028\n", "a: 1\r\n", "a: \x00\n", "a: \ud800\n"]:
        assert load._c_events(text) is None, repr(text)


# scalars ---------------------------------------------------------------------------------------

TRICKY_SCALARS = [
    "", "1_000", "0o17", "0x1F", "0b101", "+1", "-1", "+0", "-0", "0", "00", "0012", "09", "1", "123456789012345678",
    "1234567890123456789", "9007199254740993", "1" * 30, ".5", "-.5", "+.5", "5.", "1.5", "-0.0", "+0.0", "0.1",
    "1.50", "01.5", "1_0.5", "1e3", "1E3", "1e+3", "1.0e-3", "-1e3", ".inf", "-.inf", "+.Inf", ".INF", ".nan", ".NaN",
    "~", "null", "Null", "NULL", "nULL", "yes", "Yes", "no", "on", "off", "y", "n", "true", "True", "TRUE", "tRUE",
    "false", "False", "FALSE", "2026-01-02", "2026-1-2", "2026-13-45", "2026-01-02T03:04:05Z", "2026-01-02 03:04:05",
    "2026-01-02t03:04:05.5+01:00", "0000-01-01", "12:30", "1:30:00", "190:20:30", "<<", "=", "!", "&a", "*a", "-",
    "+", ".", "-x", "+x", ".x", "1a", "0x", "0xZZ", "0o8", "1__2", "_1", "1_", "a", "abc", "é", "😀", "x y", "1 2",
]


def _event(value: str, quoted: bool) -> ev.ScalarEvent:
    return ev.ScalarEvent(None, None, (False, True) if quoted else (True, False), value, style='"' if quoted else None)


def _typed(value):
    return (type(value).__name__, "nan" if isinstance(value, float) and math.isnan(value) else repr(value))


@pytest.mark.parametrize("value", TRICKY_SCALARS)
def test_fast_scalar_typing_equals_ruamel(value: str):
    builder = load._Builder("x.yaml", Diagnostics())
    assert builder._plain is not None, "the fast path is on for this ruamel"
    for quoted in (False, True):
        event = _event(value, quoted)
        assert _typed(builder._construct(event)) == _typed(builder._construct_slow(event)), (value, quoted)


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.sampled_from(list("0123456789+-._eExXoObB:TtZz nNuUlLfFaAsS~<=")), max_size=12))
def test_fast_scalar_typing_equals_ruamel_generated(value: str):
    builder = load._Builder("x.yaml", Diagnostics())
    event = _event(value, False)
    assert _typed(builder._construct(event)) == _typed(builder._construct_slow(event))


# generated documents ---------------------------------------------------------------------------

_WORDS = ["a", "key", "x y", "é", "😀", "1", "-0", "1.5", "1e3", "0o17", "~", "null", "yes", "true", "2026-01-02",
          "12:30", ".inf", "=", "<<", "a:b", "a #c", "-x", "?x", "'q'", "'it''s'", '"d"', '"\\n\\/\\x41\\u00e9"',
          '"\\ud800"', '"\\U0001F600"', "9007199254740993", "[a, b]", "{a: 1}", "{a:1}", '{"a":1}', "[]", "{}", ""]
_NOISE = ["\t", " ", "\n", ":", "-", "#", "'", '"', "\\", "|", ">", "[", "{", "}", "]", ",", "?", "\r", "\x85",
          "\u2028", "\ufeff", "\x00", "&", "*", "!", "%", "...", "---", "|#", "é", "😀"]


@st.composite
def _documents(draw):
    def node(indent: int, depth: int) -> str:
        kind = draw(st.integers(0, 9)) if depth < 3 else 0
        if kind <= 4:
            return " " + draw(st.sampled_from(_WORDS))
        if kind == 5:
            header = draw(st.sampled_from(["|", ">", "|-", ">+", "|2"]))
            lines = draw(st.lists(st.sampled_from(_WORDS[:8]), max_size=3))
            return " " + header + "".join("\n" + " " * (indent + 2) + line for line in lines)
        if kind <= 7:
            keys = draw(st.lists(st.sampled_from(_WORDS), min_size=1, max_size=3))
            return "".join("\n" + " " * (indent + 2) + f"{k}:" + node(indent + 2, depth + 1) for k in keys)
        count = draw(st.integers(1, 3))
        return "".join("\n" + " " * (indent + 2) + "-" + node(indent + 2, depth + 1) for _ in range(count))

    keys = draw(st.lists(st.sampled_from(_WORDS), min_size=1, max_size=4))
    text = "\n".join(f"{k}:" + node(0, 0) for k in keys) + draw(st.sampled_from(["", "\n", "\n# c\n"]))
    for _ in range(draw(st.integers(0, 3))):
        at = draw(st.integers(0, len(text)))
        if draw(st.booleans()):
            text = text[:at] + draw(st.sampled_from(_NOISE)) + text[at:]
        else:
            text = text[:at] + text[at + 1:]
    return text


@pytest.mark.slow
@settings(max_examples=600, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_documents())
def test_generated_documents_load_the_same_both_ways(text: str):
    _same(text)
