"""Seeded generator of a month's bank feed and GL cash extract (LedgerRate §4.3, reconcile.ledger.v1).

Why it is built this way:

- An item is one month of one operating account: a bank feed of exactly 200 transactions
  and the general-ledger cash extract that should agree with it. Both sides balance on
  their own (opening + Σ movements = closing), and both open at the same balance (last
  month was reconciled), so every difference at month end is explained by the planted
  discrepancies.
- Exactly 12 discrepancies are planted, every type at least twice: a bank transaction with
  no GL entry (missing_entry), a GL entry booked twice (duplicate), a GL amount that differs
  from the bank's (amount_mismatch: transposed digits, a wrong digit, a bank fee netted from
  a receipt) and a GL entry dated outside the timing window (date_drift). Each concerns one
  bank transaction, and no two concern the same one, so the answer key is unambiguous.
- Noise that is *not* a discrepancy makes the month realistic and punishes naive matching:
  same-day batches (supplier payment runs, daily card settlements), identical amounts paid
  to or received from different counterparties within days, and GL dates that differ from
  bank dates by up to the timing window (checks written before they clear, receipts booked
  a day or two late). Bank descriptions are upper-case and truncated, GL descriptions are
  the bookkeeper's; amounts are otherwise unique in the month, so a counterparty and an
  amount identify a transaction.
- Date drifts come in two sizes: near (window+2 to window+4 days) and far (8 to 20 days).
  An edition plan, drawn from the seed, gives 6-9 of every 15 months at least one far drift,
  so months differ in difficulty the way real months do.
- All randomness comes from `Stream(seed, ...)` sub-streams; dates derive from the seed.
"""

from __future__ import annotations

import datetime as _dt
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any, Mapping

from lrc.runtime.checks.dates import add_months, iso, month_days
from lrc.runtime.checks.money import plain
from lrc.runtime.checks.rng import Stream
from lrc.runtime.workloads.base import Item

COMPONENT_ID = "reconcile.ledger.generator"
COMPONENT_VERSION = 3

TYPES: tuple[str, ...] = ("missing_entry", "duplicate", "amount_mismatch", "date_drift")
EDITION_SIZE = 15
DEFAULTS = {"transactions": 200, "discrepancies": 12, "timing_window_days": 3}

# --------------------------------------------------------------------------------------
# invented parties (no real company is meant)

_VENDORS = (
    "Kestrel Freight LLC", "Brightpaper Supply Co.", "Acme Tools Inc.", "Orchid Facility Cleaning", "Pinewood Packaging Corp.",
    "Silverline Electrical", "Northgate IT Services", "Redwater Chemicals", "Granite Peak Rentals", "Lumen Signage",
    "Marlow Workwear", "Tidewater Fuel", "Crescent Lab Supplies", "Ironbark Safety", "Hollis Print Works",
    "Elmstead Office Furniture", "Quillon Staffing", "Bluebird Catering", "Cobalt Courier Services", "Sterling Waste Solutions",
    "Harrow & Finch Consulting", "Vantage Forklift Service", "Prairie Gas & Electric", "Summit Insurance Brokers", "Oakline Property Mgmt",
    "Delta Pallet Recycling", "Wexford Maintenance", "Riverbend Water Utility", "Juniper Software", "Falcon Security Patrol",
)
_CUSTOMERS = (
    "Pellham Group", "Fairmont Outdoor Ltd", "Riverside Wholesale", "Corbel Homes", "Aldergrove Markets", "Bayview Grocers",
    "Calloway Restaurants", "Dunmore Hotels", "Eastgate Foodservice", "Foxhill Schools District", "Greenway Cafes",
    "Highland Health Partners", "Ivy Lane Bakeries", "Jasper County Hospital", "Kingsbridge Catering", "Lakeside Resorts",
    "Maple Row Senior Living", "Northshore Campus Dining", "Orchard Street Deli", "Parkside Event Venues", "Quarry Hill Clinics",
    "Rosewood Country Club", "Seaside Fish Market", "Timberline Lodges", "Union Station Kitchens",
)
_DEBITS = (  # (payee, what, low, high cents)
    ("Prairie Gas & Electric", "electricity", 180000, 900000), ("Riverbend Water Utility", "water and sewer", 60000, 240000),
    ("Oakline Property Mgmt", "warehouse lease", 1800000, 3500000), ("Summit Insurance Brokers", "insurance premium", 120000, 1200000),
    ("Juniper Software", "software subscription", 9900, 490000), ("Vantage Telecom", "phone and internet", 45000, 180000),
    ("Fleetline Leasing", "vehicle lease", 210000, 680000), ("Keystone Health Plan", "health insurance", 900000, 2600000),
    ("Cloudhaven Hosting", "hosting", 19900, 390000), ("Metro Toll Authority", "tolls", 12000, 95000),
    ("Waste Route Services", "waste collection", 38000, 120000), ("Copier Lease Partners", "copier lease", 29000, 89000),
    ("Brightline Payroll", "payroll service fee", 45000, 160000), ("Harbor City Permits", "permits", 15000, 60000),
)


