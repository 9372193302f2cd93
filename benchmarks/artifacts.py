"""How long the Office artifacts of the reliability suite take, and what the recalculation
engine must cover: generation of every task kind, validation per artifact (oracle, null,
baseline), one recalculation, and the functions the tasks' workbooks call.

    .venv/bin/python benchmarks/artifacts.py [--seeds N]

Prints the median per kind over N seeds; the first recalculation in a process also pays the
engine's import (numpy, scipy, schedula), printed apart. Every recalculation runs in the
limited worker (recalc_worker), so these are the figures grading pays.
"""

from __future__ import annotations

import argparse
import statistics
import time

from lrc.runtime.artifacts import model, recalc, safezip, tasks, validators
from lrc.runtime.artifacts.views import Submission


def coverage(made: list[tasks.Task]) -> dict[str, int]:
    """Function -> how many formula cells call it, over every workbook the tasks hand out or expect."""
    counts: dict[str, int] = {}
    for task in made:
        for data in (*task.inputs.values(), task.oracle, task.baseline):
            if not data.startswith(b"PK") or b"xl/workbook.xml" not in data:
                continue
            wb = safezip.open_workbook(data)[0]
            if wb is None:
                continue
            for ws in wb.worksheets:
                for row in ws.iter_rows():
                    for cell in row:
                        if cell.data_type == "f" and isinstance(cell.value, str):
                            for fn in recalc.functions_used(cell.value):
                                counts[fn] = counts.get(fn, 0) + 1
    return dict(sorted(counts.items()))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--seeds", type=int, default=3)
    args = parser.parse_args()
    first = model.three_statement("warm-up")
    t = time.perf_counter()
    recalc.recalculate(first, safezip.open_workbook(first)[0])
    print(f"first recalculation in a process (engine import included): {time.perf_counter() - t:.2f} s")
    data = model.three_statement("bench")
    wb = safezip.open_workbook(data)[0]
    spans = []
    for _ in range(args.seeds):
        t = time.perf_counter()
        recalc.recalculate(data, wb)
        spans.append(time.perf_counter() - t)
    print(f"recalculation of the 4-quarter model (limited worker): median {statistics.median(spans):.2f} s")
    print(f"\n{len(tasks.KINDS)} kinds, median of {args.seeds} seeds")
    print(f"{'kind':<30} {'generate':>9} {'oracle':>8} {'null':>8} {'baseline':>9}")
    made, total_gen = [], 0.0
    for kind in tasks.KINDS:
        gen: list[float] = []
        sinks: dict[str, list[float]] = {"oracle": [], "null": [], "baseline": []}
        for i in range(args.seeds):
            t = time.perf_counter()
            task = tasks.make(kind, f"bench-{i}")
            gen.append(time.perf_counter() - t)
            made.append(task)
            for name, out in (("oracle", task.oracle), ("null", task.inputs[task.output]), ("baseline", task.baseline)):
                t = time.perf_counter()
                validators.run_all(task.checks, Submission(task.inputs, {task.output: out}))
                sinks[name].append(time.perf_counter() - t)
        total_gen += sum(gen)
        print(f"{kind:<30} {statistics.median(gen):>8.2f}s " + " ".join(
            f"{statistics.median(sinks[n]):>{w}.2f}s" for n, w in (("oracle", 7), ("null", 7), ("baseline", 8))))
    print(f"generating every kind's inputs, oracle and baseline for {args.seeds} seed(s): {total_gen:.2f} s")
    known = recalc.supported_functions()
    print(f"\nrecalculation coverage ({recalc.ENGINE} {recalc.ENGINE_VERSION}, {len(known)} functions): "
          "functions the tasks' workbooks call")
    for fn, n in coverage(made).items():
        print(f"  {fn:<10} {n:>6} formula cells  {'supported' if fn in known else 'NOT SUPPORTED'}")
    print("  (besides functions: + - * / ^, comparisons, cross-sheet references, defined names; the model's cells are"
          " checked against the Decimal reference, the DCF's ^ by the WACC perturbation, in tests/test_artifacts_recalc.py)")


if __name__ == "__main__":
    main()
