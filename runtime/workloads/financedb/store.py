"""Books -> SQLite bytes, and the content digest of a database.

The database is built in memory with the standard library's sqlite3 and serialized, so no
file is ever written. The bytes are deterministic for one SQLite release, but the file
format records the library version, so the digest that identifies a database is over its
*content*: the schema text of every object and every table's rows, each row encoded with
its storage class (1 and 1.0 differ), rows sorted — independent of page layout and release.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
from decimal import Decimal
from typing import Any

from lrc.runtime.workloads.financedb import schema
from lrc.runtime.workloads.financedb.books import DEPARTMENTS, Books, month_end


def _money(amount: Decimal) -> float:
    return float(amount)


def _date(d: Any) -> str:
    return d.isoformat()


def rows(books: Books) -> dict[str, list[tuple[Any, ...]]]:
    """Every table's rows, in insertion order."""
    if not books.finalized:
        raise RuntimeError("finalize the books first")
    c = books.company
    out: dict[str, list[tuple[Any, ...]]] = {}
    out["accounts"] = [tuple(a) for a in c.accounts]
    out["departments"] = [tuple(d) for d in DEPARTMENTS]
    out["periods"] = []
    for m in range(1, books.months + 1):
        period = f"{books.year:04d}-{m:02d}"
        status = "open" if books.open_last and m == books.months else "closed"
        out["periods"].append((period, f"{period}-01", _date(month_end(books.year, m)), books.year, (m - 1) // 3 + 1, status))
    out["vendors"] = [(v.vendor_id, v.name, v.category, v.terms, v.account) for v in c.vendors]
    out["customers"] = [(x.customer_id, x.name, x.segment, x.region, _money(x.credit_limit), x.terms) for x in c.customers]
    out["journal_entries"] = [(e.entry_id, _date(e.date), e.period, e.source, e.reference, e.description) for e in books.entries]
    lines = []
    n = 0
    for e in books.entries:
        for ln in e.lines:
            n += 1
            lines.append((n, e.entry_id, ln.account, ln.department, _money(ln.debit), _money(ln.credit), ln.memo))
    out["gl_lines"] = lines
    out["ap_bills"] = [(b.bill_id, b.bill_number, b.vendor.vendor_id, _date(b.bill_date), _date(b.due_date), b.entry.period,
                        _money(b.amount), int(b.is_credit_memo), b.applies_to.bill_id if b.applies_to else None,
                        b.expense_account, b.department, b.description, b.status, b.entry.entry_id) for b in books.bills]
    out["ap_payments"] = [(p.payment_id, p.bill.bill_id, p.bill.vendor.vendor_id, _date(p.payment_date), _money(p.amount),
                           p.method, p.reference, p.entry.entry_id) for p in books.payments]
    out["ar_invoices"] = [(v.invoice_id, v.invoice_number, v.customer.customer_id, _date(v.invoice_date), _date(v.due_date),
                           v.entry.period, _money(v.amount), int(v.is_credit_memo),
                           v.applies_to.invoice_id if v.applies_to else None, v.revenue_account, v.description, v.status,
                           v.entry.entry_id) for v in books.invoices]
    out["ar_receipts"] = [(r.receipt_id, r.invoice.invoice_id, r.invoice.customer.customer_id, _date(r.receipt_date),
                           _money(r.amount), r.method, r.reference, r.entry.entry_id) for r in books.receipts]
    return out


def to_sqlite(books: Books) -> bytes:
    """The books as the bytes of an SQLite database file, built in memory."""
    conn = sqlite3.connect(":memory:")
    try:
        conn.execute("PRAGMA page_size = 4096")
        conn.execute("PRAGMA encoding = 'UTF-8'")
        for statement in schema.ddl():
            if statement.startswith("CREATE TABLE"):
                conn.execute(statement)
        for table, values in rows(books).items():
            cols = schema.columns(table)
            conn.executemany(f"INSERT INTO {table} ({', '.join(cols)}) VALUES ({', '.join('?' * len(cols))})", values)
        for statement in schema.ddl():
            if statement.startswith("CREATE INDEX"):
                conn.execute(statement)
        conn.commit()
        conn.execute("VACUUM")
        return conn.serialize()
    finally:
        conn.close()


def open_copy(data: bytes) -> sqlite3.Connection:
    """A private in-memory copy of a database (trusted code only: no sandbox)."""
    conn = sqlite3.connect(":memory:")
    conn.deserialize(data)
    return conn


def _cell(value: Any) -> Any:
    if value is None:
        return None
    if isinstance(value, bool):  # pragma: no cover - sqlite never returns bool
        return ["i", str(int(value))]
    if isinstance(value, int):
        return ["i", str(value)]
    if isinstance(value, float):
        return ["r", repr(value)]
    if isinstance(value, bytes):
        return ["b", value.hex()]
    return ["s", str(value)]


def content_digest(data: bytes) -> str:
    """`sha256:<hex>` over the sorted content of a database (schema and rows), not its bytes."""
    conn = open_copy(data)
    try:
        h = hashlib.sha256(b"lrc:financedb-content:v1\0")
        objects = conn.execute("SELECT type, name, tbl_name, sql FROM sqlite_master ORDER BY type, name").fetchall()
        for obj in objects:
            h.update(json.dumps(list(obj), ensure_ascii=False).encode("utf-8") + b"\n")
        for (table,) in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name").fetchall():
            encoded = sorted(json.dumps([_cell(v) for v in row], ensure_ascii=False, separators=(",", ":"))
                             for row in conn.execute(f'SELECT * FROM "{table}"'))
            h.update(f"table {table} {len(encoded)}\n".encode("utf-8"))
            for line in encoded:
                h.update(line.encode("utf-8") + b"\n")
        return "sha256:" + h.hexdigest()
    finally:
        conn.close()


def table_counts(data: bytes) -> dict[str, int]:
    conn = open_copy(data)
    try:
        names = [n for (n,) in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")]
        return {n: conn.execute(f'SELECT COUNT(*) FROM "{n}"').fetchone()[0] for n in names}
    finally:
        conn.close()
