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
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Callable, Sequence

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "tests"))
from support import pinned  # noqa: E402

TRIAGE = pinned("triage.ap-inbox")

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


PROFILE = "run-profile.yaml"
"""The run profile `build_project` writes beside specs/: how the stub model is reached."""


def local_profile_yaml(api_base: str, max_concurrency: int = 4, model: str = STUB_MODEL) -> str:
    """A run profile that sends the stub model to `api_base`, with its key in KEY_ENV."""
    return (
        "# yaml-language-server: $schema=../schemas/run-profile.schema.json\n"
        "kind: run-profile\n"
        "models:\n"
        f"  {model}:\n"
        f"    api_base: {api_base}\n"
        f"    api_key_env: {KEY_ENV}\n"
        f"    max_concurrency: {max_concurrency}\n"
    )


def profile_of(lock: Path) -> Path:
    """The run profile of the project `build_project` made for `lock`."""
    return Path(lock).resolve().parents[2] / PROFILE


def local_edition_yaml(api_base: str | None = None, n_per_cell: int = 15, max_concurrency: int | None = None,
                       reference_models: Sequence[str] = ("lrc/baseline",), edition_id: str = "local",
                       systems: Sequence[str] = ("single-shot", "agentic"), stub_sampling: str = "{temperature: 0}") -> str:
    """The local edition. `api_base` and `max_concurrency` are accepted for old callers and
    ignored: how the model is reached is a run profile's (`local_profile_yaml`), not the edition's.
    `stub_sampling`: the stub model's locked sampling (flow YAML)."""
    models = [
        f"  - id: {STUB_MODEL}\n"
        f"    role: candidate\n"
        f"    sampling: {stub_sampling}\n"
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
        f"standard: {pinned('ledgerrate')}\n"
        f"analysis: {pinned('lrc.analysis')}\n"
        f"workloads:\n  - {TRIAGE}\n"
        "systems:\n" + "".join(f"  - {pinned(s)}\n" for s in systems) +
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
                  reference_models: Sequence[str] = ("lrc/baseline",), edition_extra: str = "",
                  systems: Sequence[str] = ("single-shot", "agentic"), stub_sampling: str = "{temperature: 0}") -> Path:
    """Copy specs/ and schemas/ into `root`, add the local edition, compile; the local plan.lock
    path. The stub model's endpoint, key variable and concurrency go to `root/run-profile.yaml`
    (`profile_of(lock)`), which `run_lrc("execute", lock, ...)` passes unless told otherwise.
    `edition_extra`: YAML appended to the local edition (e.g. a `tasks:` block); `systems`: the
    ids of the systems it lists (each pinned at its current version); `stub_sampling` the stub
    model's sampling (e.g. with a `max_tokens`, which `--budget` needs)."""
    from lrc.compiler.pipeline import compile_project

    root.mkdir(parents=True, exist_ok=True)
    for name in ("specs", "schemas"):
        shutil.copytree(REPO / name, root / name)
    standard = root / "specs" / "standard" / "ledgerrate.yaml"
    text = standard.read_text(encoding="utf-8")
    found = re.search(r"(?m)^  n_per_cell: (\d+)", text)
    if found and n_per_cell < int(found.group(1)):
        # A small test edition is below the standard's n (LRC6110): this throw-away project
        # (a fresh ledger, never the repository's) states its own, smaller n.
        standard.write_text(text[:found.start(1)] + str(n_per_cell) + text[found.end(1):], encoding="utf-8")
    (root / "specs" / "editions" / "local.yaml").write_text(
        local_edition_yaml(None, n_per_cell, None, reference_models, systems=systems, stub_sampling=stub_sampling) + edition_extra,
        encoding="utf-8")
    (root / PROFILE).write_text(local_profile_yaml(api_base, max_concurrency), encoding="utf-8")
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


