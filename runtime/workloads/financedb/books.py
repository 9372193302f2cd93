"""Seeded books of a small invented company: GL, AP, AR and dimension tables.

Why it is built this way:

- Two keys: the *company* key decides the dimensions (name, year, vendors, customers, chart
  of accounts, payroll and rent levels); the *facts* key decides the transactions. Variant
  databases of one question share the company (so "vendor 'Kestrel Freight' in Q2" still
  means something) but not the facts, which is how a query that is right by coincidence is
  caught.
- Every draw comes from a named `Stream` sub-stream, so adding a draw in one place does not
  reshuffle the rest. Money is Decimal, cents only. Nothing reads the clock.
- Realistic quirks, because a finance question is only hard if the data is: partial
  payments (a bill paid in two installments, or one installment and then nothing), supplier
  and customer credit memos (negative amounts applied to a document), and period-end
  cut-off (a bill dated in the last days of a month but posted in the next period).
- Ids (entries, bills, payments, invoices, receipts, check numbers) are assigned at
  `finalize()` in date order, as an accounting system would, so ids sort chronologically.
- Callers (the month-end generator) can add records before `finalize()` and can leave the
  last period open: its payroll accrual, bank fees and interest are then not yet booked.
"""

from __future__ import annotations

import calendar
import datetime as _dt
from dataclasses import dataclass, field, replace
from decimal import ROUND_HALF_UP, Decimal
from typing import Any, Callable

from lrc.runtime.checks.rng import Stream

CENT = Decimal("0.01")
ZERO = Decimal("0.00")

MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August", "September",
          "October", "November", "December")

# --------------------------------------------------------------------------------------
# Chart of accounts and departments (fixed: questions and prompts name them)

ACCOUNTS: tuple[tuple[str, str, str, str, int], ...] = (
    # (account_id, name, type, normal balance, is_active)
    ("1010", "Cash - Operating", "asset", "debit", 1),
    ("1020", "Cash - Payroll", "asset", "debit", 1),
    ("1100", "Accounts Receivable", "asset", "debit", 1),
    ("1300", "Prepaid Expenses", "asset", "debit", 1),
    ("1500", "Equipment", "asset", "debit", 1),
    ("1590", "Accumulated Depreciation", "asset", "credit", 1),
    ("2000", "Accounts Payable", "liability", "credit", 1),
    ("2100", "Accrued Liabilities", "liability", "credit", 1),
    ("2200", "Accrued Payroll", "liability", "credit", 1),
    ("3000", "Share Capital", "equity", "credit", 1),
    ("3100", "Retained Earnings", "equity", "credit", 1),
    ("4000", "Product Revenue", "revenue", "credit", 1),
    ("4100", "Service Revenue", "revenue", "credit", 1),
    ("4900", "Sales Returns and Allowances", "revenue", "debit", 1),
    ("5000", "Cost of Materials", "expense", "debit", 1),
    ("5100", "Freight and Logistics", "expense", "debit", 1),
    ("6000", "Salaries and Wages", "expense", "debit", 1),
    ("6050", "Payroll Taxes", "expense", "debit", 1),
    ("6100", "Rent", "expense", "debit", 1),
    ("6200", "Utilities and Facilities", "expense", "debit", 1),
    ("6250", "Office Supplies", "expense", "debit", 1),
    ("6300", "Software and IT Services", "expense", "debit", 1),
    ("6400", "Professional Fees", "expense", "debit", 1),
    ("6500", "Insurance", "expense", "debit", 1),
    ("6600", "Marketing", "expense", "debit", 1),
    ("6700", "Travel and Entertainment", "expense", "debit", 1),
    ("6800", "Bank Charges", "expense", "debit", 1),
    ("6900", "Depreciation", "expense", "debit", 1),
    ("6990", "Miscellaneous Expense (closed)", "expense", "debit", 0),
    ("7000", "Interest Income", "revenue", "credit", 1),
)
ACCOUNT_NAMES = {a[0]: a[1] for a in ACCOUNTS}

# Accounts a variant's chart may add (never posted to: they exist so that master-data
# questions about the chart have a different answer on a variant database).
EXTRA_ACCOUNTS: tuple[tuple[str, str, str, str, int], ...] = (
    ("1050", "Petty Cash", "asset", "debit", 1),
    ("1310", "Security Deposits", "asset", "debit", 1),
    ("1600", "Leasehold Improvements", "asset", "debit", 1),
    ("2300", "Sales Tax Payable", "liability", "credit", 1),
    ("2400", "Deferred Revenue", "liability", "credit", 1),
    ("2500", "Customer Deposits", "liability", "credit", 1),
    ("4200", "Licensing Revenue", "revenue", "credit", 1),
    ("4300", "Other Operating Revenue", "revenue", "credit", 1),
    ("6350", "Training and Development", "expense", "debit", 1),
    ("6450", "Recruiting", "expense", "debit", 1),
    ("6550", "Licenses and Permits", "expense", "debit", 1),
    ("6950", "Amortization of Intangibles", "expense", "debit", 1),
)

DEPARTMENTS: tuple[tuple[str, str], ...] = (
    ("D10", "Sales"),
    ("D20", "Operations"),
    ("D30", "Engineering"),
    ("D40", "Finance and Administration"),
    ("D50", "Marketing"),
)

# Half-month gross wages per department, in cents (low, high).
_PAYROLL_BASE = {"D10": (1400000, 2200000), "D20": (1800000, 3000000), "D30": (2000000, 3600000),
                 "D40": (900000, 1500000), "D50": (700000, 1300000)}
PAYROLL_TAX_BP = 765  # employer payroll taxes: 7.65% of gross, in basis points

# --------------------------------------------------------------------------------------
# Invented parties: no real company is meant.

