"""`lrc regrade RUN_DIR --erratum ID --out NEW_DIR`: apply a published erratum to stored outputs.

Errata correct published results without paying for any run again (seed 001 §7). The compiled
erratum (generated/errata/<ID>.json, `lrc compile`; lrc.runtime.lock.erratum owns its format)
names the plan it corrects by its root digest. Regrading:

1. refuses a RUN_DIR of another plan, and a lock (`--plan`, default generated/<edition>/plan.lock)
   that is not that plan or fails verification -- with one allowance: a component the erratum
   regrades with (`regrade_with`) is the corrected code now installed, and must have exactly
   the fingerprint the compiled erratum recorded;
2. copies RUN_DIR's journal and items into NEW_DIR (RUN_DIR is never written) and writes
   NEW_DIR/erratum.json: every erratum applied (a regraded folder can be regraded again) and the
   cells of RUN_DIR as they were, the "old" side of the comparison;
3. rebuilds every output through the code path of `lrc report` (`execute._write_outputs`) with
   the corrections applied to the plan it is given: excluded items' runs leave their cells,
   corrected prices replace the locked ones, graders are the corrected code. No model adapter is
   constructed and nothing reaches the network: only journaled outputs are graded;
4. adds `regrade` to summary.json (per cell: old and new n, passes, pass rate, cost, CPO, changed)
   and the correction block to the rate card (lrc.runtime.report.errata_card).

`lrc report PLAN.lock --out NEW_DIR` sees erratum.json and rebuilds NEW_DIR the same way, byte for
byte. Exit codes: 0 done, 1 the erratum cannot be applied (unknown ID, an excluded item the folder
does not hold), 4 the folder, the lock or the code is refused (another plan, modified, not the
corrected code), 5 calibration failed after the corrections (as `lrc report`), 6 NEW_DIR unusable
(exists and is not empty, is RUN_DIR, cannot be written).
"""

from __future__ import annotations

import copy
import io
import json
import shutil
import sys
from pathlib import Path
from typing import Any

from lrc.runtime.lock import erratum as erratum_format

CELLS_LIMIT = 256 << 20
"""The largest cells.parquet or erratum.json read from a folder (a 100,000-run edition's are a few MB)."""

APPLIED_FORMAT = 1
APPLIED_FILE = "erratum.json"


class Problem(Exception):
    """The erratum cannot be applied to this folder (exit 1)."""


def _say(message: str) -> None:
    print(message, file=sys.stderr)


def find_erratum(ident: str, cwd: Path | None = None) -> dict[str, Any]:
    """The compiled erratum ID from generated/errata/ of the project above `cwd`."""
    import re

    if not re.fullmatch(r"E-[a-z0-9][a-z0-9-]*", ident or ""):
        raise Problem(f"{ident!r} is not an erratum id (E-<lowercase letters, digits, dashes>, e.g. E-demo-001)")
    start = (cwd or Path.cwd()).resolve()
    for folder in (start, *start.parents):
        path = folder / "generated" / "errata" / f"{ident}.json"
        if path.is_file():
            try:
                return erratum_format.loads(path.read_bytes())
            except erratum_format.ErratumError as exc:
                raise Problem(f"{path}: {exc}; run `lrc compile`") from exc
            except OSError as exc:
                raise Problem(f"cannot read {path}: {exc.strerror}") from exc
        if (folder / "specs").is_dir():
            known = sorted(p.stem for p in (folder / "generated" / "errata").glob("E-*.json"))
            raise Problem(f"no compiled erratum {ident} in {folder / 'generated' / 'errata'} "
                          f"({'compiled: ' + ', '.join(known) if known else 'none is compiled'}); write specs/errata/{ident}.yaml "
                          f"and run `lrc compile`")
    raise Problem(f"no lrc project (specs/, generated/errata/) at or above {start} to find erratum {ident} in")


def published_for(plan_digest: str, cwd: Path | None = None) -> list[dict[str, Any]]:
    """The compiled errata of the project above `cwd` that correct plan `plan_digest`, oldest first
    (by date, then id); unreadable ones are skipped (`lrc compile --check` reports them)."""
    start = (cwd or Path.cwd()).resolve()
    for folder in (start, *start.parents):
        if (folder / "specs").is_dir() or (folder / "generated" / "errata").is_dir():
            found = []
            for path in sorted((folder / "generated" / "errata").glob("E-*.json")):
                try:
                    art = erratum_format.loads(path.read_bytes())
                except (OSError, erratum_format.ErratumError):
                    continue
                if art["erratum"]["plan_digest"] == plan_digest:
                    found.append(art)
            return sorted(found, key=lambda a: (a["erratum"]["date"], a["erratum"]["id"]))
    return []


