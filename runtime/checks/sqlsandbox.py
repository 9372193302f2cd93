"""Read-only SQL over one item's database: the only way agent tools and graders run SQL.

SQLite's `mode=ro` is not a sandbox (`ATTACH` of a new file and `VACUUM INTO` still write),
and SQLite's progress handler is not a limit (one VM step — a `LIKE` over a long string, a
sort of long rows — can take seconds or gigabytes). So the SQL never runs in this process:

1. The engine (`sqlengine.py`: a private in-memory copy of the database, the authorizer
   allow-list, `SQLITE_LIMIT_ATTACHED = 0`, the deterministic VM-step work budget, no clock
   and no randomness, capped printf) runs in a small pool of worker processes, started
   with `python -I -S` on the engine file and kept warm. Each worker caps its address space
   with RLIMIT_AS (`MEMORY_HEADROOM` above what it maps at start) and SQLite's hard heap
   limit a little below that.
2. Every query has a hard wall-clock limit: past `seconds` + `KILL_SLACK` the worker is
   killed (SIGKILL) and replaced, and the query comes back as a time-limit error. The
   work budget still fires first for ordinary runaway queries, at the same VM step on
   every machine, so a resumed run sees the same tool result.
3. Results are bounded in rows and bytes (with an explicit truncation flag, never a silent
   cut), and the reply from a worker is size-checked before it is parsed.
4. `query()` blocks only its own thread; async callers use `aquery()` (or run the tool in a
   thread, as the agentic system does), so a slow query never stalls the event loop.
5. Failures are values: `query()` never raises; an error comes back as a QueryResult the
   tool hands to the model, and the sandbox keeps working for the next query. A warm
   worker found dead mid-query is replaced and the query run once more, so a death that
   was not the query's does not become its result.

Workers start with an empty environment (no API keys in the process that runs hostile SQL)
and in their own session; a worker whose parent dies reads end-of-file and exits.

Workers cache a few databases by content digest (one guarded connection each), so a run's
queries and its grading on the same bytes do not reload them.
"""

from __future__ import annotations

import asyncio
import atexit
import hashlib
import json
import math
import os
import select
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from typing import Any

from lrc.runtime.checks import sqlengine
from lrc.runtime.checks.sqlengine import ALLOWED_FUNCTIONS, MAX_COLUMNS, MAX_SQL_CHARS, MAX_VALUE_BYTES  # noqa: F401

DEFAULT_MAX_ROWS = 200
DEFAULT_MAX_BYTES = 2_000_000
DEFAULT_VM_BUDGET = 20_000_000  # SQLite VM steps: under a second of ordinary work
DEFAULT_SECONDS = 10.0  # wall-clock limit: the worker is killed past it (+ KILL_SLACK)
KILL_SLACK = 0.5  # seconds after the engine's own soft deadline before the hard kill
MEMORY_HEADROOM = 256 * 1024 * 1024  # RLIMIT_AS above what a worker maps at start
STARTUP_SECONDS = 60.0  # for a worker to start, or to load a database (trusted work, not the query's)
POOL_SIZE = max(2, min(4, os.cpu_count() or 2))
TRUNCATION_MARKER = "…[truncated]"
_ENGINE = os.path.abspath(sqlengine.__file__)


