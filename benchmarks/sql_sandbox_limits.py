#!/usr/bin/env python3
"""Prints what the SQL sandbox's limits hold to under hostile queries (figures, not assertions).

    .venv/bin/python benchmarks/sql_sandbox_limits.py [--seconds 10]

For each memory-hostile query (sorts, DISTINCT, GROUP BY and UNION over 64 KiB strings:
about 1.3 GB of rows if nothing stopped them): the outcome, the wall time and the worker's
peak resident memory (a fresh pool per query, so each peak is that query's). For each
time-hostile query (LIKE / GLOB / instr over a long string, where one VM step takes longer
than the whole limit): the outcome and the wall time against the limit. Then the cost of
the worker hop for an ordinary query.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

import lrc.runtime.workloads.financedb as financedb  # noqa: E402
from lrc.runtime.checks import sqlsandbox  # noqa: E402
from lrc.runtime.checks.sqlsandbox import SqlSandbox  # noqa: E402
from test_sandbox import MEMORY_HOSTILE, TIME_HOSTILE  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--seconds", type=float, default=sqlsandbox.DEFAULT_SECONDS)
    args = ap.parse_args()
    db = financedb.database("sandbox-limits", "primary", 3, 60)
    print(f"SQL sandbox limits: RLIMIT_AS headroom {sqlsandbox.MEMORY_HEADROOM // 2**20} MiB, "
          f"wall limit {args.seconds:g} s + {sqlsandbox.KILL_SLACK:g} s kill slack, pool of {sqlsandbox.POOL_SIZE}\n")
    worst_peak = worst_wall = 0.0
    for n, sql in enumerate(MEMORY_HOSTILE, 1):
        sqlsandbox.pool().shutdown()
        sqlsandbox._POOL = None
        with SqlSandbox(db, seconds=args.seconds) as box:
            start = time.monotonic()
            res = box.query(sql)
            wall = time.monotonic() - start
        peak = sqlsandbox.pool().peak_rss_kb / 1024
        worst_peak = max(worst_peak, peak)
        print(f"memory #{n}: {res.kind or 'ok':6} {wall:6.2f} s  peak RSS {peak:6.1f} MiB  {(res.error or '')[:60]}")
    for n, sql in enumerate(TIME_HOSTILE, 1):
        with SqlSandbox(db, seconds=args.seconds) as box:
            start = time.monotonic()
            res = box.query(sql)
            wall = time.monotonic() - start
        worst_wall = max(worst_wall, wall)
        print(f"time   #{n}: {res.kind or 'ok':6} {wall:6.2f} s  (limit {args.seconds:g} s)  {(res.error or '')[:60]}")
    with SqlSandbox(db) as box:
        box.query("SELECT 1")
        samples = []
        for _ in range(50):
            start = time.perf_counter()
            box.query("SELECT vendor_id, SUM(amount) FROM ap_bills GROUP BY 1 ORDER BY 1")
            samples.append(time.perf_counter() - start)
    print(f"\nworst peak RSS {worst_peak:.1f} MiB; worst wall {worst_wall:.2f} s at a {args.seconds:g} s limit; "
          f"ordinary query through a warm worker {statistics.median(samples) * 1000:.2f} ms (median of 50)")


if __name__ == "__main__":
    main()