# category -> (default expense account, typical department, bill amount range in cents, descriptions)
CATEGORIES: dict[str, tuple[str, str, tuple[int, int], tuple[str, ...]]] = {
    "Software and IT": ("6300", "D30", (80000, 900000), ("software subscription", "managed IT support", "cloud hosting")),
    "Professional services": ("6400", "D40", (150000, 1800000), ("legal services", "audit fieldwork", "tax advisory", "consulting")),
    "Facilities": ("6200", "D20", (30000, 600000), ("facility maintenance", "cleaning services", "electrical repairs", "utilities")),
    "Telecom": ("6200", "D40", (40000, 250000), ("fibre line and phones", "mobile plans")),
    "Marketing": ("6600", "D50", (80000, 1500000), ("print campaign", "trade show booth", "digital advertising", "design work")),
    "Travel": ("6700", "D10", (15000, 400000), ("travel booking", "hotel stays", "ground transport")),
    "Insurance": ("6500", "D40", (150000, 900000), ("insurance premium",)),
    "Office supplies": ("6250", "D40", (8000, 250000), ("office supplies", "furniture", "canteen catering")),
    "Freight": ("5100", "D20", (30000, 700000), ("freight", "courier services", "warehouse handling")),
    "Materials": ("5000", "D20", (150000, 3000000), ("raw materials", "components", "packaging materials")),
}

VENDOR_POOL: tuple[tuple[str, str], ...] = (
    ("Northgate IT Services", "Software and IT"), ("Solstice Software", "Software and IT"),
    ("Cobalt Cloud Hosting", "Software and IT"), ("Brightline Data Systems", "Software and IT"),
    ("Quartzlake Security", "Software and IT"),
    ("Fenwick & Hale LLP", "Professional services"), ("Marlowe Audit Partners", "Professional services"),
    ("Keystone Tax Advisors", "Professional services"), ("Ridgeway Consulting Group", "Professional services"),
    ("Pemberton Recruiting", "Professional services"),
    ("Orchid Facility Cleaning", "Facilities"), ("Silverline Electrical", "Facilities"),
    ("Greenway Waste Services", "Facilities"), ("Harbor City Utilities", "Facilities"),
    ("Ironbark Safety", "Facilities"),
    ("Vantage Telecom", "Telecom"), ("Pinecrest Mobile", "Telecom"),
    ("Lumen Signage", "Marketing"), ("Hollis Print Works", "Marketing"), ("Bright Harbor Media", "Marketing"),
    ("Tessellate Design Studio", "Marketing"),
    ("Skyward Travel Management", "Travel"), ("Meridian Hotels Group", "Travel"), ("Crosstown Car Service", "Travel"),
    ("Granite Mutual Insurance", "Insurance"), ("Beacon Risk Underwriters", "Insurance"),
    ("Brightpaper Supply", "Office supplies"), ("Elmstead Office Furniture", "Office supplies"),
    ("Bluebird Catering", "Office supplies"),
    ("Kestrel Freight", "Freight"), ("Tidewater Logistics", "Freight"), ("Redline Couriers", "Freight"),
    ("Pinewood Packaging", "Materials"), ("Redwater Chemicals", "Materials"), ("Nordkap Industrietechnik", "Materials"),
    ("Crescent Components", "Materials"), ("Alder Steel Supply", "Materials"), ("Summit Plastics", "Materials"),
)

_BILL_FORMATS = ("INV-{n5}", "{n6}", "SI-{n6}", "{y}-{n4}", "INV{n6}", "{p}{n5}")

_CUSTOMER_PREFIX = ("Harborline", "Copperleaf", "Meridian", "Tallgrass", "Bluefen", "Quarry Hill", "Ashgrove",
                    "Lanternfield", "Riverbend", "Stonegate", "Whitecap", "Foxglove", "Ironwood", "Larkspur",
                    "Northwind", "Oakridge", "Pinecone", "Redcliff", "Saltmarsh", "Thornbury", "Upland", "Valemont",
                    "Westbrook", "Yellowpine", "Amberfield", "Brookside", "Cedarline", "Driftwood")
_CUSTOMER_SUFFIX = ("Foods", "Logistics", "Parts Co.", "Hospitality", "Manufacturing", "Clinics", "Retail", "Media",
                    "Labs", "Outfitters", "Builders", "Energy", "Pharmacy", "Analytics")
SEGMENTS = (("Enterprise", 2), ("Mid-Market", 3), ("SMB", 4))
REGIONS = ("North", "South", "East", "West")
_SEGMENT_AMOUNTS = {"Enterprise": (2000000, 8000000), "Mid-Market": (600000, 2500000), "SMB": (100000, 600000)}
_SEGMENT_LIMITS = {"Enterprise": (20, 100, 5000), "Mid-Market": (25, 100, 1000), "SMB": (5, 25, 1000)}  # credit limit = between(lo, hi) * step dollars

COMPANY_NAMES = ("Harrowgate Instruments", "Tamsin Valley Foods", "Corvid Robotics", "Bellwether Outdoor Gear",
                 "Marisol Medical Devices", "Quillfeather Publishing", "Ostrander Coffee Roasters", "Pellucid Optics")
BANKS = ("First Harbor Bank", "Granite State Bank", "Riverside Commercial Bank", "Union Ledger Bank")
LANDLORDS = ("Castlegate Properties", "Wexford Commercial Realty", "Maple Row Estates", "Brindle Park Holdings")


# --------------------------------------------------------------------------------------
# helpers


def cents(amount: Decimal) -> Decimal:
    return amount.quantize(CENT, rounding=ROUND_HALF_UP)


def month_end(year: int, month: int) -> _dt.date:
    return _dt.date(year, month, calendar.monthrange(year, month)[1])


def period_of(d: _dt.date) -> str:
    return f"{d.year:04d}-{d.month:02d}"


