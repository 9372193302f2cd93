"""The agent sandbox as a security boundary: every escape is refused and the run goes on.

SQL (runtime/checks/sqlsandbox.py): writes, DDL, ATTACH, VACUUM INTO, PRAGMA writes,
extension loading, transactions, scripts, temp objects, the clock; a recursive CTE that runs
forever and a cross join are stopped by the work budget; a huge result is capped with an
explicit truncation flag. After each attempt the sandbox still answers, the source bytes are
unchanged and no file appeared anywhere we can see.

Files (runtime/checks/filesandbox.py): `../`, absolute paths, NUL, backslashes, percent
escapes, look-alike dots, sibling-prefix folders, symlinked files and folders (inside the
root or pointing out of it), FIFOs, oversized files, files swapped on disk — all refused,
with a canary token outside the root never read.

And the same through the workloads' tools, as a model would try them.
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import tempfile
import time
from pathlib import Path
from typing import Any

import pytest

from lrc.runtime.checks.filesandbox import DirectorySandbox, FileSandbox, PathRefused, clean_path
from lrc.runtime.checks.sqlengine import Engine
from lrc.runtime.checks import sqlsandbox
from lrc.runtime.checks.sqlsandbox import TRUNCATION_MARKER, QueryResult, SqlSandbox
from lrc.runtime.workloads import financedb

CANARY_TOKEN = "CANARY-7f3c1e-never-read"


@pytest.fixture(scope="module")
def db_bytes() -> bytes:
    return financedb.database("sandbox-tests", "primary", 3, 60)


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def listing(*folders: Path) -> set[str]:
    out: set[str] = set()
    for folder in folders:
        if folder.is_dir():
            out |= {str(p) for p in folder.iterdir()}
    return out


# ---------------------------------------------------------------------------------------
# SQL


def test_select_works(db_bytes: bytes) -> None:
    with SqlSandbox(db_bytes) as box:
        res = box.query("SELECT COUNT(*) AS n, ROUND(SUM(debit) - SUM(credit), 2) AS diff FROM gl_lines")
        assert res.ok and res.columns == ("n", "diff") and res.rows[0][0] > 300 and res.rows[0][1] == 0
        res = box.query("WITH t AS (SELECT account_id, SUM(debit) AS d FROM gl_lines GROUP BY 1) "
                        "SELECT account_id, RANK() OVER (ORDER BY d DESC) AS r FROM t ORDER BY r LIMIT 3")
        assert res.ok and len(res.rows) == 3
        assert box.query("PRAGMA table_info(gl_lines)").ok
        assert box.query("SELECT name FROM sqlite_master WHERE type = 'table'").ok
        assert box.query("SELECT printf('%.2f', 1234.5)").rows == (("1234.50",),)


ESCAPES = [
    # (statement, words the error must contain)
    ("ATTACH DATABASE '{tmp}/attached.db' AS evil", "ATTACH"),
    ("VACUUM INTO '{tmp}/copy.db'", "VACUUM INTO"),
    ("vacuum main into '{tmp}/copy2.db'", "VACUUM INTO"),
    ("VACUUM", "not allowed: VACUUM"),
    ("attach '{tmp}/a.db' as a", "ATTACH"),
    ("AtTaCh DaTaBaSe 'file:{tmp}/b.db?mode=rwc' AS b", "ATTACH"),
    ("ATTACH ':memory:' AS m", "ATTACH"),
    ("SELECT * FROM pragma_compile_options", "table-valued function"),
    ("SELECT * FROM pragma_database_list", "table-valued function"),
    ("SELECT * FROM pragma_function_list", "table-valued function"),
    ("SELECT * FROM dbstat", "table-valued function"),
    ("SELECT data_version FROM pragma_data_version", "table-valued function"),
    ("INSERT INTO accounts VALUES ('9999', 'x', 'asset', 'debit', 1)", "INSERT on accounts"),
    ("UPDATE gl_lines SET debit = 0", "UPDATE on gl_lines"),
    ("DELETE FROM journal_entries", "DELETE on journal_entries"),
    ("DROP TABLE gl_lines", "not allowed"),
    ("CREATE TABLE evil (x)", "not allowed"),
    ("CREATE TEMP TABLE evil (x)", "not allowed"),
    ("CREATE TEMP VIEW evil AS SELECT 1", "not allowed"),
    ("ALTER TABLE accounts ADD COLUMN x", "not allowed"),
    ("PRAGMA query_only = 0", "PRAGMA query_only"),
    ("PRAGMA writable_schema = 1", "PRAGMA writable_schema"),
    ("PRAGMA journal_mode = WAL", "PRAGMA journal_mode"),
    ("PRAGMA temp_store_directory = '{tmp}'", "PRAGMA temp_store_directory"),
    ("SELECT load_extension('{tmp}/evil.so')", "load_extension"),
    ("SELECT random()", "random"),
    ("SELECT randomblob(10)", "randomblob"),
    ("SELECT zeroblob(1000000)", "zeroblob"),
    ("SELECT current_date", "current_date"),
    ("SELECT date('now')", "clock"),
    ("BEGIN IMMEDIATE", "TRANSACTION"),
    ("SAVEPOINT s1", "SAVEPOINT"),
    ("ANALYZE", "not allowed"),
    ("REINDEX", "REINDEX"),
    ("SELECT 1; DELETE FROM gl_lines", "one statement"),
    ("SELECT * FROM sqlite_temp_master", "temp"),
    ("SELECT printf('%.*c', 1000000000, 'x')", "printf"),
    ("SELECT printf('%999999999d', 1)", "printf"),
    ("", "non-empty"),
    ("SELECT 1\x00; DROP TABLE x", "NUL"),
]


@pytest.mark.parametrize("statement,words", ESCAPES)
def test_sql_escape_refused_and_sandbox_continues(db_bytes: bytes, statement: str, words: str) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        before_bytes = sha(db_bytes)
        watched = (Path(tmp),)  # every path the statements name is in here (a shared /tmp would be flaky to watch)
        before = listing(*watched)
        with SqlSandbox(db_bytes) as box:
            res = box.query(statement.format(tmp=tmp))
            assert not res.ok, f"{statement!r} was allowed"
            assert words.lower() in (res.error or "").lower(), res.error
            assert res.to_text().startswith("error: ")
            # The sandbox keeps working, and nothing changed.
            after = box.query("SELECT COUNT(*) FROM accounts WHERE account_id = '9999'")
            assert after.ok and after.rows == ((0,),)
            assert box.query("SELECT SUM(debit) FROM gl_lines").ok
        assert sha(db_bytes) == before_bytes
        assert listing(*watched) == before, "a file appeared"


def test_attach_is_blocked_even_without_the_authorizer(db_bytes: bytes, tmp_path: Path) -> None:
    """Defence in depth: SQLITE_LIMIT_ATTACHED = 0 stops ATTACH on its own (the engine, in process)."""
    engine = Engine(db_bytes)
    engine._conn.set_authorizer(None)  # simulate an authorizer bypass
    limits = {"max_rows": 10, "max_bytes": 10_000, "vm_budget": 10**6, "seconds": 5.0}
    res = engine.query(f"ATTACH DATABASE '{tmp_path}/x.db' AS x", **limits)
    assert not res["ok"] and "attach" in res["error"].lower()
    res = engine.query(f"VACUUM INTO '{tmp_path}/copy.db'", **limits)
    assert not res["ok"] and not list(tmp_path.iterdir())
    res = engine.query("INSERT INTO accounts VALUES ('9999', 'x', 'asset', 'debit', 1)", **limits)
    assert not res["ok"]  # query_only still refuses writes
    engine.close()


def test_runaway_recursive_cte_is_stopped(db_bytes: bytes) -> None:
    with SqlSandbox(db_bytes) as box:
        start = time.monotonic()
        res = box.query("WITH RECURSIVE c(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM c) SELECT COUNT(*) FROM c")
        elapsed = time.monotonic() - start
        assert not res.ok and res.kind == "limit" and "work limit" in res.error
        assert elapsed < 10, f"took {elapsed:.1f}s"
        assert box.query("SELECT 1").rows == ((1,),)


def test_runaway_stops_at_the_same_point_every_time(db_bytes: bytes) -> None:
    """The budget counts VM steps, not seconds: a replayed run sees the same tool result."""
    sql = "SELECT COUNT(*) FROM gl_lines a, gl_lines b, gl_lines c"
    with SqlSandbox(db_bytes, vm_budget=2_000_000) as box:
        first, second = box.query(sql), box.query(sql)
    assert not first.ok and first.kind == "limit" and first.steps == second.steps and first.error == second.error


SERIES = "WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c WHERE i < {n}) "


@pytest.mark.parametrize("call", ["date(i, 'unixepoch')", "strftime('%Y-%m-%d %j', '2024-01-01', '+' || i || ' days')",
                                  "julianday('2024-01-01', '+' || i || ' hours')", "datetime(i * 60.5, 'unixepoch')",
                                  "printf('%.2f', i / 3.0)", "format('%08d', i)"])
def test_functions_the_engine_evaluates_are_charged_to_the_work_budget(db_bytes: bytes, call: str) -> None:
    """A clock-free date call or a printf costs tens of microseconds, not one VM step: many of them
    must stop at the work budget (the same point every time), never run into the wall clock."""
    few = SERIES.format(n=100) + f"SELECT COUNT({call}) FROM c"
    many = SERIES.format(n=20_000) + f"SELECT COUNT({call}) FROM c"  # ~200,000 VM steps uncharged
    with SqlSandbox(db_bytes, vm_budget=2_000_000, seconds=30.0) as box:
        assert box.query(few).rows == ((100,),)
        start = time.monotonic()
        first = box.query(many)
        elapsed = time.monotonic() - start
        second = box.query(many)  # the date results are cached now: the charge is the same
    assert not first.ok and first.kind == "limit" and "VM steps" in first.error, first
    assert first == second and first.steps >= 200
    assert elapsed < 5.0, f"{elapsed:.1f}s"


def test_cached_date_results_keep_argument_types_apart(db_bytes: bytes) -> None:
    """1, 1.0, '1' and x'31' are different arguments to SQLite's date functions: the cache must not mix them."""
    sql = ("SELECT date(2460000), date(2460000.5), date('2460000'), datetime(2460000.5), julianday('2024-01-01'), "
           "julianday(x'323032342d30312d3031'), unixepoch(1), unixepoch(1.0), unixepoch('1'), time(0.25), time('0.25')")
    native = sqlite3.connect(":memory:")
    expected = native.execute(sql).fetchall()
    with SqlSandbox(db_bytes) as box:
        for _ in range(3):
            assert list(box.query(sql).rows) == expected
            assert list(box.query(sql.replace("SELECT ", "SELECT 1, ")).rows) == [(1, *expected[0])]


