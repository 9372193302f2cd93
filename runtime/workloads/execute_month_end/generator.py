"""Seeded generator of execute.month-end items (LedgerRate §4.7, execute.month-end.v1).

One item is one company's mini month-end close. Why it is built this way:

- The books (shared finance-database generator) run from January to the close month, whose
  period is still open: its second-half payroll accrual, its bank charges and interest, and
  (usually) its rent amortization are not booked. Each item is its own company, so the
  items of an edition are independent.
- The month's source documents are files (`docs/...`): services contracts, supplier
  invoices not yet in AP, a payroll note, a rent note, and the bank statement of the named
  account. The reference entries follow from the documents *and* the ledger together: an
  invoice already entered, a contract already billed for the month, or an amortization the
  schedule already posted needs no entry, and an invoice dated after month-end needs one
  only if its service period is the close month (cut-off).
- The bank statement is derived from the ledger's own cash lines with clearing delays
  (checks clear days later, so checks written at month-end are outstanding; a check
  deposited on the last day is in transit), plus bank-only items that need entries
  (service charge, interest, a customer's wire, a returned customer check). Reconciling
  it is the "reconcile one named account" part of the task.
- Difficulty is planned per block of 15 items: 2-5 seed-chosen items are *clean* (only the
  obvious accruals, timing differences only on the statement); every other item has at
  least one trap. So a heuristic that posts only the obvious accruals passes some items
  and fails the others, on every seed.
- The answer key holds the reference entries (with the document each comes from), the
  documents that need no entry and why, the reconciliation, and the key of the writer seal
  (proof that graded entries went through the run's journal-entry writer).
"""

from __future__ import annotations

import datetime as _dt
import re
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any, Mapping

from lrc.runtime.checks.rng import Stream
import lrc.runtime.workloads.financedb as financedb
from lrc.runtime.workloads.base import Item
from lrc.runtime.workloads.financedb import fmt_money

COMPONENT_ID = "execute.month-end.generator"
COMPONENT_VERSION = 3

DATABASE = "finance.db"
DOCS = "docs/"
RECONCILE_ACCOUNT = "1010"
BLOCK = 15

FEATURES = ("bank_unrecorded", "usage_contract", "contract_already_billed", "invoice_next_month",
            "invoice_next_month_for_close_month", "invoice_already_booked", "rent_already_amortized")
BANK_ITEMS = ("service_charge", "interest", "customer_wire", "returned_check")
SERVICE_CATEGORIES = ("Software and IT", "Professional services", "Facilities", "Telecom", "Marketing")
ZERO = Decimal("0.00")


# --------------------------------------------------------------------------------------
# planning