def month_label(period: str) -> str:
    """'2026-06' -> 'June 2026'."""
    return f"{MONTHS[int(period[5:7]) - 1]} {period[:4]}"


def fmt_money(amount: Decimal) -> str:
    """1234.5 -> '1,234.50' (negative with a leading minus)."""
    q = cents(amount)
    sign = "-" if q < 0 else ""
    whole, frac = f"{abs(q):.2f}".split(".")
    return f"{sign}{int(whole):,}.{frac}"


def _digits(r: Stream, fmt: str, year: int, prefix: str) -> str:
    out = fmt.replace("{y}", str(year)).replace("{p}", prefix)
    for width in (4, 5, 6):
        tag = "{n%d}" % width
        while tag in out:
            out = out.replace(tag, str(r.between(10 ** (width - 1), 10**width - 1)), 1)
    return out


def bill_number(r: Stream, vendor: "Vendor", year: int) -> str:
    """A supplier document number in the vendor's house format."""
    return _digits(r, vendor.bill_format, year, vendor.name[:2].upper())


# --------------------------------------------------------------------------------------
# dimensions


@dataclass(frozen=True)
class Vendor:
    vendor_id: str
    name: str
    category: str
    terms: int
    account: str
    department: str
    bill_format: str
    amount_range: tuple[int, int]


@dataclass(frozen=True)
class Customer:
    customer_id: str
    name: str
    segment: str
    region: str
    credit_limit: Decimal
    terms: int


@dataclass(frozen=True)
class Company:
    key: str
    name: str
    year: int
    bank: str
    operating_last4: str
    payroll_last4: str
    landlord: str
    quarterly_rent: Decimal
    monthly_depreciation: Decimal
    payroll_base: dict[str, Decimal]
    vendors: tuple[Vendor, ...]
    customers: tuple[Customer, ...]
    check_start: int
    accounts: tuple[tuple[str, str, str, str, int], ...] = ACCOUNTS

    def vendor(self, vendor_id: str) -> Vendor:
        for v in self.vendors:
            if v.vendor_id == vendor_id:
                return v
        raise KeyError(vendor_id)

    def vendor_named(self, name: str) -> Vendor:
        for v in self.vendors:
            if v.name == name:
                return v
        raise KeyError(name)


def make_company(key: str, master: str | None = None) -> Company:
    """The company of `key`; with `master`, its master data varied (see `vary_master`)."""
    company = _make_company(key)
    return company if master is None else vary_master(company, master)


def vary_master(company: Company, master: str) -> Company:
    """The same company (name, year, levels) with different master data, drawn from `master`.

    A variant database must give a different answer to a master-data question, or a query
    answered with literals read from the primary database passes it. So: some vendors
    leave and others (from the pool) join, with new ids; some vendors change payment
    terms; some customers move region or get a new credit limit, some leave, new ones
    join; the chart gains accounts of some types and closes some active accounts.
    """
    r = Stream(company.key, "financedb", "master", master)
    vr = r.child("vendors")
    vendors = list(company.vendors)
    for v in vr.sample(vendors, vr.between(2, 4)):
        vendors.remove(v)
    taken = {v.name for v in company.vendors}
    pool = [(n, c) for n, c in VENDOR_POOL if n not in taken]
    for i, (vname, cat) in enumerate(vr.sample(pool, min(len(pool), vr.between(2, 4))), len(company.vendors) + 1):
        account, dept, amount_range, _ = CATEGORIES[cat]
        vendors.append(Vendor(f"V{i:03d}", vname, cat, vr.choice((15, 30, 30, 45, 60)), account, dept,
                              vr.choice(_BILL_FORMATS), amount_range))
    for n, v in enumerate(vendors):
        if vr.chance(1, 6):
            vendors[n] = Vendor(v.vendor_id, v.name, v.category, vr.choice(tuple(t for t in (15, 30, 45, 60) if t != v.terms)),
                                v.account, v.department, v.bill_format, v.amount_range)
    cr = r.child("customers")
    customers = list(company.customers)
    for c in cr.sample(customers, cr.between(2, 4)):
        customers.remove(c)
    for n, c in enumerate(customers):
        region, limit = c.region, c.credit_limit
        if cr.chance(1, 4):
            region = cr.choice(tuple(x for x in REGIONS if x != c.region))
        if cr.chance(1, 3):
            lo, hi, step = _SEGMENT_LIMITS[c.segment]
            limit = Decimal(cr.between(lo, hi) * step)
        customers[n] = Customer(c.customer_id, c.name, c.segment, region, limit, c.terms)
    taken = {c.name for c in company.customers}
    names = cr.sample([f"{p} {s}" for p in _CUSTOMER_PREFIX for s in _CUSTOMER_SUFFIX if f"{p} {s}" not in taken],
                      cr.between(2, 4))
    for i, cname in enumerate(names, len(company.customers) + 1):
        segment = cr.weighted(SEGMENTS)
        lo, hi, step = _SEGMENT_LIMITS[segment]
        customers.append(Customer(f"C{i:03d}", cname, segment, cr.choice(REGIONS), Decimal(cr.between(lo, hi) * step),
                                  cr.choice((30, 45, 60))))
    ar = r.child("accounts")
    accounts = list(company.accounts)
    for kind in ar.sample(("asset", "liability", "revenue", "expense"), 2):
        new = ar.choice([a for a in EXTRA_ACCOUNTS if a[2] == kind])
        accounts.append(new)
    for kind in ar.sample(("asset", "liability", "revenue", "expense"), 2):
        # only accounts no question or close policy names: never cash, AP, AR or accruals
        fixed = {"1010", "1020", "1100", "1300", "2000", "2100", "2200", "3000", "3100"}
        active = [a for a in accounts if a[2] == kind and a[4] == 1 and a[0] not in fixed]
        if active:
            a = ar.choice(active)
            accounts[accounts.index(a)] = (a[0], a[1], a[2], a[3], 0)
    return replace(company, vendors=tuple(vendors), customers=tuple(customers), accounts=tuple(sorted(accounts)))


