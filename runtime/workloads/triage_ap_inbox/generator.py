"""Seeded generator of synthetic AP-inbox batches (LedgerRate §4.2, triage.ap-inbox.v1).

Why it is built this way:

- Every draw comes from `Stream(seed, ...)` sub-streams named by what they decide (edition,
  batch plan, one stream per email slot), so a batch is byte-identical on every machine and
  adding a template to one label does not reshuffle every other email.
- Real AP mail is messy, so each label has several body templates, subject lines, greetings
  and signatures, and vendors format numbers, dates and money their own way (US `$1,240.00`,
  European `EUR 3.450,00`).
- A triage benchmark is only informative if surface keywords mislead: every batch carries
  3-6 *hard cases* (reminders quoting invoice numbers, statements with remittance slips,
  forwarded threads, remittance advices listing invoices, invoices with misleading
  subjects ...). The answer key records which emails are hard and why, for error analysis.
- Nothing here reads the clock: dates derive from the seed.
"""

from __future__ import annotations

import datetime as _dt
from dataclasses import dataclass
from decimal import Decimal
from typing import Any, Callable, Mapping, Sequence

from lrc.runtime.checks.rng import Stream
from lrc.runtime.workloads.base import Item

COMPONENT_ID = "triage.ap-inbox.generator"
COMPONENT_VERSION = 2

LABELS: tuple[str, ...] = ("invoice", "statement", "dunning_notice", "po_response", "other")

REQUIRED_HARD_KINDS: tuple[str, ...] = (
    "dunning_quotes_invoice",
    "statement_with_remittance",
    "po_price_change",
    "forwarded_thread",
    "remittance_mentions_invoices",
    "misleading_subject_invoice",
)
"""Hard-case kinds every edition of >= 6 batches contains (batch i always holds kind i % 6)."""

EXTRA_HARD_KINDS: tuple[str, ...] = ("bank_details_change", "internal_invoice_question", "credit_note")

DEFAULT_BATCH_SIZE = 20

_MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August",
           "September", "October", "November", "December")

# --------------------------------------------------------------------------------------
# Invented parties. Every domain is under .example (RFC 2606); no real company is meant.


@dataclass(frozen=True)
class _Vendor:
    name: str
    domain: str
    currency: str  # "USD" or "EUR"
    inv_format: str  # placeholders: {y} year, {n4}/{n5}/{n6}/{n7} digits
    goods: tuple[tuple[str, int, int], ...]  # (description, unit price low/high in cents)
    service: str  # what a recurring invoice is for


_VENDORS: tuple[_Vendor, ...] = (
    _Vendor("Acme Tools", "acme-tools.example", "USD", "INV-{y}-{n4}",
            (("cordless drill kit", 18900, 32900), ("drill bit set, 29 pcs", 3900, 7900), ("torque wrench 1/2in", 9900, 21900)), "tool calibration and repairs"),
    _Vendor("Brightpaper Supply", "brightpaper.example", "USD", "BP{n6}",
            (("copy paper, case of 10 reams", 4200, 6900), ("toner cartridge TN-4x", 8900, 15900), ("archive boxes, pack of 25", 3100, 5600)), "office supplies"),
    _Vendor("Kestrel Freight", "kestrel-freight.example", "USD", "KF-{n5}",
            (("full truckload, lane 12", 140000, 310000), ("LTL pallet shipment", 18000, 46000)), "freight services"),
    _Vendor("Orchid Facility Cleaning", "orchidclean.example", "USD", "{n5}",
            (("monthly janitorial contract", 240000, 520000), ("window cleaning, exterior", 45000, 98000)), "janitorial services"),
    _Vendor("Pinewood Packaging", "pinewood-pack.example", "USD", "SI-{n6}",
            (("corrugated box 40x30x30, bundle of 50", 3800, 7400), ("stretch wrap roll 18in", 2100, 3900), ("pallet labels, roll of 1,000", 2900, 5200)), "packaging materials"),
    _Vendor("Silverline Electrical", "silverline-elec.example", "USD", "INV{n6}",
            (("LED panel 2x2 ft", 5400, 9800), ("cable tray 10 ft", 3300, 6100), ("circuit breaker 20A", 1900, 4200)), "electrical maintenance"),
    _Vendor("Northgate IT Services", "northgate-it.example", "USD", "NG-{y}-{n5}",
            (("laptop docking station", 17900, 28900), ("24-inch monitor", 16900, 27900), ("wireless keyboard and mouse set", 4900, 8900)), "managed IT support"),
    _Vendor("Redwater Chemicals", "redwater-chem.example", "USD", "RW{n7}",
            (("industrial degreaser, 5 gal", 8800, 14500), ("nitrile gloves, case of 1,000", 6400, 11200)), "chemical supplies"),
    _Vendor("Fenwick & Hale LLP", "fenwickhale.example", "USD", "{y}-{n4}",
            (("contract review, fixed fee", 150000, 420000),), "legal services"),
    _Vendor("Granite Peak Equipment Rental", "granitepeak-rentals.example", "USD", "GP-{n6}",
            (("forklift rental, weekly", 42000, 76000), ("scissor lift rental, daily", 18000, 31000)), "equipment rental"),
    _Vendor("Lumen Signage", "lumensigns.example", "USD", "LS-{n5}",
            (("aluminium wall sign", 12000, 38000), ("vinyl window graphics", 9000, 26000)), "signage"),
    _Vendor("Marlow Workwear", "marlow-workwear.example", "USD", "MW{n6}",
            (("hi-vis vest, embroidered", 1400, 2900), ("safety boots, composite toe", 7900, 13900), ("polo shirt with logo", 1900, 3400)), "workwear"),
    _Vendor("Tidewater Fuel", "tidewater-fuel.example", "USD", "TF{n6}",
            (("diesel delivery, per 1,000 gal", 310000, 460000),), "fuel deliveries"),
    _Vendor("Crescent Lab Supplies", "crescentlab.example", "USD", "CLS-{n6}",
            (("pipette tips, rack of 96", 900, 1900), ("sample vials 2 ml, pack of 100", 2400, 4300)), "laboratory supplies"),
    _Vendor("Vantage Telecom", "vantagetel.example", "USD", "{n7}",
            (("fibre line 500 Mbps, monthly", 39000, 89000),), "business fibre and phone lines"),
    _Vendor("Ironbark Safety", "ironbark-safety.example", "USD", "IB-{y}-{n4}",
            (("first aid kit refill", 3500, 8500), ("fire extinguisher service, per unit", 1800, 3600)), "safety inspections"),
    _Vendor("Solstice Software", "solstice-soft.example", "USD", "SOL-{n6}",
            (("user licence, annual", 24000, 52000),), "software subscription"),
    _Vendor("Hollis Print Works", "hollisprint.example", "USD", "HPW{n5}",
            (("brochures, run of 1,000", 38000, 89000), ("business cards, box of 500", 2900, 6900)), "printing"),
    _Vendor("Elmstead Office Furniture", "elmstead-furniture.example", "USD", "EOF-{n5}",
            (("task chair, mesh back", 21900, 42900), ("sit-stand desk 60in", 49900, 89900)), "office furniture"),
    _Vendor("Quillon Staffing", "quillon-staffing.example", "USD", "QS{n6}",
            (("temporary warehouse associate, per week", 68000, 112000),), "temporary staffing"),
    _Vendor("Bluebird Catering", "bluebird-catering.example", "USD", "BC-{n5}",
            (("canteen lunch service, per week", 180000, 390000), ("meeting platters", 9000, 24000)), "catering"),
    _Vendor("Nordkap Industrietechnik GmbH", "nordkap-technik.example", "EUR", "RE-{y}-{n5}",
            (("hydraulic coupling DN20", 8400, 19800), ("pressure valve DN25", 21000, 46000)), "spare parts"),
    _Vendor("Van Leeuwen Verpakking B.V.", "vanleeuwen-verpakking.example", "EUR", "VL{y}{n5}",
            (("cardboard trays, pallet", 38000, 91000), ("shrink film 25 my, roll", 5400, 9800)), "packaging film"),
    _Vendor("Atelier Rousseau SARL", "atelier-rousseau.example", "EUR", "F{y}-{n4}",
            (("retail display stand", 34000, 79000), ("shelf wobblers, pack of 200", 6800, 14900)), "design services"),
)


