"""`lrc merge PLAN.lock FOLDER… --out DIR`: combine run folders of one plan (shards) into one.

Each FOLDER is a run folder of `lrc execute` (typically `--shard i/N`). Their journals are
combined into one journal in DIR, and DIR gets the items and every output exactly as `lrc report`
writes them -- so merging the N shards of a plan gives the same outputs, byte for byte, as one
unsharded execute. A merged folder that still misses runs is partial (see `outputs.coverage`).

Refused (exit 4), with nothing written: a FOLDER that is not a run folder (no readable lrc
journal), a journal of another plan (its header's plan digest is not PLAN.lock's, or a second
header inside it), a record lrc could not have written (`journal.record_problem`), runs the plan
does not make, and overlapping folders that disagree -- the same call (run, step), the same run
or the same judge's record of a run journaled with different *content*. Content is what the measurement is made of: for a call its request digest,
response, usage and responding model; for a run its record as graded. How a call was operated
(latency, attempts, infrastructure failures, queue wait, ...) may differ between two executes of
the same deterministic run; of agreeing copies the merge keeps the one whose canonical encoding
sorts first, so the result does not depend on the order of the FOLDERs. Identical duplicates are
fine; excluded-run records and other records (a session's operating record) are kept once each.

Crash safety: the merged journal is written to a temporary file, fsync'd and renamed into place
(then the folder is fsync'd), so DIR holds either its previous journal or the whole merged one;
the outputs are rebuilt from it (each written through a temporary file) and `lrc report` rebuilds
them again at any time. DIR may be new, empty, or one of the FOLDERs (merge into a shard).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

from lrc.runtime.execute import (EXIT_REFUSED, EXIT_UNUSABLE, Refused, Unusable, _finish, _os_problem, _OutLock, _say,
                                 _say_partial, _write_outputs, import_modules, load_verified, plan_runs, resolve_seed)
from lrc.runtime.journal import JOURNAL_FORMAT, Journal, JournalError, OtherPlan, encode_line, read_records

#: The fields of a call record that are the measurement; the rest is how it was operated.
CALL_CONTENT = ("run", "step", "request", "response", "usage", "response_model")
#: The fields of a run record that are the measurement (what grading and the outputs read).
RUN_CONTENT = ("run", "workload", "model", "system", "item", "item_index", "repetition", "outcome", "steps",
               "answer_text", "answer", "submitted", "transcript", "events", "outside_window")
#: The fields of a judge's record that are the measurement (its judgment decides a judged run's verdict).
JUDGE_CONTENT = ("run", "role", "model", "rubric", "request", "material", "judgment", "invalid_judgment", "response",
                 "usage", "response_model")
_SHOWN = 5  # disagreements listed before "and N more"


def _encode(rec: dict[str, Any]) -> str:
    """A journal line, encoded by `lrc.runtime.journal` (a lone surrogate escaped, no NaN)."""
    return encode_line(rec)


def read_journal(folder: Path, plan_digest: str) -> list[dict[str, Any]]:
    """The records of `folder`'s journal after its header, in order; Refused unless it is an lrc
    journal of this plan. A torn last line (a killed execute) is left out, as a resume would.
    The lines are read by the journal's own reader (`journal.read_records`), never cut."""
    path = folder / "journal.jsonl"
    if not folder.exists():
        raise Refused(f"{folder} is not a run folder: it does not exist")
    if not folder.is_dir():
        raise Refused(f"{folder} is not a run folder: it is a file")
    if not os.path.lexists(path):
        raise Refused(f"{folder} is not a run folder: it has no journal.jsonl (`lrc execute --out` writes one)")
    try:
        records, _torn = read_records(path, plan_digest)
    except OtherPlan as exc:
        raise Refused(f"{folder} holds results of another plan ({exc.plan}), not this lock's {plan_digest}; "
                      f"only folders of the same plan can be merged") from None
    except JournalError as exc:
        raise Refused(f"{folder} is not a run folder: {exc}") from None
    except OSError as exc:
        raise Refused(f"cannot read {path}: {_os_problem(exc)}") from exc
    return records


