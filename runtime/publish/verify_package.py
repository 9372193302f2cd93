"""`lrc verify PKG.tar.gz`: recompute every published number of a reproducibility package
offline, from the package alone, and compare each with the published value.

In order, each step reporting what differs rather than stopping at the first problem:

1. **Archive**: the tar.gz is hostile input: every header is checked before anything is
   written (`package.extract`: a member MANIFEST.json does not list is refused there); then
   every member against MANIFEST.json (sha256, size, and no listed member missing).
2. **Lock**: the packaged plan.lock's own digests (a changed price names its section), and the
   journal's plan digest against it.
3. **Code**: the packaged source files against the lock's per-file digests and fingerprints
   (recomputed from the packaged files, not the installed ones), and the installed lrc's code
   against the lock too (`lrc.runtime.verify`): the recomputation runs the installed code, so
   it is honest only when that code is the locked code -- which the packaged source shows.
4. **Prices**: every model call's token counts re-priced at the lock's frozen prices (Decimal)
   and summed per cell, against cells.csv -- from the journal and the lock alone.
5. **Items**: regenerated from the locked generators and the seed (public: in the lock;
   held-out: `seed/held-out.seed` once released, or `--seed-file`), compared byte for byte.
6. **Outputs**: rebuilt from the packaged journal into a fresh folder by the code path of
   `lrc report` (`lrc.runtime.execute._write_outputs`: every call re-priced from its token
   counts with the lock's frozen prices in Decimal, re-graded, re-aggregated per cell), then
   compared with the published files field by field: JSON by pointer, CSV by row key and
   column, text by line, anything else by bytes. Values are compared exactly (stricter than to
   the cent). The `software` blocks (versions of the installed litellm, polars, ...) describe
   the environment, not a result: a difference there is printed as a note.

Exit 0 when everything matches; 1 when something differs or could not be recomputed; 4 when
the archive is refused (not a package, damaged, or hostile).
"""

from __future__ import annotations

import contextlib
import csv
import io
import json
import shutil
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lrc.runtime.publish import package as pkg

EXIT_OK, EXIT_DIFFERS, EXIT_REFUSED = 0, 1, 4
SHOWN = 60
ENVIRONMENT_KEYS = ("software",)


@dataclass
class Report:
    differences: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    steps: list[str] = field(default_factory=list)
    fields: int = 0
    numbers: int = 0

    def differ(self, where: str, what: str, published: Any = None, recomputed: Any = None, values: bool = False) -> None:
        text = f"{where}: {what}"
        if values:
            text += f": published {_short(published)}, recomputed {_short(recomputed)}"
        self.differences.append(text)


def _short(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False, default=str) if not isinstance(value, str) else repr(value)
    return text if len(text) <= 120 else text[:117] + "..."


# -- field-by-field comparison ---------------------------------------------------------------

def _flatten(value: Any, pointer: str = "") -> dict[str, Any]:
    if isinstance(value, dict):
        out: dict[str, Any] = {} if value else {pointer: {}}
        for key, sub in value.items():
            out.update(_flatten(sub, f"{pointer}/{str(key).replace('~', '~0').replace('/', '~1')}"))
        return out
    if isinstance(value, list):
        out = {} if value else {pointer: []}
        for i, sub in enumerate(value):
            out.update(_flatten(sub, f"{pointer}/{i}"))
        return out
    return {pointer: value}


def _is_number(value: Any) -> bool:
    if isinstance(value, bool):
        return False
    if isinstance(value, (int, float)):
        return True
    if isinstance(value, str):
        try:
            float(value)
            return True
        except ValueError:
            return False
    return False


def _environment(pointer: str) -> bool:
    return any(f"/{k}/" in pointer + "/" for k in ENVIRONMENT_KEYS)