def _make_company(key: str) -> Company:
    r = Stream(key, "financedb", "company")
    name = r.choice(COMPANY_NAMES)
    year = r.between(2024, 2026)
    vr = r.child("vendors")
    # Every category is represented; then fill up to 30 vendors.
    by_cat: dict[str, list[str]] = {}
    for vname, cat in VENDOR_POOL:
        by_cat.setdefault(cat, []).append(vname)
    chosen: list[tuple[str, str]] = []
    for cat in CATEGORIES:
        pool = vr.shuffled(by_cat[cat])
        take = min(len(pool), 2 if cat not in ("Insurance", "Telecom") else 1)
        chosen += [(v, cat) for v in pool[:take]]
    rest = [(v, c) for v, c in VENDOR_POOL if (v, c) not in chosen]
    chosen += vr.sample(rest, 30 - len(chosen))
    chosen = vr.shuffled(chosen)
    vendors = []
    for i, (vname, cat) in enumerate(chosen, 1):
        account, dept, amount_range, _ = CATEGORIES[cat]
        vendors.append(Vendor(f"V{i:03d}", vname, cat, vr.choice((15, 30, 30, 30, 45, 60)), account, dept,
                              vr.choice(_BILL_FORMATS), amount_range))
    cr = r.child("customers")
    names = cr.sample([f"{p} {s}" for p in _CUSTOMER_PREFIX for s in _CUSTOMER_SUFFIX], 36)
    customers = []
    for i, cname in enumerate(names, 1):
        segment = cr.weighted(SEGMENTS)
        lo, hi, step = _SEGMENT_LIMITS[segment]
        limit = Decimal(cr.between(lo, hi) * step)
        customers.append(Customer(f"C{i:03d}", cname, segment, cr.choice(REGIONS), limit,
                                  cr.choice((30, 30, 30, 45)) if segment != "Enterprise" else cr.choice((30, 45, 60))))
    payroll_base = {d: Decimal(r.between(*_PAYROLL_BASE[d])) / 100 for d, _ in DEPARTMENTS}
    return Company(
        key=key, name=name, year=year, bank=r.choice(BANKS),
        operating_last4=f"{r.between(1000, 9999)}", payroll_last4=f"{r.between(1000, 9999)}",
        landlord=r.choice(LANDLORDS), quarterly_rent=Decimal(r.between(18000, 42000) * 3),
        monthly_depreciation=r.money(250000, 600000), payroll_base=payroll_base,
        vendors=tuple(vendors), customers=tuple(customers), check_start=r.between(10001, 60000),
    )


# --------------------------------------------------------------------------------------
# transactions


@dataclass
class Line:
    account: str
    debit: Decimal
    credit: Decimal
    department: str | None = None
    memo: str = ""


@dataclass
class Entry:
    date: _dt.date
    period: str
    source: str
    reference: str  # final for schedule entries; set at finalize for document entries
    description: str
    lines: list[Line]
    order: tuple  # tie-breaker within a date
    entry_id: str = ""


@dataclass
class Bill:
    vendor: Vendor
    bill_number: str
    bill_date: _dt.date
    due_date: _dt.date
    amount: Decimal
    expense_account: str
    department: str | None
    description: str
    entry: Entry
    is_credit_memo: bool = False
    applies_to: "Bill | None" = None
    bill_id: str = ""
    status: str = ""


@dataclass
class Payment:
    bill: Bill
    payment_date: _dt.date
    amount: Decimal
    method: str
    entry: Entry
    clear_lag: int
    payment_id: str = ""
    reference: str = ""


@dataclass
class Invoice:
    customer: Customer
    invoice_date: _dt.date
    due_date: _dt.date
    amount: Decimal
    revenue_account: str
    description: str
    entry: Entry
    is_credit_memo: bool = False
    applies_to: "Invoice | None" = None
    invoice_id: str = ""
    invoice_number: str = ""
    status: str = ""


@dataclass
class Receipt:
    invoice: Invoice
    receipt_date: _dt.date
    amount: Decimal
    method: str
    customer_ref: str
    entry: Entry
    clear_lag: int
    receipt_id: str = ""
    reference: str = ""


@dataclass
class BankLine:
    """A line the bank shows for a cash account (from the GL, or a bank-only item)."""

    date: _dt.date
    description: str
    amount: Decimal  # + money in, - money out
    entry: Entry | None = None


_SOURCE_RANK = {"MANUAL": 0, "CASH": 1, "PAYROLL": 2, "AR": 3, "AP": 4}


