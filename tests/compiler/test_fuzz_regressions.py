"""Inputs the fuzz script (benchmarks/fuzz_compiler.py) once got past the compiler: each must
now end in diagnostics, quickly, with no exception escaping compile_project."""

from __future__ import annotations

import shutil
import time
from pathlib import Path

import pytest

from lrc.compiler.pipeline import compile_project

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
    edition.write_text(original.replace("version: 1", "version: 99999999999999999999", 1))
    result = compile_project(tmp_path, cache=False)
    assert ("LRC2001", "specs/editions/2026-12.yaml") in {(d.code, d.path) for d in result.diagnostics.items}
    edition.write_text(original)
    schema = tmp_path / "specs/workloads/query.nl2sql/output.schema.json"
    schema.write_text('{"type": "object", "maxProperties": 99999999999999999999}\n')
    result = compile_project(tmp_path, cache=False)
    assert ("LRC3005", "specs/workloads/query.nl2sql/output.schema.json") in {(d.code, d.path) for d in result.diagnostics.items}
