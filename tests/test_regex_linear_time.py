"""A spec's regex never stalls the compiler, CI or a run (issue 16).

Patterns with nested quantifiers -- `(a+)+$`, `(a|aa)*b`, `(x*)*y` and the like, built by a
strategy -- are checked against values that almost match, the worst case for a backtracking
engine (Python's `re` needs seconds at 25 characters, doubling with each more). Every check
goes through the linear-time engine (lrc.runtime.lock.safe_regex), and must finish in
milliseconds at thousands of characters: in `lrc compile --check` (a subprocess on a project
copy with a hostile sample item and output schema), in item generation and validation, and in
output grading.
"""

from __future__ import annotations

import gc
import json
import re
import shutil
import time
from pathlib import Path
from types import SimpleNamespace

import pytest
from hypothesis import HealthCheck, assume, example, given, settings, strategies as st

import support
from lrc.compiler import schemacheck
from lrc.runtime import grading, items
from lrc.runtime.lock import safe_regex
from lrc.runtime.workloads.base import Item

REPO = Path(__file__).resolve().parent.parent
FAST = 0.1
"""CPU seconds one check may take. A linear engine takes well under a millisecond for these
values; the bound leaves room for a loaded 2-core machine, and is still ~10^6 times less
than a backtracking engine needs for the longer values below."""

ATOMS = st.sampled_from(["a", "x", "(a|aa)", "(a|a?)", "(x|xx)", "[ab]", "\\w", "(a|ab)", "(?:a+)"])
INNER = st.sampled_from(["+", "*", "{1,}", "{0,8}", "?"])
OUTER = st.sampled_from(["+", "*", "{1,}", "{2,}"])
TAILS = st.sampled_from(["$", "b", "y", "y$", "!$", "\\d$", ""])


@st.composite
def nested_patterns(draw) -> str:
    pattern = draw(ATOMS)
    for _ in range(draw(st.integers(1, 3))):
        pattern = f"(({pattern}){draw(INNER)}){draw(OUTER)}"
    pattern = ("^" if draw(st.booleans()) else "") + pattern + draw(TAILS)
    assume(safe_regex.compile_problem(pattern) is None)  # three nested counted repeats can exceed SIZE_LIMIT (LRC3020)
    return pattern


@st.composite
def near_misses(draw) -> str:
    """Long runs of the letters the patterns repeat, spoiled at the end."""
    unit = draw(st.sampled_from(["a", "x", "ab", "aa", "xa"]))
    n = draw(st.integers(25, 4000)) // len(unit)
    return unit * n + draw(st.sampled_from(["!", "", "b!", "\n", "y!", "é"]))


HOSTILE = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
KNOWN = [("^(a+)+$", "a" * 3000 + "!"), ("(a|aa)*b", "a" * 3000), ("(x*)*y", "x" * 3000), ("^(a|a?)+$", "a" * 3000 + "!"),
         ("^((a+)*)+$", "a" * 3000 + "b"), ("^(\\w+\\s?)+$", "a" * 3000 + "!")]


def timed(fn, *args):
    """(fn's value, the CPU seconds this thread spent in a second call of it).

    What is bounded is the engine's matching cost, so the measurement leaves out what is not:
    - the first call, untimed, compiles the pattern into the engine's cache (tens of ms for a
      nested counted repetition, whatever the value; an exponential match is as slow again in
      the timed call, so a backtracking engine is still caught);
    - the garbage collector is off during the timed call (a full collection of a test worker's
      heap is itself ~0.1 s);
    - CPU time, not wall time: a loaded machine (a CI runner, parallel test workers) stretches
      wall time by whatever else runs.
    Two CI runs failed on them: 0.16 s of wall for a 162-character value on a loaded machine, and
    0.117 s of CPU, compilation included, for a 26-character value on a quiet one."""
    fn(*args)
    enabled = gc.isenabled()
    gc.disable()
    try:
        start = time.thread_time()
        value = fn(*args)
        return value, time.thread_time() - start
    finally:
        if enabled:
            gc.enable()


