"""Read-only SQL over one item's database: the only way agent tools and graders run SQL.

SQLite's `mode=ro` is not a sandbox (`ATTACH` of a new file and `VACUUM INTO` still write),
so read-only holds *by construction*, in layers:

1. The database is the item's bytes, deserialized into a private in-memory copy. There is
   no file to write to, and the source bytes are immutable.
2. An authorizer allow-list, consulted for every statement when it is prepared: SELECT,
   READ (of the main database), RECURSIVE (CTEs), FUNCTION (named, allow-listed
   functions only — no `load_extension`, no clock, no randomness), and the schema-reading
   PRAGMAs. Everything else — INSERT/UPDATE/DELETE, CREATE/DROP/ALTER, ATTACH/DETACH,
   VACUUM (INTO), PRAGMA writes, transactions, savepoints, ANALYZE — is denied.
3. `SQLITE_LIMIT_ATTACHED = 0`, so even a bypassed ATTACH has nowhere to go; `query_only`
   and `trusted_schema = OFF` as a further net; temp storage in memory (no temp files).
4. Resource limits: a deterministic work budget counted in SQLite VM steps by a progress
   handler (the same query stops at the same point on every machine, so a resumed run sees
   the same tool results), a wall-clock backstop, caps on value size, columns, SQL length,
   rows and bytes returned — with an explicit truncation flag, never a silent cut. Memory
   is bounded only through the budget (a sort over a cross join peaks near 200 MB at the
   default); a hard cap needs a worker process with RLIMIT_AS, which this in-process
   sandbox does not have. printf()/format() are wrapped, because SQLite pads `%.*c` inside
   a single VM step that no progress handler can interrupt.
5. Failures are values: `query()` never raises; an error comes back as a QueryResult the
   tool hands to the model, and the sandbox keeps working for the next query.

The clock is refused too ('now', CURRENT_DATE, date() without arguments): a query whose
answer depends on when it runs cannot be graded reproducibly or replayed on resume.
"""

from __future__ import annotations

import json
import re
import sqlite3
import threading
import time
from dataclasses import dataclass
from typing import Any

DEFAULT_MAX_ROWS = 200
DEFAULT_MAX_BYTES = 2_000_000
DEFAULT_VM_BUDGET = 20_000_000  # SQLite VM steps: under a second of work, and a bound on memory
DEFAULT_SECONDS = 10.0  # wall-clock backstop; the VM budget normally fires first
PROGRESS_EVERY = 10_000  # VM steps between progress-handler calls
MAX_SQL_CHARS = 20_000
MAX_VALUE_BYTES = 100_000  # largest string or blob a query may build
MAX_COLUMNS = 64
TRUNCATION_MARKER = "…[truncated]"

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
    # date and time (the clock forms are refused before preparing, see _CLOCK)
    "date", "time", "datetime", "julianday", "strftime", "unixepoch", "timediff",
    # math
    "acos", "asin", "atan", "atan2", "ceil", "ceiling", "cos", "degrees", "exp", "floor", "ln", "log", "log10",
    "log2", "mod", "pi", "pow", "power", "radians", "sin", "sqrt", "tan", "trunc",
    # json (read-only helpers)
    "json", "json_array", "json_array_length", "json_extract", "json_group_array", "json_group_object", "json_object",
    "json_quote", "json_type", "json_valid", "json_each", "json_tree",
})
"""Functions a query may call. Not here, so denied: load_extension, random, randomblob,
zeroblob, current_date/current_time/current_timestamp, sqlite_* introspection, fts helpers.
`printf`/`format` are wrapped (see _guarded_printf): SQLite pads `%.*c` one character at a
time inside a single VM step, where no progress handler can stop it."""

_PRINTF_SPEC = re.compile(r"%([-+ 0#,!]*)(\*|\d+)?(?:\.(\*|\d+))?")
MAX_PRINTF_WIDTH = 100

READONLY_PRAGMAS = frozenset({"table_info", "table_xinfo", "table_list", "index_list", "index_info", "index_xinfo",
                              "foreign_key_list"})
"""Schema-reading PRAGMAs (statement form, e.g. `PRAGMA table_info(gl_lines)`)."""

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

