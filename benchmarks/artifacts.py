"""How long the Office artifacts of the reliability suite take: generation, one recalculation,
and one task's full validation (oracle and null), per task kind, on a few seeds.

    .venv/bin/python benchmarks/artifacts.py [--seeds N]

Prints the median per kind; the first recalculation in a process also pays the engine's import
(numpy, scipy, schedula), printed apart.
"""

from __future__ import annotations

import argparse
import statistics
import time

from lrc.runtime.artifacts import model, recalc, safezip, tasks, validators
from lrc.runtime.artifacts.views import Submission


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--seeds", type=int, default=5)
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
    print(f"recalculation of the 4-quarter model: median {statistics.median(spans):.2f} s")
    print(f"{'kind':<20} {'generate':>9} {'validate oracle':>16} {'validate null':>14}")
    for kind in tasks.KINDS:
        gen, ok, null = [], [], []
        for i in range(args.seeds):
            t = time.perf_counter()
            task = tasks.make(kind, f"bench-{i}")
            gen.append(time.perf_counter() - t)
            for out, sink in ((task.oracle, ok), (task.inputs[task.output], null)):
                t = time.perf_counter()
                validators.run_all(task.checks, Submission(task.inputs, {task.output: out}))
                sink.append(time.perf_counter() - t)
        print(f"{kind:<20} {statistics.median(gen):>8.2f}s {statistics.median(ok):>15.2f}s {statistics.median(null):>13.2f}s")


if __name__ == "__main__":
    main()
