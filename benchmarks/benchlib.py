"""Shared helpers of the speed and robustness scripts in benchmarks/ (not a test module).

- `copy_project`: a scratch copy of the repository's project (specs/, schemas/, generated/),
  so a benchmark never writes into the repository;
- `derive_workloads`: N distinct workload specs derived from triage.ap-inbox, each with its own
  prompt files and output schema (used by many_specs.py);
- `timed` / `median_of`: whole-process timing.
"""

from __future__ import annotations

import json
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Callable

REPO = Path(__file__).resolve().parent.parent
LRC = [sys.executable, "-m", "lrc.compiler.cli"]
PROJECT_DIRS = ("specs", "schemas", "generated")
CACHE_DIR = ".lrc-cache"
SOURCE_WORKLOAD = "triage.ap-inbox"


def copy_project(dest: Path, dirs: tuple[str, ...] = PROJECT_DIRS) -> Path:
    """Copy the repository's project folders into `dest` (created); return `dest`."""
    dest.mkdir(parents=True, exist_ok=True)
    for name in dirs:
        src = REPO / name
        if src.exists():
            shutil.copytree(src, dest / name, symlinks=True, ignore=shutil.ignore_patterns(CACHE_DIR))
    return dest


def timed(cmd: list[str], ok_codes: tuple[int, ...] = (0,), **kw) -> float:
    """Wall time of one whole process; raises if it exits with a code outside `ok_codes`."""
    start = time.perf_counter()
    res = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, **kw)
    elapsed = time.perf_counter() - start
    if res.returncode not in ok_codes:
        out = (res.stdout + res.stderr).decode("utf-8", "replace")
        raise RuntimeError(f"{' '.join(map(str, cmd))} exited {res.returncode}:\n{out[-3000:]}")
    return elapsed


def median_of(n: int, fn: Callable[[int], float]) -> tuple[float, list[float]]:
    samples = [fn(i) for i in range(n)]
    return statistics.median(samples), samples


def fmt_runs(samples: list[float], scale: float = 1.0, digits: int = 3) -> str:
    return ", ".join(f"{x * scale:.{digits}f}" for x in samples)


# -- derived workloads ----------------------------------------------------------------------

_VENDORS = ["Acme Tools", "Brightpaper", "Cobalt Freight", "Delta Office", "Evergreen Foods", "Fjord Metals",
            "Granite Labs", "Harbor Print", "Iris Software", "Juniper Energy", "Kestrel Media", "Lumen Glass"]
_TOPICS = ["maintenance", "freight", "office supplies", "catering", "licences", "consulting", "cleaning",
           "equipment rental", "printing", "travel", "utilities", "hosting"]
_MAILBOXES = ["ap", "payables", "invoices", "ap-eu", "ap-us", "vendor-desk"]