def with_profile(args: Sequence[str | Path]) -> list[str]:
    """`execute LOCK ...` of a project `build_project` made gets that project's run profile
    (the stub's endpoint and key variable), as an operator would pass it, unless the command
    already names a profile or says `--no-profile` (this helper's own marker, removed here)."""
    args = [str(a) for a in args]
    if "--no-profile" in args:
        return [a for a in args if a != "--no-profile"]
    if len(args) >= 2 and args[0] == "execute" and "--profile" not in args and profile_of(Path(args[1])).is_file():
        return [*args, "--profile", str(profile_of(Path(args[1])))]
    return args


def run_lrc(*args: str | Path, env: dict[str, str] | None = None, cwd: Path | None = None,
            timeout: float = 180) -> subprocess.CompletedProcess:
    """`lrc ARGS` as a separate process of the installed entry point's module: a fork of a warm
    interpreter where it can stand for a fresh one (`helpers.zygote`), else a subprocess; see
    `with_profile`."""
    from helpers import zygote

    return zygote.run([str(a) for a in with_profile(args)], env if env is not None else lrc_env(), cwd or REPO, timeout)




def read_cells(out: Path, workload: str = TRIAGE) -> dict[tuple[str, str], dict[str, str]]:
    """The rows of cells.csv for one workload, keyed by (model, system)."""
    with open(out / "cells.csv", newline="", encoding="utf-8") as fh:
        return {(row["model"], row["system"]): row for row in csv.DictReader(fh) if row["workload"] == workload}


def tree(root: Path, pattern: str = "*") -> dict[str, bytes]:
    """Every file under `root` matching `pattern`: relative path -> bytes."""
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob(pattern)) if p.is_file()}


def journal_records(out: Path) -> list[dict]:
    return [json.loads(line) for line in (out / "journal.jsonl").read_text(encoding="utf-8").splitlines()]


# -- a compiled copy of the repository's specs, for tests that edit specs and compile -----------

def compiled_copy(dest: Path, keep: Callable[[Path], bool] | None = None) -> Path:
    """`dest` made a copy of the repository's specs/ and schemas/ (only the editions `keep`
    accepts, when given), compiled once with the compile cache.

    Tests that edit specs and compile start each from a copy of this (`copy_project`), so a
    test's compile redoes only the specs it edits, as after an author's last `lrc compile`;
    with LRC_NO_CACHE or no usable key it is only slower. A cached compile's diagnostics equal a
    cold one's (tests/test_canonical_and_cache.py)."""
    from lrc.compiler.pipeline import compile_project

    for name in ("specs", "schemas"):
        shutil.copytree(REPO / name, dest / name)
    if keep is not None:
        for path in sorted((dest / "specs/editions").glob("*.yaml")):
            if not keep(path):
                path.unlink()
    result = compile_project(dest)
    assert not result.diagnostics.has_errors, [d.summary for d in result.diagnostics.sorted()]
    return dest


def demo_only(edition: Path) -> bool:
    """A `keep` for `compiled_copy`: the demo edition alone (enough for most author-path tests)."""
    return bool(re.search(r"(?m)^id:\s*demo\s*$", edition.read_text(encoding="utf-8")))


def copy_project(baseline: Path, dest: Path, generated: bool = True) -> Path:
    """A copy of a `compiled_copy` at `dest`. `generated=False` leaves out what the baseline's
    compile wrote (generated/, so the ledger holds only what the test compiles) and keeps the
    specs, schemas and the warm compile cache."""
    if generated:
        shutil.copytree(baseline, dest)
        return dest
    for name in ("specs", "schemas", ".lrc-cache"):
        if (baseline / name).is_dir():
            shutil.copytree(baseline / name, dest / name)
    return dest


def replace_in(path: Path, old: str, new: str, count: int = 1) -> None:
    """Replace the first `count` occurrences of `old` in the file at `path` (which must hold it)."""
    text = path.read_text(encoding="utf-8")
    assert old in text, f"{old!r} not in {path}"
    path.write_text(text.replace(old, new, count), encoding="utf-8")