def say_published(plan_digest: str, out: Path) -> None:
    """After `lrc report` of an uncorrected folder: name the errata published for its plan, loudly.
    The folder's own card stays the record of what was measured; the corrected tables are `lrc regrade`'s."""
    for art in published_for(plan_digest):
        e = art["erratum"]
        _say(f"CORRECTED by erratum {e['id']}: {e['note']} ({e['date']}) -- these tables are superseded; the corrected ones: "
             f"`lrc regrade {out} --erratum {e['id']} --out NEW_DIR`")


def verified_lock(lock_path: Path, applied: list[dict[str, Any]]) -> dict[str, Any]:
    """The lock, checked like `lrc execute` checks it, except that each component an applied
    erratum regrades with replaces the locked version it names, at the recorded fingerprint."""
    from lrc.runtime.execute import Refused
    from lrc.runtime.lock import codeprint, factmemo
    from lrc.runtime.lock import format as lockformat
    from lrc.runtime.lock.templating import SETTINGS
    from lrc.runtime.verify import _code_problems

    try:
        lock = lockformat.loads(lock_path.read_bytes())
    except OSError as exc:
        raise Refused(f"cannot read {lock_path}: {exc.strerror}") from exc
    except lockformat.LockError as exc:
        raise Refused(f"{lock_path}: {exc}") from exc
    problems = lockformat.verify_digests(lock)
    if problems:
        raise Refused(f"{lock_path} refused: the lock was modified after compilation:\n  " + "\n  ".join(problems))
    for art in applied:
        if art["erratum"]["plan_digest"] != lock["root_digest"]:
            raise Refused(f"erratum {art['erratum']['id']} corrects plan {art['erratum']['plan_digest']}, but {lock_path} is plan "
                          f"{lock['root_digest']}: pass --plan with the published lock it corrects")
    if lock["lrc_version"] != lockformat.LRC_VERSION:
        raise Refused(f"{lock_path} was compiled by lrc {lock['lrc_version']}; this is lrc {lockformat.LRC_VERSION}")
    if lock["plan"].get("templating") != SETTINGS:
        raise Refused(f"{lock_path}: its prompt templating settings differ from this lrc's")
    expected = dict(lock["plan"]["code"])
    for art in applied:
        for ref, entry in sorted(art["code"].items()):
            expected.pop(entry["replaces"], None)
            expected[ref] = {"id": entry["id"], "module": entry["module"], "fingerprint": entry["fingerprint"], "files": entry["files"]}
    with factmemo.remembered():
        running = codeprint.discover()
        with codeprint.batch():
            problems = _code_problems({"code": expected}, running)
    if problems:
        raise Refused(f"{lock_path} refused for regrading (the locked code, with the errata's corrected components):\n  "
                      + "\n  ".join(problems))
    return lock


def corrected_plan(plan: dict[str, Any], applied: list[dict[str, Any]], before: list[dict[str, Any]]) -> dict[str, Any]:
    """A copy of `plan` with the errata's prices and corrected code modules; `errata` tells the
    card and the summary what was applied (never part of any digest: the lock is unchanged)."""
    out = copy.deepcopy(plan)
    for art in applied:
        for corr in art["erratum"]["corrections"]:
            if "price" in corr:
                model, block = corr["price"]["model"], corr["price"]["pricing"]
                out["edition"]["spec"]["pricing"][model] = dict(block)
                if model in out["models"]:
                    out["models"][model]["price"] = dict(block)
        for ref, entry in art["code"].items():
            if entry["replaces"] in out["code"]:
                out["code"][entry["replaces"]] = {**out["code"][entry["replaces"]], "module": entry["module"]}
    out["errata"] = {"applied": applied, "before": before}
    return out


def excluded_runs(runs: list, items: dict[str, list], applied: list[dict[str, Any]]) -> list:
    """`runs` without the excluded items' runs; an excluded item the plan's items lack is a Problem."""
    drop: set[tuple[str, str]] = set()
    for art in applied:
        for corr in art["erratum"]["corrections"]:
            if "exclude" in corr:
                w, item = corr["exclude"]["workload"], corr["exclude"]["item"]
                ids = [i.item_id for i in items.get(w, [])]
                if item not in ids:
                    raise Problem(f"erratum {art['erratum']['id']} excludes item {item} of {w}, which this run folder does not hold"
                                  + (f" (its items: {', '.join(ids)})" if ids else ""))
                drop.add((w, item))
    return [r for r in runs if (r.workload, r.item_id) not in drop]


