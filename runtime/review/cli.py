"""`lrc review export RUN_DIR --out review.xlsx [--all CELL]` and `lrc review import RUN_DIR review.xlsx`.

RUN_DIR is an `lrc execute --out` folder. Its plan.lock is `--plan PLAN.lock`, or by default
`generated/<edition id>/plan.lock` of the project above the current folder, the edition named
in the journal's header; either way the lock must be the plan the folder ran (its digest is in
the journal header) and pass verification like `lrc report`'s. A held-out edition needs
`--seed-file` (the sample is drawn with the edition's seed).

Both commands take the folder's `.lrc-execute.lock`, so neither runs while an execute (or
another review import) is writing the journal. Exit codes: 0 done (also: nothing new to
import), 1 the workbook is refused or the grades are incomplete/invalid (nothing appended),
4 the lock or the folder is refused, 6 the folder cannot be written.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import Any

from lrc.runtime.review.sample import ReviewError

EXIT_OK, EXIT_PROBLEMS, EXIT_REFUSED, EXIT_UNUSABLE = 0, 1, 4, 6


def _say(message: str) -> None:
    """Every message is redacted (a refused cell is quoted back: a reviewer may have pasted a key)."""
    from lrc.runtime.redact import build_redactor

    print(build_redactor()(message), file=sys.stderr)


def _header(run_dir: Path) -> dict[str, Any]:
    import json

    from lrc.runtime.execute import Refused

    from lrc.runtime import filebytes

    path = run_dir / "journal.jsonl"
    try:
        # Read without blocking and only up to the header's end: a FIFO or /dev/zero planted
        # in a folder from elsewhere is refused, never waited on or read without end.
        first = filebytes.first_line(path)
        header = json.loads(first)
    except FileNotFoundError:
        raise Refused(f"{run_dir} has no journal.jsonl: it is not an `lrc execute` folder") from None
    except filebytes.NotRegular as exc:
        raise Refused(f"{exc}: not a journal lrc wrote") from None
    except (OSError, ValueError, RecursionError) as exc:
        raise Refused(f"cannot read the journal header of {path}: {exc}") from None
    if not isinstance(header, dict) or header.get("type") != "header":
        raise Refused(f"{path} is not an lrc journal")
    return header


def locate_plan(run_dir: Path, plan_path: Path | None, cwd: Path | None = None,
                advice: str = "pass --plan PLAN.lock, the lock the folder was run with") -> Path:
    """The plan.lock of RUN_DIR: --plan, else generated/<edition id>/plan.lock above `cwd`.
    `advice` ends the refusal: how the caller's command takes a lock."""
    from lrc.runtime.execute import Refused

    if plan_path is not None:
        return plan_path
    header = _header(run_dir)
    edition = re.sub(r"\.v\d+$", "", str(header.get("edition", "")))
    start = (cwd or Path.cwd()).resolve()
    for folder in (start, *start.parents):
        candidate = folder / "generated" / edition / "plan.lock"
        if edition and candidate.is_file():
            return candidate
    raise Refused(f"no generated/{edition or '<edition>'}/plan.lock found above {start} for {run_dir} "
                  f"(edition {header.get('edition')!r}); {advice}")


def verified_lock(run_dir: Path, plan_path: Path | None) -> dict[str, Any]:
    """The lock of a run folder, verified and matching the plan digest in its journal."""
    from lrc.runtime.execute import Refused, load_verified

    lock_path = locate_plan(run_dir, plan_path)
    header = _header(run_dir)
    lock = load_verified(lock_path)
    if header.get("plan") != lock["root_digest"]:
        raise Refused(f"{run_dir} was run with plan {header.get('plan')}, but {lock_path} is plan {lock['root_digest']}: "
                      f"pass --plan with the lock the folder was run with")
    return lock


def open_journal(run_dir: Path, lock: dict[str, Any], writable: bool):
    from lrc.runtime.execute import Refused
    from lrc.runtime.journal import Journal, JournalError
    from lrc.runtime.redact import build_redactor

    try:
        return Journal(run_dir / "journal.jsonl", lock["root_digest"], lock["plan"]["edition"]["ref"],
                       redact=build_redactor(), readonly=not writable)
    except JournalError as exc:
        raise Refused(str(exc)) from exc


def _open(run_dir: Path, plan_path: Path | None, seed_file: Path | None, writable: bool):
    """(plan, journal, seed) of a run folder, with its lock verified and matching the journal."""
    from lrc.runtime.execute import resolve_seed

    lock = verified_lock(run_dir, plan_path)
    plan = lock["plan"]
    seed = resolve_seed(plan, seed_file)
    return plan, open_journal(run_dir, lock, writable), seed