@dataclass
class Books:
    company: Company
    months: int
    open_last: bool
    entries: list[Entry] = field(default_factory=list)
    bills: list[Bill] = field(default_factory=list)
    payments: list[Payment] = field(default_factory=list)
    invoices: list[Invoice] = field(default_factory=list)
    receipts: list[Receipt] = field(default_factory=list)
    cash_extra: dict[int, tuple[str, int]] = field(default_factory=dict)  # id(entry) -> (bank text, clear lag)
    payroll_second_half: dict[str, dict[str, Decimal]] = field(default_factory=dict)  # period -> dept -> gross
    finalized: bool = False
    _seq: int = 0

    # -- calendar ---------------------------------------------------------------------------
    @property
    def year(self) -> int:
        return self.company.year

    @property
    def start(self) -> _dt.date:
        return _dt.date(self.year, 1, 1)

    @property
    def end(self) -> _dt.date:
        return month_end(self.year, self.months)

    # -- posting ----------------------------------------------------------------------------
    def post(self, date: _dt.date, source: str, reference: str, description: str, lines: list[Line],
             period: str | None = None) -> Entry:
        if self.finalized:
            raise RuntimeError("books are finalized")
        dr = sum((ln.debit for ln in lines), ZERO)
        cr = sum((ln.credit for ln in lines), ZERO)
        if dr != cr or dr <= 0:
            raise ValueError(f"unbalanced entry {description}: {dr} != {cr}")
        for ln in lines:
            if ln.account not in ACCOUNT_NAMES:
                raise ValueError(f"unknown account {ln.account}")
        self._seq += 1
        entry = Entry(date, period or period_of(date), source, reference, description, lines,
                      (_SOURCE_RANK[source], self._seq))
        self.entries.append(entry)
        return entry

    def add_bill(self, vendor: Vendor, bill_number: str, bill_date: _dt.date, amount: Decimal, description: str,
                 *, expense_account: str | None = None, department: str | None = None,
                 posting_date: _dt.date | None = None, applies_to: Bill | None = None) -> Bill:
        account = expense_account or vendor.account
        dept = department if department is not None else vendor.department
        posted = posting_date or bill_date
        amount = cents(amount)
        credit_memo = amount < 0
        memo = f"{vendor.name} {bill_number}"
        if credit_memo:
            lines = [Line("2000", -amount, ZERO, None, memo), Line(account, ZERO, -amount, dept, memo)]
        else:
            lines = [Line(account, amount, ZERO, dept, memo), Line("2000", ZERO, amount, None, memo)]
        entry = self.post(posted, "AP", "", f"{'Credit memo' if credit_memo else 'Bill'} {bill_number} - {vendor.name}",
                          lines, period=period_of(posted))
        bill = Bill(vendor, bill_number, bill_date, bill_date + _dt.timedelta(days=vendor.terms), amount, account, dept,
                    description, entry, credit_memo, applies_to)
        self.bills.append(bill)
        return bill

    def pay_bill(self, bill: Bill, date: _dt.date, amount: Decimal, method: str, clear_lag: int = 0) -> Payment:
        amount = cents(amount)
        memo = f"{bill.vendor.name} {bill.bill_number}"
        entry = self.post(date, "AP", "", f"Payment to {bill.vendor.name}",
                          [Line("2000", amount, ZERO, None, memo), Line("1010", ZERO, amount, None, memo)])
        pay = Payment(bill, date, amount, method, entry, clear_lag if method == "check" else 0)
        self.payments.append(pay)
        return pay

    def add_invoice(self, customer: Customer, date: _dt.date, amount: Decimal, revenue_account: str, description: str,
                    applies_to: Invoice | None = None) -> Invoice:
        amount = cents(amount)
        credit_memo = amount < 0
        if credit_memo:
            lines = [Line("4900", -amount, ZERO, "D10", description), Line("1100", ZERO, -amount, None, description)]
        else:
            lines = [Line("1100", amount, ZERO, None, description), Line(revenue_account, ZERO, amount, "D10", description)]
        entry = self.post(date, "AR", "", f"{'Credit memo' if credit_memo else 'Invoice'} - {customer.name}", lines)
        inv = Invoice(customer, date, date + _dt.timedelta(days=customer.terms), amount,
                      "4900" if credit_memo else revenue_account, description, entry, credit_memo, applies_to)
        self.invoices.append(inv)
        return inv

    def receive(self, invoice: Invoice, date: _dt.date, amount: Decimal, method: str, customer_ref: str,
                clear_lag: int = 0) -> Receipt:
        amount = cents(amount)
        memo = f"{invoice.customer.name} {method} {customer_ref}"
        entry = self.post(date, "AR", "", f"Receipt from {invoice.customer.name}",
                          [Line("1010", amount, ZERO, None, memo), Line("1100", ZERO, amount, None, memo)])
        rec = Receipt(invoice, date, amount, method, customer_ref, entry, clear_lag)
        self.receipts.append(rec)
        return rec

    def cash_entry(self, date: _dt.date, source: str, reference: str, description: str, lines: list[Line],
                   bank_text: str, clear_lag: int = 0) -> Entry:
        """A posting that moves a bank account, with the text the bank statement shows for it."""
        entry = self.post(date, source, reference, description, lines)
        self.cash_extra[id(entry)] = (bank_text, clear_lag)
        return entry

    # -- finalize ---------------------------------------------------------------------------
    def finalize(self) -> None:
        if self.finalized:
            return
        for i, e in enumerate(sorted(self.entries, key=lambda e: (e.date, e.order)), 1):
            e.entry_id = f"JE-{i:06d}"
        self.entries.sort(key=lambda e: e.entry_id)
        for i, b in enumerate(sorted(self.bills, key=lambda b: (b.bill_date, b.entry.entry_id)), 1):
            b.bill_id = f"B-{i:06d}"
            b.entry.reference = b.bill_id
        checks = self.company.check_start
        for i, p in enumerate(sorted(self.payments, key=lambda p: (p.payment_date, p.entry.entry_id)), 1):
            p.payment_id = f"PAY-{i:06d}"
            p.entry.reference = p.payment_id
            if p.method == "check":
                p.reference = f"CHK-{checks}"
                checks += 1
            elif p.method == "ach":
                p.reference = f"ACH-{p.payment_date:%Y%m%d}-{i:04d}"
            else:
                p.reference = f"WIRE-{p.payment_date:%Y%m%d}-{i:04d}"
            for ln in p.entry.lines:
                ln.memo = f"{ln.memo} {p.reference}"
        inv_no = cm_no = 0
        for i, inv in enumerate(sorted(self.invoices, key=lambda v: (v.invoice_date, v.entry.entry_id)), 1):
            inv.invoice_id = f"I-{i:06d}"
            inv.entry.reference = inv.invoice_id
            if inv.is_credit_memo:
                cm_no += 1
                inv.invoice_number = f"CM-{self.year}{cm_no:04d}"
            else:
                inv_no += 1
                inv.invoice_number = f"INV-{self.year}{inv_no:05d}"
            for ln in inv.entry.lines:
                ln.memo = f"{inv.invoice_number} {ln.memo}".strip()
        for i, rec in enumerate(sorted(self.receipts, key=lambda r: (r.receipt_date, r.entry.entry_id)), 1):
            rec.receipt_id = f"RCPT-{i:06d}"
            rec.entry.reference = rec.receipt_id
            rec.reference = rec.customer_ref
        self.bills.sort(key=lambda b: b.bill_id)
        self.payments.sort(key=lambda p: p.payment_id)
        self.invoices.sort(key=lambda v: v.invoice_id)
        self.receipts.sort(key=lambda r: r.receipt_id)
        self._statuses()
        self.finalized = True

    def _statuses(self) -> None:
        paid: dict[int, Decimal] = {}
        credited: dict[int, Decimal] = {}
        for p in self.payments:
            paid[id(p.bill)] = paid.get(id(p.bill), ZERO) + p.amount
        for b in self.bills:
            if b.applies_to is not None:
                credited[id(b.applies_to)] = credited.get(id(b.applies_to), ZERO) + b.amount
        for b in self.bills:
            if b.is_credit_memo:
                b.status = "applied"
                continue
            due = b.amount + credited.get(id(b), ZERO)
            got = paid.get(id(b), ZERO)
            b.status = "paid" if got >= due else ("partially_paid" if got > 0 else "open")
        paid = {}
        credited = {}
        for r in self.receipts:
            paid[id(r.invoice)] = paid.get(id(r.invoice), ZERO) + r.amount
        for v in self.invoices:
            if v.applies_to is not None:
                credited[id(v.applies_to)] = credited.get(id(v.applies_to), ZERO) + v.amount
        for v in self.invoices:
            if v.is_credit_memo:
                v.status = "applied"
                continue
            due = v.amount + credited.get(id(v), ZERO)
            got = paid.get(id(v), ZERO)
            v.status = "paid" if got >= due else ("partially_paid" if got > 0 else "open")

    # -- queries the generators use (after finalize) ----------------------------------------
    def open_balance(self, invoice: Invoice, as_of: _dt.date) -> Decimal:
        due = invoice.amount + sum((c.amount for c in self.invoices if c.applies_to is invoice and c.invoice_date <= as_of), ZERO)
        got = sum((r.amount for r in self.receipts if r.invoice is invoice and r.receipt_date <= as_of), ZERO)
        return due - got

    def account_balance(self, account: str, through: _dt.date) -> Decimal:
        """Debit-positive balance of `account` over entries dated on or before `through`."""
        total = ZERO
        for e in self.entries:
            if e.date <= through:
                for ln in e.lines:
                    if ln.account == account:
                        total += ln.debit - ln.credit
        return total

    def bank_lines(self, account: str) -> list[BankLine]:
        """Every movement of cash account `account` as the bank shows it, with its clearing date."""
        if not self.finalized:
            raise RuntimeError("finalize first")
        by_entry: dict[int, tuple[str, int]] = {}
        for p in self.payments:
            if p.method == "check":
                text = f"CHECK {p.reference.removeprefix('CHK-')}"
            elif p.method == "ach":
                text = f"ACH DEBIT {p.bill.vendor.name.upper()} {p.reference}"
            else:
                text = f"WIRE OUT {p.bill.vendor.name.upper()} {p.reference}"
            by_entry[id(p.entry)] = (text, p.clear_lag)
        for r in self.receipts:
            if r.method == "check":
                text = f"DEPOSIT CHECK {r.reference.removeprefix('CHK ')}"
            elif r.method == "ach":
                text = f"ACH CREDIT {r.invoice.customer.name.upper()} {r.reference}"
            else:
                text = f"INCOMING WIRE {r.invoice.customer.name.upper()} {r.reference}"
            by_entry[id(r.entry)] = (text, r.clear_lag)
        by_entry.update(self.cash_extra)
        out: list[BankLine] = []
        for e in self.entries:
            for ln in e.lines:
                if ln.account != account:
                    continue
                text, lag = by_entry.get(id(e), (e.description.upper(), 0))
                out.append(BankLine(e.date + _dt.timedelta(days=lag), text, ln.debit - ln.credit, e))
        out.sort(key=lambda b: (b.date, b.entry.entry_id if b.entry else ""))
        return out