def compare_json(name: str, published: bytes, rebuilt: bytes, report: Report, env_notes: dict) -> None:
    try:
        left, right = json.loads(published), json.loads(rebuilt)
    except ValueError as exc:
        report.differ(name, f"not JSON ({exc})")
        return
    a, b = _flatten(left), _flatten(right)
    for pointer in sorted(set(a) | set(b)):
        report.fields += 1
        report.numbers += _is_number(b.get(pointer))
        if a.get(pointer, _MISSING) == b.get(pointer, _MISSING) and (pointer in a) == (pointer in b):
            continue
        if _environment(pointer):
            env_notes.setdefault((pointer.rsplit("/software/", 1)[-1], _short(a.get(pointer)), _short(b.get(pointer))), name)
            continue
        if pointer not in a:
            report.differ(f"{name} {pointer}", "missing from the published file", values=False)
        elif pointer not in b:
            report.differ(f"{name} {pointer}", "published but not recomputed", values=False)
        else:
            report.differ(f"{name} {pointer}", "differs", a[pointer], b[pointer], values=True)


_MISSING = object()


def compare_csv(name: str, published: bytes, rebuilt: bytes, report: Report) -> None:
    def rows(data: bytes) -> tuple[list[str], dict[tuple, dict[str, str]]]:
        reader = csv.DictReader(io.StringIO(data.decode("utf-8")))
        keyed: dict[tuple, dict[str, str]] = {}
        for i, row in enumerate(reader):
            key = tuple(row.get(k, "") for k in ("workload", "model", "system")) if "workload" in (reader.fieldnames or []) else (str(i),)
            keyed[key if key not in keyed else (*key, str(i))] = row
        return list(reader.fieldnames or []), keyed

    try:
        (cols_a, a), (cols_b, b) = rows(published), rows(rebuilt)
    except (UnicodeDecodeError, csv.Error) as exc:
        report.differ(name, f"not readable CSV ({exc})")
        return
    if cols_a != cols_b:
        report.differ(name, "columns differ", cols_a, cols_b, values=True)
    for key in sorted(set(a) | set(b)):
        label = "|".join(key)
        if key not in a or key not in b:
            report.differ(f"{name} row {label}", "missing from the published file" if key not in a else "published but not recomputed")
            continue
        for col in cols_b:
            report.fields += 1
            report.numbers += _is_number(b[key].get(col))
            if a[key].get(col) != b[key].get(col):
                report.differ(f"{name} row {label} column {col}", "differs", a[key].get(col), b[key].get(col), values=True)


def compare_text(name: str, published: bytes, rebuilt: bytes, report: Report) -> None:
    try:
        a, b = published.decode("utf-8").splitlines(), rebuilt.decode("utf-8").splitlines()
    except UnicodeDecodeError:
        report.differ(name, "not UTF-8 text")
        return
    report.fields += len(b)
    shown = 0
    for i in range(max(len(a), len(b))):
        la, lb = (a[i] if i < len(a) else None), (b[i] if i < len(b) else None)
        if la != lb:
            report.differ(f"{name} line {i + 1}", "differs", la, lb, values=True)
            shown += 1
            if shown >= 3:
                report.differ(name, "further lines not shown")
                break


def compare_parquet(name: str, published: bytes, rebuilt: bytes, report: Report) -> None:
    """Parquet bytes may differ with the writer's version while the table is the same: compare
    the tables, as CSV (every value as its text), by row key and column."""
    import polars as pl

    def as_csv(data: bytes) -> bytes:
        return pl.read_parquet(io.BytesIO(data)).write_csv().encode("utf-8")

    try:
        left = as_csv(published)
    except Exception as exc:  # noqa: BLE001 - a damaged parquet file is a finding, never a traceback
        report.differ(name, f"not a readable parquet file ({type(exc).__name__})")
        return
    compare_csv(name, left, as_csv(rebuilt), report)


def compare_file(name: str, published: bytes, rebuilt: bytes, report: Report, env_notes: dict) -> None:
    if published == rebuilt:
        report.fields += 1
        if name.endswith(".json"):  # count what a match covered
            with contextlib.suppress(ValueError):
                flat = _flatten(json.loads(rebuilt))
                report.fields += len(flat) - 1
                report.numbers += sum(_is_number(v) for v in flat.values())
        elif name.endswith(".csv"):
            text = rebuilt.decode("utf-8", errors="replace").splitlines()
            report.fields += sum(len(line.split(",")) for line in text[1:]) - 1
            report.numbers += sum(_is_number(c) for line in text[1:] for c in line.split(","))
        return
    if name.endswith(".json"):
        compare_json(name, published, rebuilt, report, env_notes)
    elif name.endswith(".csv"):
        compare_csv(name, published, rebuilt, report)
    elif name.endswith((".md", ".txt", ".html", ".svg")):
        compare_text(name, published, rebuilt, report)
    elif name.endswith(".parquet"):
        compare_parquet(name, published, rebuilt, report)
    else:
        report.differ(name, f"bytes differ (published sha256 {pkg._sha256(published)[:16]}…, recomputed {pkg._sha256(rebuilt)[:16]}…)")


