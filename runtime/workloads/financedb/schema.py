"""The finance database's tables: DDL for SQLite and the column documentation prompts show.

`TABLES` is the single description of the schema. The DDL is generated from it, and the
workload specs carry the same documentation in their `task.schema` block (the prompt shows
it); a test keeps the two equal, so a schema change is a spec change and bumps the workload.

Money columns are REAL (as in most real ledgers); every stored value has two decimals, and
graders compare money as Decimal at 0.01, never as floats.
"""

from __future__ import annotations

from typing import Any

# (table, description, ((column, SQL type, constraint, description), ...))
TABLES: tuple[tuple[str, str, tuple[tuple[str, str, str, str], ...]], ...] = (
    ("accounts", "Chart of accounts.", (
        ("account_id", "TEXT", "PRIMARY KEY", "account number, e.g. '6400'"),
        ("name", "TEXT", "NOT NULL", "account name"),
        ("type", "TEXT", "NOT NULL", "asset, liability, equity, revenue or expense"),
        ("normal_balance", "TEXT", "NOT NULL", "debit or credit"),
        ("is_active", "INTEGER", "NOT NULL", "1 if postings are allowed, 0 if the account is closed"),
    )),
    ("departments", "Cost centres used on GL lines and bills.", (
        ("department_id", "TEXT", "PRIMARY KEY", "e.g. 'D20'"),
        ("name", "TEXT", "NOT NULL", "department name"),
    )),
    ("periods", "Accounting periods (one per calendar month of the fiscal year).", (
        ("period_id", "TEXT", "PRIMARY KEY", "'YYYY-MM'"),
        ("start_date", "TEXT", "NOT NULL", "first day, 'YYYY-MM-DD'"),
        ("end_date", "TEXT", "NOT NULL", "last day, 'YYYY-MM-DD'"),
        ("fiscal_year", "INTEGER", "NOT NULL", "fiscal year (= calendar year)"),
        ("fiscal_quarter", "INTEGER", "NOT NULL", "1-4"),
        ("status", "TEXT", "NOT NULL", "closed or open"),
    )),
    ("vendors", "Suppliers.", (
        ("vendor_id", "TEXT", "PRIMARY KEY", "e.g. 'V007'"),
        ("name", "TEXT", "NOT NULL", "vendor name"),
        ("category", "TEXT", "NOT NULL", "spend category"),
        ("payment_terms_days", "INTEGER", "NOT NULL", "days from bill date to due date"),
        ("default_expense_account_id", "TEXT", "NOT NULL", "account their bills are normally coded to"),
    )),
    ("customers", "Customers.", (
        ("customer_id", "TEXT", "PRIMARY KEY", "e.g. 'C014'"),
        ("name", "TEXT", "NOT NULL", "customer name"),
        ("segment", "TEXT", "NOT NULL", "Enterprise, Mid-Market or SMB"),
        ("region", "TEXT", "NOT NULL", "North, South, East or West"),
        ("credit_limit", "REAL", "NOT NULL", "money"),
        ("payment_terms_days", "INTEGER", "NOT NULL", "days from invoice date to due date"),
    )),
    ("journal_entries", "General-ledger journal entry headers.", (
        ("entry_id", "TEXT", "PRIMARY KEY", "e.g. 'JE-000123'"),
        ("entry_date", "TEXT", "NOT NULL", "posting date, 'YYYY-MM-DD'"),
        ("period_id", "TEXT", "NOT NULL", "posting period; may be later than the document date (cut-off)"),
        ("source", "TEXT", "NOT NULL", "AP, AR, CASH, PAYROLL or MANUAL"),
        ("reference", "TEXT", "NOT NULL", "source document id: bill_id, invoice_id, payment_id, receipt_id or a transfer/schedule reference"),
        ("description", "TEXT", "NOT NULL", "free text"),
    )),
    ("gl_lines", "General-ledger journal lines; every entry's debits equal its credits.", (
        ("line_id", "INTEGER", "PRIMARY KEY", "line number"),
        ("entry_id", "TEXT", "NOT NULL", "journal_entries.entry_id"),
        ("account_id", "TEXT", "NOT NULL", "accounts.account_id"),
        ("department_id", "TEXT", "", "departments.department_id or NULL"),
        ("debit", "REAL", "NOT NULL", "money; 0 on a credit line"),
        ("credit", "REAL", "NOT NULL", "money; 0 on a debit line"),
        ("memo", "TEXT", "NOT NULL", "free text"),
    )),
    ("ap_bills", "Supplier bills and supplier credit memos (accounts payable).", (
        ("bill_id", "TEXT", "PRIMARY KEY", "e.g. 'B-000042'"),
        ("bill_number", "TEXT", "NOT NULL", "the supplier's invoice or credit-memo number"),
        ("vendor_id", "TEXT", "NOT NULL", "vendors.vendor_id"),
        ("bill_date", "TEXT", "NOT NULL", "document date, 'YYYY-MM-DD'"),
        ("due_date", "TEXT", "NOT NULL", "'YYYY-MM-DD'"),
        ("period_id", "TEXT", "NOT NULL", "posting period (a bill received late is posted in a later period)"),
        ("amount", "REAL", "NOT NULL", "money; negative for credit memos"),
        ("is_credit_memo", "INTEGER", "NOT NULL", "1 for a credit memo, else 0"),
        ("applies_to_bill_id", "TEXT", "", "for a credit memo, the bill it reduces"),
        ("expense_account_id", "TEXT", "NOT NULL", "accounts.account_id debited"),
        ("department_id", "TEXT", "", "departments.department_id"),
        ("description", "TEXT", "NOT NULL", "what was bought, with the service month where relevant"),
        ("status", "TEXT", "NOT NULL", "open, partially_paid, paid, or applied (credit memos)"),
        ("entry_id", "TEXT", "NOT NULL", "journal_entries.entry_id of the posting"),
    )),
    ("ap_payments", "Payments to suppliers; a bill may be paid in several installments.", (
        ("payment_id", "TEXT", "PRIMARY KEY", "e.g. 'PAY-000812'"),
        ("bill_id", "TEXT", "NOT NULL", "ap_bills.bill_id"),
        ("vendor_id", "TEXT", "NOT NULL", "vendors.vendor_id"),
        ("payment_date", "TEXT", "NOT NULL", "'YYYY-MM-DD'"),
        ("amount", "REAL", "NOT NULL", "money"),
        ("method", "TEXT", "NOT NULL", "check, ach or wire"),
        ("reference", "TEXT", "NOT NULL", "check number ('CHK-10023') or bank transfer reference"),
        ("entry_id", "TEXT", "NOT NULL", "journal_entries.entry_id"),
    )),
    ("ar_invoices", "Customer invoices and customer credit memos (accounts receivable).", (
        ("invoice_id", "TEXT", "PRIMARY KEY", "e.g. 'I-000042'"),
        ("invoice_number", "TEXT", "NOT NULL", "printed number"),
        ("customer_id", "TEXT", "NOT NULL", "customers.customer_id"),
        ("invoice_date", "TEXT", "NOT NULL", "'YYYY-MM-DD'"),
        ("due_date", "TEXT", "NOT NULL", "'YYYY-MM-DD'"),
        ("period_id", "TEXT", "NOT NULL", "posting period"),
        ("amount", "REAL", "NOT NULL", "money; negative for credit memos"),
        ("is_credit_memo", "INTEGER", "NOT NULL", "1 for a credit memo, else 0"),
        ("applies_to_invoice_id", "TEXT", "", "for a credit memo, the invoice it reduces"),
        ("revenue_account_id", "TEXT", "NOT NULL", "accounts.account_id credited (debited for credit memos)"),
        ("description", "TEXT", "NOT NULL", "free text"),
        ("status", "TEXT", "NOT NULL", "open, partially_paid, paid, or applied (credit memos)"),
        ("entry_id", "TEXT", "NOT NULL", "journal_entries.entry_id"),
    )),
    ("ar_receipts", "Customer payments received; an invoice may be paid in several receipts.", (
        ("receipt_id", "TEXT", "PRIMARY KEY", "e.g. 'RCPT-000523'"),
        ("invoice_id", "TEXT", "NOT NULL", "ar_invoices.invoice_id"),
        ("customer_id", "TEXT", "NOT NULL", "customers.customer_id"),
        ("receipt_date", "TEXT", "NOT NULL", "'YYYY-MM-DD'"),
        ("amount", "REAL", "NOT NULL", "money"),
        ("method", "TEXT", "NOT NULL", "check, ach or wire"),
        ("reference", "TEXT", "NOT NULL", "the customer's check number or transfer reference"),
        ("entry_id", "TEXT", "NOT NULL", "journal_entries.entry_id"),
    )),
)

