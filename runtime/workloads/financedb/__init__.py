"""The shared synthetic finance database of query.nl2sql and execute.month-end.

Shared code, deliberately not a component of its own: it has no meaning outside the two
generators that build their datasets from it, no spec pins it, and a change to it *is* a
change to both datasets. The code fingerprint already covers it transitively (each
generator's fingerprint includes every runtime module it imports), so editing this package
makes the version gate demand a bump of both generators — which is exactly the rule of
seed 001 §7 (a dataset design change bumps the workload). A separate component version
would add a third bump that nothing consumes. The canary content digests pinned in
tests/test_financedb.py catch behaviour changes the source fingerprint cannot see (an
SQLite upgrade that changes what a query returns, say).

    books = generate(company_key, facts_key, months=12)   # Python objects (Books)
    data  = to_sqlite(books)                              # SQLite file bytes, built in memory
    content_digest(data)                                  # identity of the content
    database(company_key, facts_key)                      # cached bytes of a complete year
"""

from __future__ import annotations

from functools import lru_cache

from lrc.runtime.workloads.financedb.books import (
    ACCOUNT_NAMES,
    ACCOUNTS,
    DEPARTMENTS,
    MONTHS,
    BankLine,
    Bill,
    Books,
    Company,
    Customer,
    Invoice,
    Line,
    Payment,
    Receipt,
    Vendor,
    bill_number,
    cents,
    fmt_money,
    generate,
    make_company,
    month_end,
    vary_master,
    month_label,
    payroll_tax,
    period_of,
)
from lrc.runtime.workloads.financedb.schema import documentation
from lrc.runtime.workloads.financedb.store import content_digest, open_copy, table_counts, to_sqlite

__all__ = [
    "ACCOUNT_NAMES", "ACCOUNTS", "DEPARTMENTS", "MONTHS", "BankLine", "Bill", "Books", "Company", "Customer", "Invoice",
    "Line", "Payment", "Receipt", "Vendor", "bill_number", "cents", "content_digest", "database", "documentation", "fmt_money",
    "generate", "make_company", "month_end", "month_label", "open_copy", "payroll_tax", "period_of", "table_counts",
    "to_sqlite", "vary_master",
]


@lru_cache(maxsize=16)
def database(company_key: str, facts_key: str = "primary", months: int = 12, volume: int = 100,
             master: str | None = None) -> bytes:
    """Bytes of a complete, closed year of books (cached: the items of one edition share it).

    `master` names a variation of the company's master data (vendors, customers, chart of
    accounts); None is the company itself."""
    return to_sqlite(generate(company_key, facts_key, months=months, volume=volume, master=master))