def _content(rec: dict[str, Any], fields: tuple[str, ...]) -> str:
    return _encode({k: rec.get(k) for k in fields})


class _Slot:
    """Every copy of one call or run across the folders: they must agree on content."""

    def __init__(self) -> None:
        self.copies: dict[str, tuple[str, dict[str, Any]]] = {}  # encoding -> (content, record)
        self.where: dict[str, list[str]] = {}  # content -> folders

    def add(self, rec: dict[str, Any], content: str, folder: str) -> None:
        self.copies.setdefault(_encode(rec), (content, rec))
        self.where.setdefault(content, [])
        if folder not in self.where[content]:
            self.where[content].append(folder)

    def chosen(self) -> dict[str, Any]:
        return self.copies[min(self.copies)][1]


def _session_order(rec: dict[str, Any], encoded: str) -> tuple[str, str]:
    """Sessions in the order they were opened (undated ones first), ties by their encoding."""
    opened = rec.get("opened")
    return (opened if isinstance(opened, str) else "", encoded)


def merge_records(journals: list[tuple[str, list[dict[str, Any]]]]) -> list[dict[str, Any]]:
    """One journal's records from several of the same plan (folder name, records), in a fixed
    order: other records (sorted); then the records of runs journaled before any session record;
    then each session record in the order the sessions were opened, followed by the records of the
    runs made under it -- per run key (sorted): its calls by step, its exclusions, its run record.
    A run's records stay after the session that made them, as in its own journal, so the operating
    record and the edition's window (both read from that order) are those of the execute that made
    it; a run found in several folders goes with the earliest of their sessions. Refused when two
    folders disagree on a call or a run."""
    calls: dict[tuple[str, int], _Slot] = {}
    runs: dict[str, _Slot] = {}
    judges: dict[tuple[str, str], _Slot] = {}
    exclusions: dict[str, dict[str, dict[str, Any]]] = {}
    others: dict[str, dict[str, Any]] = {}
    sessions: dict[str, dict[str, Any]] = {}
    session_of: dict[str, tuple[str, str]] = {}  # run key -> the order of the session it was journaled under
    for folder, records in journals:
        current: tuple[str, str] | None = None
        for rec in records:
            kind = rec.get("type")
            if kind in ("call", "run", "infra_exhausted") and current is not None and isinstance(rec.get("run"), str):
                if rec["run"] not in session_of or current < session_of[rec["run"]]:
                    session_of[rec["run"]] = current
            if kind == "session":
                encoded = _encode(rec)
                sessions[encoded] = rec
                current = _session_order(rec, encoded)
            elif kind == "call":
                calls.setdefault((rec["run"], rec["step"]), _Slot()).add(rec, _content(rec, CALL_CONTENT), folder)
            elif kind == "run":
                runs.setdefault(rec["run"], _Slot()).add(rec, _content(rec, RUN_CONTENT), folder)
            elif kind == "infra_exhausted":
                exclusions.setdefault(rec["run"], {})[_encode(rec)] = rec
            elif kind == "judge":  # content like a call: two folders' judgments of a run must agree
                judges.setdefault((rec["run"], rec["role"]), _Slot()).add(rec, _content(rec, JUDGE_CONTENT), folder)
            else:
                others[_encode(rec)] = rec
    disagreements = [f"call {key} step {step}: " + " vs ".join("+".join(f) for f in slot.where.values())
                     for (key, step), slot in sorted(calls.items()) if len(slot.where) > 1]
    disagreements += [f"run {key}: " + " vs ".join("+".join(f) for f in slot.where.values())
                      for key, slot in sorted(runs.items()) if len(slot.where) > 1]
    disagreements += [f"judge ({role}) of run {key}: " + " vs ".join("+".join(f) for f in slot.where.values())
                      for (key, role), slot in sorted(judges.items()) if len(slot.where) > 1]
    for slot in judges.values():  # agreeing copies: one each, with the other records (as before)
        chosen = slot.chosen()
        others[_encode(chosen)] = chosen
    if disagreements:
        more = f"\n  … and {len(disagreements) - _SHOWN} more" if len(disagreements) > _SHOWN else ""
        raise Refused(f"the folders overlap and disagree on {len(disagreements)} journaled call(s)/run(s) "
                      f"(same key, different content); nothing was merged:\n  " + "\n  ".join(disagreements[:_SHOWN]) + more)
    steps: dict[str, list[int]] = {}
    for key, step in calls:
        steps.setdefault(key, []).append(step)
    keys = sorted(set(steps) | set(runs) | set(exclusions))
    merged = [others[k] for k in sorted(others)]

    def run_records(key: str) -> list[dict[str, Any]]:
        out = [calls[(key, step)].chosen() for step in sorted(steps.get(key, []))]
        out += [exclusions[key][e] for e in sorted(exclusions.get(key, {}))]
        return out + ([runs[key].chosen()] if key in runs else [])

    under: dict[tuple[str, str] | None, list[str]] = {}  # session order (None: before any) -> its run keys, sorted
    for key in keys:
        under.setdefault(session_of.get(key), []).append(key)
    for key in under.get(None, []):  # journaled before any session record (an lrc that did not write them)
        merged += run_records(key)
    for order in sorted(_session_order(rec, encoded) for encoded, rec in sessions.items()):
        merged.append(sessions[order[1]])
        for key in under.get(order, []):
            merged += run_records(key)
    return merged


