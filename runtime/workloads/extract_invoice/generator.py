"""Seeded generator of synthetic invoice PDFs (LedgerRate §4.1, extract.invoice.v1).

Why it is built this way:

- Layouts must differ in *structure*, not in colour, or an extractor tuned to one invoice
  would pass them all. Four families, each with its own vendors, conventions and geometry:
  - `classic` (US, Letter): vendor top left, "INVOICE" and a label/value block top right
    ("Invoice No.:", "Invoice Date:", "Due Date:", "Terms:"), bill-to block, then the table
    DESCRIPTION | QTY | UNIT PRICE | AMOUNT; dates "November 3, 2026" or "11/03/2026";
    amounts "1,234.56"; carried-forward rows at page breaks.
  - `european` (EU, A4): vendor block top right, window-envelope sender line, a horizontal
    metadata row whose labels sit above their values ("Ref | Date | Due date | ..."),
    table Pos. | Description | Qty | Unit | Unit price | Amount; dates "03.11.2026";
    amounts "1.234,56 €" with a decimal comma; carry-over rows.
  - `uk` (UK, A4, Times): "Ref:" and "Tax point:" instead of an invoice-number label, the
    quantity *first* and an item-code column, negative amounts in parentheses, the due
    date only in a closing sentence; dates "3 Nov 2026" or day-first "03/11/2026".
  - `modern` (SaaS, A4): the table directly under the vendor, and the invoice details
    (number, ISO dates, currency) in a block *below* the totals; amounts grouped with an
    apostrophe (CHF), a space (CAD) or not at all (USD).
- The planted edge cases of the seed (multi-page, credit note, foreign currency, discount
  lines) each appear at least once in every edition of 15: an edition plan, drawn from the
  seed, assigns them to slots, and every family appears at least three times.
- Every invoice is internally consistent by construction: line amount = quantity × unit
  price (0.01, ROUND_HALF_UP), subtotal = Σ line amounts (discount rows are negative
  lines), tax = subtotal × rate (0.01, ROUND_HALF_UP), total = subtotal + tax.
- PDFs are byte-identical for a seed: reportlab's invariant mode, uncompressed streams,
  the standard fonts only, dates derived from the seed (never the clock). The text a
  text-only model receives is extracted from those bytes (checks.pdf), so it is exactly
  what the PDF says.
- All randomness comes from `Stream(seed, ...)` sub-streams named by what they decide.
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import io
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any, Mapping

from reportlab.lib.pagesizes import A4, LETTER
from reportlab.pdfbase.pdfmetrics import stringWidth
from reportlab.pdfgen.canvas import Canvas

from lrc.runtime.checks.dates import MONTHS, iso
from lrc.runtime.checks.money import format_amount, number_text, plain, quantize
from lrc.runtime.checks.pdf import extract_pages, new_canvas
from lrc.runtime.checks.rng import Stream
from lrc.runtime.workloads.base import Item

COMPONENT_ID = "extract.invoice.generator"
COMPONENT_VERSION = 3

FAMILIES: tuple[str, ...] = ("classic", "european", "uk", "modern")
EDGE_CASES: tuple[str, ...] = ("multi_page", "credit_note", "foreign_currency", "discount_lines")
EDITION_SIZE = 15
"""Items per edition plan; every block of 15 consecutive items holds every edge case."""

PDF_NAME = "invoice.pdf"

# --------------------------------------------------------------------------------------
# Invented parties. No real company is meant; e-mail domains are under .example.


@dataclass(frozen=True)
class _Good:
    description: str
    lo: int  # unit price range, cents
    hi: int
    qty: tuple[int, int]  # quantity range (in half units when hourly)
    unit: str
    code: str
    hourly: bool = False


@dataclass(frozen=True)
class _Vendor:
    family: str
    name: str
    address: tuple[str, ...]
    contact: str
    number: str  # invoice number format: {y} year, {nK} K random digits
    credit_number: str
    currency: str
    tax_label: str
    tax_rates: tuple[str, ...]
    date_style: str
    terms: tuple[int, ...]
    line_ref: str  # suffix that makes repeated lines distinct, e.g. "BOL {n6}"
    goods: tuple[_Good, ...]
    tax_id: str = ""
    tagline: str = ""


def _g(description: str, lo: int, hi: int, qty: tuple[int, int], unit: str, code: str, hourly: bool = False) -> _Good:
    return _Good(description, lo, hi, qty, unit, code, hourly)


_VENDORS: tuple[_Vendor, ...] = (
    # classic: US suppliers -------------------------------------------------------------
    _Vendor("classic", "Acme Tools Inc.", ("4410 Industrial Parkway", "Dayton, OH 45414"), "(937) 555-0142 · billing@acme-tools.example",
            "INV-{y}-{n4}", "CM-{n5}", "USD", "Sales Tax", ("7.25", "7.5"), "long", (30, 45), "Job {n4}",
            (_g("Cordless drill kit 20V", 18900, 32900, (1, 6), "ea", "ACT-2201"),
             _g("Drill bit set, 29 pcs", 3900, 7900, (2, 12), "ea", "ACT-0929"),
             _g("Torque wrench 1/2 in.", 9900, 21900, (1, 4), "ea", "ACT-1150"),
             _g("Tool calibration service", 4500, 8500, (2, 20), "ea", "SVC-CAL"),
             _g("Repair labor", 8500, 12500, (2, 16), "hr", "SVC-LAB", True))),
    _Vendor("classic", "Brightpaper Supply Co.", ("77 Commerce Drive", "Columbus, OH 43215"), "(614) 555-0187 · ar@brightpaper.example",
            "BP{n6}", "BPC{n5}", "USD", "Sales Tax", ("7.5", "8"), "us_numeric", (30,), "PO line {n3}",
            (_g("Copy paper, case of 10 reams", 4200, 6900, (5, 60), "cs", "CP-1010"),
             _g("Toner cartridge TN-450", 8900, 15900, (2, 24), "ea", "TN-450"),
             _g("Archive boxes, pack of 25", 3100, 5600, (2, 30), "pk", "AB-25"),
             _g("Sticky notes 3x3 in., 24 pads", 1500, 2900, (4, 40), "pk", "SN-33"),
             _g("Desk organizer, mesh", 1900, 3900, (2, 20), "ea", "DO-MS"))),
    _Vendor("classic", "Kestrel Freight LLC", ("2900 Airways Blvd", "Memphis, TN 38116"), "(901) 555-0110 · invoices@kestrel-freight.example",
            "KF-{n5}", "KFC-{n5}", "USD", "Sales Tax", ("0",), "us_numeric", (15, 30), "BOL {n6}",
            (_g("Full truckload, lane 12", 140000, 310000, (1, 3), "load", "FTL-12"),
             _g("LTL pallet shipment", 18000, 46000, (1, 8), "plt", "LTL"),
             _g("Fuel surcharge", 4000, 19000, (1, 3), "ea", "FSC"),
             _g("Liftgate delivery", 7500, 12500, (1, 4), "ea", "LGD"),
             _g("Detention time", 6500, 9500, (2, 8), "hr", "DET", True))),
    _Vendor("classic", "Silverline Electrical Services", ("1650 S Memorial Dr", "Tulsa, OK 74112"), "(918) 555-0133 · billing@silverline-elec.example",
            "INV{n6}", "CR{n6}", "USD", "Sales Tax", ("8.517", "4.5"), "long", (30,), "WO {n5}",
            (_g("LED panel 2x2 ft", 5400, 9800, (4, 40), "ea", "LED-22"),
             _g("Cable tray 10 ft", 3300, 6100, (2, 30), "ea", "CT-10"),
             _g("Circuit breaker 20A", 1900, 4200, (2, 24), "ea", "CB-20"),
             _g("Electrician labor", 9500, 13500, (2, 24), "hr", "LAB-E", True))),
    _Vendor("classic", "Granite Peak Equipment Rental", ("880 W 56th Ave", "Denver, CO 80221"), "(303) 555-0164 · ar@granitepeak-rentals.example",
            "GP-{n6}", "GPC-{n5}", "USD", "Sales Tax", ("8.81", "4.81"), "long", (15, 30), "Contract {n5}",
            (_g("Forklift rental, weekly", 42000, 76000, (1, 4), "wk", "FL-W"),
             _g("Scissor lift rental, daily", 18000, 31000, (1, 10), "day", "SL-D"),
             _g("Delivery and pickup", 15000, 28000, (1, 2), "ea", "DEL"),
             _g("Damage waiver", 3500, 7500, (1, 4), "ea", "DW"))),
    # european: EU suppliers billing the buyer's European subsidiary --------------------
    _Vendor("european", "Nordkap Industrietechnik GmbH", ("Hafenstraße 12", "20457 Hamburg", "Germany"), "buchhaltung@nordkap-technik.example",
            "RE-{y}-{n5}", "GS-{y}-{n5}", "EUR", "VAT", ("19",), "dotted", (14, 30), "Lot {n4}",
            (_g("Hydraulic coupling DN20", 8400, 19800, (2, 40), "pcs", "HK-20"),
             _g("Pressure valve DN25", 21000, 46000, (1, 12), "pcs", "DV-25"),
             _g("Sealing kit, Viton", 2400, 5900, (4, 60), "set", "DS-V"),
             _g("Assembly labour", 6800, 9800, (2, 24), "h", "MON", True)), tax_id="DE 281 447 913"),
    _Vendor("european", "Van Leeuwen Verpakking B.V.", ("Waalhaven Z.z. 40", "3089 JH Rotterdam", "Netherlands"), "debiteuren@vanleeuwen-verpakking.example",
            "VL{y}{n5}", "VLC{y}{n4}", "EUR", "VAT", ("21",), "dotted", (30,), "Order {n5}",
            (_g("Cardboard trays, pallet", 38000, 91000, (1, 6), "plt", "CT-P"),
             _g("Shrink film 25 µm, roll", 5400, 9800, (4, 48), "roll", "SF-25"),
             _g("Corner boards 35x35 mm", 900, 2400, (20, 400), "pcs", "CB-35"),
             _g("Strapping band PET 12 mm", 3100, 6200, (2, 30), "roll", "PET-12")), tax_id="NL 8201.44.712.B01"),
    _Vendor("european", "Atelier Rousseau SARL", ("18 rue de la République", "69002 Lyon", "France"), "compta@atelier-rousseau.example",
            "F{y}-{n4}", "AV{y}-{n4}", "EUR", "VAT", ("20",), "dotted", (30, 45), "Réf. {n4}",
            (_g("Retail display stand", 34000, 79000, (1, 8), "pcs", "PLV-1"),
             _g("Shelf wobblers, pack of 200", 6800, 14900, (1, 10), "pk", "STP-200"),
             _g("Design work", 7500, 11000, (2, 30), "h", "DES", True),
             _g("Window graphics, per m²", 4200, 8800, (4, 40), "m²", "VIT")), tax_id="FR 44 812 330 719"),
    _Vendor("european", "Fratelli Bassani S.r.l.", ("Via del Lavoro 27", "40127 Bologna", "Italy"), "amministrazione@bassani.example",
            "{n4}/{y}", "NC {n3}/{y}", "EUR", "VAT", ("22",), "dotted", (30, 60), "DDT {n4}",
            (_g("Stainless conveyor belt 2 m", 78000, 142000, (1, 4), "pcs", "NT-2M"),
             _g("Gear motor 0,75 kW", 41000, 69000, (1, 6), "pcs", "MR-075"),
             _g("Roller set, 10 pcs", 9800, 18900, (1, 12), "set", "RL-10"),
             _g("Installation", 6500, 9000, (4, 32), "h", "INST", True)), tax_id="IT 03317741206"),
    # uk: UK suppliers billing the buyer's UK branch ------------------------------------
    _Vendor("uk", "Hollis Print Works Ltd", ("Unit 4, Kirkstall Road", "Leeds LS4 2AZ"), "Tel 0113 496 0721 · accounts@hollisprint.example",
            "SI-{n6}", "SC-{n6}", "GBP", "VAT", ("20",), "d_mon", (30,), "Job {n4}",
            (_g("Brochures A4, run of 1,000", 38000, 89000, (1, 6), "run", "BR-A4"),
             _g("Business cards, box of 500", 2900, 6900, (2, 20), "box", "BC-500"),
             _g("Pull-up banner 850 mm", 7900, 14900, (1, 8), "ea", "PB-850"),
             _g("Artwork and proofing", 4500, 6500, (2, 12), "hr", "ART", True)), tax_id="GB 318 4472 09"),
    _Vendor("uk", "Thornbury Facilities Ltd", ("9 Temple Gate", "Bristol BS1 6PL"), "Tel 0117 496 0388 · credit.control@thornbury-fm.example",
            "TF{n5}", "TFC{n5}", "GBP", "VAT", ("20",), "uk_numeric", (14, 30), "Site {n3}",
            (_g("Office cleaning, monthly", 120000, 260000, (1, 3), "mth", "CLN-M"),
             _g("Window cleaning, exterior", 28000, 64000, (1, 4), "visit", "WIN-X"),
             _g("Washroom consumables", 6500, 18000, (1, 12), "pack", "WC-CON"),
             _g("Reactive call-out", 7500, 9500, (1, 6), "hr", "CALL", True)), tax_id="GB 772 1093 55"),
    _Vendor("uk", "Kingfisher Catering Supplies Ltd", ("Fort Dunlop, Fort Parkway", "Birmingham B24 9FD"), "Tel 0121 496 0954 · sales.ledger@kingfisher-cs.example",
            "KCS-{n5}", "KCN-{n5}", "GBP", "VAT", ("20",), "uk_numeric", (30,), "Delivery {n5}",
            (_g("Combi oven service", 18000, 32000, (1, 3), "ea", "SRV-CO"),
             _g("Gastronorm pans 1/1, set of 6", 8900, 15900, (1, 10), "set", "GN-11"),
             _g("Chef knives, set of 5", 11900, 22900, (1, 6), "set", "KN-5"),
             _g("Food containers 5 l, case", 2400, 4800, (2, 30), "case", "FC-5")), tax_id="GB 190 5521 38"),
    # modern: software and services vendors -------------------------------------------
    _Vendor("modern", "Lattice Cloud AG", ("Baarerstrasse 21, 6300 Zug, Switzerland",), "billing@latticecloud.example",
            "{y}-{n4}", "CM-{y}-{n3}", "CHF", "VAT", ("8.1",), "iso", (30,), "project {n4}",
            (_g("Platform subscription, Pro tier", 240000, 520000, (1, 2), "mo", "PLT-PRO"),
             _g("Additional seats", 4500, 6900, (5, 60), "seat", "SEAT"),
             _g("Premium support, monthly", 90000, 180000, (1, 1), "mo", "SUP-P"),
             _g("Data egress, per TB", 8500, 12500, (1, 40), "TB", "EGR")), tax_id="CHE-412.883.917 MWST", tagline="Data platform for operations teams"),
    _Vendor("modern", "Northbeam Analytics Inc.", ("600 Congress Ave, Austin, TX 78701, USA",), "ar@northbeam.example",
            "NBA-{n5}", "NBC-{n4}", "USD", "Tax", ("0",), "iso", (15, 30), "workspace {n3}",
            (_g("Analytics seats, annual", 84000, 129000, (2, 25), "seat", "AN-SEAT"),
             _g("Onboarding package", 150000, 350000, (1, 1), "ea", "ONB"),
             _g("API calls, per 10k", 900, 1900, (10, 300), "10k", "API"),
             _g("Solutions engineering", 17500, 22500, (2, 40), "hr", "SE", True)), tax_id="EIN 84-2219031", tagline="Product analytics"),
    _Vendor("modern", "Maplewire Software Ltd.", ("1055 W Georgia St, Vancouver, BC V6E 3P3, Canada",), "accounts@maplewire.example",
            "MW-{y}-{n4}", "MWC-{n4}", "CAD", "GST", ("5",), "iso", (30,), "site {n3}",
            (_g("Team licence, monthly", 49000, 99000, (1, 6), "mo", "TL-M"),
             _g("Implementation services", 16000, 21000, (4, 40), "hr", "IMP", True),
             _g("Training workshop, half day", 120000, 180000, (1, 2), "ea", "TRN"),
             _g("Storage add-on 1 TB", 4500, 8000, (1, 20), "TB", "STO")), tax_id="GST/HST 781442019 RT0001", tagline="Field service scheduling"),
)

_BY_FAMILY: dict[str, tuple[_Vendor, ...]] = {f: tuple(v for v in _VENDORS if v.family == f) for f in FAMILIES}


@dataclass(frozen=True)
class _Buyer:
    hq: tuple[str, ...]
    eu: tuple[str, ...]
    uk: tuple[str, ...]
    account: str


_BUYERS: tuple[_Buyer, ...] = (
    _Buyer(("Harborline Foods Inc.", "1200 Wharf Street", "Baltimore, MD 21231", "USA"),
           ("Harborline Foods Europe B.V.", "Wilhelminakade 91", "3072 AP Rotterdam", "Netherlands"),
           ("Harborline Foods UK Ltd", "14 Dock Road", "Liverpool L3 4AN", "United Kingdom"), "HARB01"),
    _Buyer(("Copperleaf Logistics Corp.", "55 Riverside Plaza", "Chicago, IL 60606", "USA"),
           ("Copperleaf Logistics GmbH", "Speicherstraße 8", "60327 Frankfurt am Main", "Germany"),
           ("Copperleaf Logistics Ltd", "3 Kings Wharf", "Southampton SO14 3JE", "United Kingdom"), "COPP02"),
    _Buyer(("Meridian Parts Co.", "910 Foundry Lane", "Grand Rapids, MI 49503", "USA"),
           ("Meridian Parts Europe S.A.S.", "5 quai Perrache", "69002 Lyon", "France"),
           ("Meridian Parts UK Ltd", "Unit 12, Trafford Park", "Manchester M17 1AB", "United Kingdom"), "MERI03"),
    _Buyer(("Tallgrass Hospitality Group", "2300 Prairie Avenue", "Omaha, NE 68102", "USA"),
           ("Tallgrass Hospitality Europe B.V.", "Herengracht 420", "1017 BZ Amsterdam", "Netherlands"),
           ("Tallgrass Hotels UK Ltd", "21 Queen Street", "Edinburgh EH2 1JX", "United Kingdom"), "TALL04"),
)

_REASONS = ("returned", "damaged in transit", "price correction", "short delivery")

# --------------------------------------------------------------------------------------
# The invoice as data


@dataclass(frozen=True)
class _Line:
    description: str
    code: str
    unit: str
    quantity: Decimal
    unit_price: Decimal
    amount: Decimal
    discount: bool = False


@dataclass
class _Invoice:
    family: str
    vendor: _Vendor
    buyer: tuple[str, ...]
    account: str
    number: str
    credit: bool
    original: str | None
    po: str
    issue: _dt.date
    due: _dt.date | None
    terms: int | None
    rate: Decimal
    lines: list[_Line]
    subtotal: Decimal = Decimal("0.00")
    tax: Decimal = Decimal("0.00")
    total: Decimal = Decimal("0.00")
    bank: str = ""
    bic: str = ""
    regno: str = ""
    edges: tuple[str, ...] = field(default_factory=tuple)


@dataclass(frozen=True)
class _Edition:
    buyer: _Buyer
    start: _dt.date


def _edition(seed: str) -> _Edition:
    r = Stream(seed, "extract.invoice", "edition")
    return _Edition(r.choice(_BUYERS), _dt.date(2025, 1, 6) + _dt.timedelta(days=7 * r.below(90)))


def _plan(seed: str, block: int) -> list[tuple[str, frozenset[str]]]:
    """(family, planted edge cases) for each of the 15 slots of one block of items."""
    r = Stream(seed, "extract.invoice", "plan", block)
    families = r.shuffled(list(FAMILIES) * 4)[:EDITION_SIZE]  # each family >= 3 times
    order = r.shuffled(list(range(EDITION_SIZE)))
    edges: list[set[str]] = [set() for _ in range(EDITION_SIZE)]
    edges[order[0]].add("credit_note")
    edges[order[1]].add("multi_page")
    edges[order[2]].add("discount_lines")
    for slot in order[3:]:
        roll = r.below(24)
        if roll < 6:
            edges[slot].add("discount_lines")
        elif roll < 8:
            edges[slot].add("multi_page")
        elif roll < 9:
            edges[slot].add("credit_note")
    # The seed's foreign-currency case (symbol, ISO code and decimal comma) is the european
    # family, which every block holds at least three times; non-USD invoices are flagged below.
    return [(families[i], frozenset(edges[i])) for i in range(EDITION_SIZE)]


def _digits(r: Stream, fmt: str, year: int) -> str:
    out = fmt.replace("{y}", str(year))
    for width in (2, 3, 4, 5, 6):
        tag = "{n%d}" % width
        while tag in out:
            out = out.replace(tag, str(r.between(10 ** (width - 1), 10**width - 1)), 1)
    return out


def _make_lines(r: Stream, v: _Vendor, n: int, credit: bool, year: int) -> list[_Line]:
    order = r.shuffled(v.goods)
    lines: list[_Line] = []
    refs: set[str] = set()
    for i in range(n):
        good = order[i] if n <= len(order) else order[r.below(len(order))]
        if credit:
            description = f"{good.description} - {r.choice(_REASONS)}"
        elif n > 4 or r.chance(1, 3):
            ref = _digits(r, v.line_ref, year)
            while ref in refs:
                ref = _digits(r, v.line_ref, year)
            refs.add(ref)
            description = f"{good.description}, {ref}"
        else:
            description = good.description
        lo, hi = good.qty
        qty = Decimal(r.between(2 * lo, 2 * hi)) / 2 if good.hourly else Decimal(r.between(lo, hi))
        if credit:
            qty = -max(Decimal(1), (qty / 2).to_integral_value())
        unit_price = r.money(good.lo, good.hi)
        lines.append(_Line(description, good.code, good.unit, qty, unit_price, quantize(qty * unit_price)))
    return lines


_DISCOUNT_TEXT = {
    "classic": "Volume discount {p}%",
    "european": "Discount {p} %",
    "uk": "Less: trade discount {p}%",
    "modern": "Promotional credit {p}%",
}


def _compose(seed: str, index: int, ed: _Edition, family: str, edges: frozenset[str]) -> _Invoice:
    r = Stream(seed, "extract.invoice", "invoice", index)
    v = r.choice(_BY_FAMILY[family])
    credit = "credit_note" in edges
    issue = ed.start + _dt.timedelta(days=3 * index + r.below(3))
    terms = None if credit else r.choice(v.terms)
    due = None if terms is None else issue + _dt.timedelta(days=terms)
    buyer = {"classic": ed.buyer.hq, "modern": ed.buyer.hq, "european": ed.buyer.eu, "uk": ed.buyer.uk}[family]
    number = _digits(r, v.credit_number if credit else v.number, issue.year)
    original = _digits(r, v.number, issue.year) if credit else None
    po = f"PO-{r.between(100000, 999999)}"
    geometry = _FAMILY[family].geometry
    if "multi_page" in edges:
        n = geometry.capacity_first() + r.between(3, 14)
    elif credit:
        n = r.between(1, 3)
    else:
        n = r.between(2, 7)
    lines = _make_lines(r.child("lines"), v, n, credit, issue.year)
    if "discount_lines" in edges:
        pct = r.choice((2, 3, 5, 10))
        goods = sum((ln.amount for ln in lines), Decimal("0"))
        off = -quantize(goods * pct / 100)
        lines.insert(len(lines) if r.chance(2, 3) else len(lines) - 1,
                     _Line(_DISCOUNT_TEXT[family].format(p=pct), "DISC", "", Decimal(1), off, off, discount=True))
    inv = _Invoice(family, v, buyer, ed.buyer.account, number, credit, original, po, issue, due, terms,
                   Decimal(r.choice(v.tax_rates)), lines)
    inv.subtotal = sum((ln.amount for ln in lines), Decimal("0.00"))
    inv.tax = quantize(inv.subtotal * inv.rate / 100)
    inv.total = inv.subtotal + inv.tax
    inv.bank = " ".join(str(r.between(1000, 9999)) for _ in range(5))
    inv.bic = "".join(r.choice("ABCDEFGHKLMNPRSTUVWXZ") for _ in range(6)) + "2X"
    inv.regno = f"{r.between(1000000, 9999999):08d}"
    planted = set(edges)
    if v.currency != "USD":
        planted.add("foreign_currency")
    inv.edges = tuple(e for e in EDGE_CASES if e in planted)
    return inv


# --------------------------------------------------------------------------------------
# printing conventions


def _date(day: _dt.date, style: str) -> str:
    if style == "long":
        return f"{MONTHS[day.month - 1]} {day.day}, {day.year}"
    if style == "us_numeric":
        return f"{day.month:02d}/{day.day:02d}/{day.year}"
    if style == "dotted":
        return f"{day.day:02d}.{day.month:02d}.{day.year}"
    if style == "d_mon":
        return f"{day.day} {MONTHS[day.month - 1][:3]} {day.year}"
    if style == "uk_numeric":
        return f"{day.day:02d}/{day.month:02d}/{day.year}"
    if style == "uk_long":
        return f"{day.day} {MONTHS[day.month - 1]} {day.year}"
    return iso(day)


_MODERN_GROUP = {"CHF": "'", "CAD": " ", "USD": ""}


def _amount(inv: _Invoice, value: Decimal) -> str:
    family = inv.family
    if family == "european":
        return format_amount(value, group=".", decimal=",")
    if family == "uk":
        return format_amount(value, negative="parentheses")
    if family == "modern":
        return format_amount(value, group=_MODERN_GROUP[inv.vendor.currency])
    return format_amount(value)


def _qty(inv: _Invoice, value: Decimal) -> str:
    text = number_text(value)
    return text.replace(".", ",") if inv.family == "european" else text


# --------------------------------------------------------------------------------------
# geometry and pagination


@dataclass(frozen=True)
class _Geometry:
    pagesize: tuple[float, float]
    first_top: float  # baseline of the first table row on page 1
    cont_top: float  # ... on continuation pages
    bottom: float  # lowest baseline a row may use
    row_h: float
    totals_h: float  # space the totals block and closing text need below the last row
    carry: bool  # carried-forward / brought-forward rows at page breaks

    def capacity_first(self) -> int:
        reserve = self.row_h if self.carry else 0
        return int((self.first_top - self.bottom - reserve) // self.row_h) + 1


@dataclass
class _PageLayout:
    rows: list[tuple[int, float]]  # (line index, baseline)
    brought: float | None = None  # baseline of a brought-forward row
    carried: float | None = None  # baseline of a carried-forward row
    totals: float | None = None  # baseline of the totals block's first row


def _paginate(g: _Geometry, n_rows: int) -> list[_PageLayout]:
    reserve = g.row_h if g.carry else 0
    pages = [_PageLayout([])]
    y = g.first_top
    for i in range(n_rows):
        if y < g.bottom + reserve:
            pages[-1].carried = y if g.carry else None
            pages.append(_PageLayout([]))
            y = g.cont_top
            if g.carry:
                pages[-1].brought = y
                y -= g.row_h
        pages[-1].rows.append((i, y))
        y -= g.row_h
    y -= g.row_h * 0.5
    if y - g.totals_h < g.bottom - g.row_h:
        pages[-1].carried = y if g.carry else None
        pages.append(_PageLayout([]))
        y = g.cont_top
        if g.carry:
            pages[-1].brought = y
            y -= g.row_h * 1.5
    pages[-1].totals = y
    return pages


class _Family:
    geometry: _Geometry
    font = "Helvetica"
    bold = "Helvetica-Bold"

    def first_header(self, c: Canvas, inv: _Invoice) -> None:
        raise NotImplementedError

    def cont_header(self, c: Canvas, inv: _Invoice, page: int, pages: int) -> None:
        raise NotImplementedError

    def row(self, c: Canvas, y: float, n: int, ln: _Line, inv: _Invoice) -> None:
        raise NotImplementedError

    def carry(self, c: Canvas, y: float, brought: bool, amount: Decimal, inv: _Invoice) -> None:
        raise NotImplementedError

    def totals(self, c: Canvas, y: float, inv: _Invoice) -> None:
        raise NotImplementedError

    def footer(self, c: Canvas, page: int, pages: int, inv: _Invoice) -> None:
        raise NotImplementedError


def _fits(text: str, font: str, size: float, width: float) -> str:
    if stringWidth(text, font, size) > width:
        raise AssertionError(f"text does not fit its column: {text!r}")
    return text


class _Classic(_Family):
    geometry = _Geometry(LETTER, 535, 685, 100, 16, 95, True)

    def _table_header(self, c: Canvas, y: float) -> None:
        c.setFont(self.bold, 9)
        c.drawString(50, y, "DESCRIPTION")
        c.drawRightString(380, y, "QTY")
        c.drawRightString(470, y, "UNIT PRICE")
        c.drawRightString(562, y, "AMOUNT")
        c.setLineWidth(0.8)
        c.line(50, y - 5, 562, y - 5)

    def first_header(self, c: Canvas, inv: _Invoice) -> None:
        v = inv.vendor
        c.setFont(self.bold, 16)
        c.drawString(50, 740, v.name)
        c.setFont(self.font, 9)
        for k, text in enumerate((*v.address, v.contact)):
            c.drawString(50, 724 - 12 * k, text)
        c.setFont(self.bold, 22)
        c.drawRightString(562, 740, "CREDIT NOTE" if inv.credit else "INVOICE")
        if inv.credit:
            meta = [("Credit Note No.:", inv.number), ("Date:", _date(inv.issue, v.date_style)),
                    ("Original Invoice:", inv.original or ""), ("PO Number:", inv.po)]
        else:
            assert inv.due is not None
            meta = [("Invoice No.:", inv.number), ("Invoice Date:", _date(inv.issue, v.date_style)),
                    ("Due Date:", _date(inv.due, v.date_style)), ("Terms:", f"Net {inv.terms}"), ("PO Number:", inv.po)]
        for k, (label, value) in enumerate(meta):
            y = 712 - 13 * k
            c.setFont(self.bold, 9)
            c.drawString(370, y, label)
            c.setFont(self.font, 9)
            c.drawRightString(562, y, value)
        c.setFont(self.bold, 9)
        c.drawString(50, 640, "BILL TO")
        c.setFont(self.font, 9)
        for k, text in enumerate(inv.buyer):
            c.drawString(50, 626 - 12 * k, text)
        self._table_header(c, 555)

    def cont_header(self, c: Canvas, inv: _Invoice, page: int, pages: int) -> None:
        c.setFont(self.bold, 12)
        c.drawString(50, 740, inv.vendor.name)
        c.setFont(self.font, 9)
        c.drawRightString(562, 740, f"{'Credit Note' if inv.credit else 'Invoice'} No. {inv.number} (continued)")
        self._table_header(c, 705)

    def row(self, c: Canvas, y: float, n: int, ln: _Line, inv: _Invoice) -> None:
        c.setFont(self.font, 9)
        c.drawString(50, y, _fits(ln.description, self.font, 9, 290))
        c.drawRightString(380, y, _qty(inv, ln.quantity))
        c.drawRightString(470, y, _amount(inv, ln.unit_price))
        c.drawRightString(562, y, _amount(inv, ln.amount))

    def carry(self, c: Canvas, y: float, brought: bool, amount: Decimal, inv: _Invoice) -> None:
        c.setFont("Helvetica-Oblique", 9)
        c.drawString(50, y, "Brought forward" if brought else "Carried forward")
        c.drawRightString(562, y, _amount(inv, amount))

    def totals(self, c: Canvas, y: float, inv: _Invoice) -> None:
        cur = inv.vendor.currency
        c.setLineWidth(0.5)
        c.line(370, y + 11, 562, y + 11)
        rows = [("Subtotal", _amount(inv, inv.subtotal), self.font),
                (f"{inv.vendor.tax_label} ({number_text(inv.rate)}%)", _amount(inv, inv.tax), self.font)]
        total = _amount(inv, inv.total)
        total = "-$" + total[1:] if total.startswith("-") else "$" + total
        rows.append((f"Total Credit ({cur})" if inv.credit else f"Total Due ({cur})", total, self.bold))
        for k, (label, value, font) in enumerate(rows):
            c.setFont(font, 10 if font == self.bold else 9)
            yy = y - 16 * k - (4 if font == self.bold else 0)
            c.drawString(370, yy, label)
            c.drawRightString(562, yy, value)
        c.setFont(self.font, 9)
        c.drawString(50, y - 75, "Credit will be applied to your account." if inv.credit else "Thank you for your business.")

    def footer(self, c: Canvas, page: int, pages: int, inv: _Invoice) -> None:
        c.setFont(self.font, 8)
        c.drawString(50, 52, f"Please make checks payable to {inv.vendor.name}.")
        c.drawCentredString(306, 36, f"Page {page} of {pages}")


class _European(_Family):
    geometry = _Geometry(A4, 520, 750, 105, 15, 85, True)

    def _table_header(self, c: Canvas, y: float) -> None:
        cur = "EUR"
        c.setFont(self.bold, 8.5)
        c.drawString(50, y, "Pos.")
        c.drawString(80, y, "Description")
        c.drawRightString(355, y, "Qty")
        c.drawString(362, y, "Unit")
        c.drawRightString(455, y, f"Unit price {cur}")
        c.drawRightString(545, y, f"Amount {cur}")
        c.setLineWidth(0.6)
        c.line(50, y - 5, 545, y - 5)

    def first_header(self, c: Canvas, inv: _Invoice) -> None:
        v = inv.vendor
        c.setFont(self.bold, 11)
        c.drawRightString(545, 800, v.name)
        c.setFont(self.font, 8.5)
        for k, text in enumerate((*v.address, f"VAT ID: {v.tax_id}")):
            c.drawRightString(545, 787 - 12 * k, text)
        c.setFont(self.font, 6.5)
        c.drawString(50, 735, f"{v.name} · {v.address[0]} · {v.address[1]}")
        c.setFont(self.font, 10)
        for k, text in enumerate(inv.buyer):
            c.drawString(50, 718 - 13 * k, text)
        c.setFont(self.bold, 16)
        c.drawString(50, 630, "Credit note" if inv.credit else "Invoice")
        if inv.credit:
            meta = [("Ref", inv.number), ("Date", _date(inv.issue, v.date_style)), ("Invoice ref.", inv.original or ""),
                    ("Customer no.", inv.account), ("Your order", inv.po)]
        else:
            assert inv.due is not None
            meta = [("Ref", inv.number), ("Date", _date(inv.issue, v.date_style)), ("Due date", _date(inv.due, v.date_style)),
                    ("Customer no.", inv.account), ("Your order", inv.po)]
        for k, (label, value) in enumerate(meta):
            x = (50, 160, 255, 350, 450)[k]
            c.setFont(self.font, 7.5)
            c.drawString(x, 605, label)
            c.setFont(self.font, 10)
            c.drawString(x, 592, value)
        c.setFont(self.font, 9)
        c.drawString(50, 565, "We credit the following items:" if inv.credit else "We invoice the following deliveries and services:")
        self._table_header(c, 540)

    def cont_header(self, c: Canvas, inv: _Invoice, page: int, pages: int) -> None:
        c.setFont(self.font, 8)
        c.drawString(50, 800, f"{inv.vendor.name} · {'Credit note' if inv.credit else 'Invoice'} {inv.number} · continued")
        self._table_header(c, 770)

    def row(self, c: Canvas, y: float, n: int, ln: _Line, inv: _Invoice) -> None:
        c.setFont(self.font, 9)
        c.drawString(50, y, "" if ln.discount else str(n))
        c.drawString(80, y, _fits(ln.description, self.font, 9, 245))
        c.drawRightString(355, y, _qty(inv, ln.quantity))
        c.drawString(362, y, ln.unit)
        c.drawRightString(455, y, _amount(inv, ln.unit_price))
        c.drawRightString(545, y, _amount(inv, ln.amount))

    def carry(self, c: Canvas, y: float, brought: bool, amount: Decimal, inv: _Invoice) -> None:
        c.setFont("Helvetica-Oblique", 9)
        c.drawString(80, y, "Carry-over")
        c.drawRightString(545, y, _amount(inv, amount))

    def totals(self, c: Canvas, y: float, inv: _Invoice) -> None:
        c.setLineWidth(0.5)
        c.line(340, y + 11, 545, y + 11)
        rows = [("Net amount", inv.subtotal, self.font), (f"VAT {number_text(inv.rate)} %", inv.tax, self.font),
                ("Total credit" if inv.credit else "Total amount", inv.total, self.bold)]
        for k, (label, value, font) in enumerate(rows):
            c.setFont(font, 9.5)
            yy = y - 15 * k - (3 if font == self.bold else 0)
            c.drawString(340, yy, label)
            c.drawRightString(545, yy, f"{_amount(inv, value)} €")
        c.setFont(self.font, 8.5)
        if inv.credit:
            c.drawString(50, y - 62, "Currency: EUR. The credit will be offset against your open items.")
        else:
            assert inv.due is not None
            c.drawString(50, y - 62, f"Currency: EUR. Payable by {_date(inv.due, inv.vendor.date_style)} without deduction.")

    def footer(self, c: Canvas, page: int, pages: int, inv: _Invoice) -> None:
        c.setFont(self.font, 7)
        c.drawString(50, 45, f"{inv.vendor.name} · IBAN {inv.vendor.tax_id[:2]}{inv.bank[:2]} {inv.bank} · BIC {inv.bic}")
        c.drawRightString(545, 45, f"Page {page}/{pages}")


class _UK(_Family):
    geometry = _Geometry(A4, 588, 753, 115, 14, 85, False)
    font = "Times-Roman"
    bold = "Times-Bold"

    def _table_header(self, c: Canvas, y: float) -> None:
        c.setFont(self.bold, 10)
        c.drawRightString(80, y, "Qty")
        c.drawString(95, y, "Item")
        c.drawString(165, y, "Description")
        c.drawRightString(450, y, "Unit price")
        c.drawRightString(545, y, "Net")
        c.setLineWidth(0.6)
        c.line(50, y - 5, 545, y - 5)

    def first_header(self, c: Canvas, inv: _Invoice) -> None:
        v = inv.vendor
        c.setFont(self.bold, 20)
        c.drawString(50, 790, v.name)
        c.setFont(self.font, 9)
        for k, text in enumerate((*v.address, v.contact)):
            c.drawString(50, 774 - 11 * k, text)
        c.setFont(self.bold, 14)
        c.drawRightString(545, 790, "CREDIT NOTE" if inv.credit else "SALES INVOICE")
        c.setFont(self.bold, 10)
        c.drawString(50, 700, "To:")
        c.setFont(self.font, 10)
        for k, text in enumerate(inv.buyer):
            c.drawString(50, 686 - 13 * k, text)
        if inv.credit:
            meta = [("Ref:", inv.number), ("Tax point:", _date(inv.issue, v.date_style)), ("Against invoice:", inv.original or ""),
                    ("Account:", inv.account)]
        else:
            meta = [("Ref:", inv.number), ("Tax point:", _date(inv.issue, v.date_style)), ("Account:", inv.account),
                    ("Your order:", inv.po)]
        for k, (label, value) in enumerate(meta):
            c.setFont(self.bold, 10)
            c.drawString(350, 700 - 14 * k, label)
            c.setFont(self.font, 10)
            c.drawString(440, 700 - 14 * k, value)
        self._table_header(c, 610)

    def cont_header(self, c: Canvas, inv: _Invoice, page: int, pages: int) -> None:
        c.setFont(self.font, 9)
        c.drawString(50, 800, f"{inv.vendor.name} - ref {inv.number} continued")
        self._table_header(c, 775)

    def row(self, c: Canvas, y: float, n: int, ln: _Line, inv: _Invoice) -> None:
        c.setFont(self.font, 10)
        c.drawRightString(80, y, _qty(inv, ln.quantity))
        c.drawString(95, y, ln.code)
        c.drawString(165, y, _fits(ln.description, self.font, 10, 215))
        c.drawRightString(450, y, _amount(inv, ln.unit_price))
        c.drawRightString(545, y, _amount(inv, ln.amount))

    def carry(self, c: Canvas, y: float, brought: bool, amount: Decimal, inv: _Invoice) -> None:  # pragma: no cover
        raise AssertionError("the uk family has no carry rows")

    def totals(self, c: Canvas, y: float, inv: _Invoice) -> None:
        def pounds(value: Decimal) -> str:
            text = _amount(inv, value)
            return f"(£{text[1:]}" if text.startswith("(") else f"£{text}"

        rows = [("Net total", inv.subtotal, self.font), (f"VAT @ {number_text(inv.rate)}%", inv.tax, self.font),
                ("Credit total" if inv.credit else "Amount due", inv.total, self.bold)]
        for k, (label, value, font) in enumerate(rows):
            c.setFont(font, 10)
            yy = y - 15 * k
            c.drawString(380, yy, label)
            c.drawRightString(545, yy, pounds(value))
        c.setFont(self.font, 9)
        if inv.credit:
            c.drawString(50, y - 62, f"This credit has been applied to your account. Please quote ref {inv.number}.")
        else:
            assert inv.due is not None
            c.drawString(50, y - 62, f"Payment due by {_date(inv.due, 'uk_long')}. Please quote ref {inv.number} with your remittance.")
        c.drawString(50, y - 74, "All amounts in GBP (£).")

    def footer(self, c: Canvas, page: int, pages: int, inv: _Invoice) -> None:
        c.setFont(self.font, 7)
        c.drawString(50, 40, f"{inv.vendor.name} · Registered in England and Wales No. {inv.regno} · VAT Reg. No. {inv.vendor.tax_id}")
        c.drawRightString(545, 40, f"Page {page} of {pages}")


class _Modern(_Family):
    geometry = _Geometry(A4, 692, 752, 95, 16, 185, False)

    def _table_header(self, c: Canvas, y: float) -> None:
        c.setFont(self.bold, 9)
        c.drawString(50, y, "Item")
        c.drawRightString(370, y, "Qty")
        c.drawRightString(460, y, "Rate")
        c.drawRightString(545, y, "Line total")
        c.setLineWidth(1.2)
        c.line(50, y - 6, 545, y - 6)

    def first_header(self, c: Canvas, inv: _Invoice) -> None:
        v = inv.vendor
        c.setFont(self.bold, 20)
        c.drawString(50, 790, v.name)
        c.setFont(self.font, 8.5)
        c.drawString(50, 775, v.tagline)
        c.drawString(50, 763, v.address[0])
        c.setFont(self.font, 7.5)
        c.drawString(380, 790, "Billed to")
        c.setFont(self.font, 9)
        for k, text in enumerate(inv.buyer):
            c.drawString(380, 777 - 12 * k, text)
        self._table_header(c, 715)

    def cont_header(self, c: Canvas, inv: _Invoice, page: int, pages: int) -> None:
        c.setFont(self.font, 8)
        c.drawString(50, 800, f"{inv.vendor.name} · {'Credit memo' if inv.credit else 'Invoice'} {inv.number} · page {page}")
        self._table_header(c, 775)

    def row(self, c: Canvas, y: float, n: int, ln: _Line, inv: _Invoice) -> None:
        c.setFont(self.font, 9)
        c.drawString(50, y, _fits(ln.description, self.font, 9, 290))
        c.drawRightString(370, y, _qty(inv, ln.quantity))
        c.drawRightString(460, y, _amount(inv, ln.unit_price))
        c.drawRightString(545, y, _amount(inv, ln.amount))

    def carry(self, c: Canvas, y: float, brought: bool, amount: Decimal, inv: _Invoice) -> None:  # pragma: no cover
        raise AssertionError("the modern family has no carry rows")

    def totals(self, c: Canvas, y: float, inv: _Invoice) -> None:
        v = inv.vendor
        rows = [("Subtotal", inv.subtotal, self.font), (f"{v.tax_label} {number_text(inv.rate)}%", inv.tax, self.font),
                (f"Total {v.currency}", inv.total, self.bold)]
        for k, (label, value, font) in enumerate(rows):
            c.setFont(font, 10 if font == self.bold else 9)
            yy = y - 16 * k
            c.drawString(380, yy, label)
            c.drawRightString(545, yy, _amount(inv, value))
        top = y - 70
        c.setFont(self.bold, 9)
        c.drawString(50, top, "Credit memo details" if inv.credit else "Invoice details")
        if inv.credit:
            details = [("Credit memo #", inv.number), ("Issued", _date(inv.issue, v.date_style)),
                       ("Applies to invoice #", inv.original or ""), ("Currency", v.currency)]
        else:
            assert inv.due is not None
            details = [("Invoice #", inv.number), ("Issued", _date(inv.issue, v.date_style)),
                       ("Due", _date(inv.due, v.date_style)), ("Currency", v.currency),
                       ("Payment", "Bank transfer, reference " + inv.number)]
        c.setFont(self.font, 9)
        for k, (label, value) in enumerate(details):
            c.drawString(50, top - 14 * (k + 1), label)
            c.drawString(160, top - 14 * (k + 1), value)

    def footer(self, c: Canvas, page: int, pages: int, inv: _Invoice) -> None:
        c.setFont(self.font, 7)
        c.drawString(50, 40, f"{inv.vendor.name} · {inv.vendor.contact} · {inv.vendor.tax_id}")
        c.drawRightString(545, 40, f"{page}/{pages}")


_FAMILY: dict[str, _Family] = {"classic": _Classic(), "european": _European(), "uk": _UK(), "modern": _Modern()}


def _render(inv: _Invoice) -> tuple[bytes, int]:
    fam = _FAMILY[inv.family]
    layout = _paginate(fam.geometry, len(inv.lines))
    buffer = io.BytesIO()
    title = "Credit note" if inv.credit else "Invoice"
    c = new_canvas(buffer, fam.geometry.pagesize, title=title, author=inv.vendor.name)
    running = Decimal("0.00")
    pages = len(layout)
    for p, page in enumerate(layout, 1):
        if p == 1:
            fam.first_header(c, inv)
        else:
            fam.cont_header(c, inv, p, pages)
        if page.brought is not None:
            fam.carry(c, page.brought, True, running, inv)
        for i, y in page.rows:
            fam.row(c, y, i + 1, inv.lines[i], inv)
            running += inv.lines[i].amount
        if page.carried is not None:
            fam.carry(c, page.carried, False, running, inv)
        if page.totals is not None:
            fam.totals(c, page.totals, inv)
        fam.footer(c, p, pages, inv)
        c.showPage()
    c.save()
    return buffer.getvalue(), pages


# --------------------------------------------------------------------------------------
# the item


def _gold(inv: _Invoice) -> dict[str, Any]:
    return {
        "vendor": inv.vendor.name,
        "invoice_number": inv.number,
        "invoice_date": iso(inv.issue),
        "due_date": iso(inv.due) if inv.due else None,
        "currency": inv.vendor.currency,
        "line_items": [{"description": ln.description, "quantity": number_text(ln.quantity),
                        "unit_price": plain(ln.unit_price), "amount": plain(ln.amount)} for ln in inv.lines],
        "subtotal": plain(inv.subtotal),
        "tax": plain(inv.tax),
        "total": plain(inv.total),
    }


def generate(seed: str, index: int, params: Mapping[str, Any]) -> Item:
    """Invoice `index` (0-based) of the edition drawn from `seed`."""
    block, slot = divmod(index, EDITION_SIZE)
    family, edges = _plan(seed, block)[slot]
    inv = _compose(seed, index, _edition(seed), family, edges)
    pdf, pages = _render(inv)
    if ("multi_page" in inv.edges) != (pages > 1):
        raise AssertionError(f"invoice {index}: planned multi-page={'multi_page' in inv.edges} but rendered {pages} page(s)")
    texts = extract_pages(pdf)
    doc = f"DOC-{index + 1:03d}"
    context = {
        "document_id": doc,
        "filename": PDF_NAME,
        "media_type": "application/pdf",
        "pdf_sha256": hashlib.sha256(pdf).hexdigest(),
        "page_count": len(texts),
        "pages": [{"page": n, "text": text} for n, text in enumerate(texts, 1)],
    }
    key = {
        "fields": _gold(inv),
        "family": family,
        "edge_cases": list(inv.edges),
        "discount_lines": [n for n, ln in enumerate(inv.lines) if ln.discount],
        "pages": pages,
    }
    return Item(index, f"invoice-{index + 1:02d}", context, key, files={PDF_NAME: pdf})

