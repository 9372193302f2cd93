"""The SQL engine behind the sandbox: one guarded SQLite connection, and the worker that runs it.

This module is the part of the SQL sandbox that touches untrusted SQL. It imports the
standard library only, because it also runs as a script: `runtime/checks/sqlsandbox.py`
starts it as a worker process (`python -I -S sqlengine.py HEADROOM`) and talks to it over
its stdin and stdout, so that a query's memory and time are bounded by the operating
system (RLIMIT_AS, a hard kill), not by the engine's own good behaviour. The guards here
hold inside the worker:

1. The database is the item's bytes, deserialized into a private in-memory copy: no file
   to write to.
2. An authorizer allow-list, consulted when a statement is prepared: SELECT, READ of the
   main database, RECURSIVE CTEs, the allow-listed functions and the schema-reading
   PRAGMAs. Everything else (writes, DDL, ATTACH, VACUUM, PRAGMA writes, transactions) is
   denied. `SQLITE_LIMIT_ATTACHED = 0`, `query_only` and `trusted_schema = OFF` as nets.
3. A deterministic work budget counted in SQLite VM steps by a progress handler (the same
   query stops at the same point on every machine) plus a fixed charge for each call of a
   function the engine evaluates itself (FUNCTION_CALL_STEPS), a soft deadline in the same handler,
   SQLite's hard heap limit, and caps on value size, columns, SQL length, rows and bytes
   returned (with a truncation flag).
4. No clock and no randomness, in the engine itself, never by matching text:
   - date(), time(), datetime(), julianday(), strftime(), unixepoch() (and timediff() where
     SQLite has it) are replaced by functions of the same names that hand their arguments
     to SQLite's own implementation evaluated in a *pure* context (a generated column of a
     private table). SQLite itself refuses there whatever reads the clock or the machine's
     time zone — 'now' however it is built or spelled, the argument-less forms,
     strftime(format), the 'localtime' and 'utc' modifiers — and computes everything
     else exactly as it always does, because it is the same code.
   - CURRENT_DATE, CURRENT_TIME and CURRENT_TIMESTAMP are not special syntax to the
     engine: SQLite's parser turns each keyword into a call of the function of that name,
     which the authorizer sees and refuses (and which is overridden by a refusing function
     besides). random() and randomblob() likewise: not allow-listed, and overridden.
5. printf()/format() are wrapped: SQLite pads `%.*c` inside one VM step that no progress
   handler can stop, so widths and precisions are capped.
6. `json_each` / `json_tree` and the schema PRAGMAs' table-valued forms (`pragma_table_info`
   ...) work read-only: their eponymous virtual tables are set up once in the trusted
   set-up, before the authorizer exists. Any other virtual table would be created on first
   use (a write of the schema) and is refused, naming the ones that are available.
"""

from __future__ import annotations

import hashlib
import json
import re
import sqlite3
import struct
import sys
import threading
import time
from collections import OrderedDict
from typing import Any

PROGRESS_EVERY = 10_000  # VM steps between progress-handler calls
MAX_SQL_CHARS = 20_000
MAX_VALUE_BYTES = 100_000  # largest string or blob a query may build
MAX_COLUMNS = 64
MAX_PRINTF_WIDTH = 100
FUNCTION_CALL_STEPS = 500
"""VM steps charged to the work budget for each call of a function this engine evaluates
itself (the clock-free date functions, printf): such a call costs tens of microseconds, not
one VM step, and without the charge a query of many of them would run into the wall-clock
limit (which differs by machine) instead of the work budget (which does not)."""
CLOCK_CACHE_ENTRIES = 4096  # results of the clock-free date functions kept per process (pure: same arguments, same result)
CLOCK_CACHE_ARG_CHARS = 200  # calls with a longer argument are not cached