@dataclass(frozen=True)
class _Buyer:
    name: str
    domain: str
    po_format: str


_BUYERS: tuple[_Buyer, ...] = (
    _Buyer("Harborline Foods", "harborline.example", "PO-{n6}"),
    _Buyer("Copperleaf Logistics", "copperleaf-logistics.example", "45{n8}"),
    _Buyer("Meridian Parts Co.", "meridianparts.example", "MP-PO-{n5}"),
    _Buyer("Tallgrass Hospitality", "tallgrass-hotels.example", "PO{n7}"),
    _Buyer("Bluefen Manufacturing", "bluefen-mfg.example", "4500{n6}"),
    _Buyer("Quarry Hill Clinics", "quarryhill-clinics.example", "QH-{n6}"),
    _Buyer("Ashgrove Retail", "ashgrove-retail.example", "PO-{y}-{n5}"),
    _Buyer("Lanternfield Media", "lanternfield.example", "LF{n6}"),
)

_FIRST = ("Maria", "James", "Aisha", "Tomasz", "Priya", "Daniel", "Yuki", "Olusegun", "Chloe",
          "Marcus", "Ingrid", "Rafael", "Hannah", "Kwame", "Sofia", "Liam", "Mei", "Dmitri",
          "Fatima", "Owen", "Lucia", "Samuel", "Noor", "Elena", "Victor", "Grace", "Henrik",
          "Amara", "Jonas", "Leila", "Patrick", "Rosa", "Kenji", "Beatriz", "Ethan", "Zainab")
_LAST = ("Okafor", "Whitfield", "Lindqvist", "Moreno", "Nakamura", "Brennan", "Kowalski",
         "Haddad", "Patel", "Osei", "Fischer", "Delgado", "Novak", "Ferreira", "Sullivan",
         "Achterberg", "Mensah", "Castillo", "Reyes", "Holm", "Duarte", "Kim", "Abernathy",
         "Varga", "Lambert", "Chen", "Oyelaran", "Marchetti", "Dubois", "Quinn", "Sato", "Berg")

_DEPTS: dict[str, tuple[str, tuple[str, ...], tuple[str, ...]]] = {
    # department -> (team name, mailbox local parts, job titles)
    "billing": ("Accounts Receivable", ("billing", "invoices", "ar", "accounts.receivable", "finance"),
                ("Accounts Receivable", "Billing Specialist", "Finance Assistant", "Billing Team Lead")),
    "orders": ("Order Desk", ("orders", "sales", "orderdesk", "customerservice"),
               ("Order Desk", "Inside Sales", "Customer Service Representative", "Sales Coordinator")),
    "credit": ("Credit Control", ("creditcontrol", "collections", "ar", "credit"),
               ("Credit Control", "Collections Specialist", "Accounts Receivable Manager", "Credit Controller")),
    "general": ("Customer Success", ("info", "hello", "team", "news"),
                ("Account Manager", "Customer Success", "Partnerships", "Office Manager")),
}

_INTERNAL_ROLES = ("Procurement", "Operations", "Controller", "Facilities", "Warehouse", "Marketing")


@dataclass(frozen=True)
class _Edition:
    """Choices shared by every batch of one seed: who we are and when the mail arrives."""

    buyer: _Buyer
    mailbox: str
    colleagues: tuple[tuple[str, str], ...]  # (full name, role)
    start: _dt.date  # a Monday


def _edition(seed: str) -> _Edition:
    r = Stream(seed, "triage.ap-inbox", "edition")
    buyer = r.choice(_BUYERS)
    mailbox = f"{r.choice(('ap', 'accounts.payable', 'invoices', 'ap-inbox'))}@{buyer.domain}"
    names = r.sample([f"{f} {l}" for f in _FIRST[:12] for l in _LAST[:12]], len(_INTERNAL_ROLES))
    colleagues = tuple(zip(names, _INTERNAL_ROLES))
    start = _dt.date(2025, 1, 6) + _dt.timedelta(weeks=r.below(78))
    return _Edition(buyer, mailbox, colleagues, start)


# --------------------------------------------------------------------------------------
# One email under construction: its random stream and the formatting helpers.