# -- the steps -------------------------------------------------------------------------------

def _files(folder: Path) -> dict[str, Path]:
    return {p.relative_to(folder).as_posix(): p for p in sorted(folder.rglob("*")) if p.is_file()}


def check_manifest(root: Path, report: Report) -> dict[str, Any] | None:
    path = root / "MANIFEST.json"
    try:
        doc = json.loads(path.read_bytes())
        entries = {e["path"]: e for e in doc["members"]}
    except FileNotFoundError:
        report.differ("MANIFEST.json", "missing: this is not an lrc reproducibility package")
        return None
    except (ValueError, KeyError, TypeError) as exc:
        report.differ("MANIFEST.json", f"unreadable ({type(exc).__name__}: {exc})")
        return None
    if doc.get("package_format") != pkg.PACKAGE_FORMAT:
        report.differ("MANIFEST.json", f"package format {doc.get('package_format')!r}; this lrc reads format {pkg.PACKAGE_FORMAT}")
    present = {n: p for n, p in _files(root).items() if n != "MANIFEST.json"}
    for name in sorted(set(entries) | set(present)):
        if name not in present:
            report.differ(name, "listed in MANIFEST.json but not in the archive")
        elif name not in entries:
            report.differ(name, "in the archive but not listed in MANIFEST.json")
        else:
            data = present[name].read_bytes()
            if len(data) != entries[name].get("size") or pkg._sha256(data) != entries[name].get("sha256"):
                report.differ(name, "content differs from MANIFEST.json", f"sha256 {str(entries[name].get('sha256'))[:16]}…",
                              f"sha256 {pkg._sha256(data)[:16]}…", values=True)
    redaction = doc.get("redaction") or {}
    report.steps.append(f"manifest  {len(present):,} members checked against MANIFEST.json (sha256, size); "
                        f"redaction markers: {redaction.get('markers', '?')} in {redaction.get('files_with_markers', '?')} file(s)")
    return doc


def check_lock(root: Path, report: Report) -> dict[str, Any] | None:
    from lrc.runtime.lock import format as lockformat

    try:
        lock = lockformat.loads((root / "plan.lock").read_bytes())
    except FileNotFoundError:
        report.differ("plan.lock", "missing")
        return None
    except lockformat.LockError as exc:
        report.differ("plan.lock", str(exc))
        return None
    problems = lockformat.verify_digests(lock)
    for problem in problems:
        report.differ("plan.lock", f"{problem} (the lock was modified after compilation)")
    try:
        header = json.loads((root / "run" / "journal.jsonl").open("rb").readline())
        if header.get("plan") != lock.get("root_digest"):
            report.differ("run/journal.jsonl", "the journal was run with another plan", header.get("plan"), lock.get("root_digest"), values=True)
    except (OSError, ValueError, AttributeError) as exc:
        report.differ("run/journal.jsonl", f"no readable journal header ({exc})")
    if problems:
        return None
    report.steps.append(f"lock      digests match (plan {lock['root_digest']}, lrc {lock['lrc_version']})")
    return lock