ALLOWED_FUNCTIONS = frozenset({
    # aggregate
    "avg", "count", "group_concat", "string_agg", "max", "min", "sum", "total",
    # window
    "row_number", "rank", "dense_rank", "percent_rank", "cume_dist", "ntile", "lag", "lead", "first_value",
    "last_value", "nth_value",
    # scalar
    "abs", "char", "coalesce", "concat", "concat_ws", "format", "glob", "hex", "ifnull", "iif", "instr", "length",
    "like", "likelihood", "likely", "lower", "ltrim", "nullif", "octet_length", "printf", "quote",
    "replace", "round", "rtrim", "sign", "substr", "substring", "trim", "typeof", "unicode", "unlikely", "upper",
    "unhex",
    # date and time: replaced by clock-free versions (see _Clockless)
    "date", "time", "datetime", "julianday", "strftime", "unixepoch", "timediff",
    # math
    "acos", "asin", "atan", "atan2", "ceil", "ceiling", "cos", "degrees", "exp", "floor", "ln", "log", "log10",
    "log2", "mod", "pi", "pow", "power", "radians", "sin", "sqrt", "tan", "trunc",
    # json (read-only helpers; json_each/json_tree are table-valued)
    "json", "json_array", "json_array_length", "json_extract", "json_group_array", "json_group_object", "json_object",
    "json_quote", "json_type", "json_valid", "json_each", "json_tree",
})
"""Functions a query may call. Not here, so denied: load_extension, random, randomblob,
zeroblob, current_date/current_time/current_timestamp, sqlite_* introspection, fts helpers."""

CLOCK_FUNCTIONS = ("date", "time", "datetime", "julianday", "strftime", "unixepoch", "timediff")
CLOCK_KEYWORDS = ("current_date", "current_time", "current_timestamp")
RANDOM_FUNCTIONS = ("random", "randomblob")

READONLY_PRAGMAS = frozenset({"table_info", "table_xinfo", "table_list", "index_list", "index_info", "index_xinfo",
                              "foreign_key_list"})
"""Schema-reading PRAGMAs: the statement form (`PRAGMA table_info(gl_lines)`) and the
table-valued one (`SELECT name FROM pragma_table_info('gl_lines')`)."""

TABLE_FUNCTIONS = ("json_each", "json_tree", *sorted(f"pragma_{name}" for name in READONLY_PRAGMAS))
"""Table-valued functions a query may use; their eponymous virtual tables exist before the authorizer."""
_UPDATE, _SCHEMA_TABLES = 23, ("sqlite_master", "sqlite_schema")

_ACTION_NAMES = {
    1: "CREATE INDEX", 2: "CREATE TABLE", 3: "CREATE TEMP INDEX", 4: "CREATE TEMP TABLE", 5: "CREATE TEMP TRIGGER",
    6: "CREATE TEMP VIEW", 7: "CREATE TRIGGER", 8: "CREATE VIEW", 9: "DELETE", 10: "DROP INDEX", 11: "DROP TABLE",
    12: "DROP TEMP INDEX", 13: "DROP TEMP TABLE", 14: "DROP TEMP TRIGGER", 15: "DROP TEMP VIEW", 16: "DROP TRIGGER",
    17: "DROP VIEW", 18: "INSERT", 19: "PRAGMA", 20: "READ", 21: "SELECT", 22: "TRANSACTION", 23: "UPDATE", 24: "ATTACH",
    25: "DETACH", 26: "ALTER TABLE", 27: "REINDEX", 28: "ANALYZE", 29: "CREATE VIRTUAL TABLE", 30: "DROP VIRTUAL TABLE",
    31: "FUNCTION", 32: "SAVEPOINT", 33: "RECURSIVE",
}
"""Authorizer action codes (sqlite3.h), for messages."""
_SELECT, _READ, _FUNCTION, _PRAGMA = sqlite3.SQLITE_SELECT, sqlite3.SQLITE_READ, sqlite3.SQLITE_FUNCTION, sqlite3.SQLITE_PRAGMA
_RECURSIVE = getattr(sqlite3, "SQLITE_RECURSIVE", 33)
_PRINTF_SPEC = re.compile(r"%([-+ 0#,!]*)(\*|\d+)?(?:\.(\*|\d+))?")

CLOCK_MESSAGE = ("the clock is not available (the current date or time — 'now', CURRENT_DATE, date() without a "
                 "date — or the 'localtime'/'utc' modifiers): write the dates the question gives as literals")