@dataclass
class _Mail:
    r: Stream
    ed: _Edition
    vendor: _Vendor
    when: _dt.datetime
    sender: str = ""
    team: str = "Accounts Receivable"

    # numbers -----------------------------------------------------------------------
    def _digits(self, fmt: str) -> str:
        out = fmt.replace("{y}", str(self.when.year))
        for width in (4, 5, 6, 7, 8):
            tag = "{n%d}" % width
            while tag in out:
                out = out.replace(tag, str(self.r.between(10 ** (width - 1), 10**width - 1)), 1)
        return out

    def inv(self) -> str:
        return self._digits(self.vendor.inv_format)

    def po(self) -> str:
        """Our PO reference as suppliers quote it ("PO-123456" or "PO 4500123456")."""
        number = self._digits(self.ed.buyer.po_format)
        return number if "PO" in number else f"PO {number}"

    def account(self) -> str:
        return self._digits(self.r.choice(("C{n5}", "{n6}", "CUST-{n4}", "{n5}-01")))

    # money and dates ---------------------------------------------------------------
    def money(self, lo_cents: int, hi_cents: int) -> Decimal:
        return self.r.money(lo_cents, hi_cents)

    def fmt(self, amount: Decimal) -> str:
        whole, frac = f"{amount.quantize(Decimal('0.01')):.2f}".split(".")
        grouped = f"{int(whole):,}"
        if self.vendor.currency == "EUR":
            return f"EUR {grouped.replace(',', '.')},{frac}"
        return f"${grouped}.{frac}"

    def day(self, offset: int) -> _dt.date:
        return self.when.date() + _dt.timedelta(days=offset)

    def fdate(self, d: _dt.date) -> str:
        if self.vendor.currency == "EUR":
            return f"{d.day:02d}.{d.month:02d}.{d.year}"
        if self.vendor.name < "M":  # a stable house style per vendor
            return f"{_MONTHS[d.month - 1]} {d.day}, {d.year}"
        return f"{d.day} {_MONTHS[d.month - 1][:3]} {d.year}"

    def month(self, offset_months: int = -1) -> str:
        m = (self.when.month - 1 + offset_months) % 12
        return _MONTHS[m]

    def period(self, offset_months: int = -1) -> str:
        """'March 2026' for the month `offset_months` away (last month by default)."""
        k = self.when.year * 12 + self.when.month - 1 + offset_months
        return f"{_MONTHS[k % 12]} {k // 12}"

    # people and framing ------------------------------------------------------------
    def person(self) -> str:
        return f"{self.r.choice(_FIRST)} {self.r.choice(_LAST)}"

    def from_vendor(self, dept: str) -> tuple[str, str]:
        """Pick a sender in `dept`, set the From header and return (name, title)."""
        self.team, locals_, titles = _DEPTS[dept]
        name, title = self.person(), self.r.choice(titles)
        first, last = name.split(" ")
        style = self.r.below(4)
        if style == 0:
            self.sender = f"{self.r.choice(locals_)}@{self.vendor.domain}"
        elif style == 1:
            self.sender = f"{name} <{first.lower()}.{last.lower()}@{self.vendor.domain}>"
        elif style == 2:
            self.sender = f"{self.vendor.name} {self.team} <{self.r.choice(locals_)}@{self.vendor.domain}>"
        else:
            self.sender = f"{first[0].lower()}{last.lower()}@{self.vendor.domain}"
        return name, title

    def from_colleague(self) -> tuple[str, str]:
        name, role = self.r.choice(self.ed.colleagues)
        first, last = name.split(" ")
        self.sender = f"{name} <{first.lower()}.{last.lower()}@{self.ed.buyer.domain}>"
        return name, role

    def greeting(self) -> str:
        return self.r.choice(("Hello,", "Hi,", "Dear Sir or Madam,", "Dear Accounts Payable team,",
                              "Good morning,", "Hi AP team,", f"Hello {self.ed.buyer.name} team,"))

    def signoff(self, name: str, title: str) -> str:
        first = name.split(" ")[0]
        phone = f"+1 ({self.r.choice((212, 312, 415, 617, 713, 303))}) 555-01{self.r.between(0, 99):02d}"
        if self.vendor.currency == "EUR":
            phone = f"+49 30 555 {self.r.between(10000, 99999)}"
        style = self.r.below(5)
        if style == 0:
            return f"Kind regards,\n{name}\n{title}\n{self.vendor.name}"
        if style == 1:
            return f"Best,\n{first}\n\n{name} | {title} | {self.vendor.name}\nT: {phone}"
        if style == 2:
            return f"Thanks,\n{self.vendor.name} {self.team} team"
        if style == 3:
            return f"Regards\n{name}\n{self.vendor.name}\n{phone}"
        return f"Many thanks,\n{name}\n{title}, {self.vendor.name}\nwww.{self.vendor.domain}"

    def item(self) -> tuple[str, Decimal, int]:
        desc, lo, hi = self.r.choice(self.vendor.goods)
        return desc, self.money(lo, hi), self.r.choice((1, 2, 4, 5, 10, 12, 20, 24, 50))


def _body(*parts: str | None) -> str:
    """Join paragraphs with blank lines, skipping the ones a template left out."""
    return "\n\n".join(p for p in parts if p)


def _table(rows: Sequence[Sequence[str]]) -> str:
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    return "\n".join("  ".join(cell.ljust(widths[i]) for i, cell in enumerate(row)).rstrip() for row in rows)


def _lines(c: _Mail, n: int) -> tuple[str, Decimal]:
    rows = [["Qty", "Description", "Unit price", "Amount"]]
    total = Decimal("0.00")
    for _ in range(n):
        desc, unit, qty = c.item()
        amount = unit * qty
        total += amount
        rows.append([str(qty), desc, c.fmt(unit), c.fmt(amount)])
    return _table(rows), total


Template = Callable[[_Mail], tuple[str, str]]

# --------------------------------------------------------------------------------------
# invoice


def _inv_attached(c: _Mail) -> tuple[str, str]:
    inv, v = c.inv(), c.vendor
    amount = c.fmt(c.money(12000, 980000))
    terms = c.r.choice((15, 30, 30, 45, 60))
    issued = c.day(-c.r.below(3))
    due = c.fdate(issued + _dt.timedelta(days=terms))
    name, title = c.from_vendor("billing")
    subject = c.r.choice((f"Invoice {inv} from {v.name}", f"{v.name} invoice {inv}", f"Invoice {inv}",
                          f"New invoice {inv} - {v.service}", f"Your invoice {inv} is attached"))
    first = c.r.choice((f"Please find attached invoice {inv} for {amount} for {v.service} in {c.month()}.",
                        f"Attached is our invoice {inv} dated {c.fdate(issued)} in the amount of {amount}.",
                        f"Please see the attached invoice {inv} ({amount}) covering {v.service}."))
    terms_line = c.r.choice((f"Payment terms are net {terms} days; the invoice is due on {due}.",
                             f"Due date: {due}.", f"Terms: net {terms}. Due {due}."))
    po = f"Your PO reference: {c.po()}." if c.r.chance(1, 2) else None
    return subject, _body(c.greeting(), first, terms_line, po, c.signoff(name, title))