def test_wall_clock_backstop(db_bytes: bytes) -> None:
    with SqlSandbox(db_bytes, vm_budget=10**12, seconds=0.3) as box:
        start = time.monotonic()
        res = box.query("WITH RECURSIVE c(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM c) SELECT COUNT(*) FROM c")
        assert not res.ok and res.kind == "limit" and "time limit" in res.error
        assert time.monotonic() - start < 3


def test_huge_result_is_capped_with_a_marker(db_bytes: bytes) -> None:
    with SqlSandbox(db_bytes, max_rows=50) as box:
        res = box.query("SELECT * FROM gl_lines a, gl_lines b")
        assert res.ok and len(res.rows) == 50 and res.truncated
        text = res.to_text()
        payload = json.loads(text)
        assert payload["truncated"] is True and TRUNCATION_MARKER in payload["note"] and payload["row_count"] == 50
        small = json.loads(res.to_text(max_chars=2000))
        assert small["truncated"] and small["row_count"] < 50 and len(res.to_text(max_chars=2000)) <= 2000
        infinite = box.query("WITH RECURSIVE c(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM c) SELECT n FROM c")
        assert infinite.ok and infinite.truncated and len(infinite.rows) == 50
        full = box.query("SELECT account_id FROM accounts")
        assert full.ok and not full.truncated and "truncated\":false" in full.to_text()


def test_result_bytes_are_capped(db_bytes: bytes) -> None:
    with SqlSandbox(db_bytes, max_rows=10_000, max_bytes=20_000) as box:
        res = box.query("SELECT memo, memo, memo FROM gl_lines")
        assert res.ok and res.truncated and sum(len(v) for row in res.rows for v in row) <= 20_000
        big = box.query("WITH RECURSIVE s(x) AS (SELECT 'ab' UNION ALL SELECT x || x FROM s) SELECT length(x) FROM s")
        assert not big.ok and "too big" in big.error  # SQLITE_LIMIT_LENGTH


