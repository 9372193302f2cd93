"""Export and import time of a 1,000-judgment review workbook (issue 12 closing figure).

Two shapes, 1,000 judgment rows each, in a run folder built like tests/test_review_workbook.py's
(the demo lock with the hybrid workloads added, synthetic run + judge records):
- criteria rubric (variance-commentary): 1,000 judged runs (one model), spot-check rate 1,
  one row per run, each output ~2,000 characters;
- facts rubric (board-brief): 50 judged runs x 20 facts, rate 1.
`export` = sample + build + write the xlsx; `import` = read + tamper check + parse grades +
validate + append the adjudications (group commit) + the per-cell status. Filling the
workbook (openpyxl, as a reviewer's Excel would save it) is not timed.

    .venv/bin/python benchmarks/review_workbook.py [--repeat 3]
"""

from __future__ import annotations

import argparse
import io
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "tests"))

import review_fixtures as fx  # noqa: E402
from lrc.runtime.journal import Journal  # noqa: E402
from lrc.runtime.review import importer, sample, workbook  # noqa: E402
from lrc.runtime.review.status import review_status  # noqa: E402

SEED = "ledgerrate-demo-2026-11"


def _fill(data: bytes, rows: dict[str, sample.Row]) -> bytes:
    from openpyxl import load_workbook

    wb = load_workbook(io.BytesIO(data))
    for ws in wb.worksheets:
        if ws.title in (workbook.META_SHEET, workbook.INFO_SHEET):
            continue
        facts = ws.title.startswith("board-brief")
        for r in range(workbook.FIRST_ROW, ws.max_row + 1):
            row = rows[ws.cell(row=r, column=1).value]
            if facts:
                ws.cell(row=r, column=7, value="yes" if int(row.fact_id[1:]) % 3 else "no")
            else:
                ws.cell(row=r, column=7, value=4)
                ws.cell(row=r, column=8, value=5)
    buf = io.BytesIO()
    wb.save(buf)
    return buf.getvalue()


def once(shape: str) -> tuple[int, float, float, int]:
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        lock = fx.hybrid_lock(brief=(shape == "facts"), rate="1")
        if shape == "facts":
            fx.build_folder(folder, lock, items=0, models=["lrc/baseline"], brief_items=50)
        else:
            fx.build_folder(folder, lock, items=1000, models=["lrc/baseline"], brief_items=0, long_output=1800)
        plan = lock["plan"]
        start = time.perf_counter()
        journal = Journal(folder / "journal.jsonl", lock["root_digest"], plan["edition"]["ref"], readonly=True)
        spot = sample.spot_check(plan, journal, SEED)
        data = workbook.write(workbook.build(plan, journal, spot))
        (folder / "review.xlsx").write_bytes(data)
        exported = time.perf_counter() - start
        filled = _fill(data, {r.row_id: r for r in spot.rows})
        start = time.perf_counter()
        journal = Journal(folder / "journal.jsonl", lock["root_digest"], plan["edition"]["ref"])
        result = importer.import_workbook(plan, journal, SEED, filled)
        journal.close()
        review_status(plan, journal, SEED)
        imported = time.perf_counter() - start
        assert result.appended == len(spot.runs), result
        return len(spot.rows), exported, imported, len(data)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    for shape in ("criteria", "facts"):
        results = [once(shape) for _ in range(args.repeat)]
        rows, size = results[0][0], results[0][3]
        ex = statistics.median(r[1] for r in results)
        im = statistics.median(r[2] for r in results)
        print(f"{shape:8s} rubric: {rows} judgments, workbook {size / 1024:.0f} KiB: export {ex:.2f} s, import {im:.2f} s "
              f"(median of {args.repeat})")


if __name__ == "__main__":
    main()