def _derived_yaml(text: str, n: int, wid: str) -> str:
    """The source workload.yaml with a new id and content that differs per `n`."""
    vendor = _VENDORS[n % len(_VENDORS)]
    topic = _TOPICS[(n // len(_VENDORS)) % len(_TOPICS)]
    mailbox = f"{_MAILBOXES[n % len(_MAILBOXES)]}{n}@bench-{n:04d}.example"
    out = text.replace(f"id: {SOURCE_WORKLOAD}\n", f"id: {wid}\n", 1)
    out = out.replace("title: AP inbox triage", f"title: AP inbox triage, benchmark variant {n} ({vendor})", 1)
    out = out.replace("Sort a batch of 20 emails", f"Sort a batch of 20 {topic} emails (variant {n})", 1)
    out = out.replace("ap@northwind-sample.example", mailbox)
    out = out.replace("AP-SAMPLE", f"AP-BENCH-{n:04d}")
    out = out.replace("SAMPLE-M0", f"B{n:04d}-M0")
    out = out.replace("billing@acme-tools.example", f"billing@{vendor.lower().replace(' ', '-')}.example")
    out = out.replace("INV-2026-0311", f"INV-2026-{n:04d}")
    out = out.replace("$1,240.00", f"${1000 + 7 * n:,}.{n % 100:02d}")
    out = out.replace("March maintenance", f"March {topic}")
    out = out.replace("PO 4500123", f"PO {4500000 + n}")
    out = out.replace("Sort 1,000 AP emails", f"Sort 1,000 AP emails (bench {n})")
    out = out.replace("including credit notes and corrected invoices sent to be booked.",
                      f"including credit notes and corrected invoices sent to be booked (e.g. {vendor}, {topic}).")
    assert out.count(wid) >= 1, "the source workload changed shape: update benchlib._derived_yaml"
    return out


def derive_workloads(project: Path, count: int, prefix: str = "bench.w") -> list[str]:
    """Write `count` workloads `bench.w0001`... into `project`/specs/workloads/, derived from
    triage.ap-inbox with their own prompts and output schema; return their ids."""
    src = REPO / "specs" / "workloads" / SOURCE_WORKLOAD
    yaml_text = (src / "workload.yaml").read_text(encoding="utf-8")
    schema = json.loads((src / "output.schema.json").read_text(encoding="utf-8"))
    prompts = {p.name: p.read_text(encoding="utf-8") for p in sorted((src / "prompts").iterdir()) if p.is_file()}
    ids = []
    for n in range(1, count + 1):
        wid = f"{prefix}{n:04d}"
        folder = project / "specs" / "workloads" / wid
        (folder / "prompts").mkdir(parents=True, exist_ok=True)
        (folder / "workload.yaml").write_text(_derived_yaml(yaml_text, n, wid), encoding="utf-8")
        s = json.loads(json.dumps(schema))
        s["$id"] = f"https://ledgerrate.dev/schemas/outputs/{wid}/v1.json"
        s["title"] = f"{wid} answer"
        s["description"] = f"One label for every email of the batch (benchmark variant {n})."
        s["properties"]["labels"]["maxItems"] = 20 + n % 17
        (folder / "output.schema.json").write_text(json.dumps(s, indent=2) + "\n", encoding="utf-8")
        vendor = _VENDORS[n % len(_VENDORS)]
        for name, body in prompts.items():
            extra = f"\n{{# bench variant {n} #}}Variant {n}: mail from {vendor} is common in this inbox.\n"
            (folder / "prompts" / name).write_text(body.rstrip("\n") + "\n" + extra, encoding="utf-8")
        ids.append(wid)
    return ids


# -- settling a scratch copy ----------------------------------------------------------------

CODE_GATE_CODES = {"LRC5101", "LRC5102", "LRC5103"}


def forget_code_versions(project: Path) -> int:
    """Drop the code components' entries from a scratch copy's ledger (and their snapshots),
    so the next compile records the running code afresh; return how many lines were dropped.

    Only for scratch copies: while runtime/ is being edited without bumps, the repository's
    ledger refuses the working tree's code (LRC5101) and a compile stops at the gate, which
    would measure (or fuzz) a pipeline that never reaches its last stages.
    """
    ledger = project / "generated" / "ledger.jsonl"
    if not ledger.exists():
        return 0
    kept, dropped = [], 0
    for line in ledger.read_text(encoding="utf-8").splitlines(keepends=True):
        try:
            is_code = json.loads(line).get("kind") == "code"
        except ValueError:
            is_code = False
        if is_code:
            dropped += 1
        else:
            kept.append(line)
    ledger.write_text("".join(kept), encoding="utf-8")
    shutil.rmtree(project / "generated" / "ledger" / "code", ignore_errors=True)
    return dropped


def settle(project: Path) -> str | None:
    """Compile a scratch copy once so it is up to date; if only the code gate refuses it
    (runtime/ edited without bumps), forget the code versions and compile again.
    Returns a note when that was needed; raises if the copy does not compile."""
    cmd = [*LRC, "compile", "--format", "json", "--project", str(project)]
    res = subprocess.run(cmd, capture_output=True, text=True)
    if res.returncode == 0:
        return None
    try:
        diags = json.loads(res.stdout)["diagnostics"]
    except (ValueError, KeyError):
        raise RuntimeError(f"lrc compile of the scratch copy failed (exit {res.returncode}):\n{(res.stdout + res.stderr)[-3000:]}")
    errors = {d["code"] for d in diags if d["severity"] == "error"}
    if not errors or not errors <= CODE_GATE_CODES:
        shown = "\n".join(f"  {d['path']}:{d['line']}: {d['code']} {d['summary']}" for d in diags if d["severity"] == "error")
        raise RuntimeError(f"the repository's project does not compile (exit {res.returncode}):\n{shown[:3000]}")
    dropped = forget_code_versions(project)
    res = subprocess.run(cmd, capture_output=True, text=True)
    if res.returncode != 0:
        raise RuntimeError(f"lrc compile still fails after forgetting code versions:\n{(res.stdout + res.stderr)[-3000:]}")
    return (f"note: runtime/ has code changes without version bumps ({', '.join(sorted(errors))}); the scratch copy's ledger "
            f"forgot its {dropped} code entries so compiles reach every stage (the repository is untouched)")