@pytest.mark.parametrize("text", ["é", "中文", "😀", "\"\\'", "\t\n", "a"])
def test_non_ascii_results_come_back_exactly_and_are_capped(db_bytes: bytes, text: str) -> None:
    literal = "'" + text.replace("'", "''") + "'"
    sql = (f"WITH RECURSIVE s(x, n) AS (SELECT {literal}, 0 UNION ALL SELECT x || x, n + 1 FROM s WHERE n < 12), "
           f"c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c WHERE i < 40) SELECT i, (SELECT x FROM s WHERE n = 12) FROM c")
    with SqlSandbox(db_bytes, max_rows=100, max_bytes=100_000) as box:
        res = box.query(sql)
        assert res.ok and res.truncated and 0 < len(res.rows) < 40, res.error
        assert all(row[1] == text * 4096 for row in res.rows)
        assert box.query(sql) == res


@pytest.mark.parametrize("char", [1, 31, 127])
def test_a_reply_too_large_as_json_is_a_limit_error(db_bytes: bytes, char: int) -> None:
    """Control characters are six bytes each in JSON: a result within max_bytes characters can
    still be too large to send; the worker says so (a limit, the same every time) and goes on."""
    sql = (f"WITH RECURSIVE s(x, n) AS (SELECT char({char}), 0 UNION ALL SELECT x || x, n + 1 FROM s WHERE n < 16), "
           "c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c WHERE i < 16) SELECT (SELECT x FROM s WHERE n = 16) FROM c")
    with SqlSandbox(db_bytes, max_rows=50, max_bytes=1_100_000) as box:
        res = box.query(sql)
        if char == 127:  # DEL is not escaped in JSON: it fits
            assert res.ok and len(res.rows) == 16
        else:
            assert not res.ok and res.kind == "limit" and "too large to return" in res.error, res
            assert box.query(sql) == res
        assert box.query("SELECT COUNT(*) FROM accounts").ok


@pytest.mark.parametrize("sql", ["SELECT '\ud800'", "SELECT 1 -- \udfff", "SELECT '\udc80' AS x", "SELECT \"a\ud83d\" FROM accounts"])
def test_lone_surrogates_are_invalid_sql(db_bytes: bytes, sql: str) -> None:
    """A tool call's JSON may carry "\\ud800": not Unicode SQLite can read; refused by name, the sandbox goes on."""
    with SqlSandbox(db_bytes) as box:
        res = box.query(sql)
        assert not res.ok and res.kind == "invalid" and "surrogate" in res.error, res
        res.to_text().encode("utf-8")  # the message itself is valid text
        assert box.query("SELECT 1").ok


@pytest.mark.parametrize("sql,shown", [("SELECT 1e999", "Inf"), ("SELECT -1e999", "-Inf"), ("SELECT 9e307 * 10", "Inf"),
                                       ("SELECT -exp(1000)", "-Inf"), ("SELECT 0.0 / 0", None)])
def test_results_are_strict_json_even_for_infinities(db_bytes: bytes, sql: str, shown: Any) -> None:
    with SqlSandbox(db_bytes) as box:
        res = box.query(sql)
        assert res.ok, res
        payload = json.loads(res.to_text(), parse_constant=lambda c: pytest.fail(f"non-JSON constant {c}"))
        assert payload["rows"] == [[shown]]


def test_sql_errors_are_results(db_bytes: bytes) -> None:
    with SqlSandbox(db_bytes) as box:
        for bad in ("SELEC 1", "SELECT nope FROM gl_lines", "SELECT * FROM nowhere", 42, None):
            res = box.query(bad)
            assert not res.ok and res.error
        assert box.query("SELECT 1").ok
    closed = SqlSandbox(db_bytes)
    closed.close()
    assert not closed.query("SELECT 1").ok


def test_each_engine_is_a_private_copy(db_bytes: bytes) -> None:
    """Even a write that got past every guard would change one engine's in-memory copy only."""
    before = sha(db_bytes)
    limits = {"max_rows": 10, "max_bytes": 10_000, "vm_budget": 10**6, "seconds": 5.0}
    a, b = Engine(db_bytes), Engine(db_bytes)
    a._conn.set_authorizer(None)  # simulate a total bypass of the guards in engine a
    a._conn.execute("PRAGMA query_only = OFF")
    a._conn.execute("DELETE FROM gl_lines")
    assert a.query("SELECT COUNT(*) FROM gl_lines", **limits)["rows"] == [[0]]
    assert b.query("SELECT COUNT(*) FROM gl_lines", **limits)["rows"][0][0] > 300
    assert sha(db_bytes) == before
    with SqlSandbox(db_bytes) as box:  # and the workers hold their own copies
        assert box.query("SELECT COUNT(*) FROM gl_lines").rows[0][0] > 300
    a.close()
    b.close()


def test_mode_ro_alone_is_not_a_sandbox(db_bytes: bytes, tmp_path: Path) -> None:
    """Why the layers exist: a plain read-only SQLite connection still writes files."""
    path = tmp_path / "books.db"
    src = sqlite3.connect(":memory:")
    src.deserialize(db_bytes)
    dst = sqlite3.connect(path)
    src.backup(dst)
    dst.close()
    src.close()
    ro = sqlite3.connect(f"file:{path}?mode=ro", uri=True, isolation_level=None)
    ro.execute(f"VACUUM INTO '{tmp_path}/escaped.db'")
    ro.close()
    assert (tmp_path / "escaped.db").exists()


# ---------------------------------------------------------------------------------------
# SQL: no clock, no randomness — in the engine, however the SQL spells it

LIMITS = {"max_rows": 1000, "max_bytes": 1_000_000, "vm_budget": 10**7, "seconds": 10.0}

