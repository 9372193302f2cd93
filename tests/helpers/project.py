"""Build a throw-away lrc project whose edition runs a model behind a local HTTP server.

The project is a copy of the repository's `specs/` and `schemas/` (never `generated/`, never
the ledger: the copy compiles from scratch and records a fresh ledger) plus one extra edition,
`specs/editions/local.yaml`, whose candidate model is `openai/stub-model` served by
`tests/helpers/stub_server.py` at `api_base`. Compiling it goes through the real compiler
(`lrc.compiler.pipeline.compile_project`), so the lock pins the running code like any other.
"""

from __future__ import annotations

import csv
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Sequence

REPO = Path(__file__).resolve().parents[2]

STUB_MODEL = "openai/stub-model"
KEY_ENV = "LRC_TEST_STUB_KEY"
#: USD per 1,000,000 tokens, frozen in the local edition (a real, non-zero price).
STUB_PRICE = {"input": "1.25", "cached_input": "0.125", "output": "10.00"}
PER_TOKENS = 1_000_000

_ZERO_PRICE = """\
  {model}:
    currency: USD
    per_tokens: 1000000
    input: "0"
    cached_input: "0"
    output: "0"
    as_of: "2026-11-29"
    source: embedded reference model, runs in-process; no provider bills it
"""

_REFERENCE_ROLES = {"lrc/oracle": "infrastructure-check", "lrc/null": "floor-check", "lrc/baseline": "baseline"}


def _demo_pin(prefix: str) -> str:
    """The version of `prefix` the repository's demo edition pins (e.g. `triage.ap-inbox.v2`),
    so the local edition follows re-locks instead of hard-coding a version."""
    import re

    text = (REPO / "specs" / "editions" / "demo.yaml").read_text(encoding="utf-8")
    found = re.search(rf"^  - ({re.escape(prefix)}\.v\d+)\s*$", text, re.MULTILINE)
    assert found, f"the demo edition pins no {prefix}"
    return found.group(1)


def local_edition_yaml(api_base: str, n_per_cell: int = 15, max_concurrency: int = 4,
                       reference_models: Sequence[str] = ("lrc/baseline",), edition_id: str = "local") -> str:
    models = [
        f"  - id: {STUB_MODEL}\n"
        f"    role: candidate\n"
        f"    sampling: {{temperature: 0}}\n"
        f"    api_base: {api_base}\n"
        f"    api_key_env: {KEY_ENV}\n"
        f"    max_concurrency: {max_concurrency}\n"
    ]
    prices = [
        f"  {STUB_MODEL}:\n"
        f"    currency: USD\n"
        f"    per_tokens: {PER_TOKENS}\n"
        f"    input: \"{STUB_PRICE['input']}\"\n"
        f"    cached_input: \"{STUB_PRICE['cached_input']}\"\n"
        f"    output: \"{STUB_PRICE['output']}\"\n"
        f"    as_of: \"2026-11-29\"\n"
        f"    source: test price for the local stub server (tests/helpers/project.py)\n"
    ]
    for ref in reference_models:
        models.append(f"  - id: {ref}\n    role: {_REFERENCE_ROLES[ref]}\n    sampling: {{temperature: 0}}\n")
        prices.append(_ZERO_PRICE.format(model=ref))
    return (
        "# yaml-language-server: $schema=../../schemas/edition.schema.json\n"
        "# Test edition: a model behind a local OpenAI-compatible stub server.\n"
        "kind: edition\n"
        f"id: {edition_id}\n"
        "version: 1\n"
        "title: LedgerRate local-server test edition\n"
        "date: \"2026-11-29\"\n"
        "standard: ledgerrate.v1\n"
        f"workloads:\n  - {_demo_pin('triage.ap-inbox')}\n"
        f"systems:\n  - {_demo_pin('single-shot')}\n  - {_demo_pin('agentic')}\n"
        "models:\n" + "".join(models) +
        "pricing:\n" + "".join(prices) +
        f"n_per_cell: {n_per_cell}\n"
        "repetitions: 1\n"
        "window_hours: 72\n"
        "seed:\n  policy: public\n  value: ledgerrate-demo-2026-11\n"
        "qualifying:\n  min_pass_rate: \"0.80\"\n"
        "brand: LedgerRate\n"
        "footer: LedgerRate · methodology v1.0 · edition 2026-11-29 (local test)\n"
        "disclaimer: Test edition against a local stub server; not a measurement.\n"
        "errata: []\n"
    )


class CompileFailed(AssertionError):
    pass


def build_project(root: Path, api_base: str, n_per_cell: int = 15, max_concurrency: int = 4,
                  reference_models: Sequence[str] = ("lrc/baseline",)) -> Path:
    """Copy specs/ and schemas/ into `root`, add the local edition, compile; the local plan.lock path."""
    from lrc.compiler.pipeline import compile_project

    root.mkdir(parents=True, exist_ok=True)
    for name in ("specs", "schemas"):
        shutil.copytree(REPO / name, root / name)
    (root / "specs" / "editions" / "local.yaml").write_text(
        local_edition_yaml(api_base, n_per_cell, max_concurrency, reference_models), encoding="utf-8")
    result = compile_project(root)
    if result.diagnostics.has_errors:
        raise CompileFailed("the local test project does not compile:\n"
                            + "\n".join(str(d) for d in result.diagnostics.sorted()))
    lock = root / "generated" / "local" / "plan.lock"
    assert lock.is_file(), f"compile wrote no {lock}"
    return lock


# -- running `lrc` and reading what it wrote ------------------------------------------------

LRC = [sys.executable, "-m", "lrc.compiler.cli"]
#: Variables the runtime reads that a test must control (never inherit them from the shell).
_CONTROLLED = ("LRC_MAX_ATTEMPTS", "LRC_RETRY_BASE_SECONDS", "LRC_RETRY_MAX_SECONDS", KEY_ENV)


def lrc_env(key: str | None = None, **extra: str) -> dict[str, str]:
    """The environment of an `lrc` subprocess: the test's key (or none) and fast retries."""
    env = {k: v for k, v in os.environ.items() if k not in _CONTROLLED}
    env.update({"LRC_RETRY_BASE_SECONDS": "0.01", "LRC_RETRY_MAX_SECONDS": "0.05", "PYTHONHASHSEED": "random"})
    if key is not None:
        env[KEY_ENV] = key
    env.update(extra)
    return env


def run_lrc(*args: str | Path, env: dict[str, str] | None = None, cwd: Path | None = None,
            timeout: float = 180) -> subprocess.CompletedProcess:
    """`lrc ARGS` as a real subprocess (the installed entry point's module)."""
    return subprocess.run([*LRC, *map(str, args)], env=env if env is not None else lrc_env(), cwd=cwd or REPO,
                          capture_output=True, text=True, timeout=timeout)


TRIAGE = _demo_pin("triage.ap-inbox")


def read_cells(out: Path, workload: str = TRIAGE) -> dict[tuple[str, str], dict[str, str]]:
    """The rows of cells.csv for one workload, keyed by (model, system)."""
    with open(out / "cells.csv", newline="", encoding="utf-8") as fh:
        return {(row["model"], row["system"]): row for row in csv.DictReader(fh) if row["workload"] == workload}


def tree(root: Path, pattern: str = "*") -> dict[str, bytes]:
    """Every file under `root` matching `pattern`: relative path -> bytes."""
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob(pattern)) if p.is_file()}


def journal_records(out: Path) -> list[dict]:
    return [json.loads(line) for line in (out / "journal.jsonl").read_text(encoding="utf-8").splitlines()]