def _inv_portal(c: _Mail) -> tuple[str, str]:
    inv, v = c.inv(), c.vendor
    amount = c.fmt(c.money(5000, 450000))
    issued = c.day(-c.r.below(2))
    due = issued + _dt.timedelta(days=c.r.choice((14, 30, 30)))
    c.sender = f"{c.r.choice(('noreply', 'billing-notifications', 'no-reply'))}@{c.r.choice(('billing.', 'portal.', ''))}{v.domain}"
    subject = c.r.choice((f"Your {v.name} invoice is ready", f"New invoice available: {inv}",
                          f"{v.name}: invoice {inv} for account {c.account()}"))
    details = "\n".join((f"Invoice number: {inv}", f"Invoice date:   {c.fdate(issued)}",
                         f"Amount due:     {amount}", f"Due date:       {c.fdate(due)}"))
    link = f"View and download your invoice: https://billing.{v.domain}/inv/{c.r.between(100000, 999999)}"
    foot = "This is an automated message. Please do not reply to this email."
    return subject, _body(f"Dear customer,\n\na new invoice has been issued to {c.ed.buyer.name}.", details, link, foot)


def _inv_lines(c: _Mail) -> tuple[str, str]:
    inv, po = c.inv(), c.po()
    table, total = _lines(c, c.r.between(1, 4))
    tax = (total * Decimal("0.07")).quantize(Decimal("0.01")) if c.vendor.currency == "USD" else (total * Decimal("0.19")).quantize(Decimal("0.01"))
    tax_name = "Sales tax 7%" if c.vendor.currency == "USD" else "VAT 19%"
    name, title = c.from_vendor("billing")
    subject = c.r.choice((f"INV {inv} / {po}", f"Invoice {inv} - {po}", f"Invoice for {po}"))
    totals = f"Subtotal: {c.fmt(total)}\n{tax_name}: {c.fmt(tax)}\nTotal due: {c.fmt(total + tax)}"
    intro = c.r.choice((f"Please find below invoice {inv} for the goods shipped against {po}.",
                        f"Invoice {inv} for your purchase order {po} (shipped complete)."))
    return subject, _body(c.greeting(), intro, table, totals,
                          f"Please pay within {c.r.choice((30, 45))} days quoting {inv}.", c.signoff(name, title))


def _inv_corrected(c: _Mail) -> tuple[str, str]:
    old, new = c.inv(), c.inv()
    amount = c.fmt(c.money(20000, 600000))
    name, title = c.from_vendor("billing")
    subject = c.r.choice((f"Corrected invoice {new}", f"Revised invoice {new} (replaces {old})", f"Updated invoice {new}"))
    why = c.r.choice(("the PO number was missing", "the quantity on line 2 was wrong",
                      "it was addressed to the wrong entity", "the tax rate was applied incorrectly"))
    text = (f"Please disregard invoice {old}: {why}. The attached corrected invoice {new} for {amount} "
            f"replaces it. The due date is unchanged.")
    return subject, _body(c.greeting(), text, "Apologies for the inconvenience.", c.signoff(name, title))


def _inv_subscription(c: _Mail) -> tuple[str, str]:
    inv, v = c.inv(), c.vendor
    amount = c.fmt(c.money(9000, 250000))
    period = c.period(0)
    name, title = c.from_vendor("billing")
    subject = c.r.choice((f"{period} invoice - {v.service}", f"Your {period} bill from {v.name}",
                          f"{v.name} | invoice {inv} | {period}"))
    text = (f"Your invoice {inv} for {v.service} ({period}) is attached.\n\n"
            f"Amount: {amount}\nPayment method on file: bank transfer\nAccount: {c.account()}")
    return subject, _body(c.greeting(), text, "Questions about this bill? Just reply to this email.", c.signoff(name, title))


_INVOICE: tuple[Template, ...] = (_inv_attached, _inv_portal, _inv_lines, _inv_corrected, _inv_subscription)

# --------------------------------------------------------------------------------------
# statement


def _ledger(c: _Mail, rows: int) -> tuple[str, Decimal]:
    """A running-balance statement table; returns (table, closing balance)."""
    balance = c.money(0, 300000)
    d = c.day(-c.r.between(35, 45))
    out = [["Date", "Reference", "Description", "Amount", "Balance"],
           [c.fdate(d), "", "Opening balance", "", c.fmt(balance)]]
    for _ in range(rows):
        d += _dt.timedelta(days=c.r.between(3, 9))
        if c.r.chance(2, 3) or balance < Decimal("1000"):
            amount = c.money(20000, 400000)
            balance += amount
            out.append([c.fdate(d), c.inv(), "Invoice", c.fmt(amount), c.fmt(balance)])
        else:
            amount = min(balance, c.money(20000, 300000))
            balance -= amount
            out.append([c.fdate(d), f"PMT{c.r.between(1000, 9999)}", "Payment received", "-" + c.fmt(amount), c.fmt(balance)])
    return _table(out), balance


def _st_full(c: _Mail) -> tuple[str, str]:
    acct = c.account()
    table, balance = _ledger(c, c.r.between(3, 6))
    name, title = c.from_vendor("billing")
    subject = c.r.choice((f"Statement of account - {c.period()}", f"{c.vendor.name} statement, account {acct}",
                          f"Monthly statement {acct}", "Your account statement"))
    intro = c.r.choice((f"Please find below your statement of account {acct} as at {c.fdate(c.day(-1))}.",
                        f"Here is the statement for account {acct} for the period ending {c.fdate(c.day(-2))}."))
    close = f"Closing balance: {c.fmt(balance)}"
    ask = c.r.choice(("If your records differ, please let us know so we can reconcile.",
                      "Please check the open items against your ledger.", None))
    return subject, _body(c.greeting(), intro, table, close, ask, c.signoff(name, title))


def _st_open_items(c: _Mail) -> tuple[str, str]:
    acct = c.account()
    rows = [["Document", "Date", "Amount open"]]
    total = Decimal("0.00")
    for i in range(c.r.between(2, 5)):
        amount = c.money(9000, 250000)
        total += amount
        rows.append([c.inv(), c.fdate(c.day(-c.r.between(2, 28) - 6 * i)), c.fmt(amount)])
    name, title = c.from_vendor("billing")
    subject = c.r.choice((f"Open items statement - account {acct}", f"Customer statement {c.month()}", "Statement of open items"))
    return subject, _body(c.greeting(), f"Below is the list of open items on your account {acct} as of today.",
                          _table(rows), f"Total open: {c.fmt(total)}", "No action is needed if these are already scheduled.",
                          c.signoff(name, title))


