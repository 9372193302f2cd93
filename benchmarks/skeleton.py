#!/usr/bin/env python3
"""Prints the walking skeleton's figures, measured as whole processes (median of N runs).

    .venv/bin/python benchmarks/skeleton.py [--runs 5]

- `lrc compile` of the demo edition (into a scratch copy, so the repository is untouched);
- `lrc execute` of the demo on the embedded reference models (fresh output folder each run);
- what the compile path imports, and how long those imports take (`python -X importtime`).
Figures, not assertions: speed is tracked here, not in timed tests.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
LRC = [sys.executable, "-m", "lrc.compiler.cli"]


def timed(cmd: list[str], **kw) -> float:
    start = time.perf_counter()
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, **kw)
    return time.perf_counter() - start


def median_of(n: int, fn) -> tuple[float, list[float]]:
    samples = [fn(i) for i in range(n)]
    return statistics.median(samples), samples


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=5)
    n = ap.parse_args().runs
    scratch = Path(tempfile.mkdtemp(prefix="lrc-bench-"))
    try:
        project = scratch / "project"
        for name in ("specs", "schemas", "generated"):
            shutil.copytree(REPO / name, project / name)

        def compile_once(i: int) -> float:
            shutil.rmtree(project / "generated" / "demo", ignore_errors=True)  # real work: rewrite the lock
            return timed([*LRC, "compile", "--project", str(project)])

        def execute_once(i: int) -> float:
            return timed([*LRC, "execute", str(REPO / "generated/demo/plan.lock"), "--out", str(scratch / f"out{i}"), "--no-progress"])

        imp_med, _ = median_of(n, lambda i: timed([sys.executable, "-c", "import lrc.compiler.cli, lrc.compiler.pipeline, lrc.compiler.bump"]))
        bare_med, _ = median_of(n, lambda i: timed([sys.executable, "-c", "pass"]))
        c_med, c_all = median_of(n, compile_once)
        e_med, e_all = median_of(n, execute_once)

        res = subprocess.run([sys.executable, "-X", "importtime", "-m", "lrc.compiler.cli", "compile", "--check", "--project", str(project)],
                             capture_output=True, text=True, env={**os.environ})
        rows = [line.split("|") for line in res.stderr.splitlines() if line.startswith("import time:") and "|" in line]
        mods = [(int(r[1].strip()), r[2].strip()) for r in rows if r[1].strip().isdigit()]
        top = {name: us for us, name in mods if not name.startswith(" ")}
        total_us = sum(us for us, name in mods if name == name.lstrip())
        tops = sorted(((us, name) for us, name in mods if name == name.lstrip()), reverse=True)[:8]
        heavy = sorted({name.strip().split(".")[0] for _, name in mods} & {"litellm", "polars", "openai", "tqdm", "numpy"})

        print(f"machine: {os.cpu_count()} cores, Python {sys.version.split()[0]}")
        print(f"lrc compile (demo edition, whole process; first run cold, then .lrc-cache warm): median {c_med:.3f} s"
              f"  (runs: {', '.join(f'{x:.3f}' for x in c_all)})")
        import json

        plan = json.loads((REPO / "generated/demo/plan.lock").read_text())["plan"]
        edition_systems = {plan["systems"][r]["spec"]["id"] for r in plan["edition"]["spec"]["systems"]}
        runs = sum(len(plan["models"]) * len(set(w["spec"]["systems"]) & edition_systems) * plan["edition"]["spec"]["n_per_cell"]
                   for w in plan["workloads"].values())
        print(f"lrc execute (demo, embedded models, {len(plan['workloads'])} workloads, {runs} runs): median {e_med:.3f} s"
              f"  (runs: {', '.join(f'{x:.3f}' for x in e_all)})")
        print(f"compile path imports: {imp_med - bare_med:.3f} s (median whole process {imp_med:.3f} s minus bare interpreter {bare_med:.3f} s)")
        print(f"  {len(mods)} modules imported; under -X importtime (which inflates) the top-level total is {total_us / 1e6:.3f} s")
        print("  heaviest top-level imports: " + ", ".join(f"{name.strip()} {us / 1e3:.0f} ms" for us, name in tops))
        print(f"  heavy runtime packages imported by compile: {heavy or 'none'}")
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