CLOCK_SPELLINGS = [
    "SELECT date('now')",
    "SELECT date('NOW')",
    "SELECT date('NoW')",
    "SELECT datetime('n' || 'ow')",
    "SELECT julianday(lower('NOW'))",
    "SELECT date(char(110, 111, 119))",
    "SELECT date(substr('know', 2))",
    "SELECT time(replace('nxw', 'x', 'o'))",
    "SELECT date(trim('  now  '))",
    "SELECT date(CAST(x'6e6f77' AS TEXT))",
    "SELECT date(json_extract('{\"d\": \"now\"}', '$.d'))",
    "SELECT unixepoch(printf('%s%s', 'no', 'w'))",
    "SELECT date(d) FROM (SELECT 'no' || 'w' AS d)",
    "WITH t(x) AS (SELECT '2024-01-01' UNION ALL SELECT 'now') SELECT date(x) FROM t",
    "SELECT COUNT(*) FROM accounts WHERE date(CASE WHEN account_id IS NOT NULL THEN 'now' END) IS NOT NULL",
    "SELECT COUNT(*) FROM gl_lines WHERE date('now', '-1 day') > '2000-01-01'",
    "SELECT strftime('%Y-%m-%d', 'now')",
    "SELECT strftime('%s')",
    "SELECT strftime('%Y', 'now', 'start of year')",
    "SELECT date()",
    "SELECT time()",
    "SELECT datetime()",
    "SELECT julianday()",
    "SELECT unixepoch()",
    "SELECT date('2024-01-31', 'localtime')",
    "SELECT datetime('2024-01-31 12:00', 'utc')",
    "SELECT date('2024-01-31', lower('LOCALTIME'))",
    "SELECT CURRENT_DATE",
    "SELECT current_time",
    "SELECT Current_Timestamp",
    "SELECT COUNT(*) FROM gl_lines WHERE CURRENT_DATE > '2000-01-01'",
]


@pytest.mark.parametrize("sql", CLOCK_SPELLINGS)
def test_clock_is_refused_however_spelled(db_bytes: bytes, sql: str) -> None:
    engine = Engine(db_bytes)
    res = engine.query(sql, **LIMITS)
    assert not res["ok"] and res["kind"] == "clock" and "clock" in res["error"], (sql, res)
    assert engine.query("SELECT date('2024-01-31', '+1 day')", **LIMITS)["rows"] == [["2024-02-01"]]
    engine.close()


def test_clock_is_refused_through_the_worker(db_bytes: bytes) -> None:
    with SqlSandbox(db_bytes) as box:
        for sql in CLOCK_SPELLINGS[::3]:
            res = box.query(sql)
            assert not res.ok and res.kind == "clock" and res.to_text().startswith("error: "), (sql, res)
        assert box.query("SELECT 'now' AS word, date('2024-02-29', '+1 year')").rows == (("now", "2025-03-01"),)


@pytest.mark.parametrize("sql", ["SELECT random()", "SELECT abs(random()) % 10", "SELECT randomblob(8)",
                                 "SELECT hex(randomblob(4))", "SELECT account_id FROM accounts ORDER BY random()"])
def test_randomness_is_refused(db_bytes: bytes, sql: str) -> None:
    engine = Engine(db_bytes)
    res = engine.query(sql, **LIMITS)
    assert not res["ok"] and res["kind"] == "denied" and "random" in res["error"], res
    engine._conn.set_authorizer(None)  # the functions themselves refuse too
    res = engine.query(sql, **LIMITS)
    assert not res["ok"] and "random" in res["error"], res
    engine.close()


def _literal(value: Any) -> str:
    if value is None:
        return "NULL"
    if isinstance(value, str):
        return "'" + value.replace("'", "''") + "'"
    return repr(value)


TIME_VALUES = ["2024-01-31", "2024-02-29 13:45:10", "2023-12-31T23:59:59.999", "2024-03-10 02:30", "2460000.5", 2460000.5,
               1700000000, "1700000000", "12:30", "12:30:45.5", "0000-01-01", "9999-12-31 23:59:59", "2024-13-01",
               "garbage", None, "", "2024-01-31 10:00:00+02:00", "2024-01-31Z", -1.5, "now ", " now", "nowhere"]
MODIFIERS = [(), ("+1 month",), ("-1 month",), ("+1 year",), ("-1 day",), ("+36 hours",), ("-90 minutes",),
             ("+30 seconds",), ("+1.5 days",), ("start of month",), ("start of year",), ("start of day",),
             ("weekday 0",), ("weekday 6",), ("unixepoch",), ("auto",), ("julianday",), ("subsec",),
             ("start of month", "+1 month", "-1 day"), ("+1 month", "start of month"), ("nonsense",), (None,)]
FORMATS = ["%Y-%m-%d", "%Y", "%m", "%d", "%H:%M:%f", "%j", "%W", "%w", "%s", "%J", "%%", "Q%Y-%m %H"]


def test_date_functions_compute_what_sqlite_computes(db_bytes: bytes) -> None:
    """The clock-free functions are SQLite's own: same results on fixed dates, every modifier."""
    engine = Engine(db_bytes)
    plain = sqlite3.connect(":memory:")
    plain.deserialize(db_bytes)
    calls = [f"{fn}({', '.join(_literal(a) for a in (value, *mods))})"
             for fn in ("date", "time", "datetime", "julianday", "unixepoch")
             for value in TIME_VALUES for mods in MODIFIERS]
    calls += [f"strftime({', '.join(_literal(a) for a in (fmt, value, *mods))})"
              for fmt in FORMATS for value in TIME_VALUES[::2] for mods in MODIFIERS[::2]]
    checked = 0
    for i in range(0, len(calls), 40):  # 40 columns a statement (MAX_COLUMNS is 64)
        sql = "SELECT " + ", ".join(calls[i:i + 40])
        want = [list(plain.execute(sql).fetchone())]
        got = engine.query(sql, **LIMITS)
        assert got["ok"] and got["rows"] == want, (sql, got.get("error"))
        checked += len(calls[i:i + 40])
    assert checked > 2500
    # What agent SQL does with the ledger's own dates.
    sql = ("SELECT bill_date, strftime('%Y-%m', bill_date), julianday(due_date) - julianday(bill_date), "
           "date(bill_date, 'start of month', '+1 month', '-1 day'), strftime('%w', bill_date), "
           "CAST(strftime('%m', bill_date) AS INTEGER), unixepoch(due_date) - unixepoch(bill_date), "
           "date(bill_date, '+30 days') < due_date FROM ap_bills ORDER BY bill_id")
    got = engine.query(sql, **LIMITS)
    assert got["ok"] and got["rows"] == [list(r) for r in plain.execute(sql)] and len(got["rows"]) > 10
    plain.close()
    engine.close()


