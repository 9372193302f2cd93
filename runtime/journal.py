"""The append-only run journal: what makes a killed run resumable without repaying a call.

One JSON line per event. The first line names the plan digest: a journal belongs to exactly
one plan, so a folder of another plan's results is refused instead of mixed in. Every model
call is recorded under (run, step) with a digest of the exact request; on resume the same
request is answered from the journal, so a finished call is never paid twice, and a different
request at the same place (non-determinism leaking in) is an error, never silently reused. A
torn last line (the process died mid-write) is cut off; damage anywhere else is refused. The
journal is created atomically (header written to a temporary file, then renamed), and a
failed write (disk full) is cut back to the last whole line, so the journal never holds half a
record.

Durability (group commit). Inside `lrc execute` records are queued with `submit`/`commit` and
written by one writer at a time off the event loop (`asyncio.to_thread`): every record queued
while the previous batch was being written goes out in the next batch, with ONE fsync for the
whole batch. A record is *acknowledged* once the fsync that follows its line has returned; only
then is it indexed (`runs`, `calls`, ...), and only an acknowledged run record counts a run as
done (the progress bar, the resume count). The guarantee:

- a record that was acknowledged survives a kill (SIGKILL, power loss after fsync) at any point;
- a kill loses at most records that were not yet acknowledged -- the batch being written and
  the records queued behind it. Their runs are not done and are made again on resume, and a call
  lost this way is made (and paid) again; a call that was acknowledged is never made again.
  `lrc execute` holds a concurrency slot of the model from sending a call until its record is
  acknowledged, so at most the model's `max_concurrency` calls are paid but unacknowledged at
  any moment: the same bound a per-line fsync gave;
- lines are written in the order they were queued, so a run's record never lands before the
  records of its calls, and what a kill leaves is a prefix of the queue (a torn last line is cut
  off on the next open);
- a failed write or fsync (disk full, EIO) cuts the file back to the end of the last whole line
  and raises JournalWriteError for every record not acknowledged; the journal is then broken
  for this process (every later write raises) and the same command resumes once the cause is
  gone.

`append` is the synchronous form (a batch of one, written and fsync'd before it returns).

An execute that runs anything first journals one "session" record: how it was operated (run
profile, flags, LRC_* variables, defaults); the runs journaled after it were made under those
settings.
"""

from __future__ import annotations

import asyncio
import json
import math
import os
import threading
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


def _finite(value: Any) -> Any:
    """A copy of `value` with NaN and the infinities as marker strings: what the journal's reader
    refuses (`decode_line`) is never written."""
    if isinstance(value, float) and not math.isfinite(value):
        return f"<{value} is not a JSON number>"
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_finite(v) for v in value]
    return value


def _dumps(rec: Any, ascii_only: bool) -> str:
    try:
        return boundedjson.dumps(rec, sort_keys=True, ensure_ascii=ascii_only, separators=(",", ":"), allow_nan=False)
    except ValueError:  # NaN or an infinity somewhere (rare: nothing lrc records is meant to hold one)
        return boundedjson.dumps(_finite(boundedjson.representable(rec)), sort_keys=True, ensure_ascii=ascii_only,
                                 separators=(",", ":"), allow_nan=False)


def _encode(rec: dict[str, Any]) -> str:
    """The record as one JSON line that is valid UTF-8 and holds no NaN: a string holding a lone
    surrogate (not Unicode text; the adapter refuses model replies with one, this is the last
    guard) is escaped (`\\ud800`), so the line is written and reads back to the same record."""
    line = _dumps(rec, False)
    if not line.isascii():
        try:
            line.encode("utf-8")
        except UnicodeEncodeError:
            line = _dumps(rec, True)
    return line


def encode_line(rec: dict[str, Any]) -> str:
    """A journal line as lrc writes it (for `lrc merge`, which writes journals of its own)."""
    return _encode(rec)


