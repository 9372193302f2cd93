#!/usr/bin/env python3
"""Prints the figures of the two database workloads (median of N in-process runs).

    .venv/bin/python benchmarks/workloads_sql.py [--runs 5] [--seed canary-0]

- the finance database: generation (books in Python, then SQLite in memory), serialized
  size, content-digest time, table sizes;
- item generation of an edition of 15 items, for query.nl2sql.v2 and execute.month-end.v2;
- grading of 15 items of each with the oracle's answers (what `lrc execute` spends after
  the runs), and with the baseline's;
- the SQL sandbox: opening one (deserializing a private copy), a typical query, and how
  long a runaway recursive CTE takes to be stopped.
Figures, not assertions: speed is tracked here, not in timed tests.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from typing import Any, Callable

import lrc.runtime.workloads.financedb as financedb
from lrc.runtime.checks.results import blocking_failures
from lrc.runtime.checks.sqlsandbox import SqlSandbox
from lrc.runtime.workloads.execute_month_end import generator as me_generator
from lrc.runtime.workloads.execute_month_end import grading as me_grading
from lrc.runtime.workloads.execute_month_end.tools import Toolbox as MeToolbox
from lrc.runtime.workloads.query_nl2sql import generator as q_generator
from lrc.runtime.workloads.query_nl2sql import grading as q_grading
from lrc.runtime.workloads.query_nl2sql import reference as q_reference


def median_of(n: int, fn: Callable[[], Any]) -> tuple[float, Any]:
    samples, value = [], None
    for _ in range(n):
        start = time.perf_counter()
        value = fn()
        samples.append(time.perf_counter() - start)
    return statistics.median(samples), value


def ms(seconds: float) -> str:
    return f"{seconds * 1000:8.1f} ms"


def month_end_answer(item) -> dict[str, Any]:
    box = MeToolbox(item)
    for e in item.answer_key["entries"]:
        box.call("post_journal_entry", {"date": e["date"], "memo": e["memo"], "lines": e["lines"]})
    return box.call("submit_close", {"summary": "benchmark"}).answer


def month_end_checks(answer, item) -> bool:
    results = []
    for name, fn in me_grading.VALIDATORS.items():
        params = {"tolerance": "0.01"} if name == "entries-match" else {}
        results += fn(answer, item.answer_key, params, item) if name == "trial-balance" else fn(answer, item.answer_key, params)
    return not blocking_failures(results)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--seed", default="canary-0")
    args = ap.parse_args()
    n, seed = args.runs, args.seed
    print(f"query.nl2sql.v2 / execute.month-end.v2 figures (median of {n}, seed {seed!r})\n")

    # -- the database ----------------------------------------------------------------------
    t_books, books = median_of(n, lambda: financedb.generate(f"bench/{seed}"))
    t_sqlite, data = median_of(n, lambda: financedb.to_sqlite(books))
    t_digest, digest = median_of(n, lambda: financedb.content_digest(data))
    counts = financedb.table_counts(data)
    print("finance database (one year, 12 periods)")
    print(f"  books (Python objects)   {ms(t_books)}")
    print(f"  SQLite in memory + bytes {ms(t_sqlite)}")
    print(f"  generation total         {ms(t_books + t_sqlite)}")
    print(f"  serialized size          {len(data):>8,} bytes ({len(data) / 1024 / 1024:.2f} MiB)")
    print(f"  content digest           {ms(t_digest)}   {digest}")
    print(f"  rows                     {sum(counts.values()):,} in {len(counts)} tables: "
          + ", ".join(f"{t} {c:,}" for t, c in counts.items()))
    variant = financedb.database(f"bench/{seed}", "variant-1", 12, q_generator.VARIANT_VOLUME)
    print(f"  variant size             {len(variant):>8,} bytes (volume {q_generator.VARIANT_VOLUME}%)\n")

    # -- items -----------------------------------------------------------------------------
    def nl2sql_items():
        financedb.database.cache_clear()
        q_generator.edition.cache_clear()
        return [q_generator.generate(seed, i, {}) for i in range(15)]

    t_q_items, q_items = median_of(n, nl2sql_items)
    t_me_items, me_items = median_of(n, lambda: [me_generator.generate(seed, i, {}) for i in range(15)])
    q_files = sum(len(d) for i in q_items for d in i.files.values())
    me_files = sum(len(d) for i in me_items for d in i.files.values())
    print("item generation (15 items)")
    print(f"  query.nl2sql.v2          {ms(t_q_items)}   (3 databases shared by the edition; {q_files / 1e6:.1f} MB of item files)")
    print(f"  execute.month-end.v2     {ms(t_me_items)}   (one database per item; {me_files / 1e6:.1f} MB of item files)\n")

    # -- grading ---------------------------------------------------------------------------
    params = {"max_rows": 10000}
    oracle_q = [{"sql": i.answer_key["reference_sql"]} for i in q_items]
    baseline_q = [{"sql": q_reference.baseline_sql(i.context["question"], i.context["columns"])} for i in q_items]

    def grade_q(answers):
        return sum(not blocking_failures(q_grading.execution_match(a, i.answer_key, params, i)) for a, i in zip(answers, q_items))

    t_q_oracle, q_pass = median_of(n, lambda: grade_q(oracle_q))
    t_q_base, q_base = median_of(n, lambda: grade_q(baseline_q))
    me_answers = [month_end_answer(i) for i in me_items]
    t_me, me_pass = median_of(n, lambda: sum(month_end_checks(a, i) for a, i in zip(me_answers, me_items)))
    print("grading (15 items, all validators; in-process)")
    print(f"  query.nl2sql.v2 oracle   {ms(t_q_oracle)}   {q_pass}/15 pass (each answer runs on 3 databases)")
    print(f"  query.nl2sql.v2 baseline {ms(t_q_base)}   {q_base}/15 pass")
    print(f"  execute.month-end.v2     {ms(t_me)}   {me_pass}/15 pass (oracle entries)\n")

    # -- sandbox ---------------------------------------------------------------------------
    t_open, box = median_of(n, lambda: SqlSandbox(data))
    t_query, _ = median_of(n, lambda: box.query("SELECT v.category, ROUND(SUM(p.amount), 2) FROM ap_payments p "
                                                 "JOIN vendors v USING (vendor_id) GROUP BY 1"))
    t_runaway, res = median_of(n, lambda: box.query("WITH RECURSIVE c(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM c) "
                                                    "SELECT COUNT(*) FROM c"))
    t_huge, huge = median_of(n, lambda: box.query("SELECT * FROM gl_lines a, gl_lines b"))
    print("SQL sandbox")
    print(f"  open (private copy)      {ms(t_open)}")
    print(f"  join + group query       {ms(t_query)}")
    print(f"  runaway CTE stopped      {ms(t_runaway)}   ({res.kind}: {json.dumps(res.error)[:60]}...)")
    print(f"  cross join, row cap      {ms(t_huge)}   ({len(huge.rows)} rows, truncated={huge.truncated})")


if __name__ == "__main__":
    main()
