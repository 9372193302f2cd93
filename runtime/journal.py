"""The append-only run journal: what makes a killed run resumable without repaying a call.

One JSON line per event, flushed and fsync'd before the run moves on. The first line names
the plan digest: a journal belongs to exactly one plan, so a folder of another plan's
results is refused instead of mixed in. Every model call is recorded under (run, step)
with a digest of the exact request; on resume the same request is answered from the
journal, so a finished call is never paid twice, and a different request at the same
place (non-determinism leaking in) is an error, never silently reused. A torn last line
(the process died mid-write) is cut off; damage anywhere else is refused. The journal is
created atomically (header written to a temporary file, then renamed), and a failed write
(disk full) is cut back off, so the journal never holds half a record. An execute that runs
anything first journals one "session" record: how it was operated (run profile, flags, LRC_*
variables, defaults); the runs journaled after it were made under those settings.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, Callable

from lrc.runtime import boundedjson
from lrc.runtime.redact import redact_value

JOURNAL_FORMAT = 1


class JournalError(Exception):
    """The journal cannot be used (damaged, another plan's): the folder is refused."""


class JournalWriteError(Exception):
    """Writing the journal failed (disk full, folder made read-only): the run must stop.

    The line being written was cut back off, so the journal holds exactly what was
    journaled before; once the cause is gone the same command resumes from there.
    """


def run_key(workload: str, model: str, system: str, item_id: str, repetition: int) -> str:
    return f"{workload}|{model}|{system}|{item_id}|r{repetition}"


def _encode(rec: dict[str, Any]) -> str:
    return boundedjson.dumps(rec, sort_keys=True, ensure_ascii=False, separators=(",", ":"))


class Journal:
    """`readonly=True` reads a journal without ever opening it for writing (`lrc report`,
    the outputs after a run): a torn last line is then ignored, not cut off."""

    def __init__(self, path: Path, plan_digest: str, edition: str, redact: Callable[[str], str] = lambda s: s,
                 readonly: bool = False):
        self.path = path
        self.plan_digest = plan_digest
        self.redact = redact
        self.readonly = readonly
        self.calls: dict[tuple[str, int], dict[str, Any]] = {}
        self.runs: dict[str, dict[str, Any]] = {}
        self.exhausted: dict[str, dict[str, Any]] = {}  # runs whose latest state is "infra retries exhausted"
        self.exhaustions: dict[str, list[dict[str, Any]]] = {}  # every exhaustion ever journaled, per run
        self.sessions: list[dict[str, Any]] = []  # one "session" record per execute that journaled something, in order
        self.run_session: dict[str, int] = {}  # run -> index in `sessions` of the execute that journaled it
        self.truncated_tail = False
        self._fd: int | None = None
        self._size = 0
        self._broken: BaseException | None = None
        if readonly:
            self._load()
            return
        path.parent.mkdir(parents=True, exist_ok=True)
        if not path.exists() or path.stat().st_size == 0:
            # No journal, or the empty file an older lrc left when killed between creating
            # the journal and writing its header: it holds nothing, so start it afresh.
            self._create({"type": "header", "journal_format": JOURNAL_FORMAT, "plan": plan_digest, "edition": edition})
        else:
            self._load()
        self._fd = os.open(path, os.O_WRONLY | os.O_APPEND)
        self._size = os.fstat(self._fd).st_size

    def _create(self, header: dict[str, Any]) -> None:
        """Write the header to a temporary file, fsync it, rename it into place: a kill at any
        moment leaves either no journal or one with its header, never an empty one."""
        tmp = self.path.with_name(f".{self.path.name}.{os.getpid()}.tmp")
        try:
            with open(tmp, "wb") as fh:
                fh.write((_encode(header) + "\n").encode("utf-8"))
                fh.flush()
                os.fsync(fh.fileno())
            os.replace(tmp, self.path)
        finally:
            if tmp.exists():
                tmp.unlink()
        dir_fd = os.open(self.path.parent, os.O_RDONLY)
        try:
            os.fsync(dir_fd)
        finally:
            os.close(dir_fd)

    def _load(self) -> None:
        data = self.path.read_bytes()
        if data and not data.endswith(b"\n"):
            cut = data.rfind(b"\n") + 1
            if not self.readonly:
                with open(self.path, "r+b") as fh:
                    fh.truncate(cut)
                    fh.flush()
                    os.fsync(fh.fileno())
            data = data[:cut]
            self.truncated_tail = True
        try:
            lines = data.decode("utf-8").splitlines()
        except UnicodeDecodeError as exc:
            raise JournalError(f"{self.path}: not UTF-8 ({exc.reason}); it was not written by lrc") from None
        if not lines:
            raise JournalError(f"{self.path} is empty; remove it to start over")
        for n, line in enumerate(lines, start=1):
            try:
                rec = json.loads(line)
            except (ValueError, RecursionError) as exc:
                reason = exc.msg if isinstance(exc, json.JSONDecodeError) else type(exc).__name__
                raise JournalError(f"{self.path}:{n}: damaged journal line ({reason}); it was not written by lrc") from None
            if not isinstance(rec, dict):
                raise JournalError(f"{self.path}:{n}: damaged journal line (not an object); it was not written by lrc")
            if n == 1:
                if rec.get("type") != "header" or rec.get("journal_format") != JOURNAL_FORMAT:
                    raise JournalError(f"{self.path} is not an lrc journal of format {JOURNAL_FORMAT}")
                if rec.get("plan") != self.plan_digest:
                    raise JournalError(
                        f"{self.path.parent} holds results of another plan ({rec.get('plan')}), not {self.plan_digest}; "
                        f"use a new --out folder")
                continue
            try:
                self._index(rec)
            except (KeyError, TypeError) as exc:
                raise JournalError(f"{self.path}:{n}: damaged journal line (missing {exc}); it was not written by lrc") from None

    def _index(self, rec: dict[str, Any]) -> None:
        kind = rec.get("type")
        if kind == "call":
            self.calls[(rec["run"], rec["step"])] = rec
        elif kind == "run":
            self.runs[rec["run"]] = rec
            self.exhausted.pop(rec["run"], None)
            if self.sessions:
                self.run_session[rec["run"]] = len(self.sessions) - 1
        elif kind == "session":  # how an execute was operated: it applies to the records after it
            self.sessions.append(rec)
        elif kind == "infra_exhausted":
            self.exhaustions.setdefault(rec["run"], []).append(rec)
            if rec["run"] not in self.runs:
                self.exhausted[rec["run"]] = rec

    def append(self, rec: dict[str, Any]) -> None:
        """Journal one record (redacted), durably, or raise JournalWriteError having written nothing."""
        if self._fd is None:
            raise JournalWriteError(f"{self.path} was opened read-only")
        if self._broken is not None:
            raise JournalWriteError(f"cannot write {self.path}: {self._broken}")
        line = _encode(rec)
        if self.redact(line) != line:  # redact the strings, so the line stays valid JSON
            rec = redact_value(rec, self.redact)
            line = _encode(rec)
        data = line.encode("utf-8") + b"\n"
        try:
            view = memoryview(data)
            while view:
                written = os.write(self._fd, view)
                view = view[written:]
            os.fsync(self._fd)
        except OSError as exc:
            self._broken = exc
            try:  # cut the partial line back off: the journal keeps exactly what was journaled
                os.ftruncate(self._fd, self._size)
            except OSError:
                pass  # a torn last line is cut off by the next run anyway
            raise JournalWriteError(f"cannot write {self.path}: {exc.strerror or exc}") from exc
        self._size += len(data)
        self._index(json.loads(line))

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None