def test_the_patterns_are_hostile_to_a_backtracking_engine():
    """Sanity: the test's patterns really are the exponential kind for Python's `re`."""
    fast, slow = timed(re.search, "^(a+)+$", "a" * 16 + "!"), timed(re.search, "^(a+)+$", "a" * 20 + "!")
    assert slow[1] > 4 * fast[1]
    _, ours = timed(safe_regex.search, "^(a+)+$", "a" * 20 + "!")
    assert slow[1] > ours


@HOSTILE
@given(nested_patterns(), near_misses())
@example("^(a+)+$", "a" * 4000 + "!").via("issue 16")
@example("(a|aa)*b", "a" * 4000).via("issue 16")
@example("(x*)*y", "x" * 4000).via("issue 16")
def test_schema_checks_are_linear(pattern, value):
    schema = {"type": "object", "properties": {"v": {"type": "string", "pattern": pattern}},
              "patternProperties": {pattern: {"type": "string", "pattern": pattern}}}
    assert schemacheck.check(schema).ok, pattern  # nested quantifiers are fine for a linear engine
    matched, took = timed(safe_regex.search, pattern, value)
    assert took < FAST, (pattern, len(value), took)
    # a property checked by `pattern`; a property name tried against `patternProperties` (which,
    # when it matches, checks the same value against the same pattern: never an error)
    for instance, errors in (({"v": value}, not matched), ({value: value}, False)):
        found, took = timed(schemacheck.instance_errors, schema, instance)  # the compiler's sample-item check
        assert took < FAST, (pattern, len(value), took)
        assert bool(found) == errors and all(e.keyword == "pattern" and e.path == ("v",) for e in found)


@HOSTILE
@given(nested_patterns(), near_misses())
@example("^(a+)+$", "a" * 4000 + "!")
def test_item_generation_checks_are_linear(pattern, value):
    """items.generate / render_preview check each generated item with `check_item`."""
    schema = {"type": "object", "properties": {"batch_id": {"type": "string", "pattern": pattern}}}
    item = Item(0, "item-0", {"batch_id": value}, {})
    start = time.perf_counter()
    try:
        items.check_item("w.v1", schema, item)
        refused = False
    except items.ItemError as exc:
        refused = True
        assert "/batch_id" in str(exc) and "does not match" in str(exc)
    took = time.perf_counter() - start
    assert took < FAST, (pattern, len(value), took)
    assert refused == (not safe_regex.search(pattern, value))


@HOSTILE
@given(nested_patterns(), near_misses())
@example("^(a+)+$", "a" * 4000 + "!")
@example("(x*)*y", "x" * 4000)
def test_output_grading_is_linear(pattern, value):
    """A model's answer is the hostile value: grading's output-contract check stays linear."""
    schema = {"type": "object", "required": ["labels"], "properties": {"labels": {
        "type": "array", "items": {"type": "object", "properties": {"email_id": {"type": "string", "pattern": pattern}},
                                   "patternProperties": {pattern: {}}}}}}
    workload = {"spec": {"grading": {"checks": [{"check": "w.grading.v1", "validator": "validate"}]}, "output": {"schema": schema}}}
    answer = {"labels": [{"email_id": value}, {"email_id": value[::-1], value: 1}]}
    run = {"outcome": "answered", "steps": 1, "answer_text": json.dumps(answer)}
    modules = {"w.grading.v1": SimpleNamespace(validate=lambda answer, key, params: [])}
    record, took = timed(grading.grade, workload, run, {}, modules)
    assert took < FAST, (pattern, len(value), took)
    contract_result = record["results"][0]
    matches = safe_regex.search(pattern, value) and safe_regex.search(pattern, value[::-1])
    assert (contract_result["status"] == "pass") == bool(matches), (pattern, contract_result)
    if not matches:
        assert record["outcome"] == "invalid_output" and contract_result["location"].startswith("/labels/")


