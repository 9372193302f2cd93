"""Inputs the fuzz script (benchmarks/fuzz_compiler.py) once got past the compiler: each must
now end in diagnostics, quickly, with no exception escaping compile_project."""

from __future__ import annotations

import os
import re
import shutil
import time
from pathlib import Path

import pytest

from lrc.compiler.pipeline import compile_project
from support import pinned

REPO = Path(__file__).resolve().parents[2]
SYSTEM_PROMPT = "specs/workloads/triage.ap-inbox/prompts/system.j2"
WORKLOAD = "specs/workloads/triage.ap-inbox/workload.yaml"

CASES = {
    "nan-in-output-schema": ("specs/workloads/query.nl2sql/output.schema.json", '{"x-nan": NaN}\n', "LRC3005"),
    "unknown-filter": (SYSTEM_PROMPT, "{{ 'x' | random }}\n", "LRC4001"),
    "memory-bomb-indent": (SYSTEM_PROMPT, "{{ 'x' | indent(10**10) }}\n", "LRC4004"),
    "memory-bomb-percent": (SYSTEM_PROMPT, "{{ '%09999999999d' % 1 }}\n", "LRC4004"),
    "slow-percent-1gb": (SYSTEM_PROMPT, "{{ '%0999999999d' % 1 }}\n", "LRC4004"),
    "memory-bomb-str-format": (SYSTEM_PROMPT, "{{ '{:0999999999}'.format(1) }}\n", "LRC4004"),
    "nested-format-field": (SYSTEM_PROMPT, "{{ '{x:{w}}'.format_map({'x': 1, 'w': 10**9}) }}\n", "LRC4004"),
    "long-file-reference": (WORKLOAD, ("schema: output.schema.json", "schema: " + "x" * 300), "LRC3004"),
    "nul-in-file-reference": (WORKLOAD, ("schema: output.schema.json", 'schema: "out\\0put.json"'), "LRC3004"),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_fuzz_finding_ends_in_a_diagnostic(name: str, tmp_path: Path):
    rel, change, code = CASES[name]
    for folder in ("specs", "schemas", "generated"):
        shutil.copytree(REPO / folder, tmp_path / folder)
    path = tmp_path / rel
    if isinstance(change, tuple):
        path.write_text(path.read_text().replace(*change))
    else:
        path.write_text(change)
    started = time.monotonic()
    result = compile_project(tmp_path, cache=False)
    assert time.monotonic() - started < 10
    assert code in {d.code for d in result.diagnostics.items if d.severity == "error"}


def test_integers_beyond_2_53_are_refused_where_they_enter(tmp_path: Path):
    for folder in ("specs", "schemas", "generated"):
        shutil.copytree(REPO / folder, tmp_path / folder)
    edition = tmp_path / "specs/editions/2026-12.yaml"
    original = edition.read_text()
    edition.write_text(re.sub(r"(?m)^version: \d+$", "version: 99999999999999999999", original, count=1))
    result = compile_project(tmp_path, cache=False)
    assert ("LRC2001", "specs/editions/2026-12.yaml") in {(d.code, d.path) for d in result.diagnostics.items}
    edition.write_text(original)
    schema = tmp_path / "specs/workloads/query.nl2sql/output.schema.json"
    schema.write_text('{"type": "object", "maxProperties": 99999999999999999999}\n')
    result = compile_project(tmp_path, cache=False)
    assert ("LRC3005", "specs/workloads/query.nl2sql/output.schema.json") in {(d.code, d.path) for d in result.diagnostics.items}


def _copy(tmp_path: Path) -> Path:
    for folder in ("specs", "schemas", "generated"):
        shutil.copytree(REPO / folder, tmp_path / folder)
    return tmp_path


def test_an_integral_float_is_the_integer_it_equals(tmp_path: Path):
    """`version: 1.0` passed validation (JSON Schema's integer) but never equalled the 1 an
    edition pins: plan building failed with a KeyError. It now is the integer 1 (the test
    writes the workload's current version N as `N.0`)."""
    root = _copy(tmp_path)
    spec = root / "specs/workloads/reconcile.ledger/workload.yaml"
    text = spec.read_text()
    version = re.search(r"(?m)^version: (\d+)$", text).group(1)
    assert f"\nversion: {version}\n" in text
    spec.write_text(text.replace(f"\nversion: {version}\n", f"\nversion: {version}.0\n", 1))
    result = compile_project(root, check=True, cache=False)
    assert not result.diagnostics.has_errors, [d.code for d in result.diagnostics.items]


@pytest.mark.parametrize("rel", ["generated/demo/plan.lock", f"generated/demo/prompts/{pinned('triage.ap-inbox')}/single-shot.system.sample.txt",
                                 "generated/ledger.jsonl"])
def test_a_fifo_in_generated_is_refused_never_waited_on(rel: str, tmp_path: Path):
    """A FIFO in place of a generated file made the compiler block forever reading it."""
    root = _copy(tmp_path)
    path = root / rel
    path.unlink()
    os.mkfifo(path)
    started = time.monotonic()
    check = compile_project(root, check=True, cache=False)
    assert time.monotonic() - started < 10
    expected = "LRC5006" if rel.endswith("ledger.jsonl") else "LRC7001"
    assert expected in {d.code for d in check.diagnostics.items if d.severity == "error"}
    if not rel.endswith("ledger.jsonl"):
        written = compile_project(root, cache=False)  # a plain compile puts lrc's file back in its place
        assert not written.diagnostics.has_errors and path.is_file() and not path.is_fifo()


@pytest.mark.parametrize("damage", ["fifo", "not-json", "not-an-object"])
def test_a_damaged_schema_file_is_a_diagnostic(damage: str, tmp_path: Path):
    """schemas/ arrives in pull requests like specs/: a FIFO there blocked the compiler, and
    a file that is not a JSON object ended in an internal error."""
    root = _copy(tmp_path)
    path = root / "schemas/system.schema.json"
    path.unlink()
    if damage == "fifo":
        os.mkfifo(path)
    else:
        path.write_text("{not json" if damage == "not-json" else "[1, 2]")
    started = time.monotonic()
    result = compile_project(root, check=True, cache=False)
    assert time.monotonic() - started < 10
    assert [(d.code, d.path) for d in result.diagnostics.items] == [("LRC3005", "schemas/system.schema.json")]