def test_json_each_and_json_tree_work_read_only(db_bytes: bytes) -> None:
    with SqlSandbox(db_bytes) as box:
        assert box.query("SELECT key, value FROM json_each('[10, 20]')").rows == ((0, 10), (1, 20))
        assert box.query("SELECT COUNT(*) FROM json_tree('{\"a\": [1, 2, {\"b\": 3}]}')").rows == ((6,),)
        res = box.query("SELECT a.account_id, j.value FROM accounts a, json_each(json_array(a.account_id, a.name)) j "
                        "ORDER BY a.account_id, j.key LIMIT 4")
        assert res.ok and len(res.rows) == 4 and res.rows[0][0] == res.rows[0][1]
        res = box.query("SELECT fullkey FROM json_tree('{\"x\": {\"y\": 1}}') WHERE type = 'integer'")
        assert res.rows == (("$.x.y",),)
        bad = box.query("DELETE FROM json_each")
        assert not bad.ok and "sqlite_master" not in bad.error


def test_schema_pragmas_work_as_table_valued_functions(db_bytes: bytes) -> None:
    """pragma_table_info('t') and friends read the schema like their PRAGMA statements (a model reaches for them)."""
    with SqlSandbox(db_bytes) as box:
        statement = box.query("PRAGMA table_info(gl_lines)")
        function = box.query("SELECT * FROM pragma_table_info('gl_lines')")
        assert statement.ok and function.ok and statement.rows == function.rows
        res = box.query("SELECT m.name, COUNT(p.name) FROM sqlite_master m, pragma_table_info(m.name) p "
                        "WHERE m.type = 'table' GROUP BY m.name ORDER BY m.name")
        assert res.ok and ("gl_lines", len(statement.rows)) in res.rows
        for sql in ("SELECT name FROM pragma_table_xinfo('accounts')", "SELECT * FROM pragma_index_list('gl_lines')",
                    "SELECT * FROM pragma_foreign_key_list('gl_lines')", "SELECT name FROM pragma_table_list WHERE schema = 'main'"):
            res = box.query(sql)
            assert res.ok, (sql, res)
        res = box.query("SELECT * FROM pragma_compile_options")
        assert not res.ok and res.kind == "denied" and "sqlite_master" not in res.error and "pragma_table_info" in res.error


# ---------------------------------------------------------------------------------------
# SQL: memory and time limits that hold (a worker process, RLIMIT_AS, a hard kill)

BIG = ("WITH RECURSIVE s(x, n) AS (SELECT 'a', 0 UNION ALL SELECT x || x, n + 1 FROM s WHERE n < 16), "
       "big(x) AS (SELECT x FROM s WHERE n = 16), c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c WHERE i < 20000) ")
PATTERNS = (", p(i, pat) AS (SELECT 1, '%' || substr((SELECT x FROM big), 1, 998) || 'b' "
            "UNION ALL SELECT i + 1, pat FROM p WHERE i < 200) ")
MEMORY_HOSTILE = [
    BIG + "SELECT length(i || x) FROM c, big ORDER BY i || x DESC",  # sort of 20,000 strings of 64 KiB
    BIG + "SELECT COUNT(*) FROM (SELECT DISTINCT i || x FROM c, big)",
    BIG + "SELECT COUNT(*) FROM (SELECT substr(i || x, 1, 30000) AS y FROM c, big GROUP BY y)",
    "WITH RECURSIVE s(x, n) AS (SELECT 'a', 0 UNION ALL SELECT x || x, n + 1 FROM s WHERE n < 16), "
    "r(y, i) AS (SELECT (SELECT x FROM s WHERE n = 16), 0 UNION SELECT y, i + 1 FROM r WHERE i < 30000) SELECT COUNT(*) FROM r",
]
TIME_HOSTILE = [  # each LIKE / GLOB / instr is one VM step that takes a long time: the progress handler cannot stop it
    BIG + PATTERNS + "SELECT COUNT(*) FROM big, p WHERE x LIKE pat",
    BIG + PATTERNS + "SELECT COUNT(*) FROM big, p WHERE x GLOB replace(pat, '%', '*')",
    BIG + PATTERNS + "SELECT COUNT(*) FROM big, p WHERE instr(x, substr(x, 1, 30000) || 'b' || i) > 0",
]


@pytest.fixture
def small_pool(monkeypatch: pytest.MonkeyPatch):
    """Workers with 64 MiB of headroom, so the memory tests are quick; the production cap is tested once below."""
    old = sqlsandbox.pool()
    small = sqlsandbox._Pool(1, 64 * 1024 * 1024)
    monkeypatch.setattr(sqlsandbox, "_POOL", small)
    yield small
    small.shutdown()
    monkeypatch.setattr(sqlsandbox, "_POOL", old)


START_KB = 64 * 1024  # generous bound on what a worker maps before the headroom (about 25 MiB measured)


@pytest.mark.parametrize("sql", MEMORY_HOSTILE)
def test_memory_hostile_queries_stay_under_the_cap(db_bytes: bytes, sql: str, small_pool) -> None:
    # A wall limit far above the query's cost: on a loaded machine (parallel test workers) the
    # default 10 s could end the query first, and this test is about the memory cap alone.
    with SqlSandbox(db_bytes, seconds=120.0) as box:
        res = box.query(sql)
        assert not res.ok and res.kind == "limit" and "memory" in res.error, res
        assert box.query("SELECT COUNT(*) FROM accounts").ok  # the worker (or its replacement) goes on
    assert 0 < small_pool.peak_rss_kb < START_KB + small_pool.headroom // 1024, small_pool.peak_rss_kb


def test_memory_cap_holds_at_the_production_headroom(db_bytes: bytes) -> None:
    """The issue's case: a sort of 20,000 strings of 64 KiB (1.3 GB) within the work budget."""
    with SqlSandbox(db_bytes, seconds=120.0) as box:  # only the memory cap may end it
        res = box.query(MEMORY_HOSTILE[0])
        assert not res.ok and res.kind == "limit" and "memory" in res.error, res
    peak = sqlsandbox.pool().peak_rss_kb
    assert 0 < peak < START_KB + sqlsandbox.MEMORY_HEADROOM // 1024, peak


