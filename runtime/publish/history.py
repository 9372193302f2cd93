"""The results history (`lrc publish RUN_DIR --history DIR`): every published edition's cells,
append-only, so the report can draw CPO trendlines across editions (seed §2.2, §7).

Why one parquet file per edition-publication (`DIR/<edition id>-<plan digest prefix>.parquet`)
and nothing else: a file, once written, is never rewritten, so a publication can never change
an earlier edition's numbers, and the history is the union of its files -- there is no index
or manifest that could disagree with them. A file is written beside its final name and
hard-linked into place (`os.link` fails if the name exists), so two publishers never overwrite
each other and a kill leaves at most a hidden temporary file, which readers skip.

Rows are keyed by edition (id, date, plan digest), workload (id and version), model and system.
Money (cost, CPO and its bootstrap interval) is a decimal string, never a float; a CPO of null
is "no success" (infinite), never $0. Reading validates every file -- schema, format marker,
name against content, counts and money -- and a foreign or damaged file is a HistoryError with
the file's name, never a traceback.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from pathlib import Path
from typing import Any, Iterable, Mapping

import polars as pl

HISTORY_FORMAT = 1
#: Roles stored (every cell is kept; the trendline draws the scored ones).
KEY: tuple[str, ...] = ("edition_date", "edition_id", "plan_digest", "workload_id", "workload_version", "model", "system")

SCHEMA: dict[str, Any] = {
    "history_format": pl.Int64,
    "edition_id": pl.String, "edition_version": pl.Int64, "edition_date": pl.String, "plan_digest": pl.String,
    "brand": pl.String, "methodology": pl.String,
    "workload": pl.String, "workload_id": pl.String, "workload_version": pl.Int64, "job": pl.String,
    "model": pl.String, "system": pl.String, "role": pl.String,
    "passes": pl.Int64, "n": pl.Int64, "pass_rate": pl.Float64, "wilson_low": pl.Float64, "wilson_high": pl.Float64,
    "cost_usd": pl.String, "cpo_usd": pl.String, "cpo_low": pl.String, "cpo_high": pl.String,
    "qualifying": pl.Boolean,
}
_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")
_DIGEST = re.compile(r"(?:sha256:)?[0-9a-f]{64}")
_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")


class HistoryError(Exception):
    """A history folder or file that cannot be read or written honestly (the message says which and why)."""


class Duplicate(HistoryError):
    """This plan (or this edition under another plan) is already in the history with other rows."""


@dataclass(frozen=True)
class Edition:
    """The edition facts a history row carries (from the verified lock)."""

    id: str
    version: int
    date: str
    plan_digest: str
    brand: str
    methodology: str
    #: workload ref -> (workload id, workload version, rate-card job)
    workloads: Mapping[str, tuple[str, int, str]]


def edition_of(lock: Mapping[str, Any]) -> Edition:
    plan = lock["plan"]
    spec = plan["edition"]["spec"]
    workloads = {ref: (wl["spec"]["id"], int(wl["spec"]["version"]), wl["spec"]["rate_card"]["job"])
                 for ref, wl in sorted(plan["workloads"].items())}
    return Edition(id=spec["id"], version=int(spec["version"]), date=str(spec["date"]), plan_digest=lock["root_digest"],
                   brand=spec["brand"], methodology=str(plan["standard"]["spec"]["methodology"]), workloads=workloads)


def file_name(edition_id: str, plan_digest: str) -> str:
    """`<edition id>-<first 12 hex digits of the plan digest>.parquet` (as `lrc package` names its folder)."""
    return f"{edition_id}-{plan_digest.split(':')[-1][:12]}.parquet"


def rows(cells: pl.DataFrame, edition: Edition) -> pl.DataFrame:
    """The history rows of one edition's cells (cells.parquet of a run folder), sorted by key."""
    out = []
    for c in cells.iter_rows(named=True):
        if c["workload"] not in edition.workloads:
            raise HistoryError(f"cell of workload {c['workload']!r}, which the edition's plan does not hold")
        if c.get("partial"):
            raise HistoryError("the cells are of a partial run (a subset, a limit, a shard or a stopped execute): "
                               "partial folders never publish")
        wid, wversion, job = edition.workloads[c["workload"]]
        out.append({
            "history_format": HISTORY_FORMAT, "edition_id": edition.id, "edition_version": edition.version,
            "edition_date": edition.date, "plan_digest": edition.plan_digest, "brand": edition.brand,
            "methodology": edition.methodology, "workload": c["workload"], "workload_id": wid, "workload_version": wversion,
            "job": job, "model": c["model"], "system": c["system"], "role": c["role"], "passes": c["passes"], "n": c["n"],
            "pass_rate": c["pass_rate"], "wilson_low": c["wilson_low"], "wilson_high": c["wilson_high"],
            "cost_usd": c["cost_usd"], "cpo_usd": c["cpo_usd"], "cpo_low": c["cpo_low"], "cpo_high": c["cpo_high"],
            "qualifying": c["qualifying"],
        })
    frame = pl.DataFrame(out, schema=SCHEMA).sort(*KEY)
    problems = _row_problems(frame)
    if problems:
        raise HistoryError("the cells cannot be published: " + "; ".join(problems[:5]))
    return frame


