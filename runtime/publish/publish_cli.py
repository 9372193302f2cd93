"""`lrc publish RUN_DIR --history DIR` and the trend step of `lrc report RUN_DIR --history DIR`.

Publishing rebuilds the folder's outputs from its journal exactly as `lrc report` does (never
trusting a summary.json or cells.parquet it finds: a folder may come from elsewhere), reads the
summary and cells so written and the verified lock of the folder (the edition's id, date and
workload versions), and appends the cells to the history (`history.append`). A held-out
edition's folder needs its seed (`--seed-file`), as its report does. A folder is published only when it is a whole measurement: a
partial folder (a subset, a limit, a shard, a stopped execute), one with runs still excluded
after infrastructure failures (a rerun resumes them) or one whose calibration failed is refused.

Exit codes (compiler/cli.py): 0 published, or the same rows already published (a no-op, said
so); 4 refused -- the run folder (not a finished measurement, no outputs, another plan, code
that differs from the lock), the history (a foreign or damaged file) or a second publication of
a plan with other rows; 6 the history folder, or the run folder's outputs, cannot be written
(a link in the run folder is never written through).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

EXIT_OK, EXIT_REFUSED, EXIT_UNUSABLE = 0, 4, 6


class NotPublishable(Exception):
    """The run folder is not a finished measurement of its plan (the message says why)."""


def _say(message: str) -> None:
    from lrc.runtime.redact import build_redactor

    print(build_redactor()(message), file=sys.stderr)


OUTPUT_LIMIT = 256 << 20
"""The largest summary.json or cells.parquet read back (a 100,000-run edition's are a few MB)."""


def _summary(run_dir: Path) -> dict[str, Any]:
    from lrc.runtime import filebytes

    path = run_dir / "summary.json"
    try:
        summary = json.loads(filebytes.read_whole(path, limit=OUTPUT_LIMIT).decode("utf-8"))
    except FileNotFoundError:
        raise NotPublishable(f"{run_dir} has no summary.json: nothing was reported yet; run `lrc report {run_dir}` first") from None
    except (OSError, ValueError, RecursionError) as exc:
        raise NotPublishable(f"cannot read {path}: {type(exc).__name__ if isinstance(exc, RecursionError) else exc}") from None
    if not isinstance(summary, dict):
        raise NotPublishable(f"{path} is not an lrc summary")
    return summary


def publishable_rows(run_dir: Path, plan_path: Path | None, seed_file: Path | None = None):
    """(history rows, edition) of a finished run folder, or NotPublishable / Refused / Unusable.

    The folder's outputs are first rebuilt from its journal (`execute.rebuild_outputs`), then
    read: a summary.json or cells.parquet is never taken on its word, since a folder may come
    from elsewhere and its outputs may be of another run, cut or edited."""
    import io

    import polars as pl

    from lrc.runtime import filebytes
    from lrc.runtime.execute import rebuild_outputs
    from lrc.runtime.publish import history as hist
    from lrc.runtime.review.cli import locate_plan, verified_lock

    if not run_dir.is_dir():
        raise NotPublishable(f"{run_dir} is not a folder; give the `lrc execute --out` folder")
    lock = verified_lock(run_dir, plan_path)
    rebuild_outputs(locate_plan(run_dir, plan_path), lock, run_dir, seed_file)
    summary = _summary(run_dir)
    if summary.get("plan_digest") != lock["root_digest"]:
        raise NotPublishable(f"{run_dir / 'summary.json'} is of plan {summary.get('plan_digest')}, the folder's lock is "
                             f"{lock['root_digest']}: run `lrc report {run_dir}` to rebuild its outputs")
    if summary.get("partial"):
        raise NotPublishable(f"{run_dir} is a partial run ({summary.get('runs_not_run')} of {summary.get('runs_planned')} planned "
                             f"runs not run: a subset, a limit, a shard or a stopped execute): partial folders never publish; "
                             f"complete it with `lrc execute` (or `lrc merge` the shards) first")
    if summary.get("runs_incomplete"):
        raise NotPublishable(f"{run_dir} has {summary['runs_incomplete']} run(s) excluded after infrastructure failures: "
                             f"rerun the same `lrc execute` to resume them before publishing")
    calibration = summary.get("calibration")
    if not isinstance(calibration, dict) or calibration.get("ok") is not True:
        raise NotPublishable(f"{run_dir}: calibration failed or was not checked (see summary.json \"calibration\"): "
                             f"a folder whose reference checks fail measures the harness, never the models")
    try:
        cells = pl.read_parquet(io.BytesIO(filebytes.read_whole(run_dir / "cells.parquet", limit=OUTPUT_LIMIT)))
    except Exception as exc:  # noqa: BLE001 - a missing or damaged table: rebuild it
        raise NotPublishable(f"cannot read {run_dir / 'cells.parquet'} ({type(exc).__name__}); run `lrc report {run_dir}` "
                             f"to rebuild it") from None
    edition = hist.edition_of(lock)
    try:
        return hist.rows(cells, edition), edition
    except hist.HistoryError as exc:
        raise NotPublishable(f"{run_dir}: {exc}") from None
    except (KeyError, TypeError, ValueError, pl.exceptions.PolarsError) as exc:  # a table lrc did not write
        raise NotPublishable(f"{run_dir / 'cells.parquet'} is not the table `lrc report` writes ({type(exc).__name__}: "
                             f"{str(exc)[:200]})") from None


def publish_cli(run_dir: Path, history_dir: Path, plan_path: Path | None = None, seed_file: Path | None = None) -> int:
    from lrc.runtime.execute import Refused, Unusable
    from lrc.runtime.publish import history as hist

    try:
        frame, edition = publishable_rows(run_dir, plan_path, seed_file)
        done = hist.append(history_dir, frame)
    except (Refused, NotPublishable, hist.HistoryError) as exc:
        _say(f"lrc publish: {exc}")
        return EXIT_REFUSED
    except Unusable as exc:
        _say(f"lrc publish: {exc}; nothing was added to the history")
        return EXIT_UNUSABLE
    except OSError as exc:
        _say(f"lrc publish: {exc.strerror or exc}; nothing was added to the history")
        return EXIT_UNUSABLE
    what = f"edition {edition.id} v{edition.version} ({edition.date}, plan {edition.plan_digest})"
    if done.written:
        print(f"published {what}: {done.rows} cells appended to {done.path}")
    else:
        print(f"already published: {done.path} holds exactly these {done.rows} cells of {what}; nothing written")
    print(f"draw the trend: lrc report {run_dir} --html --history {history_dir}")
    return EXIT_OK


def add_trend(lock: dict[str, Any], out: Path, history_dir: Path) -> int:
    """Insert the "Trend across editions" section into OUT/report.html (after `lrc report` wrote it)."""
    from lrc.runtime.publish import history as hist
    from lrc.runtime.publish import trend_page
    from lrc.runtime.report.html import PAGE

    try:
        history = hist.read(history_dir)
    except hist.HistoryError as exc:
        _say(f"lrc report: --history: {exc}")
        return EXIT_REFUSED
    page_path = out / PAGE
    try:
        page = page_path.read_text(encoding="utf-8")
        if trend_page.HEADING in page:
            raise ValueError("it already holds a trend section")
        page = trend_page.with_section(page, trend_page.section(lock["plan"], lock, history, history_dir))
        tmp = page_path.with_name(f".{PAGE}.trend.tmp")
        tmp.write_text(page, encoding="utf-8")
        tmp.replace(page_path)
    except ValueError as exc:
        _say(f"lrc report: cannot add the trend to {page_path}: {exc}")
        return EXIT_REFUSED
    except OSError as exc:
        _say(f"lrc report: cannot write {page_path}: {exc.strerror or exc}")
        return EXIT_UNUSABLE
    print(f"trend across editions: {page_path}#trend ({len(hist.editions(history))} edition(s) in {history_dir})")
    return EXIT_OK
