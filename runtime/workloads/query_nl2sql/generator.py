"""Seeded generator of query.nl2sql items (LedgerRate §4.6, query.nl2sql.v1).

Why it is built this way:

- One invented company per edition seed; its year of books is the database every question
  runs on (`finance.db`), plus two *variant* databases of the same company (name, year,
  categories, regions, departments) with different transactions *and* different master
  data: vendors and customers leave and join, customers move region and get new credit
  limits, the chart gains accounts and closes some. The grader runs the model's SQL on all
  three, so a query that matches the reference by coincidence on one database fails.
- 15 question templates of graded difficulty, in a fixed order (item i uses template
  i mod 15): 5 easy (one table), 5 medium (joins, grouping, anti-joins), 5 hard (fan-out
  traps, window functions, period and cut-off logic, date arithmetic). Each template has
  reference SQL, states the output columns, and says whether row order matters.
- Parameters (categories, regions, months, quarters, thresholds, dates, k) are drawn from
  the seed, so a new edition asks new questions. A draw is kept only if its reference
  result on the primary database is informative (not empty, not all NULL, and not
  trivially the whole table), so no item rewards an empty or degenerate query, *and* its
  reference result on at least one variant differs from the primary's as the grader
  compares them (`compare.py`, the same function): the primary's result returned as
  literals (`SELECT 'Kestrel Freight', 1234.50`) then fails on that variant. A draw that
  does not change across the variants proves nothing about the query and is drawn again.
- The answer key holds the reference SQL and its result on each database (raw cells; the
  grader normalizes both sides the same way), never anything a prompt renders.
"""

from __future__ import annotations

import datetime as _dt
import sqlite3
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Callable, Mapping

from lrc.runtime.checks.rng import Stream
import lrc.runtime.workloads.financedb as financedb
from lrc.runtime.workloads.base import Item
from lrc.runtime.workloads.query_nl2sql.compare import compare, tolerances

COMPONENT_ID = "query.nl2sql.generator"
COMPONENT_VERSION = 3

PRIMARY = "finance.db"
VARIANTS = ("variants/finance-v1.db", "variants/finance-v2.db")
VARIANT_VOLUME = 60  # percent of the primary's transaction volume
DIFFICULTY = ("easy",) * 5 + ("medium",) * 5 + ("hard",) * 5
MAX_ATTEMPTS = 40


@dataclass(frozen=True)
class Edition:
    company: financedb.Company
    databases: dict[str, bytes]
    digests: dict[str, str]


@lru_cache(maxsize=4)
def edition(seed: str) -> Edition:
    """The company and its databases for one seed (shared by every item of the edition)."""
    key = f"query.nl2sql/{seed}"
    company = financedb.make_company(key)
    dbs = {PRIMARY: financedb.database(key, "primary")}
    for n, name in enumerate(VARIANTS, 1):
        dbs[name] = financedb.database(key, f"variant-{n}", 12, VARIANT_VOLUME, master=f"variant-{n}")
    return Edition(company, dbs, {name: financedb.content_digest(data) for name, data in dbs.items()})


# --------------------------------------------------------------------------------------
# question templates


@dataclass(frozen=True)
class Question:
    topic: str
    question: str
    columns: tuple[str, ...]
    ordered: bool
    sql: str


def _month_range(year: int, month: int) -> tuple[str, str]:
    return f"{year:04d}-{month:02d}-01", financedb.month_end(year, month).isoformat()


def _quarter_range(year: int, q: int) -> tuple[str, str]:
    return f"{year:04d}-{3 * q - 2:02d}-01", financedb.month_end(year, 3 * q).isoformat()


def _label(year: int, month: int) -> str:
    return f"{financedb.MONTHS[month - 1]} {year}"


def _long_date(d: str) -> str:
    day = _dt.date.fromisoformat(d)
    return f"{day.day} {financedb.MONTHS[day.month - 1]} {day.year}"