def plan(seed: str, index: int) -> tuple[bool, list[str], list[str]]:
    """(clean, features, bank items) of item `index`: 2-5 clean items per block of 15."""
    pr = Stream(seed, "execute.month-end", "plan", index // BLOCK)
    clean_slots = pr.sample(list(range(BLOCK)), pr.between(2, 5))
    if index % BLOCK in clean_slots:
        return True, [], []
    r = Stream(seed, "execute.month-end", "features", index)
    chosen = set(r.sample(FEATURES[1:], r.between(1, 2)))
    if r.chance(3, 4):
        chosen.add("bank_unrecorded")
    bank = set(r.sample(BANK_ITEMS, r.between(1, 3))) if "bank_unrecorded" in chosen else set()
    return False, [f for f in FEATURES if f in chosen], [b for b in BANK_ITEMS if b in bank]


@dataclass
class Contract:
    number: str
    vendor: financedb.Vendor
    service: str
    kind: str  # retainer | usage | billed
    fee: Decimal = ZERO  # retainer and billed
    rate: Decimal = ZERO  # usage: per hour
    hours: int = 0  # usage: hours delivered in the close month
    path: str = ""

    @property
    def accrual(self) -> Decimal:
        return financedb.cents(self.rate * self.hours) if self.kind == "usage" else self.fee


@dataclass
class SupplierInvoice:
    vendor: financedb.Vendor
    kind: str  # current | next_month | next_month_for_close_month | booked
    date: _dt.date
    service_period: str  # 'YYYY-MM'
    lines: list[tuple[str, Decimal]]
    number: str = ""
    path: str = ""

    @property
    def total(self) -> Decimal:
        return sum((a for _, a in self.lines), ZERO)


@dataclass
class Scenario:
    year: int
    month: int
    features: list[str]
    bank_items: list[str]
    contracts: list[Contract] = field(default_factory=list)
    invoices: list[SupplierInvoice] = field(default_factory=list)
    held: dict[str, Any] = field(default_factory=dict)  # records the hook created, by role

    @property
    def period(self) -> str:
        return f"{self.year:04d}-{self.month:02d}"

    @property
    def start(self) -> _dt.date:
        return _dt.date(self.year, self.month, 1)

    @property
    def end(self) -> _dt.date:
        return financedb.month_end(self.year, self.month)

    @property
    def next_period(self) -> str:
        return f"{self.year + 1:04d}-01" if self.month == 12 else f"{self.year:04d}-{self.month + 1:02d}"


def _slug(name: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")


def _next_month_day(sc: Scenario, day: int) -> _dt.date:
    y, m = (sc.year + 1, 1) if sc.month == 12 else (sc.year, sc.month + 1)
    return _dt.date(y, m, day)


def _scenario(r: Stream, company: financedb.Company, features: list[str], bank_items: list[str]) -> Scenario:
    sc = Scenario(company.year, r.between(4, 12), features, bank_items)
    services = [v for v in company.vendors if v.category in SERVICE_CATEGORIES]
    kinds = ["retainer"] * r.between(1, 2)
    if "usage_contract" in features:
        kinds.append("usage")
    if "contract_already_billed" in features:
        kinds.append("billed")
    vendors = r.sample(services, len(kinds))
    for n, (kind, vendor) in enumerate(zip(kinds, vendors)):
        c = r.child("contract", n)
        service = c.choice(financedb.books.CATEGORIES[vendor.category][3])
        contract = Contract(f"CT-{c.between(1000, 9999)}", vendor, service, kind)
        if kind == "usage":
            contract.rate = Decimal(c.between(60, 180) * 100 + c.choice((0, 0, 50))) / 100
            contract.hours = c.between(12, 80)
        else:
            contract.fee = Decimal(c.between(15, 90) * 100 + c.choice((0, 0, 50)))
        contract.path = f"contracts/{contract.number}.txt"
        sc.contracts.append(contract)
    taken = {c.vendor.vendor_id for c in sc.contracts}
    others = [v for v in company.vendors if v.vendor_id not in taken]
    kinds = ["current"] * r.between(1, 2)
    for f in ("invoice_next_month", "invoice_next_month_for_close_month", "invoice_already_booked"):
        if f in features:
            kinds.append({"invoice_next_month": "next_month", "invoice_next_month_for_close_month": "next_month_for_close_month",
                          "invoice_already_booked": "booked"}[f])
    for n, (kind, vendor) in enumerate(zip(kinds, r.sample(others, len(kinds)))):
        v = r.child("invoice", n)
        if kind in ("current", "booked"):
            date = _dt.date(sc.year, sc.month, v.between(12, sc.end.day))
            service_period = sc.period
        else:
            date = _next_month_day(sc, v.between(1, 6))
            service_period = sc.next_period if kind == "next_month" else sc.period
        lo, hi = vendor.amount_range
        descs = financedb.books.CATEGORIES[vendor.category][3]
        lines = [(v.choice(descs).capitalize(), v.money(lo, hi))]
        if v.chance(1, 2):
            lines.append((v.choice(("Fuel and delivery surcharge", "Materials and consumables", "Expenses as incurred",
                                    "Call-out fee")), v.money(2500, 40000)))
        sc.invoices.append(SupplierInvoice(vendor, kind, date, service_period, lines))
    return sc


def _hook(sc: Scenario):
    """Records the scenario needs in the ledger, added before ids are assigned."""

    def hook(books: financedb.Books, r: Stream) -> None:
        company, year = books.company, books.year
        for n, c in enumerate(sc.contracts):
            h = r.child("contract", n)
            for m in range(1, sc.month):  # bills for past months' services, dated early the next month
                bill_date = _dt.date(year, m + 1, h.between(3, 9))
                amount = c.fee if c.kind != "usage" else financedb.cents(c.rate * h.between(10, 90))
                bill = books.add_bill(c.vendor, financedb.bill_number(h, c.vendor, year), bill_date, amount,
                                      f"{c.service.capitalize()} - {financedb.MONTHS[m - 1]} {year} (contract {c.number})")
                pay_date = bill.due_date + _dt.timedelta(days=h.between(-3, 3))
                if pay_date <= books.end:
                    books.pay_bill(bill, pay_date, amount, "ach")
            if c.kind == "billed":  # the vendor already billed the close month, early
                books.add_bill(c.vendor, financedb.bill_number(h, c.vendor, year), sc.end - _dt.timedelta(days=h.between(0, 2)),
                               c.fee, f"{c.service.capitalize()} - {financedb.MONTHS[sc.month - 1]} {year} (contract {c.number})")
        numbers = {b.bill_number for b in books.bills}
        for n, inv in enumerate(sc.invoices):
            h = r.child("invoice", n)
            inv.number = financedb.bill_number(h, inv.vendor, inv.date.year)
            while inv.number in numbers:
                inv.number = financedb.bill_number(h, inv.vendor, inv.date.year)
            numbers.add(inv.number)
            if inv.kind == "booked":
                books.add_bill(inv.vendor, inv.number, inv.date, inv.total,
                               f"{inv.lines[0][0]} - {financedb.month_label(inv.service_period)}")
        t = r.child("timing")
        # An outstanding check: paid on the second-to-last day, clears three days later.
        vendor = t.choice([v for v in company.vendors if v.vendor_id not in {c.vendor.vendor_id for c in sc.contracts}])
        bill = books.add_bill(vendor, financedb.bill_number(t, vendor, year), _dt.date(year, sc.month - 1, t.between(5, 20)),
                              t.money(*vendor.amount_range), f"{financedb.books.CATEGORIES[vendor.category][3][0].capitalize()} - "
                                                              f"{financedb.MONTHS[sc.month - 2]} {year}")
        books.pay_bill(bill, sc.end - _dt.timedelta(days=1), bill.amount, "check", clear_lag=3)
        # A deposit in transit: a customer's check received on the last day.
        customer = t.choice(company.customers)
        inv = books.add_invoice(customer, _dt.date(year, sc.month - 1, t.between(3, 12)), t.money(200000, 900000), "4000",
                                f"Spare parts - {financedb.MONTHS[sc.month - 2]} {year}")
        books.receive(inv, sc.end, inv.amount, "check", f"CHK {t.between(1000, 99999)}", clear_lag=1)
        if "returned_check" in sc.bank_items:
            customer = t.choice(company.customers)
            inv = books.add_invoice(customer, _dt.date(year, sc.month - 1, t.between(5, 20)), t.money(150000, 700000), "4100",
                                    f"Calibration service - {financedb.MONTHS[sc.month - 2]} {year}")
            sc.held["returned_receipt"] = books.receive(inv, _dt.date(year, sc.month, t.between(6, 14)), inv.amount, "check",
                                                        f"CHK {t.between(1000, 99999)}")
        if "customer_wire" in sc.bank_items:
            customer = t.choice(company.customers)
            sc.held["wired_invoice"] = books.add_invoice(customer, _dt.date(year, sc.month - 1, t.between(8, 22)),
                                                         t.money(300000, 1500000), "4000",
                                                         f"Bulk order - {financedb.MONTHS[sc.month - 2]} {year}")
            sc.held["wire_day"] = t.between(10, 25)
        bank = r.child("bank")
        sc.held["fee"] = bank.money(2500, 9500)
        sc.held["interest"] = bank.money(2000, 40000)

    return hook


# --------------------------------------------------------------------------------------
# reference entries


def _entry(source: str, kind: str, memo: str, date: _dt.date, lines: list[tuple[str, Decimal, Decimal]]) -> dict[str, Any]:
    return {"source": source, "kind": kind, "memo": memo, "date": date.isoformat(),
            "lines": [{"account": a, "debit": f"{d:.2f}", "credit": f"{c:.2f}"} for a, d, c in lines]}


def _statement(sc: Scenario, books: financedb.Books) -> dict[str, Any]:
    """Bank statement lines of the close month, the unrecorded items, and the reconciliation."""
    lines = books.bank_lines(RECONCILE_ACCOUNT)
    opening = sum((b.amount for b in lines if b.date < sc.start), ZERO)
    shown = [b for b in lines if sc.start <= b.date <= sc.end]
    unrecorded: list[tuple[str, financedb.BankLine]] = []
    if "service_charge" in sc.bank_items:
        unrecorded.append(("service_charge", financedb.BankLine(sc.end, "SERVICE CHARGE", -sc.held["fee"])))
    if "interest" in sc.bank_items:
        unrecorded.append(("interest", financedb.BankLine(sc.end, "INTEREST CREDIT", sc.held["interest"])))
    if "customer_wire" in sc.bank_items:
        inv = sc.held["wired_invoice"]
        unrecorded.append(("customer_wire", financedb.BankLine(_dt.date(sc.year, sc.month, sc.held["wire_day"]),
                                                               f"INCOMING WIRE {inv.customer.name.upper()} REF {inv.invoice_number}",
                                                               inv.amount)))
    if "returned_check" in sc.bank_items:
        rec = sc.held["returned_receipt"]
        unrecorded.append(("returned_check", financedb.BankLine(rec.receipt_date + _dt.timedelta(days=3),
                                                                f"RETURNED ITEM NSF {rec.reference} {rec.invoice.customer.name.upper()}",
                                                                -rec.amount)))
    rows = sorted([(b.date, 0, b.entry.entry_id if b.entry else "", b) for b in shown] +
                  [(b.date, 1, kind, b) for kind, b in unrecorded], key=lambda t: t[:3])
    closing = opening + sum((t[3].amount for t in rows), ZERO)
    gl_end = books.account_balance(RECONCILE_ACCOUNT, sc.end)
    outstanding = [b for b in lines if b.entry is not None and b.entry.date <= sc.end < b.date and b.amount < 0]
    in_transit = [b for b in lines if b.entry is not None and b.entry.date <= sc.end < b.date and b.amount > 0]
    unrecorded_net = sum((b.amount for _, b in unrecorded), ZERO)
    # Ledger + bank-only items = bank + items the bank has not seen yet (checks negative, deposits positive).
    if gl_end + unrecorded_net != closing + sum((b.amount for b in outstanding + in_transit), ZERO):
        raise AssertionError("bank statement does not reconcile to the ledger")  # pragma: no cover - construction invariant
    return {"opening": opening, "rows": [t[3] for t in rows], "closing": closing, "gl_end": gl_end,
            "outstanding": outstanding, "in_transit": in_transit, "unrecorded": unrecorded}


def _reference(sc: Scenario, books: financedb.Books, stmt: dict[str, Any], paths: dict[str, str]) -> tuple[list, list]:
    entries: list[dict[str, Any]] = []
    no_entry: list[dict[str, Any]] = []
    end = sc.end
    wages = books.payroll_second_half[sc.period]
    gross = sum(wages.values(), ZERO)
    tax = financedb.payroll_tax(gross)
    entries.append(_entry(paths["payroll"], "payroll-accrual", f"Accrue payroll {sc.period} 16-end", end,
                          [("6000", gross, ZERO), ("6050", tax, ZERO), ("2200", ZERO, gross + tax)]))
    for c in sc.contracts:
        if c.kind == "billed":
            no_entry.append({"source": c.path, "kind": "contract-already-billed", "amount": f"{c.fee:.2f}",
                             "why": f"the vendor's bill for {financedb.month_label(sc.period)} is already in AP"})
            continue
        entries.append(_entry(c.path, f"contract-accrual-{c.kind}", f"Accrue {c.vendor.name} {c.number} {sc.period}", end,
                              [(c.vendor.account, c.accrual, ZERO), ("2100", ZERO, c.accrual)]))
    for inv in sc.invoices:
        if inv.kind == "current":
            entries.append(_entry(inv.path, "supplier-invoice", f"{inv.vendor.name} invoice {inv.number}", end,
                                  [(inv.vendor.account, inv.total, ZERO), ("2000", ZERO, inv.total)]))
        elif inv.kind == "next_month_for_close_month":
            entries.append(_entry(inv.path, "cut-off-accrual", f"Accrue {inv.vendor.name} {inv.number} ({sc.period} services)", end,
                                  [(inv.vendor.account, inv.total, ZERO), ("2100", ZERO, inv.total)]))
        elif inv.kind == "next_month":
            no_entry.append({"source": inv.path, "kind": "next-month-invoice", "amount": f"{inv.total:.2f}",
                             "why": f"dated and for services in {financedb.month_label(inv.service_period)}, after the close"})
        else:
            no_entry.append({"source": inv.path, "kind": "invoice-already-booked", "amount": f"{inv.total:.2f}",
                             "why": f"invoice {inv.number} is already in AP"})
    monthly_rent = financedb.cents(books.company.quarterly_rent / 3)
    if "rent_already_amortized" in sc.features:
        no_entry.append({"source": paths["rent"], "kind": "rent-already-amortized", "amount": f"{monthly_rent:.2f}",
                         "why": f"the {financedb.month_label(sc.period)} amortization is already in the ledger"})
    else:
        entries.append(_entry(paths["rent"], "rent-amortization", f"Rent amortization {sc.period}", end,
                              [("6100", monthly_rent, ZERO), ("1300", ZERO, monthly_rent)]))
    bank_entry = {
        "service_charge": lambda a: ("Bank service charge", [("6800", -a, ZERO), (RECONCILE_ACCOUNT, ZERO, -a)]),
        "interest": lambda a: ("Interest credited by the bank", [(RECONCILE_ACCOUNT, a, ZERO), ("7000", ZERO, a)]),
        "customer_wire": lambda a: ("Customer wire received", [(RECONCILE_ACCOUNT, a, ZERO), ("1100", ZERO, a)]),
        "returned_check": lambda a: ("Customer check returned unpaid", [("1100", -a, ZERO), (RECONCILE_ACCOUNT, ZERO, -a)]),
    }
    for kind, line in stmt["unrecorded"]:
        memo, lines = bank_entry[kind](line.amount)
        entries.append(_entry(paths["bank"], f"bank-{kind.replace('_', '-')}", f"{memo}: {line.description}", end, lines))
    for b in stmt["outstanding"]:
        no_entry.append({"source": paths["bank"], "kind": "outstanding-check", "amount": f"{-b.amount:.2f}",
                         "why": f"{b.description} ({b.entry.date}) clears after month-end: a timing difference"})
    for b in stmt["in_transit"]:
        no_entry.append({"source": paths["bank"], "kind": "deposit-in-transit", "amount": f"{b.amount:.2f}",
                         "why": f"{b.description} ({b.entry.date}) is credited after month-end: a timing difference"})
    return entries, no_entry


def net_by_account(entries: list[Mapping[str, Any]]) -> dict[str, str]:
    """Debit-positive net of the entries per account (accounts that net to zero are kept)."""
    net: dict[str, Decimal] = {}
    for e in entries:
        for ln in e["lines"]:
            net[ln["account"]] = net.get(ln["account"], ZERO) + Decimal(ln["debit"]) - Decimal(ln["credit"])
    return {a: f"{net[a]:.2f}" for a in sorted(net)}


# --------------------------------------------------------------------------------------
# documents


def _doc_contract(c: Contract, company: financedb.Company, sc: Scenario) -> str:
    head = [
        "SERVICES AGREEMENT - SUMMARY OF TERMS",
        "",
        f"Contract no.:   {c.number}",
        f"Vendor:         {c.vendor.name} (vendor id {c.vendor.vendor_id})",
        f"Customer:       {company.name}",
        f"Services:       {c.service}",
        f"Term:           1 January {sc.year} to 31 December {sc.year}, renewing yearly",
        "",
        "Fees",
    ]
    if c.kind == "usage":
        body = [f"  ${fmt_money(c.rate)} per hour of {c.service}, billed monthly in arrears on the hours delivered.",
                "",
                f"Service report for {financedb.month_label(sc.period)} (confirmed by Operations): {c.hours} hours delivered."]
    else:
        body = [f"  A fixed monthly fee of ${fmt_money(c.fee)} for each calendar month of service.",
                "  The vendor invoices each month in arrears, normally within ten days after month-end,",
                "  and sometimes on the last business day of the month itself."]
    return "\n".join(head + body + ["", f"Payment terms:  net {c.vendor.terms} days", ""])


def _doc_invoice(inv: SupplierInvoice, company: financedb.Company) -> str:
    width = 58
    rows = [f"{desc:<{width - 14}}{fmt_money(amount):>14}" for desc, amount in inv.lines]
    return "\n".join([
        "INVOICE",
        "",
        f"From:            {inv.vendor.name} (vendor id {inv.vendor.vendor_id})",
        f"To:              {company.name}, Accounts Payable",
        f"Invoice number:  {inv.number}",
        f"Invoice date:    {inv.date.isoformat()}",
        f"Service period:  {financedb.month_label(inv.service_period)}",
        "",
        f"{'Description':<{width - 14}}{'Amount':>14}",
        *rows,
        "",
        f"{'Total due (USD)':<{width - 14}}{fmt_money(inv.total):>14}",
        f"Payment terms: net {inv.vendor.terms} days.",
        "",
    ])


def _doc_payroll(sc: Scenario, books: financedb.Books) -> str:
    wages = books.payroll_second_half[sc.period]
    gross = sum(wages.values(), ZERO)
    names = dict(financedb.DEPARTMENTS)
    pay_day = _next_month_day(sc, 5)
    return "\n".join([
        f"PAYROLL NOTE - {financedb.month_label(sc.period)}",
        "",
        f"The second pay run of {financedb.month_label(sc.period)} covers 16-{sc.end.day} {financedb.MONTHS[sc.month - 1]} "
        f"{sc.year} and is paid on {pay_day.day} {financedb.MONTHS[pay_day.month - 1]} {pay_day.year}.",
        "It has not been recorded in the ledger. Gross wages by department:",
        "",
        *(f"  {names[d]:<32}{fmt_money(a):>14}" for d, a in wages.items()),
        f"  {'Total gross wages':<32}{fmt_money(gross):>14}",
        "",
        f"Employer payroll taxes (7.65% of gross wages): {fmt_money(financedb.payroll_tax(gross))}",
        "",
    ])


def _doc_rent(sc: Scenario, company: financedb.Company) -> str:
    monthly = financedb.cents(company.quarterly_rent / 3)
    label = financedb.month_label(sc.period)
    return "\n".join([
        f"FACILITIES NOTE - RENT, {label}",
        "",
        f"Lease:          {company.landlord}, head office and warehouse",
        f"Rent:           ${fmt_money(company.quarterly_rent)} per quarter, paid in advance on the first day of each quarter",
        "                and recorded to Prepaid Expenses (1300).",
        f"Monthly rent:   ${fmt_money(monthly)}, expensed to Rent (6100) by the amortization schedule on the first day",
        "                of each month.",
        "",
        f"The schedule failed to run in some months this year: before closing, check that the {label}",
        "amortization is in the ledger.",
        "",
    ])


def _doc_statement(sc: Scenario, company: financedb.Company, stmt: dict[str, Any]) -> str:
    w = (12, 56, 14, 14, 16)
    out = [
        f"{company.bank.upper()} - ACCOUNT STATEMENT",
        f"Account holder:  {company.name}",
        f"Account:         Operating account ****{company.operating_last4}",
        f"Period:          {sc.start.isoformat()} to {sc.end.isoformat()}",
        "",
        f"{'Date':<{w[0]}}{'Description':<{w[1]}}{'Withdrawals':>{w[2]}}{'Deposits':>{w[3]}}{'Balance':>{w[4]}}",
        f"{'':<{w[0]}}{'Opening balance':<{w[1]}}{'':>{w[2]}}{'':>{w[3]}}{fmt_money(stmt['opening']):>{w[4]}}",
    ]
    balance = stmt["opening"]
    for b in stmt["rows"]:
        balance += b.amount
        out_amt = fmt_money(-b.amount) if b.amount < 0 else ""
        in_amt = fmt_money(b.amount) if b.amount > 0 else ""
        out.append(f"{b.date.isoformat():<{w[0]}}{b.description[: w[1] - 2]:<{w[1]}}{out_amt:>{w[2]}}{in_amt:>{w[3]}}"
                   f"{fmt_money(balance):>{w[4]}}")
    out += [f"{'':<{w[0]}}{'Closing balance':<{w[1]}}{'':>{w[2]}}{'':>{w[3]}}{fmt_money(stmt['closing']):>{w[4]}}", ""]
    return "\n".join(out)


# --------------------------------------------------------------------------------------
# items


def seal_key(seed: str, index: int) -> str:
    r = Stream(seed, "execute.month-end", "seal", index)
    return "".join(f"{r.below(1 << 32):08x}" for _ in range(8))


def generate(seed: str, index: int, params: Mapping[str, Any]) -> Item:
    clean, features, bank_items = plan(seed, index)
    r = Stream(seed, "execute.month-end", "item", index)
    key = f"execute.month-end/{seed}/{index}"
    company = financedb.make_company(key)
    sc = _scenario(r.child("scenario"), company, features, bank_items)
    books = financedb.generate(key, months=sc.month, open_last=True,
                               rent_amortization_last="rent_already_amortized" in features,
                               reserved_vendors=tuple(c.vendor.vendor_id for c in sc.contracts), hook=_hook(sc))
    data = financedb.to_sqlite(books)
    paths = {"payroll": f"payroll/payroll-note-{sc.period}.txt", "rent": f"facilities/rent-note-{sc.period}.txt",
             "bank": f"bank/statement-{RECONCILE_ACCOUNT}-{sc.period}.txt"}
    for inv in sc.invoices:
        inv.path = f"invoices/{_slug(inv.vendor.name)}-{_slug(inv.number)}.txt"
    stmt = _statement(sc, books)
    entries, no_entry = _reference(sc, books, stmt, paths)

    docs: dict[str, tuple[str, str]] = {
        paths["bank"]: (f"Bank statement, operating account, {financedb.month_label(sc.period)}", _doc_statement(sc, company, stmt)),
        paths["payroll"]: (f"Payroll note, {financedb.month_label(sc.period)}", _doc_payroll(sc, books)),
        paths["rent"]: ("Facilities note: rent", _doc_rent(sc, company)),
    }
    for c in sc.contracts:
        docs[c.path] = (f"Services agreement {c.number} - {c.vendor.name}", _doc_contract(c, company, sc))
    for inv in sc.invoices:
        docs[inv.path] = (f"Supplier invoice {inv.number} - {inv.vendor.name}", _doc_invoice(inv, company))
    files = {DATABASE: data}
    files.update({DOCS + path: text.encode("utf-8") for path, (_, text) in sorted(docs.items())})

    context = {
        "company": company.name,
        "close_period": sc.period,
        "period_start": sc.start.isoformat(),
        "period_end": sc.end.isoformat(),
        "reconcile_account": {"account_id": RECONCILE_ACCOUNT, "name": financedb.ACCOUNT_NAMES[RECONCILE_ACCOUNT],
                              "bank": company.bank},
        "database": DATABASE,
        "documents": [{"path": path, "title": title} for path, (title, _) in sorted(docs.items())],
    }
    answer_key = {
        "close_period": sc.period,
        "entries": entries,
        "net_by_account": net_by_account(entries),
        "no_entry": no_entry,
        "reconciliation": {
            "account": RECONCILE_ACCOUNT,
            "gl_balance_before": f"{stmt['gl_end']:.2f}",
            "bank_closing": f"{stmt['closing']:.2f}",
            "outstanding_checks": [{"description": b.description, "amount": f"{-b.amount:.2f}"} for b in stmt["outstanding"]],
            "deposits_in_transit": [{"description": b.description, "amount": f"{b.amount:.2f}"} for b in stmt["in_transit"]],
            "unrecorded": [{"kind": k, "description": b.description, "amount": f"{b.amount:.2f}"} for k, b in stmt["unrecorded"]],
        },
        "scenario": {"clean": clean, "features": features, "bank_items": bank_items},
        "seal_key": seal_key(seed, index),
    }
    return Item(index=index, item_id=f"close-{index + 1:02d}", context=context, answer_key=answer_key, files=files)