@dataclass(frozen=True)
class QueryResult:
    """What a query produced: columns and rows, or an error. `truncated` means rows were cut."""

    ok: bool
    columns: tuple[str, ...] = ()
    rows: tuple[tuple[Any, ...], ...] = ()
    truncated: bool = False
    error: str | None = None
    kind: str | None = None  # denied | limit | clock | invalid | sql
    steps: int = 0  # VM steps used, in units of PROGRESS_EVERY

    def to_text(self, max_chars: int = 20_000, max_cell_chars: int = 500) -> str:
        """The result as the JSON text a tool returns to the model."""
        if not self.ok:
            return f"error: {self.error}"
        rows = [[_cell_text(v, max_cell_chars) for v in row] for row in self.rows]
        columns = [_cell_text(c, 200) for c in self.columns]  # a column named by a long expression
        payload: dict[str, Any] = {"columns": columns, "rows": rows, "row_count": len(rows),
                                   "truncated": self.truncated}
        if self.truncated:
            payload["note"] = f"{TRUNCATION_MARKER} only the first {len(rows)} rows are shown; aggregate or filter to see less"
        text = json.dumps(payload, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
        while len(text) > max_chars and rows:
            keep = max(0, min(len(rows) - 1, len(rows) * max_chars // max(len(text), 1) - 1))
            rows = rows[:keep]
            payload.update(rows=rows, row_count=len(rows), truncated=True,
                           note=f"{TRUNCATION_MARKER} only the first {len(rows)} rows fit in the result; aggregate or filter to see less")
            text = json.dumps(payload, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
        return text


def _cell_text(value: Any, limit: int) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return "Inf" if value > 0 else "-Inf"  # as SQLite writes it; JSON has no infinity
    if isinstance(value, bytes):
        value = f"<blob {len(value)} bytes>"
    if isinstance(value, str) and len(value) > limit:
        return value[:limit] + TRUNCATION_MARKER
    return value


class _WorkerGone(Exception):
    """The worker died or overran its hard deadline; it has been killed."""

    def __init__(self, timed_out: bool):
        super().__init__("timed out" if timed_out else "died")
        self.timed_out = timed_out


class _Worker:
    """One engine process and its pipes. Used by one thread at a time (the pool's checkout)."""

    def __init__(self, headroom: int):
        self.proc = subprocess.Popen(
            [sys.executable, "-I", "-S", _ENGINE, str(headroom)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL, close_fds=True, cwd="/", start_new_session=True,
            env={})  # no environment: the process that runs hostile SQL holds no API keys
        self.peak_rss_kb = 0
        self.served = 0  # replies received: a worker that never answered is fresh
        try:  # wait until it is ready: its start-up is not the query's time
            ready = self._receive(time.monotonic() + STARTUP_SECONDS, 1000).get("ready")
        except _WorkerGone:
            ready = False
        if not ready:
            self.kill()
            raise OSError(f"the SQL worker ({sys.executable} {_ENGINE}) did not start")

    def kill(self) -> None:
        if self.proc.poll() is None:
            try:
                self.proc.kill()
            except OSError:  # pragma: no cover - already gone
                pass
        try:
            self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:  # pragma: no cover - a process that survives SIGKILL
            pass
        for pipe in (self.proc.stdin, self.proc.stdout):
            try:
                pipe.close()
            except OSError:
                pass

    def _send(self, *frames: bytes) -> None:
        try:
            self.proc.stdin.write(b"".join(sqlengine.FRAME.pack(len(f)) + f for f in frames))
            self.proc.stdin.flush()
        except (BrokenPipeError, OSError, ValueError) as exc:
            self.kill()
            raise _WorkerGone(False) from exc

    def _receive(self, deadline: float, max_size: int) -> dict[str, Any]:
        fd = self.proc.stdout.fileno()
        buf = bytearray()
        need = sqlengine.FRAME.size
        header_done = False
        while True:
            while len(buf) < need:
                left = deadline - time.monotonic()
                if left <= 0:
                    self.kill()
                    raise _WorkerGone(True)
                poller = select.poll()  # not select.select: it fails for descriptors above 1023
                poller.register(fd, select.POLLIN | select.POLLHUP | select.POLLERR)
                ready = poller.poll(max(1, int(left * 1000)))
                if not ready:
                    continue
                chunk = os.read(fd, max(65536, need - len(buf)))
                if not chunk:
                    self.kill()
                    raise _WorkerGone(False)
                buf += chunk
            if header_done:
                del buf[:sqlengine.FRAME.size]  # in place: a large reply is not copied again
                return json.loads(buf)
            size = sqlengine.FRAME.unpack(bytes(buf[:sqlengine.FRAME.size]))[0]
            if size > max_size:
                self.kill()
                raise _WorkerGone(False)
            need = sqlengine.FRAME.size + size
            header_done = True

    def query(self, digest: str, data: bytes, request: dict[str, Any], seconds: float, max_size: int) -> dict[str, Any]:
        """Run `request` on the database `digest`, loading it first if this worker lacks it; hard limit `seconds`."""
        body = json.dumps({"op": "query", "db": digest, **request}).encode("utf-8")
        self._send(body)
        reply = self._receive(time.monotonic() + seconds, max_size)
        if reply.get("need_db"):
            self._send(json.dumps({"op": "load", "db": digest}).encode(), data)
            loaded = self._receive(time.monotonic() + STARTUP_SECONDS, 1_000_000)
            if not loaded.get("loaded"):
                return loaded
            self._send(body)
            reply = self._receive(time.monotonic() + seconds, max_size)
        self.peak_rss_kb = max(self.peak_rss_kb, int(reply.pop("peak_rss_kb", 0) or 0))
        self.served += 1
        return reply


class _Pool:
    """At most `size` warm workers; a dead or killed one is replaced on the next checkout."""

    def __init__(self, size: int, headroom: int):
        self.size = size
        self.headroom = headroom
        self.pid = os.getpid()
        self._idle: list[_Worker] = []
        self._count = 0
        self._cond = threading.Condition()
        self.peak_rss_kb = 0  # the largest peak resident size any worker reported (for measurement)

    def acquire(self) -> _Worker:
        with self._cond:
            while True:
                while not self._idle and self._count >= self.size:
                    self._cond.wait()
                if not self._idle:
                    break
                worker = self._idle.pop()
                if worker.proc.poll() is None:
                    return worker
                worker.kill()  # died while idle (killed from outside): replace it
                self._count -= 1
            self._count += 1
        try:
            return _Worker(self.headroom)
        except BaseException:
            with self._cond:
                self._count -= 1
                self._cond.notify()
            raise

    def release(self, worker: _Worker, healthy: bool) -> None:
        self.peak_rss_kb = max(self.peak_rss_kb, worker.peak_rss_kb)
        if not healthy:
            worker.kill()
        with self._cond:
            if healthy:
                self._idle.append(worker)
            else:
                self._count -= 1
            self._cond.notify()

    def shutdown(self) -> None:
        with self._cond:
            idle, self._idle = self._idle, []
            self._count -= len(idle)
        for w in idle:
            w.kill()


_POOL: _Pool | None = None
_POOL_LOCK = threading.Lock()


def pool() -> _Pool:
    """The process's worker pool (a fresh one after a fork: pipes are not shared)."""
    global _POOL
    with _POOL_LOCK:
        if _POOL is None or _POOL.pid != os.getpid():
            _POOL = _Pool(POOL_SIZE, MEMORY_HEADROOM)
        return _POOL


@atexit.register
def _shutdown() -> None:
    if _POOL is not None and _POOL.pid == os.getpid():
        _POOL.shutdown()


def _rows(rows: Any) -> tuple[tuple[Any, ...], ...]:
    return tuple(tuple(bytes.fromhex(v["$b"]) if isinstance(v, dict) else v for v in row) for row in rows)


class SqlSandbox:
    """One read-only view of a database, run by the worker pool. Thread-safe.

    `query()` never raises for anything a query does; only a worker that cannot be started
    at all (an environment problem) raises OSError."""

    def __init__(self, data: bytes, *, max_rows: int = DEFAULT_MAX_ROWS, max_bytes: int = DEFAULT_MAX_BYTES,
                 vm_budget: int = DEFAULT_VM_BUDGET, seconds: float = DEFAULT_SECONDS):
        if not isinstance(data, (bytes, bytearray)) or not data:
            raise ValueError("SqlSandbox needs the bytes of an SQLite database")
        self._data = bytes(data)
        self._digest = hashlib.sha256(self._data).hexdigest()
        self.max_rows = max_rows
        self.max_bytes = max_bytes
        self.vm_budget = vm_budget
        self.seconds = seconds
        self._closed = False

    def query(self, sql: Any, max_rows: int | None = None) -> QueryResult:
        """Run one SELECT; at most `max_rows` rows (default: the sandbox's) come back."""
        if not isinstance(sql, str) or not sql.strip():
            return QueryResult(False, error="sql must be a non-empty string holding one SELECT statement", kind="invalid")
        if len(sql) > MAX_SQL_CHARS:
            return QueryResult(False, error=f"the statement is longer than {MAX_SQL_CHARS} characters", kind="invalid")
        if "\x00" in sql:
            return QueryResult(False, error="the statement contains a NUL character", kind="invalid")
        try:
            sql.encode("utf-8")
        except UnicodeEncodeError as exc:  # a lone surrogate (JSON "\ud800" in a tool call)
            return QueryResult(False, error=f"the statement is not valid Unicode (a lone surrogate at character {exc.start})",
                               kind="invalid")
        if self._closed:
            return QueryResult(False, error="the SQL sandbox is closed", kind="invalid")
        limit = self.max_rows if max_rows is None else max_rows
        request = {"sql": sql, "max_rows": limit, "max_bytes": self.max_bytes, "vm_budget": self.vm_budget,
                   "seconds": self.seconds}
        max_reply = sqlengine.reply_cap(self.max_bytes, limit)  # the worker refuses to send more
        workers = pool()
        reply: dict[str, Any] = {}
        for attempt in (1, 2):
            # An engine that cannot start at all is an environment error: OSError, raised.
            worker = workers.acquire()
            warm = worker.served > 0
            healthy = False
            try:
                reply = worker.query(self._digest, self._data, request, self.seconds + KILL_SLACK, max_reply)
                healthy = True
                break
            except _WorkerGone as gone:
                if gone.timed_out:
                    return QueryResult(False, kind="limit", error=f"the query was stopped after {self.seconds:g} s (the time limit)")
                if attempt == 1 and warm:
                    # A warm worker may have died of something else (killed from outside, not yet
                    # reaped): the query gets one more worker before the death counts as its own.
                    continue
                return QueryResult(False, kind="limit", error="the query stopped the SQL engine (it exceeded the memory or "
                                                              "result-size limit); aggregate or filter")
            except (ValueError, KeyError, TypeError) as exc:  # a reply that is not the protocol
                return QueryResult(False, kind="sql", error=f"the SQL engine replied badly ({type(exc).__name__})")
            finally:
                workers.release(worker, healthy)
        if not reply.get("ok"):
            return QueryResult(False, error=str(reply.get("error") or "the query failed"), kind=reply.get("kind") or "sql",
                               steps=int(reply.get("steps") or 0))
        return QueryResult(True, tuple(str(c) for c in reply["columns"]), _rows(reply["rows"]), bool(reply["truncated"]),
                           steps=int(reply.get("steps") or 0))

    async def aquery(self, sql: Any, max_rows: int | None = None) -> QueryResult:
        """`query()` off the event loop."""
        return await asyncio.to_thread(self.query, sql, max_rows)

    def close(self) -> None:
        self._closed = True

    def __enter__(self) -> "SqlSandbox":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()