@pytest.mark.parametrize("pattern, text", [
    ("^[A-Z]{2}-[0-9]{3}$", "AB-123"), ("^[A-Z]{2}-[0-9]{3}$", "AB-1234"), ("^-?[0-9]+\\.[0-9]{2}$", "-3.50"),
    ("b", "abc"), ("^b", "abc"), ("(a|aa)*b", "aab"), ("(x*)*y", "xxy"), ("^(a+)+$", "aaa"), ("^(a+)+$", "aa!"),
    ("colou?r", "the color"), ("^\\S+@\\S+$", "a@b"), ("^\\S+@\\S+$", "a @b"), ("[\\\\[]", "["), ("^$", ""),
])
def test_the_engine_agrees_with_python_where_the_dialects_agree(pattern, text):
    """Same answers as `re.search` on ordinary patterns and short values (Python is only safe
    to run on short values: `^((((a|a?)){0,8})*)*$` takes it 87 s on 7 characters)."""
    assert safe_regex.search(pattern, text) == bool(re.search(pattern, text))


def test_ecma_dialect_differences_are_the_strict_side():
    """ECMA-262, as JSON Schema specifies: `\\d`/`\\w` are ASCII, `$` is the very end."""
    assert not safe_regex.search("^\\d+$", "١٢") and re.search("^\\d+$", "١٢")
    assert not safe_regex.search("^\\w+$", "é") and re.search("^\\w+$", "é")
    assert not safe_regex.search("^a$", "a\n") and re.search("^a$", "a\n")
    assert safe_regex.fullmatch("a|b", "b") and not safe_regex.fullmatch("a|b", "ab")


@pytest.mark.parametrize("pattern", ["(a)\\1", "a(?=b)", "a(?!b)", "(?<=a)b", "(?<!a)b", "((", "(?<n>a)\\k<n>"])
def test_unsupported_patterns_raise_and_never_run(pattern):
    assert safe_regex.compile_problem(pattern)
    assert not safe_regex.is_regex(pattern) and safe_regex.is_regex(3)
    with pytest.raises(safe_regex.UnsupportedPattern):
        safe_regex.search(pattern, "ab")
    with pytest.raises(safe_regex.SchemaUnusable):
        safe_regex.validator({"properties": {"x": {"pattern": pattern}}})


@pytest.mark.parametrize("pattern, value", KNOWN)
def test_known_catastrophic_cases(pattern, value):
    _, took = timed(safe_regex.violations, {"pattern": pattern}, value)
    assert took < FAST, (pattern, took)


def _hostile_project(root: Path, pattern: str, value: str) -> None:
    for name in ("specs", "schemas", "generated"):
        shutil.copytree(REPO / name, root / name)
    workload = root / "specs/workloads/triage.ap-inbox/workload.yaml"
    text = workload.read_text(encoding="utf-8")
    hostile = text.replace("      batch_id: {type: string}\n", f"      batch_id: {{type: string, pattern: {json.dumps(pattern)}}}\n", 1)
    hostile = hostile.replace("  batch_id: AP-SAMPLE\n", f"  batch_id: {json.dumps(value)}\n", 1)
    assert hostile.count(json.dumps(pattern)) == 1 and json.dumps(value) in hostile
    workload.write_text(hostile, encoding="utf-8")
    output = root / "specs/workloads/triage.ap-inbox/output.schema.json"
    schema = json.loads(output.read_text(encoding="utf-8"))
    schema["properties"]["labels"]["items"]["properties"]["email_id"]["pattern"] = pattern
    output.write_text(json.dumps(schema, indent=2), encoding="utf-8")