MEMORY_MESSAGE = ("the query ran out of memory (the memory limit); aggregate or filter, and avoid sorting or "
                  "grouping long strings")
RANDOM_MESSAGE = "random() and randomblob() are not available: a query's result must not depend on chance"


class Refusal(Exception):
    """A function refused its arguments; `kind` and `message` go to the model."""

    def __init__(self, kind: str, message: str):
        super().__init__(message)
        self.kind = kind
        self.message = message


class _Clockless:
    """SQLite's own date and time functions, evaluated where SQLite forbids the clock.

    Each call inserts its arguments into a private table whose generated column applies the
    real function to them. SQLite evaluates generated columns as pure expressions and
    raises "non-deterministic use of date() in a generated column" whenever the function
    would read the current time or the time zone, however the argument was produced.
    """

    def __init__(self) -> None:
        self.conn = sqlite3.connect(":memory:", isolation_level=None, check_same_thread=False)
        self.conn.setlimit(sqlite3.SQLITE_LIMIT_LENGTH, MAX_VALUE_BYTES)
        self.available = tuple(n for n in CLOCK_FUNCTIONS if self._exists(n))
        self._statements: dict[tuple[str, int], str] = {}
        self._cache: dict[tuple[Any, ...], Any] = {}
        self._lock = threading.Lock()

    @classmethod
    def shared(cls) -> "_Clockless":
        """One per process: it holds no state between calls."""
        global _CLOCKLESS
        with _SHARED_LOCK:
            if _CLOCKLESS is None:
                _CLOCKLESS = cls()
            return _CLOCKLESS

    def _exists(self, name: str) -> bool:
        try:
            self.conn.execute(f"SELECT {name}('2000-01-01', '2000-01-01')").fetchone()
            return True
        except sqlite3.OperationalError as exc:
            return "no such function" not in str(exc)

    def _statement(self, name: str, nargs: int) -> str:
        key = (name, nargs)
        sql = self._statements.get(key)
        if sql is None:
            table = f"p_{name}_{nargs}"
            cols = [f"a{i}" for i in range(nargs)]
            self.conn.execute(f"CREATE TABLE {table}(k INTEGER PRIMARY KEY{''.join(', ' + c for c in cols)}, "
                              f"r AS ({name}({', '.join(cols)})) VIRTUAL)")
            marks = "".join(", ?" for _ in cols)
            sql = f"INSERT OR REPLACE INTO {table}(k{''.join(', ' + c for c in cols)}) VALUES (1{marks}) RETURNING r"
            self._statements[key] = sql
        return sql

    def call(self, name: str, args: tuple[Any, ...]) -> Any:
        # The key holds each argument's type: 1, 1.0 and '1' are different dates to SQLite.
        key = (name, *((type(a), a) for a in args))
        cacheable = all(not isinstance(a, (str, bytes)) or len(a) <= CLOCK_CACHE_ARG_CHARS for a in args)
        with self._lock:
            if cacheable and key in self._cache:
                return self._cache[key]
            try:
                row = self.conn.execute(self._statement(name, len(args)), args).fetchone()
            except sqlite3.Error as exc:
                if "non-deterministic" in str(exc):
                    raise Refusal("clock", CLOCK_MESSAGE) from None
                raise Refusal("sql", f"{name}(): {exc}") from None
            if cacheable:
                if len(self._cache) >= CLOCK_CACHE_ENTRIES:
                    self._cache.clear()
                self._cache[key] = row[0]
        return row[0]


_CLOCKLESS: _Clockless | None = None
_SHARED_LOCK = threading.Lock()