def _money_ok(value: Any, nullable: bool) -> bool:
    if value is None:
        return nullable
    try:
        amount = Decimal(value)
    except (InvalidOperation, TypeError, ValueError):
        return False
    return amount.is_finite() and amount >= 0


def _row_problems(frame: pl.DataFrame) -> list[str]:
    """What is wrong with these rows as history rows (empty: nothing)."""
    problems: list[str] = []
    for r in frame.iter_rows(named=True):
        where = f"{r['workload']} · {r['model']} · {r['system']}"
        if r["history_format"] != HISTORY_FORMAT:
            problems.append(f"{where}: history_format {r['history_format']!r}, this lrc reads {HISTORY_FORMAT}")
        for field in ("edition_id", "workload_id", "model", "system", "role", "workload"):
            if not isinstance(r[field], str) or not r[field]:
                problems.append(f"{where}: {field} must be a non-empty string")
        if not isinstance(r["edition_id"], str) or not _ID.fullmatch(r["edition_id"]):
            problems.append(f"{where}: edition_id {r['edition_id']!r} is not an edition id")
        if not isinstance(r["edition_date"], str) or not _DATE.fullmatch(r["edition_date"]):
            problems.append(f"{where}: edition_date {r['edition_date']!r} is not YYYY-MM-DD")
        if not isinstance(r["plan_digest"], str) or not _DIGEST.fullmatch(r["plan_digest"]):
            problems.append(f"{where}: plan_digest {r['plan_digest']!r} is not a sha256 digest")
        if r["workload_version"] is None or r["workload_version"] < 1:
            problems.append(f"{where}: workload_version {r['workload_version']!r} is not a version")
        if r["n"] is None or r["passes"] is None or not 0 <= r["passes"] <= r["n"]:
            problems.append(f"{where}: passes {r['passes']!r} of n {r['n']!r}")
        if not _money_ok(r["cost_usd"], False):
            problems.append(f"{where}: cost_usd {r['cost_usd']!r} is not a decimal amount")
        for field in ("cpo_usd", "cpo_low", "cpo_high"):
            if not _money_ok(r[field], True):
                problems.append(f"{where}: {field} {r[field]!r} is not a decimal amount")
        if r["passes"] and r["cpo_usd"] is None:
            problems.append(f"{where}: {r['passes']} successes but no CPO")
    keys = frame.select(KEY)
    if keys.height != keys.unique().height:
        problems.append("a cell appears twice")
    return problems


def _validate_file(path: Path) -> pl.DataFrame:
    """One history file, read and checked; HistoryError names the file and the problem."""
    try:
        frame = pl.read_parquet(path)
    except Exception as exc:  # noqa: BLE001 - polars raises many kinds for a damaged file; all mean "not readable"
        raise HistoryError(f"{path}: not a readable parquet file ({type(exc).__name__}: {str(exc)[:200]}); "
                           f"a history file is never edited: restore it from a copy or remove it") from None
    if dict(frame.schema) != SCHEMA:
        missing = sorted(set(SCHEMA) - set(frame.schema))
        extra = sorted(set(frame.schema) - set(SCHEMA))
        wrong = sorted(k for k in SCHEMA if k in frame.schema and frame.schema[k] != SCHEMA[k])
        detail = "; ".join(p for p in (f"missing columns {missing}" if missing else "",
                                        f"unknown columns {extra}" if extra else "",
                                        f"columns of another type {wrong}" if wrong else "") if p) or "columns in another order"
        raise HistoryError(f"{path}: not an lrc history file ({detail})")
    if frame.is_empty():
        raise HistoryError(f"{path}: an empty history file (a publication holds at least one cell)")
    problems = _row_problems(frame)
    editions = frame.select("edition_id", "edition_version", "edition_date", "plan_digest").unique()
    if editions.height != 1:
        problems.append(f"{editions.height} editions in one file (a file is one edition's publication)")
    else:
        e = editions.row(0, named=True)
        if isinstance(e["edition_id"], str) and isinstance(e["plan_digest"], str) and \
                path.name != file_name(e["edition_id"], e["plan_digest"]):
            problems.append(f"it holds edition {e['edition_id']} plan {e['plan_digest']}, which is named "
                            f"{file_name(e['edition_id'], e['plan_digest'])}")
    if problems:
        raise HistoryError(f"{path}: a damaged or foreign history file: " + "; ".join(problems[:5]))
    return frame