def _cells_before(folder: Path) -> list[dict[str, Any]]:
    import polars as pl

    from lrc.runtime.execute import Refused
    from lrc.runtime.report.errata_card import cell_values

    from lrc.runtime import filebytes

    try:  # a regular file of a sane size only: never a FIFO (waited on) or a device
        frame = pl.read_parquet(io.BytesIO(filebytes.read_whole(folder / "cells.parquet", limit=CELLS_LIMIT)))
    except Exception as exc:  # noqa: BLE001 - any unreadable table refuses the folder
        raise Refused(f"{folder} has no readable cells.parquet (run `lrc report` on it first): {exc}") from exc
    return [{"workload": r["workload"], "model": r["model"], "system": r["system"], "values": cell_values(r)}
            for r in sorted(frame.iter_rows(named=True), key=lambda r: (r["workload"], r["model"], r["system"]))]


def _read_applied(folder: Path) -> dict[str, Any] | None:
    from lrc.runtime.execute import Refused

    from lrc.runtime import filebytes

    path = folder / APPLIED_FILE
    if not path.exists():
        return None
    try:
        record = json.loads(filebytes.read_whole(path, limit=CELLS_LIMIT).decode("utf-8"))
        if not isinstance(record, dict):
            raise ValueError("not an object")
        if record.get("format") != APPLIED_FORMAT:
            raise ValueError(f"format {record.get('format')!r}, this lrc reads {APPLIED_FORMAT}")
        for art in record["applied"]:
            again = erratum_format.loads(erratum_format.dumps(art))
            if again["digest"] != art["digest"]:
                raise ValueError("an applied erratum was modified")
        return record
    except erratum_format.ErratumError as exc:
        raise Refused(f"{path}: {exc}") from exc
    except (OSError, ValueError, KeyError, TypeError, RecursionError) as exc:
        raise Refused(f"{path} cannot be used: {type(exc).__name__ if isinstance(exc, RecursionError) else exc}") from exc


def _items(lock: dict[str, Any], seed_file: Path | None) -> tuple[str, dict[str, list]]:
    from lrc.runtime import execute
    from lrc.runtime import items as item_gen

    seed = execute.resolve_seed(lock["plan"], seed_file)
    try:
        return seed, item_gen.generate(lock["plan"], seed)
    except item_gen.ItemError as exc:
        raise execute.Refused(f"the plan's items cannot be generated: {exc}") from exc


def rebuild(lock: dict[str, Any], out: Path, record: dict[str, Any], seed_file: Path | None = None,
            generated: tuple[str, dict[str, list]] | None = None):
    """Every output of the regraded folder `out` from its journal and erratum.json (no model call)."""
    from lrc.runtime import execute
    from lrc.runtime.journal import Journal, JournalError
    from lrc.runtime.report import outputs
    from lrc.runtime.report.errata_card import comparison

    plan = lock["plan"]
    seed, items = generated if generated is not None else _items(lock, seed_file)
    applied = record["applied"]
    runs = excluded_runs(execute.plan_runs(plan, items), items, applied)
    fixed = corrected_plan(plan, applied, record["before"])
    try:
        journal = Journal(out / "journal.jsonl", lock["root_digest"], plan["edition"]["ref"], readonly=True)
    except JournalError as exc:
        raise execute.Refused(str(exc)) from exc
    execute._no_links(out)  # as `lrc report`: nothing is written through a link in the folder
    summary = execute._write_outputs(lock, fixed, runs, items, execute.import_modules(fixed), journal, out, seed)
    import polars as pl

    rows = list(pl.read_parquet(out / "cells.parquet").iter_rows(named=True))
    path = out / "summary.json"
    data = json.loads(path.read_text(encoding="utf-8"))
    data["regrade"] = {
        "errata": [{"id": a["erratum"]["id"], "ref": a["erratum"]["ref"], "digest": a["digest"], "date": a["erratum"]["date"],
                    "note": a["erratum"]["note"]} for a in applied],
        "plan_digest": lock["root_digest"],
        "model_calls": 0,
        "cells": comparison(record["before"], rows),
    }
    outputs._dump(path, data)
    return summary


