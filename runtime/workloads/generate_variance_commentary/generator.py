"""Seeded generator of budget-vs-actual months (LedgerRate §4.4, generate.variance-commentary.v1).

Why it is built this way:

- An item is one business unit's month: a table of 12 lines (3 revenue, 3 COGS, 6 opex) with
  whole-dollar budget and actual amounts, and 5-9 context notes. Every draw comes from a
  `Stream` named by what it decides, so items are byte-identical on every machine.
- The top-3 drivers by |variance| are planned first and kept clearly apart (each driver at
  least 2.5x the largest other variance, drivers at least $1,000 apart), so "the right three
  lines" is never a judgement call.
- A commentary benchmark only measures cause attribution if the notes can mislead. Each driver
  has one of four statuses (recorded in the answer key):
    sole   - one note names the line and gives the true cause;
    clean  - no note names the line: the honest cause is "not explained by the notes";
    first  - a distractor note names the line (a non-cause: a plan for another month, an
             audit with no finding ...) and comes before the true note;
    only   - a distractor names the line and nothing explains it.
  Lines outside the top 3 get small explaining notes (noise), and one general note names no
  line. Item i % 5 == 0 has no trap, i % 5 == 1 exactly one, and every edition of >= 5 items
  holds every status, so a keyword heuristic that copies the first note naming a line passes
  some items and fails others.
- The answer key carries the true drivers (variance, % variance exact and shown, favourable or
  not, the note that explains it and its text) and the declared allowed figures (every table
  amount, every derivation of derive.py for lines, category totals and the operating result,
  and every number in the notes), so grading needs nothing but the key.
- Nothing reads the clock: the period derives from the seed.
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal
from typing import Any, Mapping

from lrc.runtime.checks import figures
from lrc.runtime.checks.rng import Stream
from lrc.runtime.workloads.base import Item
from lrc.runtime.workloads.generate_variance_commentary import derive

COMPONENT_ID = "generate.variance-commentary.generator"
COMPONENT_VERSION = 3

STATUSES: tuple[str, ...] = ("sole", "clean", "first", "only")
TRAPS = frozenset({"first", "only"})
DRIVERS = 3
MIN_DRIVER_GAP = Decimal(1000)
DRIVER_TO_REST = Decimal("2.5")


@dataclass(frozen=True)
class _Line:
    id: str
    name: str
    category: str
    lo: int        # budget range, whole dollars
    hi: int
    up: str        # true cause when actual > budget ({name} prefix added; {customer} {vendor} {city} {n})
    down: str      # true cause when actual < budget
    noise: str     # a true remark on a non-driver line, neutral so it fits either sign of its small variance


_LINES: tuple[_Line, ...] = (
    _Line("L01", "Product sales", "revenue", 800_000, 1_600_000,
          "{customer} brought its holiday stocking order forward from next month.",
          "shipments to {customer} slipped to next month after an outage in the customer's warehouse system.",
          "order intake was close to plan."),
    _Line("L02", "Subscription revenue", "revenue", 400_000, 900_000,
          "{customer} upgraded {n} seats to the enterprise tier earlier than planned.",
          "{customer} did not renew its contract, as its parent company consolidated vendors.",
          "seat counts moved slightly at renewals."),
    _Line("L03", "Professional services revenue", "revenue", 120_000, 300_000,
          "the {customer} implementation reached its final milestone early, so the milestone fee was recognised this month.",
          "the {customer} implementation was paused at the customer's request, deferring milestone billing.",
          "billable hours were close to plan."),
    _Line("L04", "Raw materials", "cogs", 250_000, 600_000,
          "the steel surcharge from {vendor} rose mid-month and was not in the budget.",
          "{vendor} granted a volume rebate after purchases were consolidated with them.",
          "usage tracked production volumes."),
    _Line("L05", "Inbound freight", "cogs", 60_000, 140_000,
          "a port delay forced expedited air freight for the {vendor} components.",
          "the new consolidated shipping contract with {vendor} lowered container rates.",
          "fuel surcharges were close to plan."),
    _Line("L06", "Cloud hosting", "cogs", 60_000, 180_000,
          "a data migration left duplicate storage running for most of the month.",
          "reserved-instance pricing negotiated with {vendor} took effect this month.",
          "compute usage was close to forecast."),
    _Line("L07", "Salaries and wages", "opex", 350_000, 700_000,
          "overtime was paid during the ERP cut-over and two hires started earlier than budgeted.",
          "{n} budgeted positions stayed vacant for the whole month.",
          "payroll timing differences were small."),
    _Line("L08", "Marketing programs", "opex", 60_000, 200_000,
          "the trade show in {city} was booked this month although it was budgeted for next quarter.",
          "the {city} campaign was cancelled and its spend released.",
          "agency fees were close to plan."),
    _Line("L09", "Travel and entertainment", "opex", 40_000, 90_000,
          "the sales team's customer visits to {city} were added at short notice.",
          "a travel freeze was in place for the whole month.",
          "travel bookings were close to plan."),
    _Line("L10", "Office rent", "opex", 45_000, 90_000,
          "the landlord's annual service-charge reconciliation billed an extra charge for last year.",
          "the sublease of the second floor to {customer} started, and its income is netted against rent.",
          "utilities recharges were as expected."),
    _Line("L11", "Software licences", "opex", 40_000, 90_000,
          "the annual true-up with {vendor} was invoiced this month instead of at year end as budgeted.",
          "unused seats with {vendor} were cancelled at renewal.",
          "seat counts were unchanged."),
    _Line("L12", "Professional fees", "opex", 40_000, 110_000,
          "legal advice on the {customer} contract dispute was not in the budget.",
          "the audit fee came in lower after the auditors relied more on controls testing.",
          "advisers billed close to their estimates."),
)
LINE_IDS = tuple(line.id for line in _LINES)

_DISTRACTORS: tuple[str, ...] = (
    "the plan for next month includes a price review; nothing changes in {period}.",
    "the audit sample for this line found no exceptions.",
    "a reclassification between cost centres was reviewed and rejected, so balances are unchanged.",
    "{person} from the budget office confirmed the annual budget for this line was approved unchanged.",
    "the purchase-order workflow migration finished on time, with no accounting impact.",
    "the vendor master data cleanup touched this line's suppliers; no amounts were affected.",
)
_GENERAL: tuple[str, ...] = (
    "Exchange rates were in line with the budget rate for the month.",
    "The month was closed on working day 4 with no late adjustments.",
    "Headcount reporting moved to the new HR system this month.",
    "The budget owners' review meeting is scheduled for next week.",
)
_CUSTOMERS = ("Harbor Logistics", "Kestrel Foods", "Northwind Retail", "Bluefin Clinics", "Alder Schools", "Quarry Labs",
              "Meridian Hotels", "Pinecrest Media")
_VENDORS = ("Ironvale Metals", "Caspian Freight", "Nimbus Cloud", "Tern Software", "Granite Supply", "Oriole Carriers")
_CITIES = ("Denver", "Lisbon", "Osaka", "Toronto", "Austin", "Dublin", "Singapore")
_PEOPLE = ("Dana Whitfield", "Omar Castell", "Priya Raman", "Lena Sorensen", "Marcus Obi")
_COMPANIES = ("Brightwater Instruments", "Corvid Analytics", "Fenwick Outdoor", "Halden Biotech", "Lumen Tools")
_UNITS = ("North America", "EMEA", "APAC", "Industrial", "Consumer", "Services", "Online", "Retail", "Wholesale",
          "Healthcare", "Education", "Public Sector", "Latin America", "Nordics", "UK and Ireland")
_MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
           "November", "December")


def _edition(seed: str) -> tuple[str, str, list[str]]:
    """(company, period, business units) shared by every item of an edition."""
    r = Stream(seed, "generate.variance-commentary", "edition")
    company = r.choice(_COMPANIES)
    period = f"{r.choice(_MONTHS)} {2025 + r.below(2)}"
    return company, period, r.shuffled(_UNITS)


def _statuses(r: Stream, index: int) -> list[str]:
    """Driver statuses (in rank order) under the per-index guarantees of the module docstring."""
    out = [r.weighted([("sole", 4), ("clean", 1), ("first", 2), ("only", 1)]) for _ in range(DRIVERS)]
    kind = index % 5
    if kind == 0:
        out = ["sole" if s == "first" else "clean" if s == "only" else s for s in out]
    elif kind == 1:
        out = ["sole" if s == "first" else "clean" if s == "only" else s for s in out]
        out[r.below(DRIVERS)] = r.choice(("first", "only"))
    elif kind == 2:
        out[1] = "first"
    elif kind == 3:
        out[2] = "only"
    else:
        out[0] = "clean"
    return out


def _amounts(r: Stream) -> tuple[dict[str, Decimal], dict[str, Decimal], list[str]]:
    """Budgets, signed variances and the three driver ids (largest |variance| first)."""
    budgets = {line.id: Decimal(r.between(line.lo // 100, line.hi // 100) * 100 + r.between(0, 99)) for line in _LINES}
    drivers = r.sample(list(LINE_IDS), DRIVERS)
    mags: list[Decimal] = []
    for line_id in drivers:
        pct = r.between(90, 250)  # 9.0% .. 25.0% of budget
        mags.append((budgets[line_id] * pct / 1000).to_integral_value())
    order = sorted(range(DRIVERS), key=lambda k: (-mags[k], drivers[k]))
    drivers, mags = [drivers[k] for k in order], [mags[k] for k in order]
    for k in range(1, DRIVERS):  # keep the ranking unambiguous
        if mags[k - 1] - mags[k] < MIN_DRIVER_GAP:
            mags[k] = mags[k - 1] - MIN_DRIVER_GAP
    cap = (mags[-1] / DRIVER_TO_REST).to_integral_value()
    variances: dict[str, Decimal] = {}
    for line_id in LINE_IDS:
        sign = 1 if r.chance(1, 2) else -1
        if line_id in drivers:
            variances[line_id] = mags[drivers.index(line_id)] * sign
        else:
            most = min(int(budgets[line_id] * 3 / 100), int(cap) - 1)  # up to 3% of budget, below the cap
            variances[line_id] = Decimal(r.between(0, max(most, 0))) * sign
    return budgets, variances, drivers


def _fill(template: str, r: Stream, period: str) -> str:
    return template.format(customer=r.choice(_CUSTOMERS), vendor=r.choice(_VENDORS), city=r.choice(_CITIES),
                           n=r.between(3, 9) if "positions" in template else r.between(20, 60),
                           person=r.choice(_PEOPLE), period=period)


def generate(seed: str, index: int, params: Mapping[str, Any]) -> Item:
    """Item `index` (0-based) of the edition drawn from `seed`."""
    company, period, units = _edition(seed)
    r = Stream(seed, "generate.variance-commentary", "item", index)
    budgets, variances, drivers = _amounts(r.child("amounts"))
    statuses = _statuses(r.child("statuses"), index)
    by_id = {line.id: line for line in _LINES}
    words = r.child("words")

    causes: dict[str, str] = {}          # line id -> cause text (drivers and noise lines)
    driver_notes: list[tuple[str, str, str]] = []   # (line id, role, text): role true / distractor
    for line_id, status in zip(drivers, statuses):
        line = by_id[line_id]
        if status in ("sole", "first"):
            text = _fill(line.up if variances[line_id] > 0 else line.down, words, period)
            if words.chance(1, 2):
                text += f" The effect is about ${abs(variances[line_id]) / 1000:,.0f}k."
            causes[line_id] = text
            if status == "first":
                driver_notes.append((line_id, "distractor", _fill(words.choice(_DISTRACTORS), words, period)))
            driver_notes.append((line_id, "true", text))
        elif status == "only":
            driver_notes.append((line_id, "distractor", _fill(words.choice(_DISTRACTORS), words, period)))
    others = [i for i in LINE_IDS if i not in drivers]
    noise = words.sample(others, words.between(max(1, 4 - len(driver_notes)), min(4, 8 - len(driver_notes))))
    raw: list[tuple[str | None, str, str]] = [(i, "noise", by_id[i].noise) for i in noise]
    raw += [(None, "general", words.choice(_GENERAL))]
    # Shuffle, then restore each "first" driver's distractor before its true note.
    slots = words.shuffled([*driver_notes, *raw])
    for line_id, status in zip(drivers, statuses):
        if status == "first":
            where = [k for k, (i, role, _) in enumerate(slots) if i == line_id]
            d, t = where[0], where[1]
            if slots[d][1] != "distractor":
                slots[d], slots[t] = slots[t], slots[d]
    notes = []
    note_of: dict[str, str] = {}
    for k, (line_id, role, text) in enumerate(slots, start=1):
        note_id = f"N{k}"
        prefix = f"{by_id[line_id].name}: " if line_id else ""
        notes.append({"id": note_id, "text": prefix + (text[0].upper() + text[1:] if not prefix else text)})
        if role == "true" and line_id:
            note_of[line_id] = note_id

    lines = []
    for line in _LINES:
        actual = budgets[line.id] + variances[line.id]
        lines.append({"id": line.id, "name": line.name, "category": line.category,
                      "budget": str(budgets[line.id]), "actual": str(actual)})
    unit = units[index % len(units)]
    context = {"entity": f"{company} — {unit}", "period": period, "currency": "USD", "lines": lines, "notes": notes}
    key = {"top3": [_driver(by_id[i], budgets[i], budgets[i] + variances[i], s, note_of.get(i), causes.get(i))
                    for i, s in zip(drivers, statuses)],
           **allowed_figures(lines, notes)}
    return Item(index, f"vc-{index + 1:02d}", context, key)


def _driver(line: _Line, budget: Decimal, actual: Decimal, status: str, note: str | None, cause: str | None) -> dict[str, Any]:
    var = derive.variance(budget, actual)
    pct = derive.variance_pct(budget, actual)
    favourable = var > 0 if line.category == "revenue" else var < 0
    return {"line": line.id, "name": line.name, "category": line.category, "budget": str(budget), "actual": str(actual),
            "variance": str(var), "variance_pct": str(pct), "variance_pct_shown": derive.pct_text(pct),
            "favourable": favourable, "status": status, "cause_note": note, "cause": cause}


def allowed_figures(lines: list[dict[str, str]], notes: list[dict[str, str]]) -> dict[str, list[str]]:
    """The declared allowed figures: table amounts; variance and % variance of every line, of each
    category total, of the gross margin (revenue - COGS) and of the operating result (revenue - COGS - opex); numbers in the notes."""
    plain: set[Decimal] = set()
    pct: set[Decimal] = set()

    def add(budget: Decimal, actual: Decimal) -> None:
        plain.update({budget, actual, derive.variance(budget, actual)})
        pct.add(derive.variance_pct(budget, actual))

    totals: dict[str, list[Decimal]] = {"revenue": [Decimal(0)] * 2, "cogs": [Decimal(0)] * 2, "opex": [Decimal(0)] * 2}
    for row in lines:
        b, a = Decimal(row["budget"]), Decimal(row["actual"])
        add(b, a)
        t = totals[row["category"]]
        t[0], t[1] = t[0] + b, t[1] + a
    for b, a in totals.values():
        add(b, a)
    rev, cogs, opex = totals["revenue"], totals["cogs"], totals["opex"]
    add(rev[0] - cogs[0], rev[1] - cogs[1])                       # gross margin
    add(rev[0] - cogs[0] - opex[0], rev[1] - cogs[1] - opex[1])   # operating result
    for note in notes:
        for f in figures.cited_figures(note["text"]):
            (pct if f.percent else plain).add(abs(f.value))
    return {"allowed": [str(v) for v in sorted({abs(v) for v in plain})],
            "percent_allowed": [str(v) for v in sorted({abs(v) for v in pct})]}