_CLOCK = re.compile(
    r"""['"]\s*now\s*['"]"""  # date('now'), "now"
    r"""|\b(?:date|time|datetime|julianday|unixepoch)\s*\(\s*\)"""  # no-argument forms mean now
    r"""|\bstrftime\s*\(\s*'[^']*'\s*\)""",  # strftime(format) means now
    re.IGNORECASE,
)


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
        text = json.dumps(payload, ensure_ascii=False, separators=(",", ":"))
        while len(text) > max_chars and rows:
            keep = max(0, min(len(rows) - 1, len(rows) * max_chars // max(len(text), 1) - 1))
            rows = rows[:keep]
            payload.update(rows=rows, row_count=len(rows), truncated=True,
                           note=f"{TRUNCATION_MARKER} only the first {len(rows)} rows fit in the result; aggregate or filter to see less")
            text = json.dumps(payload, ensure_ascii=False, separators=(",", ":"))
        return text


def _cell_text(value: Any, limit: int) -> Any:
    if isinstance(value, bytes):
        value = f"<blob {len(value)} bytes>"
    if isinstance(value, str) and len(value) > limit:
        return value[:limit] + TRUNCATION_MARKER
    return value


class _PrintfRefused(ValueError):
    pass


def _guarded_printf(inner: sqlite3.Connection):
    """printf/format with width and precision capped, delegated to SQLite's own printf."""

    def printf(fmt: Any, *args: Any) -> Any:
        if fmt is None:
            return None
        text = str(fmt)
        for m in _PRINTF_SPEC.finditer(text):
            for part in (m.group(2), m.group(3)):
                if part == "*" or (part and int(part) > MAX_PRINTF_WIDTH):
                    raise _PrintfRefused(f"printf width/precision above {MAX_PRINTF_WIDTH} or '*'")
        marks = ", ".join("?" * (len(args) + 1))
        return inner.execute(f"SELECT printf({marks})", (text, *args)).fetchone()[0]

    return printf


class SqlSandbox:
    """One private, read-only copy of a database. Thread-safe; `query()` never raises."""

    def __init__(self, data: bytes, *, max_rows: int = DEFAULT_MAX_ROWS, max_bytes: int = DEFAULT_MAX_BYTES,
                 vm_budget: int = DEFAULT_VM_BUDGET, seconds: float = DEFAULT_SECONDS):
        if not isinstance(data, (bytes, bytearray)) or not data:
            raise ValueError("SqlSandbox needs the bytes of an SQLite database")
        self.max_rows = max_rows
        self.max_bytes = max_bytes
        self.vm_budget = vm_budget
        self.seconds = seconds
        self._lock = threading.Lock()
        self._ticks = 0
        self._deadline = 0.0
        self._stopped: str | None = None
        self._denied: list[str] = []
        conn = sqlite3.connect(":memory:", isolation_level=None, check_same_thread=False, cached_statements=0)
        try:
            conn.deserialize(bytes(data))
            # Trusted set-up, before the authorizer exists.
            conn.execute("PRAGMA temp_store = MEMORY")
            conn.execute("PRAGMA trusted_schema = OFF")
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
            guarded = _guarded_printf(self._inner)
            conn.create_function("printf", -1, guarded, deterministic=True)
            conn.create_function("format", -1, guarded, deterministic=True)
            conn.set_authorizer(self._authorize)
            conn.set_progress_handler(self._progress, PROGRESS_EVERY)
        except Exception:
            conn.close()
            raise
        self._conn: sqlite3.Connection | None = conn

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
        elif action == _PRAGMA:
            what = f"PRAGMA {arg1}"
        elif action == _READ:
            what = f"reading {db}.{arg1}"
        elif action in (9, 18, 23) and arg1:  # DELETE, INSERT, UPDATE
            what = f"{name} on {arg1}"
        else:
            what = name
        if what not in self._denied:
            self._denied.append(what)
        return sqlite3.SQLITE_DENY

    def _progress(self) -> int:
        self._ticks += 1
        if self._ticks * PROGRESS_EVERY > self.vm_budget:
            self._stopped = "budget"
            return 1
        if time.monotonic() > self._deadline:
            self._stopped = "time"
            return 1
        return 0

    # -- queries -----------------------------------------------------------------------------
    def query(self, sql: Any, max_rows: int | None = None) -> QueryResult:
        """Run one SELECT; at most `max_rows` rows (default: the sandbox's) come back."""
        if not isinstance(sql, str) or not sql.strip():
            return QueryResult(False, error="sql must be a non-empty string holding one SELECT statement", kind="invalid")
        if len(sql) > MAX_SQL_CHARS:
            return QueryResult(False, error=f"the statement is longer than {MAX_SQL_CHARS} characters", kind="invalid")
        if "\x00" in sql:
            return QueryResult(False, error="the statement contains a NUL character", kind="invalid")
        if _CLOCK.search(sql):
            return QueryResult(False, kind="clock", error="the clock is not available ('now', date() without arguments): "
                                                          "write the dates the question gives as literals")
        limit = self.max_rows if max_rows is None else max_rows
        with self._lock:
            if self._conn is None:
                return QueryResult(False, error="the SQL sandbox is closed", kind="invalid")
            return self._run(self._conn, sql, limit)

    def _run(self, conn: sqlite3.Connection, sql: str, limit: int) -> QueryResult:
        self._ticks = 0
        self._stopped = None
        self._denied = []
        self._deadline = time.monotonic() + self.seconds
        cursor = None
        try:
            cursor = conn.cursor()
            cursor.execute(sql)
            columns = tuple(d[0] for d in cursor.description or ())
            rows: list[tuple[Any, ...]] = []
            size = 0
            truncated = False
            while True:
                row = cursor.fetchone()
                if row is None:
                    break
                if len(rows) >= limit:
                    truncated = True
                    break
                size += sum(len(v) if isinstance(v, (str, bytes)) else 8 for v in row)
                if size > self.max_bytes:
                    truncated = True
                    break
                rows.append(tuple(row))
            return QueryResult(True, columns, tuple(rows), truncated, steps=self._ticks)
        except sqlite3.Error as exc:
            return self._error(exc)
        except (ValueError, OverflowError, MemoryError) as exc:
            return QueryResult(False, error=f"the query failed: {type(exc).__name__}: {exc}", kind="sql", steps=self._ticks)
        finally:
            if cursor is not None:
                try:
                    cursor.close()
                except sqlite3.Error:  # pragma: no cover - closing an interrupted cursor
                    pass
            if conn.in_transaction:  # pragma: no cover - SELECT-only statements never open one
                conn.rollback()

    def _error(self, exc: sqlite3.Error) -> QueryResult:
        message = str(exc) or type(exc).__name__
        if self._stopped == "budget":
            return QueryResult(False, kind="limit", steps=self._ticks,
                               error=f"the query was stopped after {self.vm_budget:,} SQLite VM steps (the work limit); "
                                     f"add filters, avoid cross joins, or bound recursive CTEs")
        if self._stopped == "time":
            return QueryResult(False, kind="limit", steps=self._ticks,
                               error=f"the query was stopped after {self.seconds:g} s (the time limit)")
        if "user-defined function raised exception" in message:
            return QueryResult(False, kind="denied", steps=self._ticks,
                               error=f"printf()/format() refused: width or precision above {MAX_PRINTF_WIDTH} or '*'; use round()")
        if self._denied or "not authorized" in message:
            what = ", ".join(self._denied) or "this statement"
            return QueryResult(False, kind="denied", steps=self._ticks,
                               error=f"not allowed: {what}. The database is read-only: run one SELECT (WITH ... SELECT) "
                                     f"statement; PRAGMA table_info(<table>) shows a table's columns")
        if "too many attached" in message:
            return QueryResult(False, kind="denied", error="not allowed: ATTACH (the database is read-only)")
        if isinstance(exc, sqlite3.ProgrammingError) and "one statement" in message:
            return QueryResult(False, kind="invalid", error="run one statement at a time (no ';'-separated scripts)")
        return QueryResult(False, kind="sql", error=f"SQLite error: {message}", steps=self._ticks)

    def close(self) -> None:
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._inner.close()
                self._conn = None

    def __enter__(self) -> "SqlSandbox":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()
