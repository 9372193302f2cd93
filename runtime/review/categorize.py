"""`lrc categorize RUN_DIR --run KEY --primary C [--secondary C ...] --note TEXT [--reviewer NAME]`.

Seed 000, "Run procedure" step 8: a reviewer assigns failure categories *without changing the
original run record*. An assignment is one `categorization` record appended to the folder's
journal (fsync'd, like `lrc review import`'s adjudications, under the folder's
`.lrc-execute.lock`, so never while an execute or a review import writes it). Nothing is ever
rewritten: not the run record, not the categories lrc derives from the taxonomy's rules
(lrc.runtime.failures, recomputed at every report). Two assignments of one run are both kept;
the report shows the latest as the run's assigned categories, beside the derived ones.

Refused, with nothing appended (exit 1): a folder that is not an `lrc execute` folder, a run
key the journal holds no graded run of (keys are `workload|model|system|item|rN`, as in
`runs/` and the journal; the message names the closest), a category that is not in the
taxonomy locked in the run's plan or is in the wrong tier (a primary as --secondary and back),
an empty note. The lock must verify like `lrc report`'s (exit 4 otherwise).
"""

from __future__ import annotations

import difflib
import sys
from pathlib import Path
from typing import Any

from lrc.runtime.review.cli import EXIT_OK, EXIT_PROBLEMS, EXIT_REFUSED, EXIT_UNUSABLE, _header, _reword, open_journal, verified_lock
from lrc.runtime.review.sample import ReviewError

MAX_NOTE = 4000


def _closest(word: str, choices: list[str]) -> str:
    guess = difflib.get_close_matches(word, choices, n=1)
    return f"; did you mean '{guess[0]}'?" if guess else ""


def record(plan: dict[str, Any], journal, run: str, primary: str, secondary: list[str], note: str,
           reviewer: str | None) -> dict[str, Any]:
    """The `categorization` record to append, or ReviewError saying why there is none."""
    from lrc.runtime.failures import taxonomy_ids

    if run not in journal.runs:
        keys = sorted(journal.runs)
        raise ReviewError(f"no graded run '{run}' in this folder ({len(keys)} run(s); keys are workload|model|system|item|rN)"
                          + _closest(run, keys))
    ids = taxonomy_ids(plan)
    if not ids:
        raise ReviewError("the run's plan locks no failure taxonomy: there is nothing to categorize by")
    ref = plan["taxonomy"]["ref"]
    for value, want, flag in [(primary, "primary", "--primary")] + [(s, "secondary", "--secondary") for s in secondary]:
        if value not in ids:
            raise ReviewError(f"{flag} '{value}' is not a category of {ref}" + _closest(value, sorted(ids)) +
                              f" ({want}: {', '.join(sorted(i for i, t in ids.items() if t == want))})")
        if ids[value] != want:
            raise ReviewError(f"{flag} '{value}' is a {ids[value]} category of {ref}; {flag} takes a {want} one "
                              f"({', '.join(sorted(i for i, t in ids.items() if t == want))})")
    if len(set(secondary)) != len(secondary):
        raise ReviewError("a --secondary category is given twice")
    note = note.strip()
    if not note:
        raise ReviewError("--note is empty: say why the run gets these categories")
    if len(note) > MAX_NOTE:
        raise ReviewError(f"--note has {len(note):,} characters; at most {MAX_NOTE:,}")
    # `seq`: the assignment's number for this run (1, 2, ...), taken under the folder lock. The
    # latest assignment is the highest number, not the last line: `lrc merge` orders records by
    # content, so the position of a record is not its history.
    seq = 1 + max((int(r.get("seq", 0) or 0) for r in journal.categorizations.get(run, [])), default=0)
    rec = {"type": "categorization", "run": run, "seq": seq, "taxonomy": ref, "primary": primary, "secondary": list(secondary),
           "note": note}
    if reviewer:
        rec["reviewer"] = reviewer.strip()[:200]
    return rec