# LIKE by default; GLOB and instr (the same kill, other long VM steps) under --slow: each spins a core for the whole limit.
@pytest.mark.parametrize("sql", [TIME_HOSTILE[0], *(pytest.param(q, marks=pytest.mark.slow) for q in TIME_HOSTILE[1:])])
def test_time_hostile_queries_are_killed_at_the_wall_limit(db_bytes: bytes, sql: str) -> None:
    with SqlSandbox(db_bytes, seconds=1.0) as box:
        start = time.monotonic()
        res = box.query(sql)
        elapsed = time.monotonic() - start
        assert not res.ok and res.kind == "limit" and "time limit" in res.error, res
        assert elapsed < 1.0 + sqlsandbox.KILL_SLACK + 1.0, f"took {elapsed:.1f}s"
        assert box.query("SELECT COUNT(*) FROM accounts").ok  # a fresh worker replaced the killed one


def test_a_worker_killed_from_outside_is_replaced(db_bytes: bytes) -> None:
    with SqlSandbox(db_bytes) as box:
        assert box.query("SELECT 1").ok
        workers = sqlsandbox.pool()
        for w in list(workers._idle):
            w.proc.kill()
            w.proc.wait()
        assert box.query("SELECT COUNT(*) FROM accounts").ok


def _kill_now(w: Any) -> None:
    os.kill(w.proc.pid, 9)  # no wait: the pool may still see it alive when it hands it out


def _term_now(w: Any) -> None:
    os.kill(w.proc.pid, 15)


def _close_its_stdin(w: Any) -> None:
    os.close(w.proc.stdin.fileno())  # the pipe breaks under the next send


@pytest.mark.parametrize("death", [_kill_now, _term_now, _close_its_stdin], ids=["sigkill", "sigterm", "pipe"])
def test_an_innocent_query_on_a_worker_that_just_died_is_answered(db_bytes: bytes, death, monkeypatch: pytest.MonkeyPatch) -> None:
    """A warm worker that died of something else (not yet reaped) is not the next query's fault:
    the query runs on a fresh worker and gives its result, the same as before the death."""
    monkeypatch.setattr(sqlsandbox, "_POOL", sqlsandbox._Pool(1, 64 * 1024 * 1024))
    sql = "SELECT COUNT(*), SUM(debit) FROM gl_lines"
    with SqlSandbox(db_bytes) as box:
        before = box.query(sql)
        assert before.ok
        for round_ in range(3):  # several deaths in a row, mid-batch
            (worker,) = sqlsandbox._POOL._idle
            monkeypatch.setattr(worker.proc, "poll", lambda: None)  # the race: still "alive" when checked out
            death(worker)
            after = box.query(sql)
            assert after == before, (round_, after)
    assert sqlsandbox._POOL._count == 1
    sqlsandbox._POOL.shutdown()


def test_a_query_that_kills_fresh_workers_is_its_own_fault(db_bytes: bytes, monkeypatch: pytest.MonkeyPatch) -> None:
    """Retrying is bounded: a query whose worker dies on a fresh worker too is a limit error, and the pool goes on."""
    monkeypatch.setattr(sqlsandbox, "_POOL", sqlsandbox._Pool(1, 64 * 1024 * 1024))
    started: list[int] = []
    real_query = sqlsandbox._Worker.query

    def dying_query(self, digest, data, request, seconds, max_size):
        if "boom" in request["sql"]:
            started.append(self.proc.pid)
            self.proc.kill()
        return real_query(self, digest, data, request, seconds, max_size)

    monkeypatch.setattr(sqlsandbox._Worker, "query", dying_query)
    with SqlSandbox(db_bytes) as box:
        assert box.query("SELECT 1").ok  # warm
        res = box.query("SELECT 'boom'")
        assert not res.ok and res.kind == "limit", res
        assert len(started) == 2 and started[0] != started[1]  # once on the warm worker, once on a fresh one
        res = SqlSandbox(db_bytes).query("SELECT 'boom'")  # a fresh worker dying is not retried
        assert not res.ok and len(started) == 3
        assert box.query("SELECT COUNT(*) FROM accounts").ok
    sqlsandbox._POOL.shutdown()


def test_workers_on_high_file_descriptors_still_answer(db_bytes: bytes, monkeypatch: pytest.MonkeyPatch) -> None:
    """A busy lrc (many sockets, journals) hands workers descriptors above 1023, where select() fails."""
    import resource

    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard != resource.RLIM_INFINITY and hard < 1200:
        pytest.skip("cannot open more than 1200 files here")
    resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, 1200) if hard == resource.RLIM_INFINITY else min(hard, max(soft, 1200)), hard))
    spare = [os.open(os.devnull, os.O_RDONLY) for _ in range(1100)]
    try:
        monkeypatch.setattr(sqlsandbox, "_POOL", sqlsandbox._Pool(2, 64 * 1024 * 1024))
        with SqlSandbox(db_bytes, seconds=1.0) as box:
            assert box.query("SELECT COUNT(*) FROM accounts").ok
            assert max(w.proc.stdout.fileno() for w in sqlsandbox._POOL._idle) > 1023
            for sql in ("SELECT 1", "SELECT COUNT(*) FROM gl_lines", TIME_HOSTILE[0]):
                res = box.query(sql)
                assert res.ok or res.kind == "limit", res
        sqlsandbox._POOL.shutdown()
    finally:
        for fd in spare:
            os.close(fd)
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))