def check_code(root: Path, lock: dict[str, Any], report: Report) -> bool:
    """Packaged source against the lock, then the installed code against the lock; True when
    the installed code may recompute the numbers."""
    from lrc.runtime.lock import codeprint
    from lrc.runtime.verify import verify

    source = root / "source" / "runtime"
    code = lock["plan"]["code"]
    files: set[str] = set()
    found: dict[str, Any] = {}
    if source.is_dir():
        try:
            found = codeprint.discover(source)
        except codeprint.CodeprintError as exc:
            report.differ(f"source/runtime/{exc.path.relative_to(source).as_posix()}", f"line {exc.line}: {exc.message}")
    for ref, entry in sorted(code.items()):
        for rel, digest in sorted(entry["files"].items()):
            files.add(rel)
            path = root / "source" / rel
            if not path.is_file():
                report.differ(f"source/{rel}", f"missing (a file of locked component {ref})")
                continue
            try:
                actual = codeprint.file_digest(path)
            except (codeprint.CodeprintError, SyntaxError, ValueError) as exc:
                actual = f"unparseable: {exc}"
            if actual != digest:
                report.differ(f"source/{rel}", f"differs from the lock's digest for {ref}", digest, actual, values=True)
        comp = found.get(ref)
        if comp is None:
            report.differ(f"source (component {ref})", "not declared by the packaged source")
        else:
            printed = codeprint.fingerprint(comp, source)
            if printed.fingerprint != entry["fingerprint"]:
                report.differ(f"source (component {ref})", "fingerprint differs from the lock", entry["fingerprint"], printed.fingerprint, values=True)
    packaged_ok = not any(d.startswith("source") for d in report.differences)
    installed = verify(lock)
    if installed:
        report.differ("installed lrc", "cannot recompute with this lrc: " + "; ".join(installed)
                      + " -- install the lrc release the package names (README.md)")
    report.steps.append(f"code      {len(code)} locked components, {len(files)} source files: packaged source "
                        f"{'matches' if packaged_ok else 'DIFFERS from'} the lock; installed lrc "
                        f"{'matches it' if not installed else 'DIFFERS'} (the numbers are recomputed by the installed code)")
    return not installed


def _seed(root: Path, lock: dict[str, Any], seed_file: Path | None, report: Report) -> str | None:
    from lrc.runtime.execute import Refused, resolve_seed

    plan = lock["plan"]
    if plan["seed"]["policy"] == "public":
        return resolve_seed(plan, None)
    candidate = seed_file if seed_file is not None else (root / "seed" / "held-out.seed")
    if not candidate.is_file():
        report.differ("seed", "this held-out edition's seed is not released in the package: the items cannot be "
                      "regenerated nor the outputs recomputed; once it is released, pass --seed-file SEED")
        return None
    try:
        return resolve_seed(plan, candidate)
    except Refused as exc:
        report.differ("seed", str(exc))
        return None


def check_costs(root: Path, lock: dict[str, Any], report: Report) -> None:
    """Every model call's token counts re-priced at the lock's frozen prices (Decimal), summed per
    workload cell, against the published cells.csv (cost_usd + infra_cost_usd: the spend of the
    graded runs and of the runs excluded after infrastructure failures). Independent of the rebuild
    below, which re-prices through the analysis code; this needs only the journal and the lock."""
    from decimal import Decimal

    from lrc.runtime.journal import Journal
    from lrc.runtime.pricing import call_cost, decimal_str, format_usd, price_for

    plan = lock["plan"]
    journal = Journal(root / "run" / "journal.jsonl", lock["root_digest"], plan["edition"]["ref"], readonly=True)
    prices = {m: e["price"] for m, e in plan["models"].items()}
    spent: dict[tuple[str, str, str], Decimal] = {}
    calls = 0
    for (key, _step), call in sorted(journal.calls.items()):
        if key not in journal.runs and key not in journal.exhausted:
            continue  # an unfinished run's calls count once it finishes (as in the outputs)
        workload, model, system = key.split("|", 3)[:3]
        if workload not in plan["workloads"]:
            continue  # task cells (seed 000) are their own tables, not in cells.csv
        cell = (workload, model, system)
        spent[cell] = spent.get(cell, Decimal(0)) + call_cost(call["usage"], price_for(prices, model))
        calls += 1
    for key in sorted(journal.exhaustions):  # failed attempts billed before a call ran out of retries
        workload, model, system = key.split("|", 3)[:3]
        own, _judged = journal.billed_in_exclusions(key)
        if own and workload in plan["workloads"] and (key in journal.runs or key in journal.exhausted):
            spent[(workload, model, system)] = spent.get((workload, model, system), Decimal(0)) + call_cost(own, price_for(prices, model))
    try:
        rows = list(csv.DictReader(io.StringIO((root / "run" / "cells.csv").read_text(encoding="utf-8"))))
    except (OSError, UnicodeDecodeError, csv.Error) as exc:
        report.differ("run/cells.csv", f"unreadable ({exc})")
        return
    published = {}
    for row in rows:
        try:
            published[(row["workload"], row["model"], row["system"])] = Decimal(row["cost_usd"]) + Decimal(row["infra_cost_usd"])
        except (KeyError, ArithmeticError) as exc:
            report.differ(f"run/cells.csv row {row.get('workload')}|{row.get('model')}|{row.get('system')}",
                          f"no readable cost_usd/infra_cost_usd ({type(exc).__name__})")
    for cell in sorted(set(spent) | set(published)):
        mine = spent.get(cell, Decimal(0))
        if cell not in published:
            report.differ(f"run/cells.csv row {'|'.join(cell)}", f"missing, though its calls cost {decimal_str(mine)}")
        elif published[cell] != mine:
            report.differ(f"run/cells.csv row {'|'.join(cell)} cost_usd + infra_cost_usd", "differs from the journal's calls "
                          "re-priced at the lock's frozen prices", decimal_str(published[cell]), decimal_str(mine), values=True)
    report.steps.append(f"prices    {calls:,} model calls re-priced from their token counts at the lock's frozen prices "
                        f"(Decimal) over {len(spent)} cells: {format_usd(sum(spent.values(), Decimal(0)))} in all, "
                        f"compared with cells.csv cost_usd + infra_cost_usd")