def recorded_problem(plan: dict[str, Any], journal) -> str | None:
    """Why a `categorization` record in the journal could not have been written by `lrc
    categorize` for this plan (None: every one could). The report counts the latest assignment
    of each run by its primary category; a record naming a category the locked taxonomy does not
    hold (hand-edited, or merged from a folder of another taxonomy) would put a category in the
    published counts that no reviewer could have chosen."""
    from lrc.runtime.failures import taxonomy_ids

    if not journal.categorizations:
        return None
    ids = taxonomy_ids(plan)
    ref = (plan.get("taxonomy") or {}).get("ref")
    for run, made in sorted(journal.categorizations.items()):
        for rec in made:
            what = f"the categorization of run {run[:200]!r}"
            if not ids:
                return f"{what}: the plan locks no failure taxonomy"
            if run not in journal.runs:  # `lrc categorize` assigns categories to graded runs only
                return f"{what}: this folder holds no graded run of that key"
            if rec.get("taxonomy") != ref:
                return f"{what} is of taxonomy {str(rec.get('taxonomy'))[:80]!r}, the plan's is {ref!r}"
            primary, secondary = rec.get("primary"), rec.get("secondary", [])
            if not isinstance(primary, str) or ids.get(primary) != "primary":
                return f"{what} names primary {str(primary)[:80]!r}, not a primary category of {ref}"
            if not isinstance(secondary, list) or len(set(map(str, secondary))) != len(secondary) \
                    or any(not isinstance(c, str) or ids.get(c) != "secondary" for c in secondary):
                return f"{what} names secondary {str(secondary)[:80]!r}, not distinct secondary categories of {ref}"
            seq = rec.get("seq")
            if isinstance(seq, bool) or not isinstance(seq, int) or seq < 1:
                return f"{what} has sequence number {str(seq)[:40]!r}, not a whole number from 1"
            if not isinstance(rec.get("note"), str) or (rec.get("reviewer") is not None and not isinstance(rec["reviewer"], str)):
                return f"{what} has a note or reviewer that is not text"
    return None


def latest(journal, run: str) -> dict[str, Any] | None:
    """The run's latest assignment as {primary, secondary, note, reviewer, assignments}, or None."""
    made = journal.categorizations.get(run) or []
    if not made:
        return None
    last = max(enumerate(made), key=lambda pair: (int(pair[1].get("seq", 0) or 0), pair[0]))[1]
    return {"primary": last["primary"], "secondary": list(last.get("secondary") or []), "note": last.get("note"),
            "reviewer": last.get("reviewer"), "assignments": len(made)}


def categorize_cli(run_dir: Path, run: str, primary: str, secondary: list[str], note: str, reviewer: str | None = None,
                   plan_path: Path | None = None) -> int:
    from lrc.runtime.execute import Refused, Unusable, _OutLock
    from lrc.runtime.journal import JournalWriteError

    try:
        if not run_dir.is_dir():
            raise ReviewError(f"{run_dir} is not a folder: pass an `lrc execute --out` folder")
        try:
            _header(run_dir)
        except Refused as exc:
            raise ReviewError(str(exc)) from None
        with _OutLock(run_dir):
            lock = verified_lock(run_dir, plan_path)  # as `lrc review`'s, without a seed: an assignment samples nothing
            plan, journal = lock["plan"], open_journal(run_dir, lock, writable=True)
            try:
                rec = record(plan, journal, run, primary, secondary, note, reviewer)
                count = rec["seq"]
                journal.append(rec)
            except JournalWriteError as exc:
                raise Unusable(f"{exc}; nothing was appended") from exc
            finally:
                journal.close()
    except ReviewError as exc:
        print(f"lrc categorize: {exc}", file=sys.stderr)
        return EXIT_PROBLEMS
    except Refused as exc:
        print(f"lrc categorize: {_reword(exc)}", file=sys.stderr)
        return EXIT_REFUSED
    except Unusable as exc:
        print(f"lrc categorize: {exc}", file=sys.stderr)
        return EXIT_UNUSABLE
    shown = primary + (f" (+ {', '.join(secondary)})" if secondary else "")
    print(f"appended assignment {count} of {run}: {shown}; the run record and its derived categories are unchanged")
    print("run `lrc report` to show it beside the derived categories")
    return EXIT_OK
