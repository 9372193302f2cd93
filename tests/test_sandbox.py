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

import pytest

from lrc.runtime.checks.filesandbox import DirectorySandbox, FileSandbox, PathRefused, clean_path
from lrc.runtime.checks.sqlsandbox import TRUNCATION_MARKER, SqlSandbox
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
    ("VACUUM INTO '{tmp}/copy.db'", "ATTACH"),
    ("VACUUM", "not allowed"),
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
    ("SELECT julianday()", "clock"),
    ("SELECT strftime('%Y')", "clock"),
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
    """Defence in depth: SQLITE_LIMIT_ATTACHED = 0 stops ATTACH on its own."""
    with SqlSandbox(db_bytes) as box:
        box._conn.set_authorizer(None)  # simulate an authorizer bypass
        res = box.query(f"ATTACH DATABASE '{tmp_path}/x.db' AS x")
        assert not res.ok and "attach" in res.error.lower()
        res = box.query(f"VACUUM INTO '{tmp_path}/copy.db'")
        assert not res.ok and not list(tmp_path.iterdir())
        res = box.query("INSERT INTO accounts VALUES ('9999', 'x', 'asset', 'debit', 1)")
        assert not res.ok  # query_only still refuses writes


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


def test_sql_errors_are_results(db_bytes: bytes) -> None:
    with SqlSandbox(db_bytes) as box:
        for bad in ("SELEC 1", "SELECT nope FROM gl_lines", "SELECT * FROM nowhere", 42, None):
            res = box.query(bad)
            assert not res.ok and res.error
        assert box.query("SELECT 1").ok
    closed = SqlSandbox(db_bytes)
    closed.close()
    assert not closed.query("SELECT 1").ok


def test_each_sandbox_is_a_private_copy(db_bytes: bytes) -> None:
    """Even a write that got past every guard would change one run's in-memory copy only."""
    before = sha(db_bytes)
    a, b = SqlSandbox(db_bytes), SqlSandbox(db_bytes)
    a._conn.set_authorizer(None)  # simulate a total bypass of the guards in sandbox a
    a._conn.execute("PRAGMA query_only = OFF")
    a._conn.execute("DELETE FROM gl_lines")
    assert a.query("SELECT COUNT(*) FROM gl_lines").rows == ((0,),)
    assert b.query("SELECT COUNT(*) FROM gl_lines").rows[0][0] > 300
    assert sha(db_bytes) == before
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