@dataclass(frozen=True)
class _Entity:
    name: str
    bank: str
    mask: str
    lockbox: str
    merchant_id: str
    payroll: str
    start: _dt.date  # first month of the edition


_ENTITIES = (
    ("Harborline Foods Inc.", "First Meridian Bank"), ("Copperleaf Logistics Corp.", "Lakeshore National Bank"),
    ("Meridian Parts Co.", "Great Plains Trust"), ("Tallgrass Hospitality Group", "Cascade Commerce Bank"),
)


def _entity(seed: str) -> _Entity:
    r = Stream(seed, "reconcile.ledger", "edition")
    name, bank = r.choice(_ENTITIES)
    start = _dt.date(2024, 1, 1)
    return _Entity(name, bank, f"{r.between(1000, 9999)}", f"{r.between(1000, 9999)}", f"{r.between(100000, 999999)}",
                   r.choice(("ADP", "Paychex", "Gusto")), add_months(start, r.below(30)))


def _plan(seed: str, block: int) -> list[bool]:
    """For each of 15 months: does it hold at least one far date drift?"""
    r = Stream(seed, "reconcile.ledger", "plan", block)
    far = set(r.sample(list(range(EDITION_SIZE)), r.between(6, 9)))
    return [i in far for i in range(EDITION_SIZE)]


# --------------------------------------------------------------------------------------
# the month under construction


@dataclass
class _Txn:
    kind: str
    party: str
    day: _dt.date
    amount: Decimal
    bank_desc: str
    gl_desc: str
    journal: str
    gl_offset: int = 0
    noise: str = ""
    bank_id: str = ""


@dataclass
class _Month:
    r: Stream
    ent: _Entity
    year: int
    month: int
    days: list[_dt.date]  # business days
    used: set[Decimal] = field(default_factory=set)  # absolute amounts in use
    txns: list[_Txn] = field(default_factory=list)

    @property
    def label(self) -> str:
        return f"{self.year:04d}-{self.month:02d}"

    def amount(self, lo: int, hi: int, sign: int) -> Decimal:
        while True:
            value = self.r.money(lo, hi)
            if value not in self.used:
                self.used.add(value)
                return value if sign > 0 else -value

    def add(self, kind: str, party: str, day: _dt.date, amount: Decimal, bank_desc: str, gl_desc: str, journal: str) -> _Txn:
        t = _Txn(kind, party, day, amount, bank_desc[:48], gl_desc, journal)
        self.txns.append(t)
        return t

    def last(self) -> _dt.date:
        return self.days[-1]


def _up(name: str, width: int = 18) -> str:
    cleaned = "".join(ch for ch in name.upper() if ch.isalnum() or ch == " ")
    return " ".join(cleaned.split())[:width].rstrip()