class Engine:
    """One guarded, read-only SQLite connection over a private copy of `data`."""

    def __init__(self, data: bytes):
        if not isinstance(data, (bytes, bytearray)) or not data:
            raise ValueError("the SQL engine needs the bytes of an SQLite database")
        self._ticks = 0
        self._charged = 0  # VM steps charged for function calls (FUNCTION_CALL_STEPS each)
        self._budget = 0
        self._deadline = 0.0
        self._stopped: str | None = None
        self._denied: list[str] = []
        self._refusal: Refusal | None = None
        conn = sqlite3.connect(":memory:", isolation_level=None, check_same_thread=False, cached_statements=0)
        try:
            conn.deserialize(bytes(data))
            # Trusted set-up, before the authorizer exists.
            conn.execute("PRAGMA temp_store = MEMORY")
            conn.execute("PRAGMA trusted_schema = OFF")
            # Table-valued functions create their eponymous virtual tables (an UPDATE of
            # sqlite_master, which the authorizer would refuse) on first use: do it now.
            for function in TABLE_FUNCTIONS:
                conn.execute(f"SELECT * FROM {function}('[]')").fetchall()
            conn.execute("PRAGMA query_only = ON")
            conn.setlimit(sqlite3.SQLITE_LIMIT_ATTACHED, 0)
            conn.setlimit(sqlite3.SQLITE_LIMIT_LENGTH, MAX_VALUE_BYTES)
            conn.setlimit(sqlite3.SQLITE_LIMIT_SQL_LENGTH, MAX_SQL_CHARS * 4)
            conn.setlimit(sqlite3.SQLITE_LIMIT_COLUMN, MAX_COLUMNS)
            conn.setlimit(sqlite3.SQLITE_LIMIT_EXPR_DEPTH, 200)
            conn.setlimit(sqlite3.SQLITE_LIMIT_COMPOUND_SELECT, 50)
            conn.setlimit(sqlite3.SQLITE_LIMIT_FUNCTION_ARG, 32)
            conn.setlimit(sqlite3.SQLITE_LIMIT_LIKE_PATTERN_LENGTH, 1000)
            conn.setlimit(sqlite3.SQLITE_LIMIT_TRIGGER_DEPTH, 1)
            conn.setlimit(sqlite3.SQLITE_LIMIT_WORKER_THREADS, 0)
            if hasattr(conn, "enable_load_extension"):  # absent when SQLite is built without it
                conn.enable_load_extension(False)
            self._inner = sqlite3.connect(":memory:", check_same_thread=False)
            self._inner.setlimit(sqlite3.SQLITE_LIMIT_LENGTH, MAX_VALUE_BYTES)
            self._clock = _Clockless.shared()
            # User functions take precedence over built-ins of the same name, for every
            # arity when registered with narg=-1.
            conn.create_function("printf", -1, self._guard(self._printf), deterministic=True)
            conn.create_function("format", -1, self._guard(self._printf), deterministic=True)
            for name in self._clock.available:
                conn.create_function(name, -1, self._guard(self._clocked(name)), deterministic=True)
            for name in CLOCK_KEYWORDS:
                conn.create_function(name, -1, self._guard(self._refuse("clock", CLOCK_MESSAGE)), deterministic=True)
            for name in RANDOM_FUNCTIONS:
                conn.create_function(name, -1, self._guard(self._refuse("random", RANDOM_MESSAGE)), deterministic=True)
            conn.set_authorizer(self._authorize)
            conn.set_progress_handler(self._progress, PROGRESS_EVERY)
        except Exception:
            conn.close()
            raise
        self._conn: sqlite3.Connection | None = conn

    # -- functions ---------------------------------------------------------------------------
    def _guard(self, fn):
        def guarded(*args: Any) -> Any:
            self._charged += FUNCTION_CALL_STEPS  # the same charge whether a result was cached or not
            try:
                return fn(*args)
            except Refusal as exc:
                if self._refusal is None:
                    self._refusal = exc
                raise
        return guarded

    def _clocked(self, name: str):
        return lambda *args: self._clock.call(name, args)

    @staticmethod
    def _refuse(kind: str, message: str):
        def refuse(*_args: Any) -> Any:
            raise Refusal(kind, message)
        return refuse

    def _printf(self, fmt: Any = None, *args: Any) -> Any:
        if fmt is None:
            return None
        text = str(fmt)
        for m in _PRINTF_SPEC.finditer(text):
            for part in (m.group(2), m.group(3)):
                if part == "*" or (part and int(part) > MAX_PRINTF_WIDTH):
                    raise Refusal("denied", f"printf()/format() refused: width or precision above {MAX_PRINTF_WIDTH} "
                                            f"or '*'; use round()")
        marks = ", ".join("?" * (len(args) + 1))
        try:
            return self._inner.execute(f"SELECT printf({marks})", (text, *args)).fetchone()[0]
        except sqlite3.Error as exc:
            raise Refusal("sql", f"printf(): {exc}") from None

    # -- guards ----------------------------------------------------------------------------
    def _authorize(self, action: int, arg1: str | None, arg2: str | None, db: str | None, _trigger: str | None) -> int:
        if action == _SELECT or action == _RECURSIVE:
            return sqlite3.SQLITE_OK
        if action == _READ and (db == "main" or (db is None and not arg2)):  # db is None for count(*)-style reads
            return sqlite3.SQLITE_OK
        if action == _FUNCTION and (arg2 or "").lower() in ALLOWED_FUNCTIONS:
            return sqlite3.SQLITE_OK
        if action == _PRAGMA and (arg1 or "").lower() in READONLY_PRAGMAS:
            return sqlite3.SQLITE_OK
        name = _ACTION_NAMES.get(action, f"action {action}")
        if action == _FUNCTION:
            what = f"function {arg2}()"
            if (arg2 or "").lower() in CLOCK_KEYWORDS and self._refusal is None:
                self._refusal = Refusal("clock", f"{(arg2 or '').upper()}: {CLOCK_MESSAGE}")
            elif (arg2 or "").lower() in RANDOM_FUNCTIONS and self._refusal is None:
                self._refusal = Refusal("random", RANDOM_MESSAGE)
        elif action == _PRAGMA:
            what = f"PRAGMA {arg1}"
        elif action == 24 and not arg1:  # ATTACH '' is how VACUUM starts
            what = "VACUUM"
        elif action == 24:
            what = "ATTACH (and VACUUM INTO)"
        elif action == _READ:
            what = f"reading {db}.{arg1}"
        elif action == _UPDATE and (arg1 or "").lower() in _SCHEMA_TABLES:
            # SQLite refuses an UPDATE statement on the schema itself before asking; this is a
            # table-valued function or virtual table being created on first use.
            what = f"this table-valued function or virtual table (available: {', '.join(TABLE_FUNCTIONS)})"
        elif action in (9, 18, 23) and arg1:  # DELETE, INSERT, UPDATE
            what = f"{name} on {arg1}"
        else:
            what = name
        if what not in self._denied:
            self._denied.append(what)
        return sqlite3.SQLITE_DENY

    def _steps(self) -> int:
        """Work used, in units of PROGRESS_EVERY VM steps (function calls included)."""
        return (self._ticks * PROGRESS_EVERY + self._charged) // PROGRESS_EVERY

    def _progress(self) -> int:
        self._ticks += 1
        if self._ticks * PROGRESS_EVERY + self._charged > self._budget:
            self._stopped = "budget"
            return 1
        if time.monotonic() > self._deadline:
            self._stopped = "time"
            return 1
        return 0

    # -- queries -----------------------------------------------------------------------------
    def query(self, sql: str, *, max_rows: int, max_bytes: int, vm_budget: int, seconds: float) -> dict[str, Any]:
        """Run one statement. Returns {ok, columns, rows, truncated, error, kind, steps}; never raises."""
        conn = self._conn
        if conn is None:
            return _failure("invalid", "the SQL sandbox is closed")
        self._ticks = 0
        self._charged = 0
        self._budget = vm_budget
        self._stopped = None
        self._denied = []
        self._refusal = None
        self._deadline = time.monotonic() + seconds
        cursor = None
        try:
            cursor = conn.cursor()
            cursor.execute(sql)
            columns = [d[0] for d in cursor.description or ()]
            rows: list[list[Any]] = []
            size = 0
            truncated = False
            while True:
                row = cursor.fetchone()
                if row is None:
                    break
                if len(rows) >= max_rows:
                    truncated = True
                    break
                size += sum(len(v) if isinstance(v, (str, bytes)) else 8 for v in row)
                if size > max_bytes:
                    truncated = True
                    break
                rows.append(list(row))
            return {"ok": True, "columns": columns, "rows": rows, "truncated": truncated, "steps": self._steps()}
        except sqlite3.Error as exc:
            return self._error(exc, vm_budget, seconds)
        except MemoryError:  # SQLITE_NOMEM (the hard heap limit), or Python's own allocation under RLIMIT_AS
            return _failure("limit", MEMORY_MESSAGE, self._steps())
        except (ValueError, OverflowError) as exc:
            return _failure("sql", f"the query failed: {type(exc).__name__}: {exc}", self._steps())
        finally:
            if cursor is not None:
                try:
                    cursor.close()
                except sqlite3.Error:  # pragma: no cover - closing an interrupted cursor
                    pass
            if conn.in_transaction:  # pragma: no cover - SELECT-only statements never open one
                conn.rollback()

    def _error(self, exc: sqlite3.Error, vm_budget: int, seconds: float) -> dict[str, Any]:
        message = str(exc) or type(exc).__name__
        steps = self._steps()
        if self._stopped == "budget":
            return _failure("limit", f"the query was stopped after {vm_budget:,} SQLite VM steps (the work limit); "
                                     f"add filters, avoid cross joins, or bound recursive CTEs", steps)
        if self._stopped == "time":
            return _failure("limit", f"the query was stopped after {seconds:g} s (the time limit)", steps)
        if self._refusal is not None:
            kind = self._refusal.kind
            return _failure("denied" if kind == "random" else kind, self._refusal.message, steps)
        if self._denied or "not authorized" in message:
            what = ", ".join(self._denied) or "this statement"
            return _failure("denied", f"not allowed: {what}. The database is read-only: run one SELECT (WITH ... SELECT) "
                                      f"statement; PRAGMA table_info(<table>) shows a table's columns", steps)
        if "too many attached" in message:
            return _failure("denied", "not allowed: ATTACH (the database is read-only)", steps)
        if "out of memory" in message.lower():
            return _failure("limit", MEMORY_MESSAGE, steps)
        if isinstance(exc, sqlite3.ProgrammingError) and "one statement" in message:
            return _failure("invalid", "run one statement at a time (no ';'-separated scripts)", steps)
        return _failure("sql", f"SQLite error: {message}", steps)

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._inner.close()
            self._conn = None