def _files(folder: Path) -> list[Path]:
    if not folder.exists():
        return []
    if not folder.is_dir():
        raise HistoryError(f"{folder} is not a folder; --history takes the history folder")
    found, foreign = [], []
    for path in sorted(folder.iterdir()):
        if path.name.startswith("."):
            continue  # a publisher's temporary file (or a dot file): never part of the history
        if path.suffix == ".parquet" and path.is_file() and not path.is_symlink():
            found.append(path)
        else:
            foreign.append(path.name)
    if foreign:
        raise HistoryError(f"{folder} holds {', '.join(foreign[:5])}, which are not history files; a history folder holds "
                           f"only the <edition>-<plan>.parquet files `lrc publish` writes")
    return found


def read(folder: Path) -> pl.DataFrame:
    """Every row of the history in `folder`, validated, sorted by key (empty if there is none)."""
    frames = [_validate_file(p) for p in _files(folder)]
    if not frames:
        return pl.DataFrame(schema=SCHEMA)
    history = pl.concat(frames, how="vertical").sort(*KEY)
    per_edition = history.select("edition_id", "plan_digest").unique()
    twice = per_edition.group_by("edition_id").len().filter(pl.col("len") > 1)["edition_id"].to_list()
    if twice:
        raise HistoryError(f"{folder}: edition {sorted(twice)[0]} is published under two plans; an edition publishes once "
                           f"(corrections are errata)")
    return history


@dataclass(frozen=True)
class Published:
    path: Path
    rows: int
    written: bool  # False: the same rows were already published (a no-op)


def append(folder: Path, frame: pl.DataFrame) -> Published:
    """Add one edition's rows (from `rows`) to the history: a new file, never a rewrite.

    The same plan already published with identical rows is a no-op (`written` False); with
    other rows, or the edition under another plan, it is refused (Duplicate)."""
    history = read(folder)  # validates every file before anything is added
    edition = frame.select("edition_id", "plan_digest").unique()
    if edition.height != 1:
        raise HistoryError("one publication is one edition's rows")
    edition_id, plan_digest = edition.row(0)
    target = folder / file_name(edition_id, plan_digest)
    data = _parquet_bytes(frame)
    if target.exists():
        existing = _validate_file(target)
        if target.read_bytes() == data or existing.equals(frame):
            return Published(target, frame.height, written=False)
        raise Duplicate(f"plan {plan_digest} (edition {edition_id}) is already published in {target} with other rows "
                        f"({_first_difference(existing, frame)}); the history is append-only: a correction of a "
                        f"published result is an erratum (lrc regrade), never a second publication")
    other = history.filter((pl.col("edition_id") == edition_id) & (pl.col("plan_digest") != plan_digest))
    if not other.is_empty():
        raise Duplicate(f"edition {edition_id} is already published under plan {other['plan_digest'][0]}; an edition "
                        f"publishes once (a recompiled edition is a new edition id or version, a correction an erratum)")
    _write_new(folder, target, data)
    return Published(target, frame.height, written=True)


def _first_difference(old: pl.DataFrame, new: pl.DataFrame) -> str:
    if old.height != new.height:
        return f"{old.height} rows published, {new.height} now"
    for a, b in zip(old.iter_rows(named=True), new.iter_rows(named=True)):
        for k in SCHEMA:
            if a[k] != b[k]:
                return f"{a['workload']} · {a['model']} · {a['system']}: {k} {a[k]!r} published, {b[k]!r} now"
    return "the files differ"


def _parquet_bytes(frame: pl.DataFrame) -> bytes:
    import io

    buf = io.BytesIO()
    frame.write_parquet(buf, statistics=False)
    return buf.getvalue()


def _write_new(folder: Path, target: Path, data: bytes) -> None:
    """Write `data` at `target`, which must not exist: through a hidden temporary file and a
    hard link, so an existing file is never replaced (not even by a concurrent publisher)."""
    tmp = folder / f".{target.name}.{os.getpid()}.tmp"
    try:
        folder.mkdir(parents=True, exist_ok=True)
        tmp.write_bytes(data)
        os.link(tmp, target)
    except FileExistsError:
        raise Duplicate(f"{target} appeared while publishing (another publisher); run `lrc publish` again to compare") from None
    except OSError as exc:
        raise OSError(exc.errno, f"cannot write {target}: {exc.strerror}") from None
    finally:
        tmp.unlink(missing_ok=True)


def editions(history: pl.DataFrame) -> list[dict[str, Any]]:
    """The history's editions ordered by date (then id): id, version, date, plan digest."""
    cols = ["edition_date", "edition_id", "edition_version", "plan_digest"]
    return list(history.select(cols).unique().sort("edition_date", "edition_id").iter_rows(named=True))


def scored(history: pl.DataFrame, roles: Iterable[str] = ("flagship", "candidate", "baseline")) -> pl.DataFrame:
    return history.filter(pl.col("role").is_in(list(roles)))