def check_adjudications(root: Path, lock: dict[str, Any], report: Report) -> None:
    """adjudications.json against what `lrc package` derives from the packaged journal: the human
    grades and categories a reader sees there are the journal's, not edited beside it."""
    from lrc.runtime.journal import JournalError

    try:
        recomputed = pkg.adjudications(pkg.journal_records((root / "run" / "journal.jsonl").read_bytes(), lock))
    except JournalError as exc:
        report.differ("run/journal.jsonl", f"not a journal lrc wrote for this plan: {str(exc)[:500]}")
        return
    try:
        published = (root / "adjudications.json").read_bytes()
    except OSError as exc:
        report.differ("adjudications.json", f"missing or unreadable ({exc.strerror or exc})")
        return
    if published != recomputed:
        compare_text("adjudications.json", published, recomputed, report)


def rebuild(root: Path, lock: dict[str, Any], seed: str, fresh: Path) -> None:
    """The outputs and items of the packaged run, rebuilt in `fresh` from the packaged journal by
    the code path of `lrc report` (`execute.report_cli`: the same steps, with the seed given)."""
    from lrc.runtime import execute
    from lrc.runtime import items as item_gen
    from lrc.runtime.journal import Journal

    plan = lock["plan"]
    shutil.copyfile(root / "run" / "journal.jsonl", fresh / "journal.jsonl")
    journal = Journal(fresh / "journal.jsonl", lock["root_digest"], plan["edition"]["ref"], readonly=True)
    items = item_gen.generate(plan, seed, memo=False)  # every item regenerated
    runs = execute.plan_runs(plan, items)
    execute._write_outputs(lock, plan, runs, items, execute.import_modules(plan), journal, fresh, seed, memo=False)  # every grade recomputed
    item_gen.write(items, fresh)