def _categories(conn: sqlite3.Connection, min_vendors: int = 1) -> list[str]:
    return [c for (c,) in conn.execute("SELECT category FROM vendors GROUP BY category HAVING COUNT(*) >= ? ORDER BY category",
                                       (min_vendors,))]


def q_vendor_count(r: Stream, co: financedb.Company, conn: sqlite3.Connection) -> Question:
    cat = r.choice(_categories(conn))
    return Question("vendor-count-by-category", f"How many vendors are in the '{cat}' category?", ("vendor_count",), False,
                    f"SELECT COUNT(*) AS vendor_count FROM vendors WHERE category = '{cat}'")


def q_customers_region_limit(r: Stream, co: financedb.Company, conn: sqlite3.Connection) -> Question:
    region = r.choice(financedb.books.REGIONS)
    limit = r.choice((10000, 20000, 25000, 50000, 75000, 100000))
    return Question("customers-by-region-and-limit",
                    f"List the name and credit limit of every customer in the {region} region whose credit limit is at least "
                    f"{limit:,}.", ("name", "credit_limit"), False,
                    f"SELECT name, credit_limit FROM customers WHERE region = '{region}' AND credit_limit >= {limit}")


def q_bills_total_month(r: Stream, co: financedb.Company, conn: sqlite3.Connection) -> Question:
    # Prefer a month where the traps bite: a bill posted in a later period, and a credit memo.
    tricky = [m for m in range(1, 13) if conn.execute(
        "SELECT SUM(substr(bill_date, 1, 7) <> period_id) > 0 AND SUM(is_credit_memo) > 0 FROM ap_bills "
        "WHERE substr(bill_date, 1, 7) = ?", (f"{co.year:04d}-{m:02d}",)).fetchone()[0]]
    month = r.choice(tricky or list(range(1, 13)))
    start, end = _month_range(co.year, month)
    return Question("bills-total-for-month",
                    f"What is the total amount of the supplier bills dated in {_label(co.year, month)} (by bill date), "
                    f"excluding credit memos?", ("total_amount",), False,
                    f"SELECT ROUND(SUM(amount), 2) AS total_amount FROM ap_bills "
                    f"WHERE bill_date BETWEEN '{start}' AND '{end}' AND is_credit_memo = 0")


def q_active_accounts(r: Stream, co: financedb.Company, conn: sqlite3.Connection) -> Question:
    kind = r.choice(("asset", "liability", "revenue", "expense", "expense"))
    return Question("active-accounts-of-type",
                    f"List the account number and name of every active {kind} account, ordered by account number.",
                    ("account_id", "name"), True,
                    f"SELECT account_id, name FROM accounts WHERE type = '{kind}' AND is_active = 1 ORDER BY account_id")


def q_largest_payments(r: Stream, co: financedb.Company, conn: sqlite3.Connection) -> Question:
    method = r.choice(("check", "ach", "wire"))
    q = r.between(1, 4)
    k = r.choice((3, 5, 10))
    start, end = _quarter_range(co.year, q)
    return Question("largest-payments-by-method",
                    f"List the payment id, payment date and amount of the {k} largest supplier payments made by {method} in "
                    f"Q{q} {co.year} (by payment date), largest first; break ties by payment id.",
                    ("payment_id", "payment_date", "amount"), True,
                    f"SELECT payment_id, payment_date, amount FROM ap_payments WHERE method = '{method}' "
                    f"AND payment_date BETWEEN '{start}' AND '{end}' ORDER BY amount DESC, payment_id LIMIT {k}")