def _st_short(c: _Mail) -> tuple[str, str]:
    name, title = c.from_vendor("billing")
    subject = c.r.choice((f"{c.month()} statement", f"Statement attached - {c.vendor.name}", f"Account statement {c.period()}"))
    text = c.r.choice((f"Attached is your {c.month()} statement. The balance on the account is {c.fmt(c.money(5000, 900000))}.",
                       f"Please find your monthly statement attached, showing a balance of {c.fmt(c.money(5000, 900000))}."))
    return subject, _body(c.greeting(), text, "Let us know if anything looks off.", c.signoff(name, title))


def _st_portal(c: _Mail) -> tuple[str, str]:
    v = c.vendor
    c.sender = f"statements@{v.domain}"
    start = c.day(-c.r.between(28, 33))
    subject = c.r.choice(("Your statement is now available", f"{v.name} e-statement ready", f"New statement for {c.ed.buyer.name}"))
    text = (f"Your statement for the period {c.fdate(start)} to {c.fdate(c.day(-1))} is now available in the customer portal.\n\n"
            f"Account: {c.account()}\nStatement balance: {c.fmt(c.money(10000, 700000))}\n\n"
            f"Log in at https://portal.{v.domain} to view it.")
    return subject, _body("Dear customer,", text, f"{v.name} Customer Accounts")


_STATEMENT: tuple[Template, ...] = (_st_full, _st_open_items, _st_short, _st_portal)

# --------------------------------------------------------------------------------------
# dunning notice


def _dn_friendly(c: _Mail) -> tuple[str, str]:
    inv = c.inv()
    amount = c.fmt(c.money(9000, 600000))
    due = c.fdate(c.day(-c.r.between(5, 25)))
    name, title = c.from_vendor("credit")
    subject = c.r.choice((f"Payment reminder - invoice {inv}", f"Friendly reminder: {inv}", "Reminder: payment due"))
    text = c.r.choice((f"This is a friendly reminder that invoice {inv} for {amount}, due on {due}, remains unpaid.",
                       f"Just a quick reminder that we have not yet received payment of {amount} for invoice {inv} (due {due})."))
    return subject, _body(c.greeting(), text, "If payment has already been sent, please disregard this message.", c.signoff(name, title))


def _dn_list(c: _Mail) -> tuple[str, str]:
    rows = [["Invoice", "Due date", "Amount", "Days past due"]]
    total = Decimal("0.00")
    for _ in range(c.r.between(2, 4)):
        days = c.r.between(8, 75)
        amount = c.money(9000, 300000)
        total += amount
        rows.append([c.inv(), c.fdate(c.day(-days)), c.fmt(amount), str(days)])
    name, title = c.from_vendor("credit")
    subject = c.r.choice(("Second notice: past due account", f"Past due invoices - {c.ed.buyer.name}", "Overdue balance on your account"))
    return subject, _body(c.greeting(), "Our records show the following invoices are past due:", _table(rows),
                          f"Total past due: {c.fmt(total)}. Please arrange payment or send us the expected payment date.",
                          c.signoff(name, title))


def _dn_final(c: _Mail) -> tuple[str, str]:
    inv = c.inv()
    amount = c.fmt(c.money(20000, 900000))
    name, title = c.from_vendor("credit")
    subject = c.r.choice((f"FINAL NOTICE - invoice {inv}", "Final notice before account hold", f"Urgent: final demand for {inv}"))
    consequence = c.r.choice(("your account will be placed on credit hold and further deliveries suspended",
                              "the matter will be referred to our collections agency",
                              "late payment interest will be charged as per our terms"))
    text = (f"Despite our previous reminders, invoice {inv} for {amount} is still outstanding. "
            f"Unless payment is received within 7 days, {consequence}.")
    return subject, _body(c.greeting(), text, "Please treat this as urgent.", c.signoff(name, title))


def _dn_short(c: _Mail) -> tuple[str, str]:
    inv = c.inv()
    days = c.r.choice((15, 30, 45, 60))
    name, title = c.from_vendor("credit")
    subject = c.r.choice((f"Overdue invoice {inv} - {days} days", f"{inv} overdue", f"Overdue: {inv}"))
    text = c.r.choice((f"Our invoice {inv} is {days} days overdue. Could you confirm when we can expect payment?",
                       f"We note that {inv} ({c.fmt(c.money(9000, 400000))}) is now {days} days overdue. Please advise on payment status."))
    return subject, _body(c.greeting(), text, c.signoff(name, title))


_DUNNING: tuple[Template, ...] = (_dn_friendly, _dn_list, _dn_final, _dn_short)

# --------------------------------------------------------------------------------------
# PO response


def _po_ack(c: _Mail) -> tuple[str, str]:
    po = c.po()
    name, title = c.from_vendor("orders")
    subject = c.r.choice((f"Order acknowledgement - {po}", f"Acknowledgement of purchase order {po}", f"RE: {po}"))
    ship = c.fdate(c.day(c.r.between(3, 21)))
    text = c.r.choice((f"We acknowledge receipt of your purchase order {po}. The order is being processed and is expected to ship on {ship}.",
                       f"Thank you for {po}. We have entered it as sales order SO-{c.r.between(10000, 99999)}; estimated ship date {ship}."))
    return subject, _body(c.greeting(), text, c.signoff(name, title))


def _po_confirm(c: _Mail) -> tuple[str, str]:
    po = c.po()
    table, total = _lines(c, c.r.between(1, 3))
    name, title = c.from_vendor("orders")
    subject = c.r.choice((f"RE: {po} confirmation", f"Order confirmation {po}", f"Confirmed: purchase order {po}"))
    return subject, _body(c.greeting(), f"We confirm {po} as follows:", table,
                          f"Order total: {c.fmt(total)}\nDelivery: {c.fdate(c.day(c.r.between(5, 30)))}", c.signoff(name, title))