# --------------------------------------------------------------------------------------
# the year's transactions


def _day_in(r: Stream, year: int, month: int, lo: int = 1, hi: int | None = None) -> _dt.date:
    last = calendar.monthrange(year, month)[1]
    return _dt.date(year, month, r.between(lo, min(hi or last, last)))


def _bill_description(r: Stream, vendor: Vendor, d: _dt.date) -> str:
    what = r.choice(CATEGORIES[vendor.category][3])
    return f"{what.capitalize()} - {MONTHS[d.month - 1]} {d.year}"


def generate(company_key: str, facts_key: str = "primary", *, months: int = 12, open_last: bool = False,
             volume: int = 100, rent_amortization_last: bool = True, reserved_vendors: tuple[str, ...] = (),
             hook: Callable[[Books, Stream], Any] | None = None, master: str | None = None) -> Books:
    """The books of `company_key` for months 1..`months` of its year, from facts stream `facts_key`.

    `volume` scales the number of bills and invoices (percent). With `open_last`, the last
    period stays open: its second-half payroll accrual, bank fees and interest are not booked,
    and its rent amortization only if `rent_amortization_last`. Vendors in `reserved_vendors`
    get no generated bills (the caller bills them itself). `hook(books, stream)` may add
    records before ids are assigned. With `master`, the company's master data is varied
    (`vary_master`): the books of a variant database of the same company.
    """
    if not 1 <= months <= 12:
        raise ValueError("months must be 1..12")
    company = make_company(company_key, master)
    books = Books(company, months, open_last)
    root = Stream(company_key, "financedb", "facts", facts_key)
    year = company.year

    # Opening balances on 1 January.
    o = root.child("opening")
    cash = o.money(42000000, 65000000)
    payroll_cash = o.money(6000000, 9000000)
    equipment = o.money(24000000, 40000000)
    acc_dep = o.money(4000000, 9000000)
    capital = Decimal("250000.00")
    books.post(books.start, "MANUAL", f"OPENING-{year}", f"Opening balances {year}", [
        Line("1010", cash, ZERO, None, "opening balance"),
        Line("1020", payroll_cash, ZERO, None, "opening balance"),
        Line("1500", equipment, ZERO, None, "opening balance"),
        Line("1590", ZERO, acc_dep, None, "opening balance"),
        Line("3000", ZERO, capital, None, "opening balance"),
        Line("3100", ZERO, cash + payroll_cash + equipment - acc_dep - capital, None, "opening balance"),
    ])

    for month in range(1, months + 1):
        period = f"{year:04d}-{month:02d}"
        last_day = month_end(year, month)
        is_open = open_last and month == months
        m = root.child("month", month)
        _ap_month(books, m.child("ap"), month, volume, reserved_vendors)
        _ar_month(books, m.child("ar"), month, volume)
        _payroll_month(books, m.child("payroll"), month, is_open)
        # Rent: paid quarterly in advance on the first day of the quarter, expensed monthly.
        if month % 3 == 1:
            q = (month - 1) // 3 + 1
            ref = f"RENT-{year}Q{q}"
            books.cash_entry(_dt.date(year, month, 1), "CASH", ref, f"Quarterly rent prepayment Q{q} - {company.landlord}",
                             [Line("1300", company.quarterly_rent, ZERO, None, ref), Line("1010", ZERO, company.quarterly_rent, None, ref)],
                             f"WIRE OUT {company.landlord.upper()} {ref}")
        if not is_open or rent_amortization_last:
            ref = f"AMORT-RENT-{period}"
            monthly = cents(company.quarterly_rent / 3)
            books.post(_dt.date(year, month, 1), "MANUAL", ref, f"Rent amortization {month_label(period)}",
                       [Line("6100", monthly, ZERO, "D40", ref), Line("1300", ZERO, monthly, None, ref)])
        ref = f"DEPR-{period}"
        books.post(last_day, "MANUAL", ref, f"Depreciation {month_label(period)}",
                   [Line("6900", company.monthly_depreciation, ZERO, "D40", ref),
                    Line("1590", ZERO, company.monthly_depreciation, None, ref)])
        if not is_open:
            b = m.child("bank")
            fee = b.money(2500, 9500)
            books.cash_entry(last_day, "CASH", f"BANKFEE-{period}", f"Bank service charges {month_label(period)}",
                             [Line("6800", fee, ZERO, "D40", "service charge"), Line("1010", ZERO, fee, None, "service charge")],
                             "SERVICE CHARGE")
            interest = b.money(2000, 40000)
            books.cash_entry(last_day, "CASH", f"INT-{period}", f"Interest earned {month_label(period)}",
                             [Line("1010", interest, ZERO, None, "interest"), Line("7000", ZERO, interest, None, "interest")],
                             "INTEREST CREDIT")
    if hook is not None:
        hook(books, root.child("hook"))
    books.finalize()
    return books