def _copy_regular(src: str, dst: str) -> str:
    """shutil.copytree's copy of one item file: a regular file's bytes only (a device or FIFO
    planted in items/ is refused, never read without end or waited on)."""
    from lrc.runtime import filebytes

    Path(dst).write_bytes(filebytes.read_whole(src))
    return dst


def regrade(run_dir: Path, ident: str, out: Path, plan_path: Path | None = None, seed_file: Path | None = None):
    from lrc.runtime.execute import Refused, Unusable
    from lrc.runtime.review.cli import _header, locate_plan

    art = find_erratum(ident)
    header = _header(run_dir)
    if header.get("plan") != art["erratum"]["plan_digest"]:
        raise Refused(f"{run_dir} holds results of plan {header.get('plan')} ({header.get('edition')}); erratum {ident} corrects "
                      f"plan {art['erratum']['plan_digest']} ({art['erratum']['edition']})")
    previous = _read_applied(run_dir)
    applied = list(previous["applied"]) if previous else []
    if any(a["erratum"]["id"] == ident for a in applied):
        raise Problem(f"{run_dir} is already regraded by erratum {ident}")
    applied.append(art)
    lock = verified_lock(locate_plan(run_dir, plan_path), applied)
    if out.resolve() == run_dir.resolve():
        raise Unusable(f"--out is RUN_DIR: a regrade never modifies the folder it corrects; name a new folder")
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise Unusable(f"{out} exists and is not an empty folder: a regraded folder is written whole into a new one")
    generated = _items(lock, seed_file)
    from lrc.runtime.execute import plan_runs

    excluded_runs(plan_runs(lock["plan"], generated[1]), generated[1], applied)  # an unknown item: refused before anything is written
    # RUN_DIR may come from elsewhere: a link in it (items/ pointing at a file outside, the
    # journal at a device) would be copied into the new folder as that file's content.
    from lrc.runtime import filebytes
    from lrc.runtime.execute import _no_links

    _no_links(run_dir)
    record = {"format": APPLIED_FORMAT, "applied": applied, "before": _cells_before(run_dir)}
    try:
        journal_bytes = filebytes.read_whole(run_dir / "journal.jsonl")
    except OSError as exc:  # NotRegular included
        raise Refused(f"cannot read {run_dir / 'journal.jsonl'}: {exc.strerror or exc}") from None
    try:
        out.mkdir(parents=True, exist_ok=True)
        (out / "journal.jsonl").write_bytes(journal_bytes)
        if (run_dir / "items").is_dir():
            shutil.copytree(run_dir / "items", out / "items", copy_function=_copy_regular)
        (out / APPLIED_FILE).write_text(json.dumps(record, sort_keys=True, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    except OSError as exc:
        raise Unusable(f"cannot write {out}: {exc.strerror or exc}") from exc
    return rebuild(lock, out, record, seed_file, generated)


def regrade_cli(run_dir: Path, ident: str, out: Path, plan_path: Path | None = None, seed_file: Path | None = None) -> int:
    from lrc.runtime import execute
    from lrc.runtime.redact import build_redactor

    redact = build_redactor()
    try:
        summary = regrade(run_dir, ident, out, plan_path, seed_file)
    except Problem as exc:
        _say(redact(f"lrc regrade: {exc}"))
        return execute.EXIT_PROBLEMS
    except execute.Refused as exc:
        _say(redact(f"lrc regrade: {exc}"))
        return execute.EXIT_REFUSED
    except execute.Unusable as exc:
        _say(redact(f"lrc regrade: {exc}"))
        return execute.EXIT_UNUSABLE
    print(summary.card, end="")
    print(summary.where)
    print(f"  erratum         {out / APPLIED_FILE}")
    return execute._finish("lrc regrade", summary)


def report_cli(lock_path: Path, out: Path) -> int:
    """`lrc report` of a regraded folder: the same rebuild as `lrc regrade` made, from erratum.json."""
    from lrc.runtime import execute
    from lrc.runtime.redact import build_redactor

    redact = build_redactor()
    try:
        record = _read_applied(out)
        lock = verified_lock(lock_path, record["applied"])
        summary = rebuild(lock, out, record)
    except Problem as exc:
        _say(redact(f"lrc report: {exc}"))
        return execute.EXIT_PROBLEMS
    except execute.Refused as exc:
        _say(redact(f"lrc report: {exc}"))
        return execute.EXIT_REFUSED
    except execute.Unusable as exc:
        _say(redact(f"lrc report: {exc}"))
        return execute.EXIT_UNUSABLE
    print(summary.card, end="")
    print(summary.where)
    return execute._finish("lrc report", summary)