def _po_backorder(c: _Mail) -> tuple[str, str]:
    po = c.po()
    desc, _, qty = c.item()
    now = max(1, qty // 2)
    name, title = c.from_vendor("orders")
    subject = c.r.choice((f"{po} - partial shipment", f"Backorder on {po}", f"RE: {po} quantity change"))
    text = (f"Regarding {po}: the {desc} is on backorder. We can ship {now} now and the remaining {qty - now} "
            f"by {c.fdate(c.day(c.r.between(10, 40)))}. Please confirm whether a split delivery is acceptable.")
    return subject, _body(c.greeting(), text, c.signoff(name, title))


def _po_date(c: _Mail) -> tuple[str, str]:
    po = c.po()
    name, title = c.from_vendor("orders")
    subject = c.r.choice((f"New delivery date for {po}", f"{po} - delivery rescheduled", f"RE: {po} delivery"))
    reason = c.r.choice(("a supplier delay", "a carrier capacity issue", "the public holiday", "a production backlog"))
    text = (f"Due to {reason}, the delivery for {po} moves from {c.fdate(c.day(2))} to "
            f"{c.fdate(c.day(c.r.between(9, 25)))}. All other terms of the order are unchanged.")
    return subject, _body(c.greeting(), text, "Sorry for any inconvenience.", c.signoff(name, title))


def _po_reject(c: _Mail) -> tuple[str, str]:
    po = c.po()
    desc, _, _ = c.item()
    name, title = c.from_vendor("orders")
    subject = c.r.choice((f"Unable to accept {po}", f"{po} rejected", f"RE: {po} - cannot fulfil"))
    why = c.r.choice((f"the {desc} has been discontinued", "the quoted price expired before the order was placed",
                      "the ship-to address is outside our delivery area"))
    text = f"Unfortunately we cannot accept {po} because {why}. Please cancel it on your side or send us a revised order."
    return subject, _body(c.greeting(), text, c.signoff(name, title))


_PO: tuple[Template, ...] = (_po_ack, _po_confirm, _po_backorder, _po_date, _po_reject)

# --------------------------------------------------------------------------------------
# other


def _ot_remittance(c: _Mail) -> tuple[str, str]:
    customer = c.r.choice(("Fairmont Outdoor Ltd", "Pellham Group", "Riverside Wholesale", "Corbel Homes"))
    domain = customer.split(" ")[0].lower() + ".example"
    c.sender = f"payments@{domain}"
    subject = c.r.choice((f"Remittance advice - {customer}", "Remittance advice", f"Payment advice from {customer}"))
    text = (f"Please find below the remittance advice for our payment of {c.fmt(c.money(50000, 2000000))} "
            f"made on {c.fdate(c.day(-1))}, payment reference {c.r.between(100000, 999999)}.")
    return subject, _body("Dear supplier,", text, f"Accounts Payable\n{customer}")


def _ot_w9(c: _Mail) -> tuple[str, str]:
    name, title = c.from_vendor("general")
    subject = c.r.choice(("W-9 request", "Request for your W-9", "Tax form needed"))
    text = c.r.choice((f"Our compliance team needs an up-to-date W-9 for {c.ed.buyer.name}. Could you send a signed copy?",
                       "Could you please send us your company's current Form W-9? We need it for our year-end 1099 filings."))
    return subject, _body(c.greeting(), text, c.signoff(name, title))


def _ot_onboarding(c: _Mail) -> tuple[str, str]:
    name, title = c.from_vendor("general")
    subject = c.r.choice((f"Welcome to {c.vendor.name}", "Supplier portal registration", "New customer setup"))
    text = c.r.choice((f"Thank you for choosing {c.vendor.name}. To complete your customer setup, please fill in the credit application and sales tax exemption form on our website.",
                       f"We are moving our customers to a new online portal. Please register at https://portal.{c.vendor.domain} using the account code {c.account()}."))
    return subject, _body(c.greeting(), text, c.signoff(name, title))


def _ot_newsletter(c: _Mail) -> tuple[str, str]:
    v = c.vendor
    c.sender = f"news@{v.domain}"
    subject = c.r.choice((f"{v.name} news - {c.month(0)} edition", f"What's new at {v.name}", "Holiday opening hours"))
    text = c.r.choice((f"This month: our new warehouse in Dayton is open, and we have extended our {v.service} range.",
                       f"Our offices will be closed on {c.fdate(c.day(c.r.between(7, 20)))}. Deliveries resume the next business day.",
                       f"Meet our new sustainability programme and see the latest additions to our {v.service} range."))
    return subject, _body(f"Hello from {v.name}!", text, f"Unsubscribe: https://{v.domain}/unsubscribe")


def _ot_internal(c: _Mail) -> tuple[str, str]:
    name, role = c.from_colleague()
    subject, text = c.r.choice((
        ("Month-end close schedule", "Hi all, the month-end close meeting moves to Thursday 10:00. Please have the accruals list ready."),
        ("Expense report cutoff", "Quick question: what is the cutoff for expense reports this month? A few of my team are travelling."),
        ("Notes from AP sync", "Notes from today's sync: 1) new approval matrix goes live next week, 2) vendor master clean-up continues, 3) next sync in two weeks."),
        ("Cost centre for the new site", "Which cost centre should the new site's utilities go to? Finance said to ask you."),
    ))
    return subject, _body(text, f"Thanks,\n{name.split(' ')[0]}\n{role}, {c.ed.buyer.name}")


def _ot_ooo(c: _Mail) -> tuple[str, str]:
    name, _ = c.from_vendor("billing")
    subject = c.r.choice(("Automatic reply: Out of office", "Out of office", "Auto-reply: away until next week"))
    text = (f"I am out of the office until {c.fdate(c.day(c.r.between(3, 12)))} with limited access to email. "
            f"For urgent matters please contact {c.person()}.")
    return subject, _body(text, name)


_OTHER: tuple[Template, ...] = (_ot_remittance, _ot_w9, _ot_onboarding, _ot_newsletter, _ot_internal, _ot_ooo)

_EASY: dict[str, tuple[Template, ...]] = {
    "invoice": _INVOICE, "statement": _STATEMENT, "dunning_notice": _DUNNING, "po_response": _PO, "other": _OTHER,
}

# --------------------------------------------------------------------------------------
# hard cases


def _hd_dunning_quotes_invoice(c: _Mail) -> tuple[str, str]:
    """A chaser that repeats the original invoice number, often in an 'RE: Invoice ...' subject."""
    inv = c.inv()
    days = c.r.choice((30, 30, 45, 60))
    amount = c.fmt(c.money(12000, 500000))
    name, title = c.from_vendor("credit")
    variant = c.r.below(3)
    if variant == 0:
        subject = c.r.choice((f"Invoice {inv} - {days} days overdue", f"Invoice {inv} ({amount})"))
        text = f"Invoice {inv} for {amount} is now {days} days overdue. Please let us know when payment will be made."
        return subject, _body(c.greeting(), text, c.signoff(name, title))
    original = (f"> From: billing@{c.vendor.domain}\n> Sent: {c.fdate(c.day(-days - 30))}\n> Subject: Invoice {inv}\n>\n"
                f"> Please find attached invoice {inv} for {amount}. Payment terms: net 30.")
    subject = f"RE: Invoice {inv}"
    if variant == 1:
        text = f"Hello again, invoice {inv} (below) is now {days} days overdue. Could you check on its status?"
    else:
        text = (f"Following up on invoice {inv} below: it was due on {c.fdate(c.day(-days))} and we have not received "
                f"payment yet. Could you let us know when we can expect it?")
    return subject, _body(c.greeting(), text, c.signoff(name, title), original)


def _hd_statement_with_remittance(c: _Mail) -> tuple[str, str]:
    """A statement that ends in a remittance slip, sometimes with an ageing summary."""
    acct = c.account()
    table, balance = _ledger(c, c.r.between(2, 5))
    name, title = c.from_vendor("billing")
    subject = c.r.choice((f"Statement of account {acct}", f"{c.month()} statement and remittance slip", f"Account {acct} - statement"))
    ageing = None
    if c.r.chance(1, 2):
        parts = [balance * Decimal(p) / 100 for p in (50, 25, 15)]
        parts.append(balance - sum(parts, Decimal("0")))
        ageing = _table([["Current", "1-30 days overdue", "31-60 days overdue", "Over 60 days overdue"],
                         [c.fmt(p.quantize(Decimal("0.01"))) for p in parts]])
    slip = (f"-------------------- REMITTANCE SLIP --------------------\n"
            f"Please remit to: {c.vendor.name}, Lockbox {c.r.between(1000, 9999)}, Dept. {c.r.between(10, 99)}\n"
            f"Customer account: {acct}\nAmount due: {c.fmt(balance)}\nAmount enclosed: ____________")
    return subject, _body(c.greeting(), f"Your statement of account {acct} is shown below.", table, ageing,
                          "Please return the slip below with your payment.", c.signoff(name, title), slip)


def _hd_po_price_change(c: _Mail) -> tuple[str, str]:
    """A PO reply whose main point is a price change; it talks about invoices and amounts too."""
    po = c.po()
    desc, unit, qty = c.item()
    new = (unit * Decimal(c.r.choice(("1.06", "1.08", "1.12", "1.15")))).quantize(Decimal("0.01"))
    name, title = c.from_vendor("orders")
    subject = c.r.choice((f"RE: {po} - price change", f"Price update for {po}", f"{po}: revised pricing"))
    text = (f"Thank you for {po}. Before we ship, please note that the price of the {desc} has changed from "
            f"{c.fmt(unit)} to {c.fmt(new)} per unit, so the order total becomes {c.fmt(new * qty)}. "
            f"The invoice will be issued at the new price once the goods ship.")
    extra = c.r.choice(("Please confirm that you accept the revised price, or send an amended PO.",
                        f"As a reminder, our price list changed on {c.fdate(c.day(-c.r.between(5, 20)))} for all open orders.",
                        "Let us know if you would like to proceed at the new price."))
    return subject, _body(c.greeting(), text, extra, c.signoff(name, title))


def _hd_remittance_mentions_invoices(c: _Mail) -> tuple[str, str]:
    """A payment advice that lists the invoices it settles: nothing for AP to book or pay."""
    invs = [c.inv() for _ in range(c.r.between(2, 4))]
    amounts = [c.money(9000, 300000) for _ in invs]
    customer = c.r.choice(("Fairmont Outdoor Ltd", "Pellham Group", "Riverside Wholesale", "Corbel Homes"))
    c.sender = f"{c.r.choice(('payments', 'ap', 'treasury'))}@{customer.split(' ')[0].lower()}.example"
    table = _table([["Invoice", "Amount paid"], *[[i, c.fmt(a)] for i, a in zip(invs, amounts)]])
    subject = c.r.choice(("Remittance advice", f"Payment advice - {customer}", f"Payment of invoices {invs[0]}, {invs[1]}"))
    text = c.r.choice((f"We have paid the following invoices today by bank transfer, total {c.fmt(sum(amounts, Decimal('0')))}:",
                       f"Our payment run on {c.fdate(c.day(-1))} settled the invoices listed below:"))
    return subject, _body("Dear supplier,", text, table, f"Accounts Payable\n{customer}")


def _hd_misleading_subject_invoice(c: _Mail) -> tuple[str, str]:
    """An invoice whose subject line calls it something else (law firms' 'statement for services')."""
    inv = c.inv()
    amount = c.fmt(c.money(40000, 1500000))
    name, title = c.from_vendor("billing")
    subject = c.r.choice((f"Statement for services rendered - {c.month()}", f"{c.month()} statement of fees",
                          f"Account update from {c.vendor.name}", f"Documents for {c.ed.buyer.name}"))
    text = (f"Please find enclosed our invoice {inv} for {c.vendor.service} provided in {c.month()}, "
            f"totalling {amount}. Payment is due within 30 days of the invoice date.")
    return subject, _body(c.greeting(), text, c.signoff(name, title))


def _hd_bank_details_change(c: _Mail) -> tuple[str, str]:
    """A change of bank details (label other) that talks about future payments of invoices."""
    name, title = c.from_vendor("billing")
    subject = c.r.choice(("Change of bank details", f"{c.vendor.name} - new bank account", "Updated remittance details"))
    text = c.r.choice((f"Please note that {c.vendor.name} has changed banks. Kindly update your vendor master so that future invoice payments go to the new account; a signed letter on our letterhead is attached.",
                       f"Our bank account details have changed effective {c.fdate(c.day(7))}. Please confirm once your records are updated."))
    return subject, _body(c.greeting(), text, c.signoff(name, title))


def _hd_internal_invoice_question(c: _Mail) -> tuple[str, str]:
    """A colleague asks about an invoice: an internal question, not an invoice."""
    name, role = c.from_colleague()
    v = c.vendor.name
    subject, text = c.r.choice((
        (f"Question about the {v} invoice", f"Hi, has the {v} invoice from last month been approved yet? They called me about it."),
        (f"{v} payment?", f"Do you know if we have paid {v} yet? Their account manager asked me this morning."),
        ("Approval routing", f"Who approves invoices from {v} now that the budget owner changed? I want to route the next one correctly."),
    ))
    return subject, _body(text, f"Thanks,\n{name.split(' ')[0]}\n{role}, {c.ed.buyer.name}")


def _hd_credit_note(c: _Mail) -> tuple[str, str]:
    """A credit note: to be booked like an invoice, though it reduces what we owe."""
    inv = c.inv()
    cn = f"CN-{c.r.between(10000, 99999)}"
    name, title = c.from_vendor("billing")
    subject = c.r.choice((f"Credit note {cn}", f"Credit memo {cn} against {inv}", f"{c.vendor.name} credit {cn}"))
    why = c.r.choice(("returned goods", "a pricing error", "damaged items on delivery", "a duplicate charge"))
    text = (f"Please find attached credit note {cn} for {c.fmt(c.money(3000, 120000))} against invoice {inv} "
            f"for {why}. Please apply it to your next payment.")
    return subject, _body(c.greeting(), text, c.signoff(name, title))


_HARD: dict[str, tuple[str, Template]] = {
    "dunning_quotes_invoice": ("dunning_notice", _hd_dunning_quotes_invoice),
    "statement_with_remittance": ("statement", _hd_statement_with_remittance),
    "po_price_change": ("po_response", _hd_po_price_change),
    "remittance_mentions_invoices": ("other", _hd_remittance_mentions_invoices),
    "misleading_subject_invoice": ("invoice", _hd_misleading_subject_invoice),
    "bank_details_change": ("other", _hd_bank_details_change),
    "internal_invoice_question": ("other", _hd_internal_invoice_question),
    "credit_note": ("invoice", _hd_credit_note),
}

_FORWARD_NOTES: dict[str, tuple[str, ...]] = {
    "invoice": ("This came to me directly - can you process it?", "Please book this one, goods were received.",
                "Can you get this paid before it becomes overdue? They are a key supplier."),
    "statement": ("FYI, this landed in my inbox.", "Can you reconcile this against what we have?"),
    "dunning_notice": ("They are chasing me for this. Can you check?", "Not sure why this came to me, please handle."),
    "po_response": ("Supplier replied to me instead of purchasing, forwarding for your records.", "FYI - please match this to the invoice when it arrives."),
    "other": ("Not sure who should handle this, forwarding to you.", "Can you deal with this? They need it before they send the next invoice."),
}


def _hd_forwarded(c: _Mail, label: str) -> tuple[str, str]:
    """A colleague forwards vendor mail; the label is the forwarded content's."""
    sent = _dt.datetime(c.when.year, c.when.month, c.when.day) + _dt.timedelta(minutes=c.r.between(7 * 60, 18 * 60))
    sent -= _dt.timedelta(days=c.r.between(0, 3) + (1 if sent >= c.when else 0))
    inner = _Mail(c.r.child("inner"), c.ed, c.vendor, sent)
    # Colleagues forward outside mail; an internal note forwarded internally is not the case studied.
    subject, body = c.r.choice([t for t in _EASY[label] if t is not _ot_internal])(inner)
    name, _ = c.from_colleague()
    colleague = c.sender.split("<")[1].rstrip(">")
    when = inner.when
    header = (f"---------- Forwarded message ---------\nFrom: {inner.sender}\n"
              f"Date: {_MONTHS[when.month - 1][:3]} {when.day}, {when.year} at {when.hour:02d}:{when.minute:02d}\n"
              f"Subject: {subject}\nTo: {colleague}")
    prefix = c.r.choice(("FW: ", "Fwd: ", "FW: "))
    return prefix + subject, _body(c.r.choice(_FORWARD_NOTES[label]), name.split(" ")[0], header + "\n\n" + body)


# --------------------------------------------------------------------------------------
# batch plan


def _plan(r: Stream, index: int, size: int) -> list[tuple[str, str | None]]:
    """(label, hard kind or None) for every slot, in arrival order."""
    n_hard = min(size, r.between(3, 6))
    kinds = [REQUIRED_HARD_KINDS[index % len(REQUIRED_HARD_KINDS)]]
    pool = [(k, 3) for k in REQUIRED_HARD_KINDS] + [(k, 2) for k in EXTRA_HARD_KINDS]
    while len(kinds) < n_hard:
        kind = r.weighted(pool)
        if kinds.count(kind) < 2:
            kinds.append(kind)
    slots: list[tuple[str, str | None]] = []
    for kind in kinds:
        if kind == "forwarded_thread":
            slots.append((r.weighted([("invoice", 4), ("statement", 2), ("dunning_notice", 2), ("po_response", 2), ("other", 1)]), kind))
        else:
            slots.append((_HARD[kind][0], kind))
    weights = [("invoice", r.between(5, 9)), ("statement", r.between(1, 4)), ("dunning_notice", r.between(1, 4)),
               ("po_response", r.between(2, 5)), ("other", r.between(2, 5))]
    if r.chance(17, 20):  # most batches show every label
        present = [label for label, _ in slots]
        for label in LABELS:
            if label not in present and len(slots) < size:
                slots.append((label, None))
    while len(slots) < size:
        slots.append((r.weighted(weights), None))
    return r.shuffled(slots)


def _times(r: Stream, day: _dt.date, n: int) -> list[_dt.datetime]:
    minutes = sorted(r.between(6 * 60, 19 * 60 - 1) for _ in range(n))
    base = _dt.datetime(day.year, day.month, day.day)
    return [base + _dt.timedelta(minutes=m) for m in minutes]


def _business_day(start: _dt.date, index: int) -> _dt.date:
    return start + _dt.timedelta(days=7 * (index // 5) + index % 5)


def generate(seed: str, index: int, params: Mapping[str, Any]) -> Item:
    """Batch `index` (0-based) of the edition drawn from `seed`."""
    size = int(params.get("batch_size", DEFAULT_BATCH_SIZE)) if params else DEFAULT_BATCH_SIZE
    ed = _edition(seed)
    batch = Stream(seed, "triage.ap-inbox", "batch", index)
    plan = _plan(batch.child("plan"), index, size)
    times = _times(batch.child("times"), _business_day(ed.start, index), len(plan))
    tag = f"B{index + 1:02d}"
    emails: list[dict[str, str]] = []
    labels: dict[str, str] = {}
    hard: dict[str, str] = {}
    for slot, ((label, kind), when) in enumerate(zip(plan, times)):
        r = batch.child("email", slot)
        c = _Mail(r, ed, r.choice(_VENDORS), when)
        if kind == "forwarded_thread":
            subject, body = _hd_forwarded(c, label)
        elif kind is not None:
            subject, body = _HARD[kind][1](c)
        else:
            subject, body = r.choice(_EASY[label])(c)
        email_id = f"{tag}-M{slot + 1:02d}"
        to = ed.mailbox if r.chance(4, 5) else f"Accounts Payable <{ed.mailbox}>"
        emails.append({"id": email_id, "from": c.sender, "to": to,
                       "date": f"{when.year:04d}-{when.month:02d}-{when.day:02d} {when.hour:02d}:{when.minute:02d}", "subject": subject, "body": body})
        labels[email_id] = label
        if kind is not None:
            hard[email_id] = kind
    context = {"batch_id": f"{ed.buyer.domain.split('.')[0].upper()}-AP-{tag}", "mailbox": ed.mailbox, "emails": emails}
    return Item(index, f"ap-batch-{index + 1:02d}", context, {"labels": labels, "hard_cases": hard})