def test_workers_hold_no_secrets(db_bytes: bytes, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", CANARY_TOKEN)
    monkeypatch.setattr(sqlsandbox, "_POOL", sqlsandbox._Pool(1, 64 * 1024 * 1024))
    assert SqlSandbox(db_bytes).query("SELECT 1").ok
    worker = sqlsandbox._POOL._idle[0]
    environ = Path(f"/proc/{worker.proc.pid}/environ")
    if environ.exists():
        assert CANARY_TOKEN.encode() not in environ.read_bytes() and environ.read_bytes() == b""
    sqlsandbox._POOL.shutdown()


def test_a_worker_that_cannot_start_is_an_environment_error(db_bytes: bytes, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sqlsandbox, "_ENGINE", "/nonexistent/sqlengine.py")
    monkeypatch.setattr(sqlsandbox, "_POOL", sqlsandbox._Pool(1, 64 * 1024 * 1024))
    with pytest.raises(OSError, match="did not start"):
        SqlSandbox(db_bytes).query("SELECT 1")
    assert sqlsandbox._POOL._count == 0  # nothing leaked: the next attempt may start a worker again


def test_results_are_deterministic_across_runs_and_workers(db_bytes: bytes) -> None:
    """Resume: the same SQL on the same bytes gives the same result, whichever (fresh) worker runs it."""
    queries = ["SELECT account_id, name FROM accounts ORDER BY account_id",
               "SELECT date(MIN(entry_date), '+1 month'), strftime('%j', MAX(entry_date)) FROM journal_entries",
               "SELECT COUNT(*) FROM gl_lines a, gl_lines b, gl_lines c",  # stopped by the work budget
               "SELECT date('n' || 'ow')"]
    def run_all() -> list[QueryResult]:
        with SqlSandbox(db_bytes, vm_budget=2_000_000) as box:
            return [box.query(q) for q in queries]
    first = run_all()
    sqlsandbox.pool().shutdown()  # as after a kill: fresh workers
    second = run_all()
    assert first == second
    assert first[0].ok and not first[2].ok and first[2].kind == "limit" and first[2].steps > 0 and first[3].kind == "clock"


def test_queries_never_block_the_event_loop(db_bytes: bytes) -> None:
    import asyncio

    from lrc.runtime.systems import agentic
    from lrc.runtime.systems.base import RunContext, Turn
    from lrc.runtime.workloads.base import ToolOutcome

    box = SqlSandbox(db_bytes, seconds=1.0)
    slow = TIME_HOSTILE[0]

    class Tools:
        def call(self, name: str, arguments: dict[str, Any]) -> ToolOutcome:
            return ToolOutcome(box.query(arguments["sql"]).to_text(), terminal=True, answer={"done": True})

    async def model(step: int, messages: list, tools: Any) -> Turn:
        call = {"id": "c1", "type": "function", "function": {"name": "run_sql", "arguments": json.dumps({"sql": slow})}}
        return Turn({"role": "assistant", "content": None, "tool_calls": [call]}, "tool_calls")

    async def main() -> tuple[int, Any, Any]:
        ticks = 0

        async def ticker() -> None:
            nonlocal ticks
            while True:
                await asyncio.sleep(0.05)
                ticks += 1

        t = asyncio.ensure_future(ticker())
        ctx = RunContext(messages=[], tools=[], terminal_tools=["run_sql"], max_steps=2, call=model, toolbox=Tools())
        outcome, direct = await asyncio.gather(agentic.run(ctx), box.aquery(slow))
        t.cancel()
        return ticks, outcome, direct

    ticks, outcome, direct = asyncio.run(main())
    assert outcome.outcome == "answered" and "time limit" in outcome.transcript[-1]["content"]
    assert direct.kind == "limit"
    assert ticks >= 10, f"the event loop was blocked ({ticks} ticks in ~1 s)"


# ---------------------------------------------------------------------------------------
# files

DOCS = {"contracts/CT-1.txt": b"contract one\n", "bank/statement.txt": b"statement\n" * 4000,
        "payroll/note.txt": "Gehälter – ok\n".encode("utf-8")}


@pytest.mark.parametrize("path,why", [
    ("../secret.txt", ".."),
    ("contracts/../../secret.txt", ".."),
    ("contracts/../bank/statement.txt", ".."),
    ("/etc/passwd", "absolute"),
    ("/proc/self/environ", "absolute"),
    ("~/.ssh/id_rsa", "absolute"),
    ("C:/Windows/win.ini", "drive"),
    ("contracts\\CT-1.txt", "backslash"),
    ("..\\secret.txt", "backslash"),
    ("contracts/CT-1.txt\x00.png", "NUL"),
    ("contracts/\nCT-1.txt", "control"),
    ("", "empty"),
    ("x" * 300, "longer"),
    (".", "no file"),
])
def test_clean_path_refuses(path: str, why: str) -> None:
    with pytest.raises(PathRefused) as exc:
        clean_path(path)
    assert why.lower() in str(exc.value).lower()
    result = FileSandbox(DOCS).read(path)
    assert not result.ok and "refused" in result.error


@pytest.mark.parametrize("path", [
    "%2e%2e/secret.txt", "contracts%2fCT-1.txt", "\u2024\u2024/secret.txt", "\uff0e\uff0e/secret.txt",
    "contracts_evil/CT-1.txt", "contract/CT-1.txt", "CONTRACTS/CT-1.txt", "contracts/CT-1.txt/", "contracts/ct-1.txt",
])
def test_lookalikes_are_just_missing_names(path: str) -> None:
    res = FileSandbox(DOCS).read(path)
    if path == "contracts/CT-1.txt/":  # a trailing slash is a harmless spelling of the same file
        assert res.ok
        return
    assert not res.ok and "no such document" in res.error


def test_file_sandbox_reads_and_pages() -> None:
    box = FileSandbox(DOCS, max_read_bytes=1000)
    assert box.read("contracts/CT-1.txt").text == "contract one\n"
    assert box.read("./contracts//CT-1.txt").ok
    first = box.read("bank/statement.txt")
    assert first.ok and first.truncated and first.next_offset == 1000 and len(first.text) == 1000
    last = box.read("bank/statement.txt", offset=39_500)
    assert last.ok and not last.truncated and last.size == 40_000
    assert not box.read("bank/statement.txt", offset=-1).ok
    assert not box.read("bank/statement.txt", offset=10**9).ok
    assert not box.read("bank/statement.txt", offset="3").ok
    assert box.read("payroll/note.txt").text == "Gehälter – ok\n"
    assert box.listing()[0] == ("bank/statement.txt", 40_000)
    assert not FileSandbox(DOCS, max_file_bytes=1000).read("bank/statement.txt").ok
    with pytest.raises(PathRefused):
        FileSandbox({"../x": b""})


@pytest.fixture
def tree(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    """A documents folder, a canary outside it, and every trick a folder can hold."""
    root = tmp_path / "docs"
    (root / "contracts").mkdir(parents=True)
    (root / "contracts" / "CT-1.txt").write_bytes(b"contract one\n")
    (root / "big.txt").write_bytes(b"x" * 2_000_000)
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text(CANARY_TOKEN)
    sibling = tmp_path / "docs_evil"
    sibling.mkdir()
    (sibling / "CT-1.txt").write_text(CANARY_TOKEN)
    os.symlink(outside / "secret.txt", root / "link-out.txt")
    os.symlink(root / "contracts" / "CT-1.txt", root / "link-in.txt")
    os.symlink(outside, root / "linked-dir")
    os.symlink(root / "contracts", root / "contracts-link")
    os.mkfifo(root / "fifo.txt")
    manifest = {
        "contracts/CT-1.txt": "sha256:" + sha(b"contract one\n"),
        "big.txt": "sha256:" + sha(b"x" * 2_000_000),
        "link-out.txt": "sha256:" + sha(CANARY_TOKEN.encode()),
        "link-in.txt": "sha256:" + sha(b"contract one\n"),
        "linked-dir/secret.txt": "sha256:" + sha(CANARY_TOKEN.encode()),
        "contracts-link/CT-1.txt": "sha256:" + sha(b"contract one\n"),
        "fifo.txt": "sha256:" + sha(b""),
    }
    return root, manifest


def test_directory_sandbox_reads_listed_regular_files(tree: tuple[Path, dict[str, str]]) -> None:
    root, manifest = tree
    box = DirectorySandbox(root, manifest)
    assert box.read("contracts/CT-1.txt").text == "contract one\n"


@pytest.mark.parametrize("path,why", [
    ("link-out.txt", "symlink"),
    ("link-in.txt", "symlink"),
    ("linked-dir/secret.txt", "symlink"),
    ("contracts-link/CT-1.txt", "symlink"),
    ("fifo.txt", "not a regular file"),
    ("big.txt", "larger than"),
    ("../outside/secret.txt", ".."),
    ("../docs_evil/CT-1.txt", ".."),
    ("contracts/../../outside/secret.txt", ".."),
    ("/etc/passwd", "absolute"),
    ("docs_evil/CT-1.txt", "no such document"),
    ("outside/secret.txt", "no such document"),
])
def test_directory_sandbox_refuses(tree: tuple[Path, dict[str, str]], path: str, why: str) -> None:
    root, manifest = tree
    box = DirectorySandbox(root, manifest)
    start = time.monotonic()
    res = box.read(path)
    assert time.monotonic() - start < 2, "a FIFO must not block the read"
    assert not res.ok and why in res.error, res.error
    assert CANARY_TOKEN not in (res.text + (res.error or ""))
    assert box.read("contracts/CT-1.txt").ok  # and the tool keeps working


def test_directory_sandbox_refuses_swapped_files(tree: tuple[Path, dict[str, str]]) -> None:
    root, manifest = tree
    box = DirectorySandbox(root, manifest)
    (root / "contracts" / "CT-1.txt").write_text(CANARY_TOKEN)
    res = box.read("contracts/CT-1.txt")
    assert not res.ok and "digest" in res.error and CANARY_TOKEN not in res.error


# ---------------------------------------------------------------------------------------
# through the tools, as a model would try them


@pytest.fixture(scope="module")
def close_item():
    from lrc.runtime.workloads.execute_month_end import generator

    return generator.generate("sandbox-tools", 0, {})


def test_month_end_tools_refuse_escapes_and_continue(close_item) -> None:
    from lrc.runtime.workloads.execute_month_end.tools import Toolbox

    before = {name: sha(data) for name, data in close_item.files.items()}
    box = Toolbox(close_item)
    doc = close_item.context["documents"][0]["path"]
    attempts = [
        ("read_file", {"path": "../finance.db"}), ("read_file", {"path": "/etc/passwd"}),
        ("read_file", {"path": "finance.db"}), ("read_file", {"path": "docs/" + doc}),
        ("read_file", {"path": "..%2f..%2fetc/passwd"}), ("read_file", {"path": doc, "offset": -5}),
        ("read_file", {"path": doc, "mode": "w"}), ("read_file", {}),
        ("run_sql", {"sql": "ATTACH DATABASE 'evil.db' AS evil"}), ("run_sql", {"sql": "VACUUM INTO 'copy.db'"}),
        ("run_sql", {"sql": "DELETE FROM gl_lines"}), ("run_sql", {"sql": "DROP TABLE ap_bills"}),
        ("run_sql", {"sql": "WITH RECURSIVE c(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM c) SELECT COUNT(*) FROM c"}),
        ("run_sql", {"sql": "SELECT 1", "database": "other.db"}), ("run_sql", {}),
        ("write_file", {"path": "x", "content": "y"}), ("run_shell", {"cmd": "id"}),
    ]
    for name, args in attempts:
        out = box.call(name, args)
        assert out.is_error and out.content.startswith("error: ") and not out.terminal, (name, args, out.content)
        assert box.call("run_sql", {"sql": "SELECT COUNT(*) FROM accounts"}).content.startswith("{")
        assert box.call("read_file", {"path": doc}).content.startswith(doc)
    huge = box.call("run_sql", {"sql": "SELECT * FROM gl_lines a, gl_lines b"})
    assert not huge.is_error and json.loads(huge.content)["truncated"] is True
    assert {name: sha(data) for name, data in close_item.files.items()} == before
    assert not Path("evil.db").exists() and not Path("copy.db").exists()


def test_nl2sql_tools_refuse_escapes_and_continue() -> None:
    from lrc.runtime.workloads.query_nl2sql import generator
    from lrc.runtime.workloads.query_nl2sql.tools import Toolbox

    item = generator.generate("sandbox-tools", 0, {})
    before = sha(item.files["finance.db"])
    box = Toolbox(item, max_result_chars=5000)
    for sql in ("ATTACH DATABASE ':memory:' AS m", "UPDATE vendors SET name = 'x'", "PRAGMA writable_schema = 1",
                "WITH RECURSIVE c(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM c) SELECT SUM(n) FROM c", "SELECT load_extension('x')"):
        out = box.call("run_sql", {"sql": sql})
        assert out.is_error and out.content.startswith("error: ")
        ok = box.call("run_sql", {"sql": "SELECT name FROM vendors WHERE name <> 'x' LIMIT 1"})
        assert not ok.is_error and json.loads(ok.content)["row_count"] == 1
    big = box.call("run_sql", {"sql": "SELECT * FROM gl_lines"})
    assert not big.is_error and len(big.content) <= 5000 and json.loads(big.content)["truncated"]
    assert sha(item.files["finance.db"]) == before