def _write_journal(path: Path, header: dict[str, Any], records: list[dict[str, Any]]) -> None:
    """Temporary file, fsync, rename, fsync of the folder: all or nothing."""
    tmp = path.with_name(f".{path.name}.merge.{os.getpid()}.tmp")
    try:
        with open(tmp, "wb") as fh:
            for rec in (header, *records):
                fh.write((_encode(rec) + "\n").encode("utf-8"))
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    finally:
        if tmp.exists():
            tmp.unlink()
    dir_fd = os.open(path.parent, os.O_RDONLY)
    try:
        os.fsync(dir_fd)
    finally:
        os.close(dir_fd)


class _InputLock:
    """Hold a shard folder's execute lock (when it has one) while it is read: never merge a
    folder an `lrc execute` is still writing."""

    def __init__(self, folder: Path):
        self.fh = None
        lock = folder / ".lrc-execute.lock"
        if lock.is_file():
            import fcntl

            try:
                self.fh = open(lock, "rb")
                fcntl.flock(self.fh, fcntl.LOCK_SH | fcntl.LOCK_NB)
            except BlockingIOError as exc:
                self.fh.close()
                raise Refused(f"an `lrc execute` is still writing {folder}; merge it when it has finished") from exc
            except OSError:
                if self.fh is not None:
                    self.fh.close()
                self.fh = None

    def close(self) -> None:
        if self.fh is not None:
            self.fh.close()


def _no_nesting(folders: list[Path], out: Path) -> None:
    """Refused when DIR lies inside a folder being merged, or one lies inside DIR: the merged
    runs/ and items/ would be written into a shard's tree (`--out s1/runs` nested a run folder in
    the shard's traces), or over a shard's own files. DIR may be one of the folders itself."""
    target = out.resolve()
    for folder in folders:
        source = folder.resolve()
        if source == target:
            continue
        if target.is_relative_to(source):
            raise Refused(f"--out {out} is inside {folder}, a folder being merged: its runs would be written into that "
                          f"folder's tree; use a --out folder outside every input (or the input folder itself)")
        if source.is_relative_to(target):
            raise Refused(f"{folder} is inside --out {out}: the merged outputs would be written over it; "
                          f"use a --out folder outside every input (or the input folder itself)")