def _ap_month(books: Books, r: Stream, month: int, volume: int, reserved: tuple[str, ...] = ()) -> None:
    company, year = books.company, books.year
    vendors = [v for v in company.vendors if v.vendor_id not in reserved]
    n = max(3, r.between(34, 44) * volume // 100)
    for k in range(n):
        b = r.child("bill", k)
        vendor = b.choice(vendors)
        bill_date = _day_in(b, year, month)
        lo, hi = vendor.amount_range
        amount = b.money(lo, hi)
        account = vendor.account if not b.chance(1, 10) else b.choice(("6250", "6700", "6200", "6400"))
        dept = vendor.department if b.chance(3, 4) else b.choice([d for d, _ in DEPARTMENTS])
        posting = bill_date
        # Cut-off: a bill dated in the last days of a month, received late, is posted next period.
        if bill_date.day >= month_end(year, month).day - 4 and month < books.months and b.chance(1, 4):
            posting = _day_in(b, year, month + 1, 1, 3)
        number = bill_number(b, vendor, year)
        bill = books.add_bill(vendor, number, bill_date, amount, _bill_description(b, vendor, bill_date),
                              expense_account=account, department=dept, posting_date=posting)
        due = amount
        if b.chance(1, 20):
            cm_date = bill_date + _dt.timedelta(days=b.between(4, 20))
            if cm_date <= books.end:
                cm_amount = cents(amount * Decimal(b.between(10, 60)) / 100)
                books.add_bill(vendor, f"CR-{number}", cm_date, -cm_amount, f"Credit for {number}",
                               expense_account=account, department=dept, applies_to=bill)
                due = amount - cm_amount
                bill_date = max(bill_date, cm_date)
        plan = b.weighted((("full", 75), ("two", 10), ("partial", 8), ("none", 7)))
        method = b.weighted((("check", 3), ("ach", 5), ("wire", 2)))
        first = bill.due_date + _dt.timedelta(days=b.between(-10, 7))
        first = max(first, bill_date + _dt.timedelta(days=2))
        lag = b.between(1, 4)
        if plan == "full" and first <= books.end:
            books.pay_bill(bill, first, due, method, lag)
        elif plan in ("two", "partial") and first <= books.end:
            part = cents(due * Decimal(b.between(30, 70)) / 100)
            books.pay_bill(bill, first, part, method, lag)
            second = first + _dt.timedelta(days=b.between(10, 40))
            if plan == "two" and second <= books.end:
                books.pay_bill(bill, second, due - part, method, b.between(1, 4))


def _ar_month(books: Books, r: Stream, month: int, volume: int) -> None:
    company, year = books.company, books.year
    n = max(3, r.between(26, 34) * volume // 100)
    for k in range(n):
        v = r.child("invoice", k)
        customer = v.choice(company.customers)
        date = _day_in(v, year, month)
        amount = v.money(*_SEGMENT_AMOUNTS[customer.segment])
        product = v.chance(7, 10)
        account = "4000" if product else "4100"
        what = v.choice(("instrument order", "spare parts", "bulk order", "replacement units")) if product else \
            v.choice(("installation services", "support contract", "training days", "calibration service"))
        inv = books.add_invoice(customer, date, amount, account, f"{what.capitalize()} - {MONTHS[month - 1]} {year}")
        due = amount
        earliest = date
        if v.chance(1, 16):
            cm_date = date + _dt.timedelta(days=v.between(5, 25))
            if cm_date <= books.end:
                cm_amount = cents(amount * Decimal(v.between(10, 60)) / 100)
                books.add_invoice(customer, cm_date, -cm_amount, account, f"Credit for pricing adjustment", applies_to=inv)
                due = amount - cm_amount
                earliest = cm_date
        plan = v.weighted((("full", 70), ("two", 12), ("partial", 10), ("none", 8)))
        method = v.weighted((("ach", 5), ("check", 3), ("wire", 2)))
        first = inv.due_date + _dt.timedelta(days=v.between(-20, 25))
        first = max(first, earliest + _dt.timedelta(days=3))

        def ref() -> str:
            if method == "check":
                return f"CHK {v.between(1000, 99999)}"
            return f"{'ACH' if method == 'ach' else 'WT'}{v.between(100000, 999999)}"

        if plan == "full" and first <= books.end:
            books.receive(inv, first, due, method, ref(), 1 if method == "check" and first == month_end(first.year, first.month) else 0)
        elif plan in ("two", "partial") and first <= books.end:
            part = cents(due * Decimal(v.between(30, 70)) / 100)
            books.receive(inv, first, part, method, ref(), 1 if method == "check" and first == month_end(first.year, first.month) else 0)
            second = first + _dt.timedelta(days=v.between(10, 40))
            if plan == "two" and second <= books.end:
                books.receive(inv, second, due - part, method, ref(),
                              1 if method == "check" and second == month_end(second.year, second.month) else 0)


def payroll_amounts(company: Company, r: Stream) -> dict[str, Decimal]:
    """Gross wages per department for one half-month."""
    return {d: cents(base + Decimal(r.between(-30000, 60000)) / 100) for d, base in company.payroll_base.items()}


def payroll_tax(gross: Decimal) -> Decimal:
    return cents(gross * PAYROLL_TAX_BP / 10000)


def _payroll_lines(gross: dict[str, Decimal], memo: str) -> tuple[list[Line], Decimal]:
    lines = [Line("6000", amount, ZERO, dept, memo) for dept, amount in gross.items()]
    tax = payroll_tax(sum(gross.values(), ZERO))
    lines.append(Line("6050", tax, ZERO, None, memo))
    return lines, sum(gross.values(), ZERO) + tax


def _payroll_month(books: Books, r: Stream, month: int, is_open: bool) -> None:
    """Semi-monthly payroll: 1-15 paid on the 20th; 16-end accrued at month-end, paid on the 5th."""
    company, year = books.company, books.year
    period = f"{year:04d}-{month:02d}"
    if month > 1:
        prev = f"{year:04d}-{month - 1:02d}"
        owed = books.payroll_second_half.get(prev)
        if owed is not None:
            total = sum(owed.values(), ZERO) + payroll_tax(sum(owed.values(), ZERO))
            ref = f"XFER-{period}-B"
            books.cash_entry(_dt.date(year, month, 4), "CASH", ref, "Transfer to payroll account",
                             [Line("1020", total, ZERO, None, ref), Line("1010", ZERO, total, None, ref)],
                             f"TRANSFER TO ****{company.payroll_last4} {ref}")
            ref = f"PAYRUN-{prev}-B"
            books.post(_dt.date(year, month, 5), "PAYROLL", ref, f"Payroll {month_label(prev)} 16-end paid",
                       [Line("2200", total, ZERO, None, ref), Line("1020", ZERO, total, None, ref)])
    first = payroll_amounts(company, r.child("first"))
    lines, total = _payroll_lines(first, f"payroll {period} 1-15")
    ref = f"XFER-{period}-A"
    books.cash_entry(_dt.date(year, month, 19), "CASH", ref, "Transfer to payroll account",
                     [Line("1020", total, ZERO, None, ref), Line("1010", ZERO, total, None, ref)],
                     f"TRANSFER TO ****{company.payroll_last4} {ref}")
    books.post(_dt.date(year, month, 20), "PAYROLL", f"PAYRUN-{period}-A", f"Payroll {month_label(period)} 1-15 paid",
               lines + [Line("1020", ZERO, total, None, f"PAYRUN-{period}-A")])
    second = payroll_amounts(company, r.child("second"))
    books.payroll_second_half[period] = second
    if not is_open:
        lines, total = _payroll_lines(second, f"payroll {period} 16-end accrued")
        ref = f"PAYACC-{period}"
        books.post(month_end(year, month), "PAYROLL", ref, f"Payroll accrual {month_label(period)} 16-end",
                   lines + [Line("2200", ZERO, total, None, ref)])
