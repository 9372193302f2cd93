#!/usr/bin/env python3
"""Prints the figures of the extract.invoice and reconcile.ledger workloads (in-process timers, median of N).

    .venv/bin/python benchmarks/workloads_extract_reconcile.py [--runs 5] [--seed canary-0]

- generating 15 invoices (reportlab PDF + pypdf text extraction for each);
- generating one month of reconcile.ledger (200 bank transactions, GL extract, 12 planted
  discrepancies), and the 15 months of an edition;
- grading 15 items of each through the runtime's grading path (`lrc.runtime.grading.grade`:
  output contract, then the workload's validator), once with the gold answers and once
  with the baseline's answers (which fail on some items, so the failure path is timed too).
Figures, not assertions: speed is tracked here, not in timed tests.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from pathlib import Path
from typing import Any, Callable

from ruamel.yaml import YAML

from lrc.runtime import grading as runtime_grading
from lrc.runtime.lock.templating import render
from lrc.runtime.workloads.extract_invoice import generator as inv_gen
from lrc.runtime.workloads.extract_invoice import grading as inv_grading
from lrc.runtime.workloads.extract_invoice import reference as inv_ref
from lrc.runtime.workloads.reconcile_ledger import generator as rec_gen
from lrc.runtime.workloads.reconcile_ledger import grading as rec_grading
from lrc.runtime.workloads.reconcile_ledger import reference as rec_ref

REPO = Path(__file__).resolve().parent.parent
N = 15


def median_of(n: int, fn: Callable[[], Any]) -> tuple[float, list[float]]:
    samples = []
    for _ in range(n):
        start = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - start)
    return statistics.median(samples), samples


def load(folder: str) -> tuple[dict[str, Any], dict[str, Any], Path]:
    spec_dir = REPO / "specs" / "workloads" / folder
    spec = YAML(typ="safe", pure=True).load((spec_dir / "workload.yaml").read_text(encoding="utf-8"))
    schema = json.loads((spec_dir / "output.schema.json").read_text(encoding="utf-8"))
    return spec, schema, spec_dir


def prompt(spec: dict[str, Any], spec_dir: Path, item: Any) -> list[dict[str, Any]]:
    prompts = spec["systems"]["single-shot"]["prompts"]
    ctx = {"task": spec["task"], "item": item.context}
    return [{"role": role, "content": render((spec_dir / prompts[role]).read_text(encoding="utf-8"), ctx)} for role in ("system", "user")]


def grader(spec: dict[str, Any], schema: dict[str, Any], module: Any) -> Callable[[Any, Any], dict[str, Any]]:
    workload = {"spec": {"grading": spec["grading"], "output": {"schema": schema}}}
    modules = {spec["grading"]["checks"][0]["check"]: module}

    def grade(answer_text: str, item: Any) -> dict[str, Any]:
        run = {"outcome": "answered", "steps": 1, "answer_text": answer_text, "submitted": False}
        return runtime_grading.grade(workload, run, item.answer_key, modules, item)
    return grade


def fmt(seconds: float) -> str:
    return f"{seconds * 1000:8.1f} ms"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--seed", default="canary-0")
    args = ap.parse_args()
    n, seed = args.runs, args.seed

    inv_spec, inv_schema, inv_dir = load("extract.invoice")
    rec_spec, rec_schema, rec_dir = load("reconcile.ledger")
    rec_params = rec_spec["dataset"]["params"]

    gen_inv, gen_inv_all = median_of(n, lambda: [inv_gen.generate(seed, i, {}) for i in range(N)])
    gen_month, gen_month_all = median_of(n, lambda: rec_gen.generate(seed, 0, rec_params))
    gen_months, _ = median_of(n, lambda: [rec_gen.generate(seed, i, rec_params) for i in range(N)])

    invoices = [inv_gen.generate(seed, i, {}) for i in range(N)]
    months = [rec_gen.generate(seed, i, rec_params) for i in range(N)]
    inv_gold = [json.dumps(it.answer_key["fields"]) for it in invoices]
    rec_gold = [json.dumps({"discrepancies": [{"type": d["type"], "refs": d["bank_refs"] + d["ledger_refs"], "amount": d["amount"]}
                                              for d in it.answer_key["discrepancies"]]}) for it in months]
    inv_base = [inv_ref.baseline(prompt(inv_spec, inv_dir, it), None).content for it in invoices]
    rec_base = [rec_ref.baseline(prompt(rec_spec, rec_dir, it), None).content for it in months]
    g_inv, g_rec = grader(inv_spec, inv_schema, inv_grading), grader(rec_spec, rec_schema, rec_grading)

    verdicts = {
        "extract gold": [g_inv(a, it)["verdict"] for a, it in zip(inv_gold, invoices)],
        "extract baseline": [g_inv(a, it)["verdict"] for a, it in zip(inv_base, invoices)],
        "reconcile gold": [g_rec(a, it)["verdict"] for a, it in zip(rec_gold, months)],
        "reconcile baseline": [g_rec(a, it)["verdict"] for a, it in zip(rec_base, months)],
    }
    grade_inv_gold, _ = median_of(n, lambda: [g_inv(a, it) for a, it in zip(inv_gold, invoices)])
    grade_inv_base, _ = median_of(n, lambda: [g_inv(a, it) for a, it in zip(inv_base, invoices)])
    grade_rec_gold, _ = median_of(n, lambda: [g_rec(a, it) for a, it in zip(rec_gold, months)])
    grade_rec_base, _ = median_of(n, lambda: [g_rec(a, it) for a, it in zip(rec_base, months)])

    pages = sum(it.context["page_count"] for it in invoices)
    pdf_bytes = sum(len(it.files["invoice.pdf"]) for it in invoices)
    print(f"extract.invoice / reconcile.ledger figures (seed {seed!r}, median of {n} in-process runs)")
    print(f"  generate 15 invoices          {fmt(gen_inv)}   ({pages} pages, {pdf_bytes / 1024:.0f} KiB of PDF; runs {', '.join(fmt(s).strip() for s in gen_inv_all)})")
    print(f"  generate one month            {fmt(gen_month)}   (200 bank transactions; runs {', '.join(fmt(s).strip() for s in gen_month_all)})")
    print(f"  generate 15 months            {fmt(gen_months)}")
    print(f"  grade 15 invoices, gold       {fmt(grade_inv_gold)}")
    print(f"  grade 15 invoices, baseline   {fmt(grade_inv_base)}")
    print(f"  grade 15 months, gold         {fmt(grade_rec_gold)}")
    print(f"  grade 15 months, baseline     {fmt(grade_rec_base)}")
    for name, v in verdicts.items():
        print(f"  verdicts {name:<20} {v.count('pass')}/{len(v)} pass")


if __name__ == "__main__":
    main()