def _compose(m: _Month) -> None:
    r, ent = m.r, m.ent
    mon = f"{m.year:04d}-{m.month:02d}"
    # payroll: net pay and taxes twice a month
    mid = min(m.days, key=lambda d: abs(d.day - 15))
    for payday, period in ((mid, "1"), (m.last(), "2")):
        net = m.amount(8500000, 24000000, -1)
        m.add("payroll", ent.payroll, payday, net, f"{ent.payroll.upper()} PAYROLL NET PAY {mon}-{period}", f"Net payroll {mon} period {period}", "PR")
        tax = m.amount(2500000, 9000000, -1)
        m.add("payroll", ent.payroll, payday, tax, f"{ent.payroll.upper()} TAX IMPOUND {mon}-{period}", f"Payroll taxes {mon} period {period}", "PR")
    # bank charges and interest
    m.add("fee", ent.bank, m.last(), m.amount(4500, 18000, -1), "ACCOUNT ANALYSIS FEE", f"Bank charges {mon} - account analysis", "GJ")
    m.add("interest", ent.bank, m.last(), m.amount(1200, 48000, 1), "INTEREST CREDIT", f"Interest income {mon}", "GJ")
    for _ in range(r.between(1, 3)):
        sign = r.choice((-1, 1))
        day = r.choice(m.days)
        m.add("transfer", "savings", day, m.amount(1000000, 15000000, sign),
              f"TRANSFER {'TO' if sign < 0 else 'FROM'} SAVINGS XXXXXX{r.between(1000, 9999)}",
              f"Transfer {'to' if sign < 0 else 'from'} savings account", "GJ")
    # direct debits: each payee at most once a month
    for payee, what, lo, hi in r.sample(_DEBITS, r.between(8, 12)):
        ref = f"{r.between(10000000, 99999999)}"
        m.add("direct_debit", payee, r.choice(m.days), m.amount(lo, hi, -1), f"DIRECT DEBIT {_up(payee)} {ref}",
              f"{payee} - {what} {mon}", "AP")
    # wires
    for _ in range(r.between(4, 7)):
        cust = r.choice(_CUSTOMERS)
        ref = f"{r.between(100000, 999999)}"
        m.add("wire_in", cust, r.choice(m.days), m.amount(800000, 18000000, 1), f"WIRE IN {_up(cust)} REF {ref}",
              f"Wire receipt - {cust} - INV {r.between(20000, 29999)}", "AR")
    for _ in range(r.between(4, 7)):
        vend = r.choice(_VENDORS)
        day = r.choice(m.days)
        m.add("wire_out", vend, day, m.amount(500000, 15000000, -1), f"WIRE OUT {_up(vend)} REF {r.between(100000, 999999)}",
              f"Wire - {vend} - bill {r.between(1000, 99999)}", "AP")
        m.add("fee", ent.bank, day, m.amount(1500, 4500, -1), "WIRE TRANSFER FEE", f"Bank charges - wire fee {iso(day)}", "GJ")
    # card settlements, most business days
    for day in m.days:
        if r.chance(5, 6):
            batch = f"{r.between(1000, 9999)}"
            m.add("card", "card processor", day, m.amount(80000, 2400000, 1), f"CARD SETTLEMENT MID {ent.merchant_id} BATCH {batch}",
                  f"Card settlement batch {batch}", "AR")
    # lockbox deposits
    for day in sorted(r.sample(m.days, r.between(6, 9))):
        items = r.between(3, 24)
        m.add("lockbox", "lockbox", day, m.amount(150000, 9500000, 1), f"LOCKBOX DEPOSIT {ent.lockbox} ITEMS {items}",
              f"Lockbox {ent.lockbox} deposit - {items} checks", "AR")
    # checks clearing
    first_check = r.between(10000, 90000)
    for k in range(r.between(12, 20)):
        vend = r.choice(_VENDORS)
        m.add("check", vend, r.choice(m.days[1:]), m.amount(12000, 2800000, -1), f"CHECK {first_check + k}",
              f"Check {first_check + k} - {vend}", "AP")
    # the rest: supplier payment runs (same-day batches) and customer ACH receipts
    rest = DEFAULTS["transactions"] - len(m.txns)
    vendor_ach = rest * r.between(50, 60) // 100
    runs = sorted(r.sample([d for d in m.days if d.weekday() in (1, 3)], min(5, len([d for d in m.days if d.weekday() in (1, 3)]))))
    for k in range(vendor_ach):
        vend = _VENDORS[r.below(len(_VENDORS))]
        day = runs[k % len(runs)]
        bill = f"{r.between(1000, 99999)}"
        m.add("vendor_ach", vend, day, m.amount(15000, 4800000, -1), f"ACH DEBIT {_up(vend)} {bill}",
              f"Payment - {vend} - bill {bill}", "AP")
    for _ in range(rest - vendor_ach):
        cust = r.choice(_CUSTOMERS)
        inv = f"{r.between(20000, 29999)}"
        m.add("customer_ach", cust, r.choice(m.days), m.amount(25000, 6500000, 1), f"ACH CREDIT {_up(cust)} INV {inv}",
              f"Receipt - {cust} - INV {inv}", "AR")