def decode_line(line: str) -> Any:
    """A journal line's value as the journal reads it: ValueError (NaN, Infinity, not JSON) or
    RecursionError for a line lrc did not write."""
    return _DECODER.decode(line)


#: The token classes a call's usage holds (adapter.split_usage).
USAGE_CLASSES = frozenset({"input", "cached_input", "cache_write", "output", "reasoning"})
#: Record types whose `run` names the run they belong to.
_OF_A_RUN = frozenset({"call", "run", "judge", "adjudication", "categorization", "infra_exhausted"})
RECORD_TYPES = frozenset({"header", "session", *_OF_A_RUN})
"""Every kind of record lrc writes in a journal of JOURNAL_FORMAT (a new kind is a new format)."""


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


_DECODER = json.JSONDecoder(parse_constant=_no_constant)
"""The journal's reader: `json.loads` takes NaN and Infinity, which lrc never writes (its
encoder refuses them) -- a line holding one was not written by lrc."""
#: The most tokens of one class a call can hold (adapter.MAX_TOKENS_PER_CALL, which refuses more at the reply).
MAX_TOKENS = 1_000_000_000


def _count(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


#: The scopes of a human grade (`lrc.runtime.review.sample.SPOT_CHECK`, `REGRADE`).
ADJUDICATION_SCOPES = frozenset({"spot-check", "regrade"})

RUN_OUTCOMES = frozenset({"answered", "step_cap", "refusal", "no_answer", "invalid_output", "budget_exceeded"})
"""How a run can end (`lrc.runtime.systems`' RunOutcome, a task's budget): the only words a run
record's `outcome` holds. Another word ended `lrc report` in an internal error (exit 70)."""


def _reuse_problem(origin: Any) -> bool:
    """Whether a call record's `reused` (`lrc.runtime.response_cache`) lacks what the report
    reads of it: where the response was paid and what it cost there (a decimal string)."""
    from decimal import Decimal, InvalidOperation

    if not isinstance(origin, dict) or not all(isinstance(origin.get(k), str) for k in ("plan", "edition", "run", "cost_usd")):
        return True
    usage = origin.get("usage")
    if not _count(origin.get("step")) or not isinstance(usage, dict) or not all(_count(v) for v in usage.values()):
        return True
    try:
        cost = Decimal(origin["cost_usd"])
    except InvalidOperation:
        return True
    return not cost.is_finite() or cost < 0


def _usage_problem(usage: Any) -> bool:
    """Whether `usage` is not a count (zero or more, at most MAX_TOKENS) per token class."""
    return not isinstance(usage, dict) or not set(usage) <= USAGE_CLASSES \
        or not all(_count(v) and v <= MAX_TOKENS for v in usage.values())


def failure_problem(failures: Any) -> str | None:
    """What makes a list of infrastructure failures (a call's `infra_failures`, an exclusion's
    `failures`) other than what lrc writes (`adapter.InfraFailure.record`): each an object of a
    `kind` (text), a `status` (a whole number or null), a `message` (text) and, for an attempt
    the provider billed, `billed` (a usage). Why: an exclusion whose last failure was a number
    ended `lrc report` of a task edition in an internal error (exit 70), and `billed` is priced."""
    if not isinstance(failures, list):
        return "is not a list"
    for failure in failures:
        if not isinstance(failure, dict) or not isinstance(failure.get("kind"), str) \
                or not isinstance(failure.get("message"), str):
            return "holds a failure that is not an object of a kind and a message (text)"
        status = failure.get("status")
        if status is not None and (not isinstance(status, int) or isinstance(status, bool)):
            return "holds a failure whose status is not a whole number"
        if "billed" in failure and _usage_problem(failure["billed"]):
            return "holds a failure whose `billed` is not a count (zero or more) per token class"
    return None


def record_problem(rec: dict[str, Any]) -> str | None:
    """What makes a journal record one lrc could not have written, in the fields the journal
    indexes and the report prices (None when there is nothing wrong there).

    Why: a record of the right JSON but the wrong shape -- a step that is text, usage that is
    not counts, a run's `events` a number, a second header (another plan's journal appended) --
    passed the load and ended every `lrc execute` and `lrc report` of the folder
    in an internal error (exit 70: sorting a step "x" against 1), and negative usage was priced
    as a negative cost. Refused like a line that is not JSON: named by line, exit 4."""
    kind = rec.get("type")
    if kind == "header":
        return "a second header: another journal's lines were appended to this one"
    if not isinstance(kind, str) or kind not in RECORD_TYPES:
        return "`type` is not a kind of record lrc writes (" + ", ".join(sorted(RECORD_TYPES - {"header"})) + ")"
    if kind in _OF_A_RUN and not isinstance(rec.get("run"), str):
        return "`run` is not text"
    if kind == "session" and (not isinstance(rec.get("operation"), dict) or not isinstance(rec.get("opened", ""), str)):
        # every run manifest and summary.json carry the operation: a session without one ended
        # `lrc report` in an internal error (exit 70)
        return "`operation` is not an object or `opened` not text"
    if kind == "run":
        if not isinstance(rec.get("outcome"), str) or rec["outcome"] not in RUN_OUTCOMES or not _count(rec.get("steps", 0)):
            return "`outcome` is not one of " + ", ".join(sorted(RUN_OUTCOMES)) + " or `steps` not a count"
        if not isinstance(rec.get("events", []), list) or not isinstance(rec.get("transcript", []), list):
            return "`events` or `transcript` is not a list"
        if not isinstance(rec.get("answer_text") or "", str) or not isinstance(rec.get("submitted", False), bool):
            return "`answer_text` is not text or `submitted` not true/false"
        if not all(_count(rec.get(k, 0)) for k in ("item_index", "repetition")):
            return "`item_index` or `repetition` is not a count"
        if not isinstance(rec.get("outside_window", False), bool):
            return "`outside_window` is not true/false"
    if kind in ("call", "judge"):
        step = rec.get("step", 1)
        if not _count(step) or step < 1:
            return "`step` is not a whole number from 1"
        if _usage_problem(rec.get("usage")):
            return "`usage` is not a count (zero or more) per token class"
        if not isinstance(rec.get("response"), dict) or not isinstance(rec.get("request", ""), str):
            return "`response` is not an object or `request` not text"
        if not _count(rec.get("attempts", 1)):
            return "`attempts` is not a count"
        problem = failure_problem(rec.get("infra_failures", []))
        if problem is not None:
            return "`infra_failures` " + problem
        response = rec["response"]
        if kind == "call" and (not isinstance(response.get("finish_reason", 0), (str, type(None)))
                               or not isinstance(response.get("refusal", 0), bool)
                               or not isinstance(response.get("message"), (dict, type(None)))):
            return "`response` lacks a finish reason (text), a refusal (true/false) or a message (an object)"
        if kind == "call" and rec.get("reused") and _reuse_problem(rec["reused"]):
            return "`reused` is not where a reused response was paid (plan, edition, run, step, usage, cost)"
    if kind == "judge":
        if not isinstance(rec.get("role"), str) or not isinstance(rec.get("model"), str):
            return "`role` or `model` is not text"
        if not isinstance(rec.get("material", {}), dict) or not isinstance(rec.get("judgment"), (dict, type(None))) \
                or not isinstance(rec.get("invalid_judgment"), (str, type(None))):
            return "`material` or `judgment` is not an object, or `invalid_judgment` not text"
    if kind == "adjudication" and (not isinstance(rec.get("judgment"), dict) or not isinstance(rec.get("scope"), str)
                                   or rec["scope"] not in ADJUDICATION_SCOPES
                                   or not isinstance(rec.get("reviewer"), (str, type(None)))):
        # a regraded cell's verdicts are its human judgments, read by key (`review.status`): one without a
        # judgment could not be read as a grade
        return "`judgment` is not an object, `scope` not one of " + ", ".join(sorted(ADJUDICATION_SCOPES)) + \
            " or `reviewer` not text"
    if kind == "categorization":  # `lrc categorize`: the latest assignment is the highest `seq`
        seq, secondary = rec.get("seq"), rec.get("secondary", [])
        if not _count(seq) or seq < 1:
            return "`seq` is not a whole number from 1"
        if not all(isinstance(rec.get(k), str) for k in ("taxonomy", "primary", "note")) \
                or not isinstance(secondary, list) or not all(isinstance(c, str) for c in secondary) \
                or not isinstance(rec.get("reviewer"), (str, type(None))):
            return "`taxonomy`, `primary` or `note` is not text, `secondary` not a list of text or `reviewer` not text"
    if kind == "infra_exhausted":
        problem = failure_problem(rec.get("failures", []))
        if problem is not None:
            return "`failures` " + problem
        if not isinstance(rec.get("reason", ""), str) or not isinstance(rec.get("judge", ""), str):
            return "`reason` or `judge` is not text"
    return None


class OtherPlan(JournalError):
    """The journal's header names another plan than the one it is read for: `plan` is the
    digest it names (whatever the header holds there)."""

    def __init__(self, path: Path, plan: Any, expected: str):
        super().__init__(f"{path.parent} holds results of another plan ({plan}), not {expected}; use a new --out folder")
        self.plan = plan


def read_records(path: Path, plan_digest: str, cut_torn_tail: bool = False) -> tuple[list[dict[str, Any]], bool]:
    """The records of the journal at `path` after its header, in order, and whether a torn last
    line (a killed writer) was left out -- and cut off the file when `cut_torn_tail`.

    The one reader of journal lines: `Journal` indexes what it returns and `lrc merge` combines
    it, so a line one of them refuses the other refuses too. JournalError (OtherPlan for another
    plan's journal) for a file lrc did not write as this plan's journal: not a regular file (a
    FIFO would be waited on forever, /dev/zero read until memory ran out), not UTF-8, empty, a
    first line that is not a header of JOURNAL_FORMAT, or any later line that is not JSON lrc
    writes or fails `record_problem`; named by line."""
    from lrc.runtime import filebytes

    try:
        data = filebytes.read_whole(path)
    except filebytes.NotRegular as exc:
        raise JournalError(f"{exc}; it is not a journal lrc wrote") from None
    truncated = False
    if data and not data.endswith(b"\n"):
        cut = data.rfind(b"\n") + 1
        if cut_torn_tail:
            with open(path, "r+b") as fh:
                fh.truncate(cut)
                fh.flush()
                os.fsync(fh.fileno())
        data = data[:cut]
        truncated = True
    return parse_records(data, path, plan_digest), truncated


def parse_records(data: bytes, path: Path, plan_digest: str) -> list[dict[str, Any]]:
    """The records after the header of journal bytes that end with a whole line (a torn tail
    left out by the caller): `read_records`'s checks, for bytes already read -- `lrc package`
    checks the very bytes it packs. JournalError (OtherPlan) as `read_records`; `path` names
    the journal in the messages."""
    try:
        lines = data.decode("utf-8").splitlines()
    except UnicodeDecodeError as exc:
        raise JournalError(f"{path}: not UTF-8 ({exc.reason}); it was not written by lrc") from None
    if not lines:
        raise JournalError(f"{path} is empty; remove it to start over")
    records: list[dict[str, Any]] = []
    for n, line in enumerate(lines, start=1):
        try:
            rec = decode_line(line)
        except (ValueError, RecursionError) as exc:
            reason = exc.msg if isinstance(exc, json.JSONDecodeError) else str(exc) if isinstance(exc, ValueError) else type(exc).__name__
            raise JournalError(f"{path}:{n}: damaged journal line ({reason}); it was not written by lrc") from None
        if not isinstance(rec, dict):
            raise JournalError(f"{path}:{n}: damaged journal line (not an object); it was not written by lrc")
        if n == 1:
            if rec.get("type") != "header" or rec.get("journal_format") != JOURNAL_FORMAT:
                raise JournalError(f"{path} is not an lrc journal of format {JOURNAL_FORMAT}")
            if rec.get("plan") != plan_digest:
                raise OtherPlan(path, rec.get("plan"), plan_digest)
            continue
        problem = record_problem(rec)
        if problem is not None:
            raise JournalError(f"{path}:{n}: damaged journal line ({problem}); it was not written by lrc")
        records.append(rec)
    return records


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
        self.judges: dict[tuple[str, str], dict[str, Any]] = {}  # (run, "primary"|"second") -> the judge's record
        self.adjudications: dict[str, list[dict[str, Any]]] = {}  # run -> human grades (`lrc review import`), in order
        self.categorizations: dict[str, list[dict[str, Any]]] = {}  # run -> reviewers' failure categories (`lrc categorize`), in order
        self.truncated_tail = False
        self._fd: int | None = None
        self._size = 0
        self._broken: BaseException | None = None
        self._write_lock = threading.Lock()  # one writer at a time: the batch writer thread or `append`
        self._queue: list[tuple[str, asyncio.Future | None]] = []  # (line, its acknowledgement), in order
        self._flusher: asyncio.Task | None = None
        self.batches = 0  # group commits made (one fsync each)
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
        records, self.truncated_tail = read_records(self.path, self.plan_digest, cut_torn_tail=not self.readonly)
        for n, rec in enumerate(records, start=2):  # line 1 is the header
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
        elif kind == "judge":  # a judge's call on a finished run (issue 12); the latest record of a role wins
            self.judges[(rec["run"], rec["role"])] = rec
        elif kind == "adjudication":  # append-only: a human grade never rewrites the judge's record
            self.adjudications.setdefault(rec["run"], []).append(rec)
        elif kind == "categorization":  # append-only: a reviewer's categories never rewrite the run or its derived ones
            self.categorizations.setdefault(rec["run"], []).append(rec)
        elif kind == "infra_exhausted":
            self.exhaustions.setdefault(rec["run"], []).append(rec)
            if rec["run"] not in self.runs:
                self.exhausted[rec["run"]] = rec

    def billed_in_exclusions(self, run_key: str) -> tuple[dict[str, int], dict[str, dict[str, int]]]:
        """The tokens the provider billed for failed attempts of calls that then ran out of
        retries (`failures[].billed` of the run's `infra_exhausted` records): the run's own calls',
        and the judge's per role. Why: such a call has no call record, so its usage was in no
        cost -- a generation that failed mid-answer is paid whatever happens next. A call that
        succeeded after such an attempt holds that attempt's tokens in its own usage already."""
        own: dict[str, int] = {}
        judge: dict[str, dict[str, int]] = {}
        for rec in self.exhaustions.get(run_key, []):
            into = judge.setdefault(rec["judge"], {}) if rec.get("judge") else own
            for failure in rec.get("failures", []):
                for cls, n in (failure.get("billed") or {}).items():
                    into[cls] = into.get(cls, 0) + n
        return own, judge

    def _line(self, rec: dict[str, Any]) -> str:
        """The record's journal line, redacted; raises JournalWriteError if nothing may be written."""
        if self._fd is None:
            raise JournalWriteError(f"{self.path} was opened read-only")
        if self._broken is not None:
            raise JournalWriteError(f"cannot write {self.path}: {self._broken}")
        line = _encode(rec)
        if self.redact(line) != line:  # redact the strings, so the line stays valid JSON
            line = _encode(redact_value(rec, self.redact))
        return line

    def _write_lines(self, lines: list[str]) -> tuple[int, OSError | None]:
        """Write `lines` in order, then one fsync. (lines acknowledged, the error if any).

        On an error, the file is cut back to the end of the last whole line; those whole lines
        are acknowledged only if a second fsync of them succeeds."""
        with self._write_lock:
            size = self._size
            whole = 0
            try:
                for line in lines:
                    data = line.encode("utf-8") + b"\n"
                    view = memoryview(data)
                    while view:
                        written = os.write(self._fd, view)
                        view = view[written:]
                    size += len(data)
                    whole += 1
                os.fsync(self._fd)
            except OSError as exc:
                self._broken = exc
                acked = 0
                try:  # cut the partial line back off: the journal keeps only whole lines
                    os.ftruncate(self._fd, size)
                    os.fsync(self._fd)
                    acked = whole
                except OSError:
                    pass  # a torn last line is cut off by the next run anyway
                self._size = size
                return acked, exc
            self._size = size
            self.batches += 1
            return len(lines), None

    def append(self, rec: dict[str, Any]) -> None:
        """Journal one record (redacted), durably, or raise JournalWriteError having written nothing."""
        line = self._line(rec)
        acked, exc = self._write_lines([line])
        if exc is not None:
            raise JournalWriteError(f"cannot write {self.path}: {exc.strerror or exc}") from exc
        self._index(json.loads(line))

    # -- group commit (inside the event loop) --------------------------------------------------

    def submit(self, rec: dict[str, Any]) -> "asyncio.Future[None]":
        """Queue a record for the next group commit. The future is done once the record is
        acknowledged (its line fsync'd, the record indexed), or fails with JournalWriteError.
        It need not be awaited: queue order is kept, so awaiting a later record acknowledges
        this one too. Raises JournalWriteError at once if the journal is already broken."""
        line = self._line(rec)
        loop = asyncio.get_running_loop()
        ack = loop.create_future()
        ack.add_done_callback(_retrieve)  # an ack nobody awaits must not warn "never retrieved"
        self._queue.append((line, ack))
        if self._flusher is None or self._flusher.done():
            self._flusher = loop.create_task(self._flush())
        return ack

    async def commit(self, rec: dict[str, Any]) -> None:
        """Queue a record and wait until it is acknowledged (see the module docstring)."""
        await self.submit(rec)

    async def drain(self) -> None:
        """Wait until everything queued is written (or has failed)."""
        while self._flusher is not None and not self._flusher.done():
            await asyncio.shield(self._flusher)

    async def _flush(self) -> None:
        while self._queue:
            batch, self._queue = self._queue, []
            if self._broken is not None:
                acked, exc = 0, self._broken
            else:
                # The write and the fsync run off the event loop; records queued meanwhile form
                # the next batch. A cancelled flusher still finishes the batch in its thread.
                try:
                    acked, exc = await asyncio.shield(asyncio.to_thread(self._write_lines, [line for line, _ in batch]))
                except asyncio.CancelledError:
                    raise
                except Exception as failure:  # noqa: BLE001 - never leave a record's waiter waiting forever
                    # Not an OSError (those are handled in _write_lines): the journal is broken
                    # for this process and every waiting record fails, so the execute stops and
                    # says why instead of waiting for an acknowledgement that cannot come.
                    self._broken = OSError(f"{type(failure).__name__}: {failure}")
                    acked, exc = 0, self._broken
            for n, (line, ack) in enumerate(batch):
                if n < acked:
                    self._index(json.loads(line))
                    if ack is not None and not ack.done():
                        ack.set_result(None)
                elif ack is not None and not ack.done():
                    error = JournalWriteError(f"cannot write {self.path}: {getattr(exc, 'strerror', None) or exc}")
                    error.__cause__ = exc
                    ack.set_exception(error)

    def close(self) -> None:
        """Close the file; records still queued (never acknowledged) are not written."""
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None


def _retrieve(ack: "asyncio.Future[None]") -> None:
    if not ack.cancelled():
        ack.exception()