def compare_outputs(root: Path, fresh: Path, report: Report) -> None:
    published = {n: p for n, p in _files(root / "run").items() if n != "journal.jsonl"}
    rebuilt = {n: p for n, p in _files(fresh).items() if n != "journal.jsonl" and not Path(n).name.startswith(".")}
    env_notes: dict = {}
    item_files = outputs = 0
    for name in sorted(set(published) | set(rebuilt)):
        shown = f"run/{name}"
        if name not in published:
            report.differ(shown, "recomputed but missing from the package")
            continue
        if name not in rebuilt:
            report.notes.append(f"{shown}: published, but this lrc does not recompute it (not checked)")
            continue
        if name.startswith("items/"):
            item_files += 1
            if published[name].read_bytes() != rebuilt[name].read_bytes():
                report.differ(shown, "differs from the item the locked generator produces from the seed")
            continue
        outputs += 1
        data = published[name].read_bytes()
        if name == "report.html":  # a page drawn with --history holds the trend, from a history the package does not hold
            from lrc.runtime.publish.trend_page import without_section

            data, had_trend = without_section(data)
            if had_trend:
                report.notes.append(f"{shown}: its \"Trend across editions\" section is drawn from a results history "
                                    f"(`lrc publish`), which is not in the package: not checked; the rest of the page is")
        compare_file(shown, data, rebuilt[name].read_bytes(), report, env_notes)
    for (pointer, a, b), where in sorted(env_notes.items()):
        report.notes.append(f"environment: software {pointer} published {a}, here {b} (e.g. {where}); not a result")
    report.steps.append(f"items     {item_files:,} files regenerated from the locked generators and seed, compared byte for byte")
    report.steps.append(f"outputs   {outputs:,} files rebuilt from the journal (lrc report's code path) and compared: "
                        f"{report.fields:,} fields, {report.numbers:,} of them numbers")


def verify_package(path: Path, seed_file: Path | None = None, limits: pkg.Limits = pkg.Limits()) -> Report:
    report = Report()
    with tempfile.TemporaryDirectory(prefix="lrc-verify-") as tmp:
        extracted = Path(tmp) / "package"
        extracted.mkdir()
        root = pkg.extract(path, extracted, limits)
        check_manifest(root, report)
        lock = check_lock(root, report)
        if lock is None:
            report.differ("outputs", "not recomputed: the packaged lock is refused")
            return report
        code_ok = check_code(root, lock, report)
        check_adjudications(root, lock, report)
        try:
            check_costs(root, lock, report)
        except Exception as exc:  # noqa: BLE001 - a damaged journal or price is a finding about the package
            report.differ("run/journal.jsonl", f"cannot be re-priced: {type(exc).__name__}: {str(exc)[:500]}")
        seed = _seed(root, lock, seed_file, report)
        if not code_ok or seed is None:
            report.differ("outputs", "not recomputed (see above)")
            return report
        fresh = Path(tmp) / "rebuilt"
        fresh.mkdir()
        try:
            with contextlib.redirect_stdout(io.StringIO()):
                rebuild(root, lock, seed, fresh)
        except Exception as exc:  # noqa: BLE001 - a damaged journal or item is a finding about the package, never a traceback
            report.differ("outputs", f"cannot be rebuilt from the packaged journal: {type(exc).__name__}: {str(exc)[:500]}")
            return report
        compare_outputs(root, fresh, report)
    return report


def verify_cli(path: Path, seed_file: Path | None = None) -> int:
    import time

    from lrc.runtime.execute import Refused
    from lrc.runtime.journal import JournalError

    started = time.perf_counter()
    try:
        report = verify_package(path, seed_file)
    except pkg.ArchiveRefused as exc:
        print(f"lrc verify: {path} refused: {exc}", file=sys.stderr)
        return EXIT_REFUSED
    except (Refused, JournalError) as exc:
        print(f"lrc verify: {path}: cannot recompute: {exc}", file=sys.stderr)
        return EXIT_DIFFERS
    print(f"lrc verify {path}")
    for step in report.steps:
        print(f"  {step}")
    for note in report.notes[:SHOWN]:
        print(f"  note: {note}")
    if len(report.notes) > SHOWN:
        print(f"  note: ... and {len(report.notes) - SHOWN} more note(s)")
    elapsed = time.perf_counter() - started
    if report.differences:
        for line in report.differences[:SHOWN]:
            print(f"DIFFERS {line}")
        if len(report.differences) > SHOWN:
            print(f"DIFFERS ... and {len(report.differences) - SHOWN} more difference(s)")
        print(f"lrc verify: {len(report.differences)} difference(s): the package does not reproduce its published results "
              f"({elapsed:.1f} s)", file=sys.stderr)
        return EXIT_DIFFERS
    print(f"OK: every published output was recomputed from the package and matches ({elapsed:.1f} s)")
    return EXIT_OK