_TIMING: dict[str, tuple[int, ...]] = {  # GL date - bank date, by kind (days)
    "check": (-1, -2, -3, -2), "vendor_ach": (0, 0, 0, -1), "wire_out": (0, 0, -1), "customer_ach": (0, 0, 1, 2),
    "wire_in": (0, 0, 1), "lockbox": (0, 1, 1, 2), "card": (0, -1, -1), "direct_debit": (0, 1, 2, 3),
    "fee": (0, 0, 1), "interest": (0,), "transfer": (0, 0, 1), "payroll": (0, 0, -1),
}


def _within(m: _Month, day: _dt.date) -> bool:
    return day.year == m.year and day.month == m.month


def _noise(m: _Month, r: Stream) -> list[list[_Txn]]:
    """Timing offsets within the window, and pairs of identical amounts for different parties."""
    for t in m.txns:
        off = r.choice(_TIMING[t.kind])
        t.gl_offset = off if _within(m, t.day + _dt.timedelta(days=off)) else 0
    pairs: list[list[_Txn]] = []
    pool = [t for t in m.txns if t.kind in ("vendor_ach", "customer_ach", "check", "direct_debit")]
    for _ in range(r.between(3, 5)):
        a = r.choice(pool)
        options = [b for b in pool if b is not a and b.party != a.party and (b.amount > 0) == (a.amount > 0)
                   and not b.noise and not a.noise and abs((b.day - a.day).days) <= 5]
        if not options:
            continue
        b = r.choice(options)
        b.amount = a.amount
        a.noise = b.noise = "identical_amount"
        pairs.append([a, b])
    return pairs


def _digits_changed(r: Stream, amount: Decimal, used: set[Decimal], kind: str) -> tuple[Decimal, str]:
    """A plausible wrong GL amount for `amount` that collides with no bank amount."""
    sign = -1 if amount < 0 else 1
    cents = f"{abs(amount) * 100:.0f}"
    for _ in range(100):
        how = r.below(3) if kind in ("wire_in", "customer_ach") else r.below(2)
        if how == 0 and len(cents) >= 3:  # transposition of two adjacent digits
            i = r.below(len(cents) - 1)
            if cents[i] == cents[i + 1] or (i == 0 and cents[1] == "0"):
                continue
            new = cents[:i] + cents[i + 1] + cents[i] + cents[i + 2:]
            note = "transposed digits"
        elif how == 1:  # one wrong digit
            i = r.below(len(cents))
            digit = str(r.below(10))
            if digit == cents[i] or (i == 0 and digit == "0"):
                continue
            new = cents[:i] + digit + cents[i + 1:]
            note = "wrong digit"
        else:  # the bank netted a fee from a receipt; the GL has the gross amount
            new = str(int(cents) + r.choice((1500, 2500, 3500)))
            note = "bank fee netted from the receipt"
        value = Decimal(int(new)) / 100
        if value != abs(amount) and value not in used:
            return (value if sign > 0 else -value).quantize(Decimal("0.01")), note
    raise AssertionError("no mismatch amount found")  # pragma: no cover