@settings(max_examples=4, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(nested_patterns(), st.integers(1000, 4000))
@example("^(a+)+$", 4000)
def test_compile_check_with_a_hostile_sample_item_stays_fast(tmp_path_factory, pattern, n):
    """`lrc compile --check` on a project whose sample item almost matches a nested-quantifier
    pattern (and whose output schema carries it too): it reports LRC3007 and returns at once."""
    root = tmp_path_factory.mktemp("hostile")
    value = "a" * n + "!"
    if safe_regex.search(pattern, value):
        value = "!"  # still a near miss for most; the point is the time
    _hostile_project(root, pattern, value)
    start = time.perf_counter()
    res = support.run_lrc("compile", "--check", "--project", str(root), timeout=120)
    took = time.perf_counter() - start
    assert res.returncode == 1, res.stderr[-2000:]
    if not safe_regex.search(pattern, value):
        assert "LRC3007" in res.stdout + res.stderr and "sample_item does not match item_schema" in res.stdout + res.stderr
    assert "Traceback" not in res.stderr
    assert took < 60, took  # the whole compile; the regex check itself is timed in-process below
    schema = {"type": "object", "properties": {"batch_id": {"type": "string", "pattern": pattern}}}
    _, check = timed(schemacheck.instance_errors, schema, {"batch_id": value})
    assert check < FAST


# --- Lazy-DFA blow-up: linear, but (program size) x (value length) -----------------------------
# Counted repetitions after an unanchored prefix make the lazy DFA give up, and the engine then
# simulates the NFA: `\w*a\w{300}c` took 58.8 s on a 999,000-character a/b value. No string
# longer than safe_regex.SUBJECT_LIMIT is handed to the engine, so every check stays bounded.

SLOW = 5.0
"""Seconds one check may take on the blow-up family: about 0.1 s unloaded at the cap, 1.3 s seen on a
2-core machine at load 9; an unbounded check takes 58.8 s, so 5 s still tells them apart."""
CAP = safe_regex.SUBJECT_LIMIT
BLOWUP = [r"\w*a\w{300}c", r"\w*a\w{600}c", r"a[ab]{300}c", r"[ab]*a[ab]{900}c", r"(?:\w{1,20}a\w{1,20}){1,10}c",
          r".*a.{40}c"]
#: 999,000 characters is benchmark-sized (seconds per check on a loaded machine): slow; over the cap
#: is still checked by default at CAP + 1 and 10,000.
LENGTHS = [CAP - 1, CAP, CAP + 1, 10_000, pytest.param(999_000, marks=pytest.mark.slow)]


def _ab(n: int, seed: int = 16) -> str:
    import random

    rng = random.Random(seed)
    return "".join(rng.choice("ab") for _ in range(n))


def test_the_blowup_patterns_compile():
    """They are within the engine's SIZE_LIMIT (else LRC3020 would refuse them before any run)."""
    assert all(safe_regex.compile_problem(p) is None for p in BLOWUP)
    assert safe_regex.compile_problem(r"(?:\w{1,20}a\w{1,20}){1,20}c")  # 2 MiB compiled: refused


@pytest.mark.parametrize("pattern", BLOWUP)
@pytest.mark.parametrize("n", LENGTHS)
def test_blowup_family_is_bounded_everywhere(pattern, n):
    value = _ab(n)
    over = n > CAP
    limit_message = f"string of {n:,} characters exceeds the {CAP:,}-character limit for pattern checks"
    # the compiler's sample-item check
    schema = {"type": "object", "properties": {"v": {"type": "string", "pattern": pattern}}}
    found, took = timed(schemacheck.instance_errors, schema, {"v": value})
    assert took < SLOW, (pattern, n, took)
    if over:
        assert [(e.path, e.keyword, e.message) for e in found] == [(("v",), "pattern", limit_message)]
    else:
        assert bool(found) == (not safe_regex.search(pattern, value))
    # item generation / validation
    item = Item(0, "item-0", {"batch_id": value}, {})
    item_schema = {"type": "object", "properties": {"batch_id": {"type": "string", "pattern": pattern}}}
    start = time.perf_counter()
    try:
        items.check_item("w.v1", item_schema, item)
        refused = None
    except items.ItemError as exc:
        refused = str(exc)
    assert time.perf_counter() - start < SLOW, (pattern, n)
    if over:
        assert refused is not None and limit_message in refused and "(at /batch_id)" in refused
    else:
        assert (refused is None) == safe_regex.search(pattern, value)
    # output grading: the model's answer carries the value
    out_schema = {"type": "object", "properties": {"labels": {"type": "array", "items": {
        "type": "object", "properties": {"email_id": {"type": "string", "pattern": pattern}}}}}}
    workload = {"spec": {"grading": {"checks": [{"check": "w.grading.v1", "validator": "validate"}]}, "output": {"schema": out_schema}}}
    run = {"outcome": "answered", "steps": 1, "answer_text": json.dumps({"labels": [{"email_id": value}]})}
    modules = {"w.grading.v1": SimpleNamespace(validate=lambda answer, key, params: [])}
    record, took = timed(grading.grade, workload, run, {}, modules)
    assert took < SLOW, (pattern, n, took)
    contract = record["results"][0]
    if over:
        assert contract["status"] == "fail" and contract["location"] == "/labels/0/email_id"
        assert limit_message in contract["message"] and record["outcome"] == "invalid_output"
    else:
        assert (contract["status"] == "pass") == safe_regex.search(pattern, value)


@pytest.mark.parametrize("pattern, value, matches", [
    ("^[A-Z]{2}-[0-9]{3}$", "AB-123", True), ("^[A-Z]{2}-[0-9]{3}$", "AB-1234", False), ("b", "a" * CAP + "b", False),
    ("b", "a" * (CAP - 1) + "b", True), ("^a*$", "a" * CAP, True), ("^a*$", "a" * (CAP + 1), False), ("^$", "", True),
])
def test_ordinary_values_decide_as_before_and_only_over_cap_strings_are_refused(pattern, value, matches):
    errors = safe_regex.violations({"pattern": pattern}, value)
    assert (not errors) == matches
    if len(value) <= CAP:
        assert safe_regex.search(pattern, value) == matches == bool(re.search(pattern, value))
        assert all("limit for pattern checks" not in e.message for e in errors)
    else:
        assert errors[0].message == f"string of {len(value):,} characters exceeds the {CAP:,}-character limit for pattern checks"
        with pytest.raises(safe_regex.SubjectTooLong, match="limit for pattern checks"):
            safe_regex.search(pattern, value)
        with pytest.raises(safe_regex.SubjectTooLong):
            safe_regex.fullmatch(pattern, value)


@pytest.mark.parametrize("where", ["propertyNames", "patternProperties", "nested"])
@pytest.mark.parametrize("n", [CAP, CAP + 1, pytest.param(999_000, marks=pytest.mark.slow)])
def test_long_property_names_never_reach_the_engine(where, n):
    key = _ab(n)
    schema = {
        "propertyNames": {"type": "object", "properties": {"m": {"propertyNames": {"pattern": r"\w*a\w{600}c"}}}},
        "patternProperties": {"type": "object", "patternProperties": {r"\w*a\w{600}c": {"type": "integer"}}},
        "nested": {"type": "object", "properties": {"m": {"type": "array", "items": {"patternProperties": {r"[ab]*a[ab]{900}c": False}}}}},
    }[where]
    instance = {"m": [{key: 1}]} if where == "nested" else {"m": {key: 1}}
    found, took = timed(safe_regex.violations, schema, instance)
    assert took < SLOW, (where, n, took)
    if n <= CAP:
        assert all("limit for pattern checks" not in e.message for e in found)
    elif where == "propertyNames":
        assert [(e.pointer, e.message) for e in found] == [("/m", f"string of {n:,} characters exceeds the {CAP:,}-character limit for pattern checks")]
    else:
        pointer = "/m/0" if where == "nested" else "/m"
        assert [(e.pointer, e.message) for e in found] == [(pointer, f"a property name of {n:,} characters exceeds the {CAP:,}-character limit for pattern checks")]


def test_format_regex_values_over_the_cap_are_not_compiled():
    v = safe_regex.validator({"format": "regex"}, formats=True)
    assert v.is_valid("^a+$") and not v.is_valid("(a)\\1")
    start = time.perf_counter()
    assert not v.is_valid("a" * 999_000)
    assert time.perf_counter() - start < SLOW


@settings(max_examples=2, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(st.sampled_from(BLOWUP))
@example(r"\w*a\w{600}c")
def test_compile_check_with_an_over_cap_sample_item_names_the_limit(tmp_path_factory, pattern):
    """`lrc compile --check` on a sample item over the cap: LRC3007 with the limit message."""
    root = tmp_path_factory.mktemp("overcap")
    n = 20_000
    _hostile_project(root, pattern, _ab(n))
    start = time.perf_counter()
    res = support.run_lrc("compile", "--check", "--project", str(root), timeout=120)
    took = time.perf_counter() - start
    out = res.stdout + res.stderr
    assert res.returncode == 1 and "Traceback" not in res.stderr, res.stderr[-2000:]
    assert "LRC3007" in out and f"string of {n:,} characters exceeds the {CAP:,}-character limit for pattern checks" in out, out[-3000:]
    assert "/batch_id" in out
    assert took < 60, took