def export_cli(run_dir: Path, out: Path, plan_path: Path | None = None, seed_file: Path | None = None,
               cell: str | None = None) -> int:
    """`lrc review export`: write the spot-check workbook (or, with `cell`, the cell's regrade workbook)."""
    from lrc.runtime.execute import Refused, Unusable, _OutLock
    from lrc.runtime.review import sample as sampling
    from lrc.runtime.review import workbook as wbk

    try:
        _header(run_dir)
        with _OutLock(run_dir):
            plan, journal, seed = _open(run_dir, plan_path, seed_file, writable=False)
            chosen = sampling.regrade(plan, journal, seed, sampling.parse_cell(cell)) if cell else sampling.spot_check(plan, journal, seed)
            if not chosen.rows:
                raise ReviewError(f"{run_dir} has no judged runs to review (no primary judge record of a judged workload)")
            data = wbk.write(wbk.build(plan, journal, chosen))
        from lrc.runtime import filebytes

        try:
            filebytes.put_output(out, data, inputs=(locate_plan(run_dir, plan_path),), inside=(run_dir,))
        except OSError as exc:
            raise Unusable(f"cannot write {out}: {exc.strerror or exc}") from exc
    except ReviewError as exc:
        _say(f"lrc review export: {exc}")
        return EXIT_PROBLEMS
    except Refused as exc:
        _say(f"lrc review export: {_reword(exc)}")
        return EXIT_REFUSED
    except Unusable as exc:
        _say(f"lrc review export: {exc}")
        return EXIT_UNUSABLE
    per_cell = ", ".join(f"{len(keys)}" for keys in chosen.cells.values())
    print(f"wrote {out}: {len(chosen.rows)} judgment(s) of {len(chosen.runs)} run(s) in {len(chosen.cells)} cell(s) "
          f"({chosen.scope}; runs per cell: {per_cell})")
    print(f"sample {chosen.digest}")
    return EXIT_OK


def import_cli(run_dir: Path, workbook: Path, plan_path: Path | None = None, seed_file: Path | None = None) -> int:
    """`lrc review import`: check the workbook and append its grades; print the per-cell disagreement."""
    from lrc.runtime.execute import Refused, Unusable, _OutLock
    from lrc.runtime.journal import JournalWriteError
    from lrc.runtime.review import importer
    from lrc.runtime.review.status import review_status

    try:
        from lrc.runtime.review.workbook import read_file

        data = read_file(workbook)  # a regular file within the bound: never /dev/zero, never a FIFO
        _header(run_dir)
        with _OutLock(run_dir):
            plan, journal, seed = _open(run_dir, plan_path, seed_file, writable=True)
            try:
                result = importer.import_workbook(plan, journal, seed, data)
            except JournalWriteError as exc:
                raise Unusable(f"{exc}; run the same import again once it is fixed (grades already appended are kept)") from exc
            finally:
                journal.close()
            status = review_status(plan, journal, seed)
    except ReviewError as exc:
        _say(f"lrc review import: {exc}")
        return EXIT_PROBLEMS
    except Refused as exc:
        _say(f"lrc review import: {_reword(exc)}")
        return EXIT_REFUSED
    except Unusable as exc:
        _say(f"lrc review import: {exc}")
        return EXIT_UNUSABLE
    if result.appended == 0:
        print(f"nothing appended: the {result.runs} run(s) of this workbook were already imported from it")
    else:
        print(f"appended {result.appended} human grade(s) ({result.scope})"
              + (f"; {result.already} were already imported" if result.already else ""))
    for cell, review in status.items():
        rate = "n/a" if review.disagreement_rate is None else f"{review.disagreement_rate * 100:.1f}%"
        flags = [f for f, on in (("provisional", review.provisional), ("manual regrade required", review.regrade_required and not review.regraded),
                                 ("regraded", review.regraded)) if on]
        print(f"  {'|'.join(cell)}: {review.disagreements}/{review.imported} disagree ({rate})" + (f"  [{', '.join(flags)}]" if flags else ""))
    print("run `lrc report` to rebuild the rate card with the review")
    return EXIT_OK


def _reword(exc: Exception) -> str:
    """`_OutLock` speaks of `lrc execute`; here the folder may be busy with an execute or a review."""
    return str(exc).replace("another `lrc execute` is using", "another lrc command (execute or review import) is using")