def _failure(kind: str, error: str, steps: int = 0) -> dict[str, Any]:
    return {"ok": False, "kind": kind, "error": error, "steps": steps}


# ------------------------------------------------------------------------------------------
# the worker process
#
# Frames on stdin and stdout: a 4-byte big-endian length, then that many bytes of JSON. A
# request that carries a database is followed by a second frame with its raw bytes.
#   <- {"ready": true}                        (once, at start)
#   -> {"op": "query", "db": digest, "sql": ..., "max_rows", "max_bytes", "vm_budget", "seconds"}
#   <- {"need_db": true}                      (send {"op": "load", "db": digest} + bytes, then ask again)
#   <- {"ok": ..., ..., "peak_rss_kb": n}     (bytes cells are {"$b": hex})

MAX_CACHED = 32  # databases (and their connections) a worker keeps ...
MAX_CACHED_BYTES = 48 * 1024 * 1024  # ... and their total size (they live inside SQLite's heap limit)
FRAME = struct.Struct(">I")


def reply_cap(max_bytes: int, max_rows: int) -> int:
    """The largest reply frame for a query's limits: its cells (counted in characters, at most
    `max_bytes` of them, a few escaped or multi-byte) and the JSON around them."""
    return 2 * (max_bytes + MAX_VALUE_BYTES) + 32 * max_rows * MAX_COLUMNS + 1_000_000


