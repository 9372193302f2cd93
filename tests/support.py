"""Helpers shared by tests (import it as `support`; conftest modules are not importable by name)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent


def pinned(spec_id: str) -> str:
    """`<spec_id>.v<N>` as the repository's demo edition pins it: test editions built from the
    repository's specs follow the re-locks instead of hard-coding a version."""
    import re

    demo = (REPO / "specs" / "editions" / "demo.yaml").read_text(encoding="utf-8")
    found = re.search(rf"(?m)^\s*(?:-\s*|[a-z_]+:\s*)({re.escape(spec_id)}\.v\d+)\s*(?:#.*)?$", demo)
    if found is None:
        raise LookupError(f"the demo edition pins no {spec_id}")
    return found.group(1)
LRC = [sys.executable, "-m", "lrc.compiler.cli"]


def run_lrc(*args: str, cwd: Path | None = None, env: dict[str, str] | None = None, timeout: int = 300) -> subprocess.CompletedProcess:
    """Run `lrc ARGS` as a separate process (the same entry point as the installed script): a
    fork of a warm interpreter where it can stand for a fresh one (`helpers.zygote`), else a
    real subprocess."""
    from helpers import zygote

    full_env = {**os.environ, **(env or {})}
    return zygote.run([str(a) for a in args], full_env, cwd or REPO, timeout)


def tool_defs(spec: dict[str, Any], output_schema: dict[str, Any] | None = None, system: str = "agentic") -> list[dict[str, Any]]:
    """A workload's tool definitions in the OpenAI function format, as the compiler locks them
    (compiler/plan.py): `parameters_from: output` takes the output schema without $schema,
    $id and title."""
    defs = []
    for d in spec["systems"][system]["tools"]["definitions"]:
        if "parameters" in d:
            parameters = d["parameters"]
        else:
            assert output_schema is not None, f"tool {d['name']} takes its parameters from the output schema"
            parameters = {k: v for k, v in output_schema.items() if k not in ("$schema", "$id", "title")}
        defs.append({"type": "function", "function": {"name": d["name"], "description": d["description"], "parameters": parameters}})
    return defs


ENVIRONMENTS = (("0", "UTC"), ("12345", "Asia/Tokyo"), ("random", "America/Los_Angeles"), ("4242", "Pacific/Kiritimati"))
"""(PYTHONHASHSEED, TZ) pairs a generator's output must not depend on."""


def outputs_across_environments(script: str, args: list[str], cwd: Path) -> set[str]:
    """The stdout of `python -c script ARGS` under each of ENVIRONMENTS (a set of one when the
    output depends on neither the hash seed nor the time zone)."""
    outs = set()
    for hashseed, tz in ENVIRONMENTS:
        env = {**os.environ, "PYTHONHASHSEED": hashseed, "TZ": tz, "LC_ALL": "C"}
        done = subprocess.run([sys.executable, "-c", script, *args], env=env, cwd=cwd, capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr
        outs.add(done.stdout.strip())
    return outs
