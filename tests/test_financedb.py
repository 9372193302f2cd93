"""The shared synthetic finance database (runtime/workloads/financedb/).

Determinism and the content digest (the golden canary), the shape of the books (tables,
sizes, referential integrity, balanced entries, subledgers tied to the GL), the quirks the
questions rely on (partial payments, credit memos, period-end cut-off), the open last
period of a close, and the decision that it is shared code, fingerprinted through the
generators that import it.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from ruamel.yaml import YAML

from lrc.runtime.lock import codeprint
from lrc.runtime.workloads import financedb
from lrc.runtime.workloads.financedb import schema, store

ROOT = Path(__file__).resolve().parent.parent
CANARY_KEY = "canary-0"
CANARY_CONTENT_DIGEST = "sha256:b58e39a07880bb7f93dc1d74f32a47ddc46951a07fc5839bfbf0f98e9594e128"
CANARY_COUNTS = {"accounts": 30, "ap_bills": 487, "ap_payments": 414, "ar_invoices": 373, "ar_receipts": 337, "customers": 36,
                 "departments": 5, "gl_lines": 3568, "journal_entries": 1722, "periods": 12, "vendors": 30}


@pytest.fixture(scope="module")
def canary() -> bytes:
    return financedb.database(CANARY_KEY)


@pytest.fixture(scope="module")
def conn(canary: bytes) -> sqlite3.Connection:
    return financedb.open_copy(canary)


def scalar(conn: sqlite3.Connection, sql: str, *args) -> object:
    return conn.execute(sql, args).fetchone()[0]


# ---------------------------------------------------------------------------------------
# determinism and the canary


def test_canary_content_digest(canary: bytes) -> None:
    assert financedb.content_digest(canary) == CANARY_CONTENT_DIGEST
    assert financedb.table_counts(canary) == CANARY_COUNTS


def test_same_key_same_database() -> None:
    a = financedb.to_sqlite(financedb.generate("det", "primary", months=4))
    b = financedb.to_sqlite(financedb.generate("det", "primary", months=4))
    assert a == b and financedb.content_digest(a) == financedb.content_digest(b)
    other = financedb.to_sqlite(financedb.generate("det", "other-facts", months=4))
    assert financedb.content_digest(other) != financedb.content_digest(a)


def test_digest_is_over_content_not_bytes(canary: bytes) -> None:
    """Same rows in another physical order: other bytes, same digest; one changed cell: other digest."""
    src = financedb.open_copy(canary)
    dst = sqlite3.connect(":memory:")
    for (sql,) in src.execute("SELECT sql FROM sqlite_master WHERE type = 'table' ORDER BY name DESC"):
        dst.execute(sql)
    for (table,) in src.execute("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name"):
        rows = src.execute(f"SELECT * FROM {table}").fetchall()[::-1]
        if rows:
            dst.executemany(f"INSERT INTO {table} VALUES ({', '.join('?' * len(rows[0]))})", rows)
    for (sql,) in src.execute("SELECT sql FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL"):
        dst.execute(sql)
    dst.commit()
    shuffled = dst.serialize()
    assert shuffled != canary
    assert financedb.content_digest(shuffled) == financedb.content_digest(canary)
    dst.execute("UPDATE gl_lines SET debit = CAST(debit AS INTEGER) WHERE line_id = 1")  # 495036.13 -> 495036
    dst.commit()
    assert financedb.content_digest(dst.serialize()) != financedb.content_digest(canary)


def test_variants_share_the_company_not_the_facts() -> None:
    a = financedb.open_copy(financedb.database("variant-test", "primary"))
    b = financedb.open_copy(financedb.database("variant-test", "variant-1", 12, 60))
    for table in ("accounts", "departments", "periods", "vendors", "customers"):
        assert a.execute(f"SELECT * FROM {table} ORDER BY 1").fetchall() == b.execute(f"SELECT * FROM {table} ORDER BY 1").fetchall()
    assert a.execute("SELECT COUNT(*) FROM gl_lines").fetchone() > b.execute("SELECT COUNT(*) FROM gl_lines").fetchone()
    assert a.execute("SELECT amount FROM ap_bills LIMIT 5").fetchall() != b.execute("SELECT amount FROM ap_bills LIMIT 5").fetchall()


# ---------------------------------------------------------------------------------------
# shape


def test_tables_and_sizes(canary: bytes, conn: sqlite3.Connection) -> None:
    counts = financedb.table_counts(canary)
    assert set(counts) == {t for t, _, _ in schema.TABLES}
    assert counts["gl_lines"] >= 3000 and counts["journal_entries"] >= 1500
    assert counts["ap_bills"] >= 400 and counts["ar_invoices"] >= 300
    assert counts["vendors"] == 30 and counts["customers"] == 36 and counts["periods"] == 12 and counts["departments"] == 5
    for table, _, cols in schema.TABLES:
        got = [r[1] for r in conn.execute(f"PRAGMA table_info({table})")]
        assert got == [c[0] for c in cols]
    assert len(canary) < 1_500_000


def test_every_entry_balances_and_every_line_has_one_side(conn: sqlite3.Connection) -> None:
    assert scalar(conn, "SELECT COUNT(*) FROM (SELECT entry_id FROM gl_lines GROUP BY entry_id "
                        "HAVING ABS(SUM(debit) - SUM(credit)) > 0.001)") == 0
    assert scalar(conn, "SELECT COUNT(*) FROM gl_lines WHERE (debit > 0) = (credit > 0) OR debit < 0 OR credit < 0") == 0
    assert scalar(conn, "SELECT COUNT(*) FROM gl_lines WHERE ROUND(debit, 2) <> debit OR ROUND(credit, 2) <> credit") == 0


def test_referential_integrity(conn: sqlite3.Connection) -> None:
    checks = [
        "SELECT COUNT(*) FROM gl_lines l LEFT JOIN accounts a USING (account_id) WHERE a.account_id IS NULL",
        "SELECT COUNT(*) FROM gl_lines l LEFT JOIN journal_entries e USING (entry_id) WHERE e.entry_id IS NULL",
        "SELECT COUNT(*) FROM gl_lines WHERE department_id IS NOT NULL AND department_id NOT IN (SELECT department_id FROM departments)",
        "SELECT COUNT(*) FROM journal_entries WHERE period_id NOT IN (SELECT period_id FROM periods)",
        "SELECT COUNT(*) FROM ap_bills WHERE vendor_id NOT IN (SELECT vendor_id FROM vendors) OR entry_id NOT IN (SELECT entry_id FROM journal_entries)",
        "SELECT COUNT(*) FROM ap_payments WHERE bill_id NOT IN (SELECT bill_id FROM ap_bills)",
        "SELECT COUNT(*) FROM ar_receipts WHERE invoice_id NOT IN (SELECT invoice_id FROM ar_invoices)",
        "SELECT COUNT(*) FROM ap_payments p JOIN ap_bills b USING (bill_id) WHERE p.vendor_id <> b.vendor_id OR p.payment_date < b.bill_date",
        "SELECT COUNT(*) FROM ar_receipts r JOIN ar_invoices i USING (invoice_id) WHERE r.customer_id <> i.customer_id OR r.receipt_date < i.invoice_date",
        "SELECT COUNT(*) FROM journal_entries e JOIN ap_bills b USING (entry_id) WHERE e.reference <> b.bill_id OR e.period_id <> b.period_id",
        "SELECT COUNT(*) FROM vendors WHERE default_expense_account_id NOT IN (SELECT account_id FROM accounts WHERE type = 'expense')",
        "SELECT COUNT(*) FROM gl_lines l JOIN accounts a USING (account_id) WHERE a.is_active = 0",
    ]
    for sql in checks:
        assert scalar(conn, sql) == 0, sql


def test_subledgers_tie_to_the_ledger(conn: sqlite3.Connection) -> None:
    ap_gl = scalar(conn, "SELECT ROUND(SUM(credit) - SUM(debit), 2) FROM gl_lines WHERE account_id = '2000'")
    ap_sub = scalar(conn, "SELECT ROUND((SELECT SUM(amount) FROM ap_bills) - (SELECT SUM(amount) FROM ap_payments), 2)")
    assert ap_gl == ap_sub
    ar_gl = scalar(conn, "SELECT ROUND(SUM(debit) - SUM(credit), 2) FROM gl_lines WHERE account_id = '1100'")
    ar_sub = scalar(conn, "SELECT ROUND((SELECT SUM(amount) FROM ar_invoices) - (SELECT SUM(amount) FROM ar_receipts), 2)")
    assert ar_gl == ar_sub
    assert scalar(conn, "SELECT ROUND(SUM(debit) - SUM(credit), 2) FROM gl_lines WHERE account_id = '1300'") == 0  # rent fully amortized
    assert scalar(conn, "SELECT ROUND(SUM(debit) - SUM(credit), 2) FROM gl_lines WHERE account_id = '2200'") < 0  # December payroll accrued


def test_quirks_are_present(conn: sqlite3.Connection) -> None:
    # partial payments: installments, and bills left partly paid
    assert scalar(conn, "SELECT COUNT(*) FROM (SELECT bill_id FROM ap_payments GROUP BY bill_id HAVING COUNT(*) > 1)") >= 10
    assert scalar(conn, "SELECT COUNT(*) FROM ap_bills WHERE status = 'partially_paid'") >= 10
    assert scalar(conn, "SELECT COUNT(*) FROM (SELECT invoice_id FROM ar_receipts GROUP BY invoice_id HAVING COUNT(*) > 1)") >= 10
    # credit memos: negative, applied to a document of the same party
    assert scalar(conn, "SELECT COUNT(*) FROM ap_bills WHERE is_credit_memo = 1 AND amount < 0 AND applies_to_bill_id IS NOT NULL") >= 5
    assert scalar(conn, "SELECT COUNT(*) FROM ap_bills WHERE is_credit_memo = 1 AND (amount >= 0 OR status <> 'applied')") == 0
    assert scalar(conn, "SELECT COUNT(*) FROM ar_invoices WHERE is_credit_memo = 1 AND amount < 0") >= 5
    # cut-off: bills dated in one month and posted in the next period
    late = conn.execute("SELECT bill_date, period_id, entry_id FROM ap_bills WHERE substr(bill_date, 1, 7) < period_id").fetchall()
    assert len(late) >= 5
    for bill_date, period, entry in late:
        assert scalar(conn, "SELECT entry_date FROM journal_entries WHERE entry_id = ?", entry)[:7] == period
    # ids follow posting order
    ids = [r[0] for r in conn.execute("SELECT entry_id FROM journal_entries ORDER BY entry_date, entry_id")]
    assert ids == sorted(ids)


def test_open_last_period() -> None:
    books = financedb.generate("open-test", months=6, open_last=True, rent_amortization_last=False)
    c = financedb.open_copy(financedb.to_sqlite(books))
    assert c.execute("SELECT period_id, status FROM periods ORDER BY 1 DESC LIMIT 2").fetchall() == [
        (f"{books.year}-06", "open"), (f"{books.year}-05", "closed")]
    assert scalar(c, "SELECT COUNT(*) FROM journal_entries WHERE reference = ?", f"PAYACC-{books.year}-06") == 0
    assert scalar(c, "SELECT COUNT(*) FROM journal_entries WHERE reference = ?", f"PAYACC-{books.year}-05") == 1
    assert scalar(c, "SELECT COUNT(*) FROM journal_entries WHERE reference LIKE 'BANKFEE-%' AND period_id = ?", f"{books.year}-06") == 0
    assert scalar(c, "SELECT COUNT(*) FROM journal_entries WHERE reference = ?", f"AMORT-RENT-{books.year}-06") == 0
    assert scalar(c, "SELECT MAX(entry_date) FROM journal_entries") <= f"{books.year}-06-30"
    assert f"{books.year}-06" in books.payroll_second_half


def test_bank_lines_reconcile_to_the_ledger() -> None:
    books = financedb.generate("bank-test", months=5, open_last=True)
    lines = books.bank_lines("1010")
    assert sum(b.amount for b in lines) == books.account_balance("1010", books.end)
    assert any(b.date > b.entry.date for b in lines if b.entry is not None)  # checks clear later
    assert {b.description.split(" ")[0] for b in lines} >= {"CHECK", "DEPOSIT", "ACH", "TRANSFER", "WIRE"}


# ---------------------------------------------------------------------------------------
# the schema the prompts show, and the component decision


@pytest.mark.parametrize("workload", ["query.nl2sql", "execute.month-end"])
def test_spec_schema_documentation_matches_the_database(workload: str) -> None:
    spec = YAML(typ="safe", pure=True).load((ROOT / "specs" / "workloads" / workload / "workload.yaml").read_text(encoding="utf-8"))
    assert spec["task"]["schema"] == schema.documentation()


def test_financedb_is_shared_code_fingerprinted_through_both_generators() -> None:
    components = codeprint.discover()
    package = ROOT / "runtime" / "workloads" / "financedb"
    for path in package.glob("*.py"):
        assert "COMPONENT_ID" not in path.read_text(encoding="utf-8"), f"{path.name} must not be a component of its own"
    by_id = {c.id: c for c in components.values()}
    for component in ("query.nl2sql.generator", "execute.month-end.generator"):
        files = codeprint.fingerprint(by_id[component]).files
        for name in ("books.py", "store.py", "schema.py", "__init__.py"):
            assert f"runtime/workloads/financedb/{name}" in files, (ref, name)
        assert "runtime/checks/rng.py" in files


def test_store_refuses_unfinished_books() -> None:
    books = financedb.Books(financedb.make_company("x"), 1, False)
    with pytest.raises(RuntimeError):
        store.rows(books)


def test_vary_master_changes_master_data_only_deterministically() -> None:
    """A variant's master data differs from the company's (vendors, customers, chart) but keeps
    what questions name (company, year, categories, regions, departments), the same for a key."""
    base = financedb.make_company(CANARY_KEY)
    for master in ("variant-1", "variant-2", "other"):
        v = financedb.make_company(CANARY_KEY, master)
        assert v == financedb.make_company(CANARY_KEY, master)
        assert (v.name, v.year, v.payroll_base) == (base.name, base.year, base.payroll_base)
        assert v.vendors != base.vendors and v.customers != base.customers and v.accounts != base.accounts
        assert {x.category for x in v.vendors} <= set(financedb.books.CATEGORIES)
        assert {x.region for x in v.customers} <= set(financedb.books.REGIONS)
        assert len({x.vendor_id for x in v.vendors}) == len(v.vendors) and len({x.customer_id for x in v.customers}) == len(v.customers)
        assert len({a[0] for a in v.accounts}) == len(v.accounts)
        # cash, AP, AR and the accruals stay open: the close policies and questions name them
        assert all(a[4] == 1 for a in v.accounts if a[0] in ("1010", "1020", "1100", "1300", "2000", "2100", "2200"))
    assert financedb.make_company(CANARY_KEY, None) == base