def _read_exact(stream, n: int) -> bytes | None:
    chunks, got = [], 0
    while got < n:
        chunk = stream.read(n - got)
        if not chunk:
            return None
        chunks.append(chunk)
        got += len(chunk)
    return b"".join(chunks)


def _read_frame(stream) -> bytes | None:
    head = _read_exact(stream, FRAME.size)
    if head is None:
        return None
    return _read_exact(stream, FRAME.unpack(head)[0])


def _write_frame(stream, payload: bytes) -> None:
    stream.write(FRAME.pack(len(payload)) + payload)
    stream.flush()


def _cell(value: Any) -> Any:
    return {"$b": value.hex()} if isinstance(value, bytes) else value


def peak_rss_kb() -> int:
    """This worker's own peak resident size. VmHWM belongs to the process's address space, which
    exec made new; ru_maxrss would carry over the peak of the (possibly large) parent it was
    forked from, and so overstate a worker started by a big process."""
    try:
        with open("/proc/self/status", encoding="ascii", errors="replace") as fh:
            for line in fh:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
    except (OSError, ValueError, IndexError):
        pass
    try:
        import resource

        return int(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
    except (ImportError, OSError):  # pragma: no cover - not on Linux
        return 0


def limit_memory(headroom: int) -> None:
    """RLIMIT_AS = what the process maps now + `headroom`; SQLite's own heap a little below it."""
    try:
        import resource

        with open("/proc/self/status", encoding="ascii") as fh:
            mapped = next(int(line.split()[1]) * 1024 for line in fh if line.startswith("VmSize:"))
        resource.setrlimit(resource.RLIMIT_AS, (mapped + headroom, mapped + headroom))
    except (ImportError, OSError, StopIteration, ValueError):  # pragma: no cover - not on Linux
        pass
    probe = sqlite3.connect(":memory:")
    probe.execute(f"PRAGMA hard_heap_limit = {headroom * 3 // 4}")
    probe.close()


def serve(headroom: int) -> None:
    limit_memory(headroom)
    stdin, stdout = sys.stdin.buffer, sys.stdout.buffer
    _write_frame(stdout, b'{"ready": true}')
    engines: OrderedDict[str, Engine] = OrderedDict()
    sizes: dict[str, int] = {}
    while True:
        frame = _read_frame(stdin)
        if frame is None:
            return
        request = json.loads(frame)
        digest = str(request.get("db"))
        if request.get("op") == "load":
            data = _read_frame(stdin)
            if data is None:
                return
            if hashlib.sha256(data).hexdigest() != digest:
                _write_frame(stdout, json.dumps(_failure("invalid", "database bytes do not match their digest")).encode())
                continue
            try:
                engines[digest] = Engine(data)
                sizes[digest] = len(data)
            except (ValueError, sqlite3.Error, MemoryError) as exc:
                _write_frame(stdout, json.dumps(_failure("invalid", f"not an SQLite database: {exc}")).encode())
                continue
            engines.move_to_end(digest)
            while len(engines) > 1 and (len(engines) > MAX_CACHED or sum(sizes.values()) > MAX_CACHED_BYTES):
                old, engine = engines.popitem(last=False)
                engine.close()
                sizes.pop(old, None)
            _write_frame(stdout, b'{"loaded": true}')
            continue
        engine = engines.get(digest)
        if engine is None:
            _write_frame(stdout, b'{"need_db": true}')
            continue
        engines.move_to_end(digest)
        out = engine.query(str(request["sql"]), max_rows=int(request["max_rows"]), max_bytes=int(request["max_bytes"]),
                           vm_budget=int(request["vm_budget"]), seconds=float(request["seconds"]))
        if out.get("ok"):
            out["rows"] = [[_cell(v) for v in row] for row in out["rows"]]
        out["peak_rss_kb"] = peak_rss_kb()
        cap = reply_cap(int(request["max_bytes"]), int(request["max_rows"]))
        try:  # UTF-8, not \u escapes: a result of non-ASCII text is not six times its size on the pipe
            payload = json.dumps(out, ensure_ascii=False).encode("utf-8")
        except MemoryError:
            payload = b""
        except (ValueError, TypeError) as exc:
            payload = json.dumps(_failure("sql", f"the result cannot be returned: {type(exc).__name__}")).encode()
        if not payload or len(payload) > cap:
            payload = json.dumps(_failure("limit", f"the result is too large to return (over {cap:,} bytes as JSON); "
                                                   f"aggregate, filter or select fewer columns")).encode()
        _write_frame(stdout, payload)


if __name__ == "__main__":  # the worker: python -I -S sqlengine.py HEADROOM_BYTES
    serve(int(sys.argv[1]))