def merge(lock_path: Path, folders: list[Path], out: Path, seed_file: Path | None = None):
    from lrc.runtime import items as item_gen

    lock = load_verified(lock_path)
    plan = lock["plan"]
    seed = resolve_seed(plan, seed_file)

    def is_out(folder: Path) -> bool:
        return folder.exists() and out.exists() and os.path.samefile(folder, out)

    _no_nesting(folders, out)
    from lrc.runtime.execute import out_place_problem

    into_an_input = any(is_out(f) for f in folders)
    if not into_an_input:
        out_place_problem(lock_path, out)  # not inside generated/ or specs/, never over another run's outputs
    if (out / "journal.jsonl").exists() and not into_an_input:
        raise Refused(f"{out} already holds a journal; name it among the folders to merge into it, or use a new --out folder")
    created = not out.exists()
    inputs: list[_InputLock] = []
    try:
        with _OutLock(out):  # first: no execute writes into DIR while it is read or written
            for folder in folders:
                if not is_out(folder):  # DIR itself is already locked
                    inputs.append(_InputLock(folder))
            journals = [(str(folder), read_journal(folder, lock["root_digest"])) for folder in folders]
            records = merge_records(journals)
            items = item_gen.generate(plan, seed)
            runs = plan_runs(plan, items)
            planned = {r.key for r in runs}
            foreign = sorted({rec["run"] for rec in records if isinstance(rec.get("run"), str)} - planned)
            if foreign:  # counted, they made a 110-run plan's rate card say 111 runs
                raise Refused(f"the folders hold {len(foreign)} run(s) this plan does not make (e.g. {foreign[0]!r}); "
                              f"they are not this plan's results: nothing was merged")
            # Everything that can refuse is checked before the journal is replaced: a refused merge
            # into a shard leaves that shard's journal as it was.
            try:
                item_gen.write(items, out)
            except item_gen.ItemError as exc:
                raise Refused(f"{exc} (the folder holds another plan's items)") from exc
            except OSError as exc:
                raise Unusable(f"cannot write the items in {out}: {_os_problem(exc)}") from exc
            header = {"type": "header", "journal_format": JOURNAL_FORMAT, "plan": lock["root_digest"], "edition": plan["edition"]["ref"]}
            try:
                _write_journal(out / "journal.jsonl", header, records)
            except OSError as exc:
                raise Unusable(f"cannot write the merged journal in {out}: {_os_problem(exc)}") from exc
            try:
                journal = Journal(out / "journal.jsonl", lock["root_digest"], plan["edition"]["ref"], readonly=True)
            except JournalError as exc:  # pragma: no cover - the merge wrote what it read
                raise Refused(str(exc)) from exc
            summary = _write_outputs(lock, plan, runs, items, import_modules(plan), journal, out, seed)
    except Refused:
        if created and out.is_dir() and {p.name for p in out.iterdir()} <= {".lrc-execute.lock"}:
            (out / ".lrc-execute.lock").unlink(missing_ok=True)
            out.rmdir()  # a refused merge leaves no folder behind
        raise
    finally:
        for held in inputs:
            held.close()
    return summary, len(records)


def merge_cli(lock_path: Path, folders: list[Path], out: Path, seed_file: Path | None = None) -> int:
    from lrc.runtime.redact import build_redactor

    redact = build_redactor()
    try:
        summary, count = merge(lock_path, folders, out, seed_file)
    except Refused as exc:
        _say(redact(f"lrc merge: {exc}"))
        return EXIT_REFUSED
    except Unusable as exc:
        _say(redact(f"lrc merge: {exc}"))
        return EXIT_UNUSABLE
    print(summary.card, end="")
    print(summary.where)
    print(f"merged {len(folders)} folder(s): {count} journal record(s), "
          f"{summary.planned - summary.not_run} of the plan's {summary.planned} runs", file=sys.stderr)
    _say_partial("lrc merge", summary, lock_path, out)
    return _finish("lrc merge", summary)