def q_paid_by_vendor(r: Stream, co: financedb.Company, conn: sqlite3.Connection) -> Question:
    cat = r.choice(_categories(conn, 2))
    q = r.between(1, 4)
    start, end = _quarter_range(co.year, q)
    return Question("paid-per-vendor-in-category",
                    f"For each vendor in the '{cat}' category, what was the total paid to it in Q{q} {co.year} "
                    f"(by payment date)? Include only vendors with at least one payment in that quarter.",
                    ("vendor_name", "total_paid"), False,
                    f"SELECT v.name AS vendor_name, ROUND(SUM(p.amount), 2) AS total_paid FROM ap_payments p "
                    f"JOIN vendors v ON v.vendor_id = p.vendor_id WHERE v.category = '{cat}' "
                    f"AND p.payment_date BETWEEN '{start}' AND '{end}' GROUP BY v.vendor_id, v.name")


def q_payment_mix(r: Stream, co: financedb.Company, conn: sqlite3.Connection) -> Question:
    month = r.between(2, 12)
    start, end = _month_range(co.year, month)
    return Question("payment-category-and-method",
                    f"For every supplier payment made in {_label(co.year, month)}, give the vendor's category and the "
                    f"payment method: one row per payment.", ("category", "method"), False,
                    f"SELECT v.category, p.method FROM ap_payments p JOIN vendors v ON v.vendor_id = p.vendor_id "
                    f"WHERE p.payment_date BETWEEN '{start}' AND '{end}'")


def q_vendors_without_bills(r: Stream, co: financedb.Company, conn: sqlite3.Connection) -> Question:
    month = r.between(1, 12)
    start, end = _month_range(co.year, month)
    return Question("vendors-without-bills",
                    f"Which vendors have no supplier bill (credit memos included) dated in {_label(co.year, month)}?",
                    ("vendor_name",), False,
                    f"SELECT v.name AS vendor_name FROM vendors v WHERE NOT EXISTS (SELECT 1 FROM ap_bills b "
                    f"WHERE b.vendor_id = v.vendor_id AND b.bill_date BETWEEN '{start}' AND '{end}')")


def q_department_expense(r: Stream, co: financedb.Company, conn: sqlite3.Connection) -> Question:
    dept_id, dept = r.choice(financedb.DEPARTMENTS)
    month = r.between(1, 12)
    period = f"{co.year:04d}-{month:02d}"
    return Question("department-expense-by-account",
                    f"For the {dept} department, what was the net expense per expense account in posting period {period} "
                    f"(debits minus credits on that department's GL lines, for accounts of type 'expense')? Show only "
                    f"accounts with a non-zero net amount, largest first; break ties by account number.",
                    ("account_id", "account_name", "net_expense"), True,
                    f"SELECT a.account_id, a.name AS account_name, ROUND(SUM(l.debit - l.credit), 2) AS net_expense "
                    f"FROM gl_lines l JOIN journal_entries e ON e.entry_id = l.entry_id "
                    f"JOIN accounts a ON a.account_id = l.account_id "
                    f"WHERE l.department_id = '{dept_id}' AND e.period_id = '{period}' AND a.type = 'expense' "
                    f"GROUP BY a.account_id, a.name HAVING ROUND(SUM(l.debit - l.credit), 2) <> 0 "
                    f"ORDER BY net_expense DESC, a.account_id")


