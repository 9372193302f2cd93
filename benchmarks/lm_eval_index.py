#!/usr/bin/env python3
"""Prints how long lm-evaluation-harness takes to index one task YAML on this machine.

    .venv/bin/python benchmarks/lm_eval_index.py [--count 1000] [--runs 3] [--python /tmp/lmeval-venv/bin/python]

lm-eval is NOT a dependency of this project: it lives in a separate virtualenv, made by hand:

    python3 -m venv /tmp/lmeval-venv && /tmp/lmeval-venv/bin/pip install lm-eval

(or point --python / $LMEVAL_PYTHON at another interpreter that has it). Without it this
script prints the research figure (≈ 1.16 ms per task YAML) as "not measured here".

Method: `lm_eval.tasks.TaskManager(include_path=DIR, include_defaults=False)` construction
time, timed inside a fresh process each run (the import of lm_eval is outside the timer),
for DIR holding N generated gsm8k-style task YAMLs and for an empty DIR; per YAML =
(median with N - median empty) / N. Also printed for reference: the default construction
(lm-eval's own ~N built-in YAMLs) divided by the number of YAML files it walks.
many_specs.py imports `measure()` and prints this figure beside lrc's.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

RESEARCH_MS = 1.16
DEFAULT_PYTHON = "/tmp/lmeval-venv/bin/python"

_TASK = """\
tag:
  - lrc_bench_{group}
task: lrc_bench_{n:04d}
dataset_path: lrc-bench/synthetic-{n:04d}
dataset_name: main
output_type: generate_until
training_split: train
fewshot_split: train
test_split: test
description: "Variant {n}: answer the arithmetic question about invoice {n}.\\n\\n"
doc_to_text: "Question {n}: {{{{question}}}}\\nAnswer:"
doc_to_target: "{{{{answer}}}}"
metric_list:
  - metric: exact_match
    aggregation: mean
    higher_is_better: true
    ignore_case: true
    ignore_punctuation: false
    regexes_to_ignore:
      - ","
      - "\\\\$"
      - "(?s).*#### "
generation_kwargs:
  until:
    - "Question {n}:"
    - "</s>"
  do_sample: false
  temperature: 0.0
repeats: 1
num_fewshot: {shots}
filter_list:
  - name: "strict-match"
    filter:
      - function: "regex"
        regex_pattern: "#### (\\\\-?[0-9\\\\.\\\\,]+)"
      - function: "take_first"
metadata:
  version: {version}.0
"""

_CHILD = r"""
import json, sys, time
from pathlib import Path
import lm_eval
from lm_eval.tasks import TaskManager
mode, path = sys.argv[1], sys.argv[2]
start = time.perf_counter()
if mode == "include":
    tm = TaskManager(include_path=path, include_defaults=False)
else:
    tm = TaskManager()
elapsed = time.perf_counter() - start
root = Path(path) if mode == "include" else Path(lm_eval.__file__).parent / "tasks"
files = sum(1 for _ in root.glob("**/*.yaml"))
print(json.dumps({"seconds": elapsed, "entries": len(tm.all_tasks), "subtasks": len(tm.all_subtasks),
                  "yaml_files": files, "version": getattr(lm_eval, "__version__", "?")}))
"""


def lm_eval_python(explicit: str | None = None) -> str | None:
    """An interpreter that can import lm_eval, or None."""
    for cand in (explicit, os.environ.get("LMEVAL_PYTHON"), DEFAULT_PYTHON):
        if cand and Path(cand).exists():
            ok = subprocess.run([cand, "-c", "import lm_eval.tasks"], capture_output=True).returncode == 0
            if ok:
                return cand
    return None


def write_tasks(folder: Path, count: int) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    for n in range(1, count + 1):
        (folder / f"lrc_bench_{n:04d}.yaml").write_text(
            _TASK.format(n=n, group=n % 10, shots=n % 6, version=1 + n % 3), encoding="utf-8")


def _child(python: str, mode: str, path: Path) -> dict:
    res = subprocess.run([python, "-c", _CHILD, mode, str(path)], capture_output=True, text=True)
    if res.returncode != 0:
        raise RuntimeError(f"lm-eval child failed:\n{res.stderr[-2000:]}")
    return json.loads(res.stdout.strip().splitlines()[-1])


def measure(count: int = 1000, runs: int = 3, python: str | None = None, builtin: bool = True) -> dict | None:
    """lm-eval's per-task-YAML index time in seconds (and details), or None without lm-eval."""
    py = lm_eval_python(python)
    if py is None:
        return None
    scratch = Path(tempfile.mkdtemp(prefix="lmeval-index-"))
    try:
        full, empty = scratch / "tasks", scratch / "empty"
        write_tasks(full, count)
        empty.mkdir()
        _child(py, "include", empty)  # warm the OS file cache and .pyc files once
        with_n = [_child(py, "include", full) for _ in range(runs)]
        without = [_child(py, "include", empty) for _ in range(runs)]
        if with_n[0]["subtasks"] != count:
            raise RuntimeError(f"lm-eval indexed {with_n[0]['subtasks']} tasks of {count} generated")
        med_n = statistics.median(r["seconds"] for r in with_n)
        med_0 = statistics.median(r["seconds"] for r in without)
        out = {"python": py, "version": with_n[0]["version"], "count": count, "runs": runs,
               "with_n": [r["seconds"] for r in with_n], "empty": [r["seconds"] for r in without],
               "per_yaml": (med_n - med_0) / count}
        if builtin:
            b = _child(py, "default", empty)
            out["builtin"] = {"seconds": b["seconds"], "yaml_files": b["yaml_files"], "entries": b["entries"],
                              "per_yaml": b["seconds"] / max(b["yaml_files"], 1)}
        return out
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def report(m: dict | None) -> list[str]:
    if m is None:
        return [f"lm-eval: not installed beside this run (no {DEFAULT_PYTHON}, no $LMEVAL_PYTHON); "
                f"research figure ≈ {RESEARCH_MS:.2f} ms per task YAML — not measured here"]
    lines = [f"lm-eval {m['version']} ({m['python']}): TaskManager(include_path=<{m['count']} task YAMLs>, include_defaults=False) "
             f"median {statistics.median(m['with_n']):.3f} s, empty dir {statistics.median(m['empty']):.4f} s "
             f"(runs: {', '.join(f'{x:.3f}' for x in m['with_n'])} / {', '.join(f'{x:.4f}' for x in m['empty'])})",
             f"lm-eval index time per task YAML: {m['per_yaml'] * 1e3:.3f} ms (measured here; research figure ≈ {RESEARCH_MS:.2f} ms)"]
    if "builtin" in m:
        b = m["builtin"]
        lines.append(f"  for reference, default TaskManager() over its built-in tasks: {b['seconds']:.2f} s for {b['yaml_files']} YAML files "
                     f"({b['entries']} index entries) = {b['per_yaml'] * 1e3:.3f} ms per YAML file (one run)")
    return lines


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--count", type=int, default=1000)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--python", help=f"an interpreter with lm-eval installed (default: $LMEVAL_PYTHON or {DEFAULT_PYTHON})")
    ap.add_argument("--no-builtin", action="store_true", help="skip the default TaskManager() reference figure")
    args = ap.parse_args()
    for line in report(measure(args.count, args.runs, args.python, builtin=not args.no_builtin)):
        print(line)


if __name__ == "__main__":
    main()