INDEXES: tuple[tuple[str, str, str], ...] = (
    ("ix_gl_lines_entry", "gl_lines", "entry_id"),
    ("ix_gl_lines_account", "gl_lines", "account_id"),
    ("ix_journal_entries_period", "journal_entries", "period_id"),
    ("ix_ap_bills_vendor", "ap_bills", "vendor_id"),
    ("ix_ap_payments_bill", "ap_payments", "bill_id"),
    ("ix_ar_invoices_customer", "ar_invoices", "customer_id"),
    ("ix_ar_receipts_invoice", "ar_receipts", "invoice_id"),
)


def ddl() -> list[str]:
    """CREATE statements, tables first, in a fixed order."""
    out = []
    for table, _, columns in TABLES:
        cols = ",\n  ".join(" ".join(p for p in (name, sqltype, extra) if p) for name, sqltype, extra, _ in columns)
        out.append(f"CREATE TABLE {table} (\n  {cols}\n)")
    out.extend(f"CREATE INDEX {name} ON {table} ({column})" for name, table, column in INDEXES)
    return out


def columns(table: str) -> list[str]:
    for name, _, cols in TABLES:
        if name == table:
            return [c[0] for c in cols]
    raise KeyError(table)


def documentation() -> list[dict[str, Any]]:
    """The schema as prompts show it: tables with described columns (the specs' task.schema)."""
    return [
        {"table": name, "description": description,
         "columns": [{"name": c, "type": t, "description": d} for c, t, _, d in cols]}
        for name, description, cols in TABLES
    ]