def q_customers_over(r: Stream, co: financedb.Company, conn: sqlite3.Connection) -> Question:
    nets = [v for (v,) in conn.execute(
        "SELECT SUM(amount) FROM ar_invoices WHERE invoice_date BETWEEN ? AND ? GROUP BY customer_id ORDER BY 1 DESC",
        (f"{co.year}-01-01", f"{co.year}-12-31"))]
    k = r.between(3, min(10, max(3, len(nets) - 1)))
    threshold = int(nets[min(k, len(nets) - 1)] // 10000 * 10000) if nets else 100000
    return Question("customers-net-invoiced-over",
                    f"Which customers had a net invoiced amount above {threshold:,} in {co.year} (invoices minus credit memos, "
                    f"by invoice date)? Give each such customer's net invoiced amount.",
                    ("customer_name", "net_invoiced"), False,
                    f"SELECT c.name AS customer_name, ROUND(SUM(i.amount), 2) AS net_invoiced FROM ar_invoices i "
                    f"JOIN customers c ON c.customer_id = i.customer_id "
                    f"WHERE i.invoice_date BETWEEN '{co.year}-01-01' AND '{co.year}-12-31' "
                    f"GROUP BY c.customer_id, c.name HAVING SUM(i.amount) > {threshold}")


def q_open_ap(r: Stream, co: financedb.Company, conn: sqlite3.Connection) -> Question:
    month = r.between(3, 11)
    day = financedb.month_end(co.year, month).isoformat()
    return Question("open-ap-by-vendor",
                    f"What was each vendor's open accounts-payable balance at the end of {_long_date(day)}: its bills and "
                    f"credit memos dated on or before that day, minus its payments dated on or before that day? List vendors "
                    f"with a non-zero balance, largest balance first; break ties by vendor name.",
                    ("vendor_name", "open_balance"), True,
                    f"WITH billed AS (SELECT vendor_id, SUM(amount) AS amt FROM ap_bills WHERE bill_date <= '{day}' "
                    f"GROUP BY vendor_id), paid AS (SELECT vendor_id, SUM(amount) AS amt FROM ap_payments "
                    f"WHERE payment_date <= '{day}' GROUP BY vendor_id) "
                    f"SELECT v.name AS vendor_name, ROUND(COALESCE(b.amt, 0) - COALESCE(p.amt, 0), 2) AS open_balance "
                    f"FROM vendors v LEFT JOIN billed b ON b.vendor_id = v.vendor_id LEFT JOIN paid p ON p.vendor_id = v.vendor_id "
                    f"WHERE ROUND(COALESCE(b.amt, 0) - COALESCE(p.amt, 0), 2) <> 0 ORDER BY open_balance DESC, vendor_name")


def q_expense_change(r: Stream, co: financedb.Company, conn: sqlite3.Connection) -> Question:
    first = r.between(2, 8)
    last = r.between(first + 3, 12)
    p1, p2 = f"{co.year:04d}-{first:02d}", f"{co.year:04d}-{last:02d}"
    return Question("monthly-expense-change",
                    f"For each posting period from {p1} to {p2}, what was the total expense (debits minus credits on GL lines "
                    f"of accounts of type 'expense', by the entry's posting period), and its change from the previous period "
                    f"of that range (NULL for {p1})? Order by period.",
                    ("period_id", "total_expense", "change_from_prior"), True,
                    f"WITH m AS (SELECT e.period_id, ROUND(SUM(l.debit - l.credit), 2) AS total_expense FROM gl_lines l "
                    f"JOIN journal_entries e ON e.entry_id = l.entry_id JOIN accounts a ON a.account_id = l.account_id "
                    f"WHERE a.type = 'expense' AND e.period_id BETWEEN '{p1}' AND '{p2}' GROUP BY e.period_id) "
                    f"SELECT period_id, total_expense, ROUND(total_expense - LAG(total_expense) OVER (ORDER BY period_id), 2) "
                    f"AS change_from_prior FROM m ORDER BY period_id")


def q_top_customers(r: Stream, co: financedb.Company, conn: sqlite3.Connection) -> Question:
    k = r.choice((2, 3, 3, 4))
    return Question("top-customers-per-quarter",
                    f"For each quarter of {co.year}, which {k} customers paid us the most (sum of receipts, by receipt date), "
                    f"and what is each one's rank within its quarter (1 = paid the most)? Break ties by customer name. "
                    f"Order by quarter, then rank.",
                    ("fiscal_quarter", "customer_name", "total_received", "rank"), True,
                    f"WITH t AS (SELECT (CAST(substr(r.receipt_date, 6, 2) AS INTEGER) + 2) / 3 AS fiscal_quarter, "
                    f"c.name AS customer_name, ROUND(SUM(r.amount), 2) AS total_received FROM ar_receipts r "
                    f"JOIN customers c ON c.customer_id = r.customer_id "
                    f"WHERE r.receipt_date BETWEEN '{co.year}-01-01' AND '{co.year}-12-31' GROUP BY 1, c.customer_id, c.name), "
                    f"ranked AS (SELECT fiscal_quarter, customer_name, total_received, ROW_NUMBER() OVER "
                    f"(PARTITION BY fiscal_quarter ORDER BY total_received DESC, customer_name) AS rank FROM t) "
                    f"SELECT fiscal_quarter, customer_name, total_received, rank FROM ranked WHERE rank <= {k} "
                    f"ORDER BY fiscal_quarter, rank")


def q_late_posted_bills(r: Stream, co: financedb.Company, conn: sqlite3.Connection) -> Question:
    q = r.between(1, 4)
    p1, p2 = f"{co.year:04d}-{3 * q - 2:02d}", f"{co.year:04d}-{3 * q:02d}"
    return Question("late-posted-bills",
                    f"Which supplier bills (credit memos included) posted in Q{q} {co.year} (posting periods {p1} to {p2}) "
                    f"were posted in a later period than the month of their bill date? Give the bill number, vendor name, "
                    f"bill date and posting period.",
                    ("bill_number", "vendor_name", "bill_date", "period_id"), False,
                    f"SELECT b.bill_number, v.name AS vendor_name, b.bill_date, b.period_id FROM ap_bills b "
                    f"JOIN vendors v ON v.vendor_id = b.vendor_id WHERE b.period_id BETWEEN '{p1}' AND '{p2}' "
                    f"AND substr(b.bill_date, 1, 7) < b.period_id")


def q_ar_aging(r: Stream, co: financedb.Company, conn: sqlite3.Connection) -> Question:
    month = r.between(4, 12)
    day = financedb.month_end(co.year, month).isoformat()
    return Question("ar-aging",
                    f"Accounts-receivable aging at the end of {_long_date(day)}: take every customer invoice (not credit "
                    f"memos) dated on or before that day whose open balance is greater than zero after rounding to cents. "
                    f"The open balance is the invoice amount, minus receipts against it dated on or before that day, plus "
                    f"credit memos applied to it dated on or before that day (credit memo amounts are negative). Bucket each "
                    f"invoice by days past due on that day (that day minus the due date): 'current' (0 or less), '1-30', "
                    f"'31-60', '61-90', 'over 90'. For each bucket that has invoices, give the number of invoices and their "
                    f"total open balance.",
                    ("bucket", "invoice_count", "open_amount"), False,
                    f"WITH open AS (SELECT i.invoice_id, i.due_date, i.amount "
                    f"+ COALESCE((SELECT SUM(cm.amount) FROM ar_invoices cm WHERE cm.applies_to_invoice_id = i.invoice_id "
                    f"AND cm.invoice_date <= '{day}'), 0) "
                    f"- COALESCE((SELECT SUM(x.amount) FROM ar_receipts x WHERE x.invoice_id = i.invoice_id "
                    f"AND x.receipt_date <= '{day}'), 0) AS open_amount "
                    f"FROM ar_invoices i WHERE i.is_credit_memo = 0 AND i.invoice_date <= '{day}'), "
                    f"aged AS (SELECT open_amount, CAST(julianday('{day}') - julianday(due_date) AS INTEGER) AS days "
                    f"FROM open WHERE ROUND(open_amount, 2) > 0) "
                    f"SELECT CASE WHEN days <= 0 THEN 'current' WHEN days <= 30 THEN '1-30' WHEN days <= 60 THEN '31-60' "
                    f"WHEN days <= 90 THEN '61-90' ELSE 'over 90' END AS bucket, COUNT(*) AS invoice_count, "
                    f"ROUND(SUM(open_amount), 2) AS open_amount FROM aged GROUP BY bucket")


TEMPLATES: tuple[Callable[[Stream, financedb.Company, sqlite3.Connection], Question], ...] = (
    # easy: one table
    q_vendor_count, q_customers_region_limit, q_bills_total_month, q_active_accounts, q_largest_payments,
    # medium: joins, grouping, anti-joins, duplicates that must be kept
    q_paid_by_vendor, q_payment_mix, q_vendors_without_bills, q_department_expense, q_customers_over,
    # hard: fan-out traps, windows, period and cut-off logic, date arithmetic
    q_open_ap, q_expense_change, q_top_customers, q_late_posted_bills, q_ar_aging,
)


# --------------------------------------------------------------------------------------
# items


def run_reference(conn: sqlite3.Connection, sql: str) -> dict[str, Any]:
    cur = conn.execute(sql)
    return {"columns": [d[0] for d in cur.description], "rows": [list(row) for row in cur.fetchall()]}


def informative(q: Question, result: dict[str, Any], table_rows: int) -> bool:
    """A reference result worth asking for: non-empty, not all NULL, not the whole table."""
    rows = result["rows"]
    if not rows or all(v is None for row in rows for v in row):
        return False
    if q.topic == "payment-category-and-method":
        return len({tuple(r) for r in rows}) < len(rows)  # duplicates exist, so DISTINCT is visibly wrong
    if q.topic == "vendors-without-bills":
        return 0 < len(rows) < table_rows
    if q.topic == "largest-payments-by-method":
        return len(rows) == int(q.sql.rsplit("LIMIT", 1)[1])
    if q.topic == "active-accounts-of-type":
        return len(rows) >= 2
    return True


def varies(q: Question, primary: dict[str, Any], variants: Mapping[str, dict[str, Any]]) -> bool:
    """True when the primary's result, returned as literals, fails on at least one variant
    under the grader's own comparison (columns, tolerances, order as the item declares)."""
    tol = tolerances(primary)
    return any(compare(result, primary["columns"], primary["rows"], q.ordered, tol) is not None for result in variants.values())


def generate(seed: str, index: int, params: Mapping[str, Any]) -> Item:
    ed = edition(seed)
    template = TEMPLATES[index % len(TEMPLATES)]
    r = Stream(seed, "query.nl2sql", "question", index)
    conns = {name: financedb.open_copy(ed.databases[name]) for name in (PRIMARY, *VARIANTS)}
    try:
        vendors = conns[PRIMARY].execute("SELECT COUNT(*) FROM vendors").fetchone()[0]
        for attempt in range(MAX_ATTEMPTS):
            q = template(r.child("attempt", attempt), ed.company, conns[PRIMARY])
            primary = run_reference(conns[PRIMARY], q.sql)
            if not informative(q, primary, vendors):
                continue
            others = {name: run_reference(conns[name], q.sql) for name in VARIANTS}
            if varies(q, primary, others):
                break
        else:  # every template finds a draw within a few attempts (tests/test_nl2sql.py, many seeds)
            raise RuntimeError(f"query.nl2sql: no informative draw for item {index} ({template.__name__})")
    finally:
        for conn in conns.values():
            conn.close()
    expected = {PRIMARY: primary, **others}
    difficulty = DIFFICULTY[index % len(TEMPLATES)]
    qid = f"Q{index + 1:02d}"
    context = {
        "question_id": qid,
        "difficulty": difficulty,
        "question": q.question,
        "columns": list(q.columns),
        "ordered": q.ordered,
        "company": ed.company.name,
        "fiscal_year": ed.company.year,
        "database": PRIMARY,
    }
    answer_key = {
        "reference_sql": q.sql,
        "topic": q.topic,
        "difficulty": difficulty,
        "columns": list(q.columns),
        "ordered": q.ordered,
        "databases": [PRIMARY, *VARIANTS],
        "database_digests": dict(ed.digests),
        "expected": expected,
        "tolerance": tolerances(primary),
    }
    return Item(index=index, item_id=f"nl2sql-{qid.lower()}", context=context, answer_key=answer_key,
                files=dict(ed.databases))