def _planted_counts(r: Stream, total: int) -> dict[str, int]:
    counts = {t: 2 for t in TYPES}
    for _ in range(total - 2 * len(TYPES)):
        counts[TYPES[r.below(len(TYPES))]] += 1
    return counts


_ELIGIBLE = {
    "missing_entry": ("fee", "interest", "direct_debit", "customer_ach", "card", "vendor_ach", "check", "wire_in", "lockbox"),
    "duplicate": ("vendor_ach", "check", "direct_debit", "customer_ach", "wire_out", "lockbox"),
    "amount_mismatch": ("vendor_ach", "customer_ach", "check", "wire_in", "lockbox", "card", "direct_debit"),
    "date_drift": ("vendor_ach", "customer_ach", "check", "wire_in", "wire_out", "lockbox", "direct_debit", "card"),
}


def generate(seed: str, index: int, params: Mapping[str, Any]) -> Item:
    """Month `index` (0-based) of the edition drawn from `seed`."""
    cfg = {**DEFAULTS, **dict(params or {})}
    if cfg["transactions"] != DEFAULTS["transactions"] or cfg["discrepancies"] < 2 * len(TYPES):
        raise ValueError(f"reconcile.ledger generates {DEFAULTS['transactions']} transactions and >= 8 discrepancies")
    window = int(cfg["timing_window_days"])
    block, slot = divmod(index, EDITION_SIZE)
    far_month = _plan(seed, block)[slot]
    ent = _entity(seed)
    first = add_months(ent.start, index)
    days = [first + _dt.timedelta(days=k) for k in range(month_days(first.year, first.month))]
    r = Stream(seed, "reconcile.ledger", "month", index)
    m = _Month(r.child("compose"), ent, first.year, first.month, [d for d in days if d.weekday() < 5])
    _compose(m)
    pairs = _noise(m, r.child("noise"))
    if len(m.txns) != DEFAULTS["transactions"]:
        raise AssertionError(f"composed {len(m.txns)} bank transactions")

    # bank feed: by date, shuffled within the day; ids in feed order
    order = r.child("order")
    feed = sorted(m.txns, key=lambda t: (t.day, order.below(1 << 30)))
    for n, t in enumerate(feed, 1):
        t.bank_id = f"BK-{n:04d}"

    # planted discrepancies on distinct bank transactions
    plant = r.child("plant")
    counts = _planted_counts(plant, int(cfg["discrepancies"]))
    taken: set[str] = set()
    targets: list[tuple[str, _Txn]] = []
    for kind in TYPES:
        pool = [t for t in feed if t.kind in _ELIGIBLE[kind] and not t.noise and t.bank_id not in taken]
        for t in plant.sample(pool, counts[kind]):
            taken.add(t.bank_id)
            targets.append((kind, t))
    drifts = [t for kind, t in targets if kind == "date_drift"]
    far = set() if not far_month else {id(t) for t in plant.sample(drifts, plant.between(1, len(drifts)))}

    # ledger entries: (date, insertion order, journal, description, signed amount, planted tag)
    entries: list[dict[str, Any]] = []
    planted: dict[str, dict[str, Any]] = {}
    kinds = {id(t): k for k, t in targets}
    for seq, t in enumerate(feed):
        kind = kinds.get(id(t))
        gl_day = t.day + _dt.timedelta(days=t.gl_offset)
        gl_amount = t.amount
        record = {"type": kind, "bank": t.bank_id, "amount": t.amount, "ledger": []}
        if kind == "missing_entry":
            record["detail"] = f"{t.bank_desc} was never booked in the ledger"
            planted[t.bank_id] = record
            continue
        if kind == "date_drift":
            lo, hi = (8, 20) if id(t) in far else (window + 2, window + 4)
            size = plant.between(lo, hi)
            room_back, room_fwd = t.day.day - 1, month_days(m.year, m.month) - t.day.day
            sign = plant.choice((-1, 1))
            if (sign > 0 and room_fwd < size) or (sign < 0 and room_back < size):
                sign = -sign
            size = min(size, room_fwd if sign > 0 else room_back)
            if size <= window:
                raise AssertionError("date drift inside the timing window")  # pragma: no cover
            gl_day = t.day + _dt.timedelta(days=sign * size)
            record["detail"] = f"booked on {iso(gl_day)}, {size} days {'after' if sign > 0 else 'before'} the bank date {iso(t.day)}"
            record["drift_days"] = size
        if kind == "amount_mismatch":
            gl_amount, note = _digits_changed(plant, t.amount, m.used, t.kind)
            m.used.add(abs(gl_amount))
            record["amount"] = t.amount - gl_amount
            record["detail"] = f"bank {plain(t.amount)}, ledger {plain(gl_amount)} ({note})"
        entries.append({"day": gl_day, "seq": (seq, 0), "journal": t.journal, "description": t.gl_desc, "amount": gl_amount,
                        "bank": t.bank_id})
        if kind == "duplicate":
            off = min(window, max(-window, t.gl_offset + plant.choice((0, 1, 2))))
            copy_day = t.day + _dt.timedelta(days=off)
            if not _within(m, copy_day):
                copy_day = gl_day
            entries.append({"day": copy_day, "seq": (seq, 1), "journal": t.journal, "description": t.gl_desc, "amount": gl_amount,
                            "bank": t.bank_id})
            record["detail"] = f"{t.gl_desc} booked twice"
        if kind is not None:
            planted[t.bank_id] = record

    entries.sort(key=lambda e: (e["day"], e["seq"]))
    ledger_rows = []
    for n, e in enumerate(entries, 1):
        e["id"] = f"GL-{n:04d}"
        if e["bank"] in planted:
            planted[e["bank"]]["ledger"].append(e["id"])
        debit = plain(e["amount"]) if e["amount"] > 0 else ""
        credit = plain(-e["amount"]) if e["amount"] < 0 else ""
        ledger_rows.append({"id": e["id"], "date": iso(e["day"]), "journal": e["journal"], "description": e["description"],
                            "debit": debit, "credit": credit})

    opening = Stream(seed, "reconcile.ledger", "opening", index).money(25000000, 120000000)
    bank_close = opening + sum((t.amount for t in feed), Decimal("0"))
    ledger_close = opening + sum((e["amount"] for e in entries), Decimal("0"))
    context = {
        "reconciliation_id": f"REC-{m.label}",
        "entity": ent.name,
        "month": m.label,
        "bank_account": f"{ent.bank} operating account ending {ent.mask}",
        "gl_account": "1010 Cash - Operating",
        "bank": {"opening_balance": plain(opening), "closing_balance": plain(bank_close),
                 "transactions": [{"id": t.bank_id, "date": iso(t.day), "description": t.bank_desc, "amount": plain(t.amount)}
                                  for t in feed]},
        "ledger": {"opening_balance": plain(opening), "closing_balance": plain(ledger_close), "entries": ledger_rows},
    }
    discrepancies = []
    for n, bank_id in enumerate(sorted(planted, key=lambda b: (TYPES.index(planted[b]["type"]), b)), 1):
        p = planted[bank_id]
        discrepancies.append({"id": f"D{n:02d}", "type": p["type"], "bank_refs": [bank_id], "ledger_refs": sorted(p["ledger"]),
                              "amount": plain(p["amount"]), "detail": p["detail"], **({"drift_days": p["drift_days"]} if "drift_days" in p else {})})
    batches: dict[str, int] = {}
    for t in feed:
        if t.kind in ("vendor_ach",):
            batches[iso(t.day)] = batches.get(iso(t.day), 0) + 1
    key = {
        "discrepancies": discrepancies,
        "noise": {
            "identical_amounts": [sorted([a.bank_id, b.bank_id]) for a, b in pairs],
            "payment_run_days": {d: n for d, n in sorted(batches.items()) if n > 1},
            "timing_offsets": sum(1 for t in feed if t.gl_offset and t.bank_id not in planted),
        },
        "far_drift": bool(far),
        "timing_window_days": window,
    }
    return Item(index, f"month-{index + 1:02d}", context, key)
