"""A 30% 429/5xx storm against the calm wall: does infrastructure trouble cost seconds, not hours?

Runs the same plan twice through `lrc execute` (a subprocess, litellm's real client) against
the loopback OpenAI-compatible stub server (tests/helpers/stub_server.py) with a fixed
latency per request: once calm, once with `--rate` of all requests failing (half 429s, a
third of them with `Retry-After`; half 500/502/503 or a dropped connection). Prints both
walls and their ratio, and checks the results are identical (every evaluation, every cell
but its retry count). Goal: ratio <= 2.

Two walls are printed per run: the whole process (start-up, item generation and the report
included) and the span of the requests at the server (first request in to last answer out),
which is the part a storm can slow down.

    .venv/bin/python benchmarks/storm.py [--n 60] [--latency 0.2] [--rate 0.3] [--concurrency 8]

The defaults give 120 runs (60 items × single-shot and agentic), a few hundred requests.
The backoff uses lrc's default settings (the environment's LRC_* variables are dropped).
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "tests"))

from helpers.project import KEY_ENV, build_project, read_cells, run_lrc, tree  # noqa: E402
from helpers.stub_server import Fault, StubServer  # noqa: E402

KEY = "sk-lrc-bench-storm"


def storm_faults(rate: float, seed: int) -> list[Fault]:
    """`rate` of all requests fail, split over six kinds; each Fault's chance is conditional on
    the earlier ones not applying (they are tried in order)."""
    kinds = [("status", 429, "0.5"), ("status", 429, None), ("status", 429, None),
             ("status", 500, None), ("status", 502, None), ("status", 503, None)]
    share, left, faults = rate / len(kinds), 1.0, []
    for i, (kind, status, retry_after) in enumerate(kinds):
        faults.append(Fault(kind, status=status, retry_after=retry_after, chance=share / left, seed=seed + i))
        left -= share
    return faults


def env() -> dict[str, str]:
    out = {k: v for k, v in os.environ.items() if not k.startswith("LRC_")}
    out[KEY_ENV] = KEY
    return out


def run_once(server: StubServer, lock: Path, out: Path, faults: list[Fault], latency: float) -> dict:
    server.reset(faults=faults, delay=latency)
    started = time.perf_counter()
    res = run_lrc("execute", lock, "--out", out, env=env(), timeout=3600)
    wall = time.perf_counter() - started
    if res.returncode != 0:
        raise SystemExit(f"lrc execute exited {res.returncode}:\n{res.stderr[-3000:]}")
    records = server.snapshot()
    span = max(r.finished or r.started for r in records) - min(r.started for r in records)
    return {"wall": wall, "span": span, "requests": len(records), "failed": sum(1 for r in records if r.fault),
            "out": out}


def results(out: Path) -> tuple[dict, dict]:
    evaluations = tree(out / "runs", "evaluation.json")
    cells = {k: {c: v for c, v in row.items() if c != "infra_retries"} for k, row in read_cells(out).items()}
    return evaluations, cells


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=60, help="items per cell (runs = 2 × n)")
    ap.add_argument("--latency", type=float, default=0.2, help="seconds per request at the server")
    ap.add_argument("--rate", type=float, default=0.3, help="share of requests that fail")
    ap.add_argument("--concurrency", type=int, default=8, help="the model's max_concurrency")
    ap.add_argument("--seed", type=int, default=random.randrange(1 << 30), help="the storm's draw")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="lrc-storm-") as tmp, StubServer() as server:
        root = Path(tmp)
        lock = build_project(root / "project", server.api_base, n_per_cell=args.n, max_concurrency=args.concurrency,
                             reference_models=())
        calm = run_once(server, lock, root / "calm", [], args.latency)
        storm = run_once(server, lock, root / "storm", storm_faults(args.rate, args.seed), args.latency)
        same = results(calm["out"]) == results(storm["out"])
        retries = sum(int(row["infra_retries"]) for row in read_cells(storm["out"]).values())
    runs = 2 * args.n
    print(f"storm benchmark: {runs} runs, latency {args.latency}s, concurrency {args.concurrency}, "
          f"fault rate {args.rate:.0%} (seed {args.seed})")
    for name, r in (("calm", calm), ("storm", storm)):
        print(f"  {name:5}  wall {r['wall']:7.2f}s   request span {r['span']:7.2f}s   "
              f"requests {r['requests']:5}   failed {r['failed']:4}")
    print(f"  ratio storm/calm: wall {storm['wall'] / calm['wall']:.2f}x, request span {storm['span'] / calm['span']:.2f}x"
          f"   (goal <= 2x)")
    print(f"  retries counted in cells.csv: {retries}; results identical: {'yes' if same else 'NO'}")
    return 0 if same and retries == storm["failed"] else 1


if __name__ == "__main__":
    sys.exit(main())
