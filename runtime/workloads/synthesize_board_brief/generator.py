"""Seeded generator of synthetic board packs (LedgerRate §4.5, synthesize.board-brief.v1).

Why it is built this way:

- A board pack is five documents a director reads before a meeting: a CEO letter, the
  financial statements, a KPI pack, the risk register and a strategy update, about 40 pages
  in all. Each is a PDF drawn with reportlab exactly like the invoices (checks.pdf: invariant
  mode, uncompressed streams, the standard fonts, no clock), so a pack is byte-identical for
  a seed.
- 20 key facts are planted, four per document, and recorded in a hidden checklist (the
  answer key): id F01..F20, the fact's text, the figures it carries, the terms that name it,
  and where it is (file, page). The rest of the pack is non-key material (narrative,
  tables of segment and monthly figures) and *distractors*: superseded pre-read numbers,
  budgets and prior-year values next to the real figure, an earlier withdrawn offer.
- Every document opens with a "Key points" box of four bullets, as real packs do. Some key
  facts are *buried* in the body instead (the box then carries a non-key bullet), so a
  reader who skims the boxes misses them; how many are buried per pack comes from an edition
  plan drawn from the seed (0 to 6 of 20), which is what makes packs differ in difficulty.
- Speed: the text a text-only model receives is the generator's own page text (the very
  lines the PDF draws, blank lines between blocks); a test proves pypdf's extraction of the
  PDFs holds those lines, so the runtime does not parse 40 pages per item.
- All randomness comes from `Stream(seed, ...)` sub-streams named by what they decide.
"""

from __future__ import annotations

import hashlib
import io
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any, Callable, Mapping

from reportlab.lib.pagesizes import A4

from lrc.runtime.checks.pdf import new_canvas
from lrc.runtime.checks.rng import Stream
from lrc.runtime.workloads.base import Item

COMPONENT_ID = "synthesize.board-brief.generator"
COMPONENT_VERSION = 2

EDITION_SIZE = 15
"""Items per edition plan; every block of 15 consecutive packs follows one buried-facts plan."""

FACT_COUNT = 20
BURIED_PLAN: tuple[int, ...] = (0, 0, 1, 1, 1, 2, 2, 2, 3, 3, 3, 4, 4, 5, 6)
"""How many key facts are buried outside the Key points boxes, per slot of an edition (shuffled)."""

LINES_PER_PAGE = 40
WRAP = 95

# (file name, title, kind, page-count range)
DOCUMENTS: tuple[tuple[str, str, str, tuple[int, int]], ...] = (
    ("01-ceo-letter.pdf", "CEO letter", "ceo", (3, 5)),
    ("02-financial-statements.pdf", "Financial statements", "fs", (9, 11)),
    ("03-kpi-pack.pdf", "KPI pack", "kpi", (9, 11)),
    ("04-risk-register.pdf", "Risk register", "risk", (7, 9)),
    ("05-strategy-update.pdf", "Strategy update", "strategy", (7, 9)),
)

# --------------------------------------------------------------------------------------
# Invented names. No real company or person is meant.

_COMPANIES = ("Harborline Industries plc", "Copperleaf Systems plc", "Meridian Fabrication Group", "Tallgrass Software plc",
              "Bluefen Manufacturing Holdings", "Quarry Hill Health plc", "Ashgrove Retail Group", "Lanternfield Media plc",
              "Northcote Components plc", "Silverbirch Logistics Group")
_FIRST = ("Maria", "James", "Aisha", "Tomasz", "Priya", "Daniel", "Yuki", "Olusegun", "Chloe", "Marcus", "Ingrid",
          "Rafael", "Hannah", "Kwame", "Sofia", "Liam", "Mei", "Dmitri", "Fatima", "Owen", "Lucia", "Samuel")
_LAST = ("Okafor", "Whitfield", "Lindqvist", "Moreno", "Nakamura", "Brennan", "Kowalski", "Haddad", "Osei", "Fischer",
         "Delgado", "Novak", "Ferreira", "Sullivan", "Achterberg", "Mensah", "Castillo", "Holm", "Duarte", "Abernathy")
_TARGETS = ("Brightwell Analytics", "Corvane Robotics", "Pellham Instruments", "Stoneleigh Data", "Vireo Controls",
            "Marlowe Sensors", "Quintain Labs", "Oakridge Metering")
_CUSTOMERS = ("Halvorsen Retail", "Oberlin Motors", "Castellan Foods", "Greyhaven Utilities", "Pemberton Rail",
              "Sunmead Hospitals", "Kittering Grocers", "Westmarch Energy")
_SUPPLIERS = ("Tanaka Precision", "Drummond Castings", "Ilvesta Semiconductors", "Rockport Polymers", "Serrano Optics",
              "Bexley Circuits")
_CITIES = ("Leeds", "Rotterdam", "Lyon", "Gdansk", "Monterrey", "Porto", "Brno", "Valencia", "Tampere", "Pune")
_COUNTRIES = ("Germany", "Poland", "Mexico", "Japan", "Brazil", "Canada", "Australia", "Spain", "India", "Sweden")
_REGIONS = ("North America", "UK and Ireland", "Continental Europe", "Asia Pacific", "Latin America", "Middle East")
_MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
           "November", "December")
_QUARTER_END = {1: "March", 2: "June", 3: "September", 4: "December"}


def _tenth(r: Stream, lo: int, hi: int) -> Decimal:
    """A one-decimal number drawn in [lo/10, hi/10]."""
    return (Decimal(r.between(lo, hi)) / 10).quantize(Decimal("0.1"))


def _m(value: Decimal) -> str:
    return f"${value}m"


def _pct(value: Decimal | int) -> str:
    return f"{value}%"


# --------------------------------------------------------------------------------------
# the pack


@dataclass(frozen=True)
class _Fact:
    doc: int
    sentence: str
    figures: tuple[str, ...]
    terms: tuple[tuple[str, ...], ...]  # every group must be named by one of its alternatives
    distractors: tuple[str, ...] = ()


@dataclass
class _Ctx:
    company: str
    quarter: int
    year: int
    ceo: str
    cfo: str
    chair: str
    facts: list[_Fact] = field(default_factory=list)

    @property
    def period(self) -> str:
        return f"Q{self.quarter} FY{self.year}"


def _facts(r: Stream, ctx: _Ctx) -> list[_Fact]:
    """The 20 key facts, four per document, with their distractors."""
    q, fy = ctx.period, ctx.year
    month = lambda: r.choice(_MONTHS)  # noqa: E731 - a named draw reads better inline
    out: list[_Fact] = []
    # CEO letter
    rev, growth = _tenth(r, 300, 900), _tenth(r, 20, 180)
    out.append(_Fact(0, f"Revenue for {q} was {_m(rev)}, up {growth}% on the same quarter last year.", (_m(rev), _pct(growth)),
                     (("revenue", "sales"),),
                     (f"The pre-read circulated last month showed revenue of {_m(rev - Decimal('0.3'))}; that preliminary figure is superseded by the closed books.",
                      f"Budgeted revenue for the quarter was {_m(rev + _tenth(r, 5, 25))}.")))
    div = _tenth(r, 20, 90)
    out.append(_Fact(0, f"The board is asked to approve an interim dividend of {div} pence per share.", (str(div),), (("dividend",),),
                     (f"Last year's interim dividend was {div - _tenth(r, 1, 5)} pence per share.",)))
    target, price = r.choice(_TARGETS), _tenth(r, 150, 600)
    out.append(_Fact(0, f"We have signed heads of terms to acquire {target} for {_m(price)}, subject to board approval.", (_m(price),),
                     ((target.split()[0],), ("acqui",)),
                     (f"An earlier indicative offer for {target} of {_m(price - _tenth(r, 10, 40))} was withdrawn in {month()}.",)))
    out.append(_Fact(0, f"{ctx.cfo}, our Chief Financial Officer, will retire at the end of {month()} {fy + 1}; a search for a successor is under way.",
                     (), ((ctx.cfo.split()[-1],), ("retire",))))
    # financial statements
    gm = _tenth(r, 350, 480)
    out.append(_Fact(1, f"Gross margin was {gm}%, down from {gm + _tenth(r, 5, 25)}% a year earlier, mainly on freight and input costs.",
                     (_pct(gm),), (("gross margin",),), (f"Budgeted gross margin was {gm + _tenth(r, 3, 15)}%.",)))
    ebitda = _tenth(r, 40, 150)
    out.append(_Fact(1, f"Adjusted EBITDA was {_m(ebitda)} for the quarter.", (_m(ebitda),), (("EBITDA",),),
                     (f"Reported EBITDA, before adjusting items, was {_m(ebitda - _tenth(r, 5, 20))}.",)))
    cash = _tenth(r, 200, 900)
    out.append(_Fact(1, f"Cash and cash equivalents at quarter end were {_m(cash)}.", (_m(cash),), (("cash",),),
                     (f"Cash at the start of the quarter was {_m(cash + _tenth(r, 10, 60))}.",)))
    debt = _tenth(r, 50, 400)
    out.append(_Fact(1, f"Net debt closed at {_m(debt)}, inside the banking covenant.", (_m(debt),), (("net debt",),),
                     (f"Net debt a year ago was {_m(debt + _tenth(r, 10, 50))}.",)))
    # KPI pack
    arr = _tenth(r, 1200, 2600)
    out.append(_Fact(2, f"Annual recurring revenue reached {_m(arr)} at quarter end.", (_m(arr),), (("ARR", "recurring revenue"),),
                     (f"The ARR forecast in the last pack was {_m(arr + _tenth(r, 10, 40))}.",)))
    churn, before = _tenth(r, 21, 49), _tenth(r, 10, 20)
    out.append(_Fact(2, f"Customer churn rose to {churn}% from {before}% last quarter.", (_pct(churn),), (("churn",),)))
    heads = r.between(900, 3200)
    out.append(_Fact(2, f"Headcount closed at {heads:,} employees.", (f"{heads:,}",), (("headcount", "employees", "staff", "FTE", "people"),),
                     (f"Budgeted headcount was {heads + r.between(20, 90):,}.",)))
    nps = r.between(18, 45)
    out.append(_Fact(2, f"Net promoter score fell to {nps} from {nps + r.between(4, 12)}.", (str(nps),), (("NPS", "net promoter"),)))
    # risk register
    cyber = r.between(16, 25)
    out.append(_Fact(3, f"Cyber security is now the top risk, scored {cyber} out of 25 after a phishing incident in {month()}.",
                     (str(cyber),), (("cyber",),)))
    customer, share = r.choice(_CUSTOMERS), r.between(12, 28)
    out.append(_Fact(3, f"{customer}, our largest customer, accounts for {share}% of revenue and its contract is up for renewal.",
                     (_pct(share),), ((customer.split()[0],),)))
    exposure = _tenth(r, 12, 60)
    out.append(_Fact(3, f"A tax authority audit has an estimated exposure of {_m(exposure)}; no provision has been booked.",
                     (_m(exposure),), (("tax",), ("audit",))))
    supplier, sole = r.choice(_SUPPLIERS), r.between(30, 70)
    out.append(_Fact(3, f"Single-source supplier {supplier} provides {sole}% of components; a second source is being qualified.",
                     (_pct(sole),), ((supplier.split()[0],),)))
    # strategy update
    goal = _tenth(r, 2800, 4000)
    out.append(_Fact(4, f"The plan targets ARR of {_m(goal)} by FY{fy + 2}.", (_m(goal),), (("target", "plan", "ambition", "goal"),),
                     (f"The previous plan targeted ARR of {_m(goal - _tenth(r, 50, 200))}.",)))
    capex, city = _tenth(r, 80, 250), r.choice(_CITIES)
    out.append(_Fact(4, f"Capital expenditure of {_m(capex)} is requested for the new {city} facility.", (_m(capex),), ((city,),)))
    savings, roles = _tenth(r, 30, 120), r.between(60, 300)
    out.append(_Fact(4, f"The efficiency programme targets {_m(savings)} of annualised savings, affecting {roles} roles.",
                     (_m(savings), str(roles)), (("saving",),)))
    country, invest = r.choice(_COUNTRIES), _tenth(r, 30, 150)
    out.append(_Fact(4, f"Entry into {country} is planned for {month()} {fy + 1}, with launch investment of {_m(invest)}.",
                     (_m(invest),), ((country,),)))
    assert len(out) == FACT_COUNT
    return out


# --------------------------------------------------------------------------------------
# filler: non-key narrative and tables, per document kind

_HEADINGS = {
    "ceo": ("Trading", "Our people", "Customers", "Operations", "Outlook", "Governance"),
    "fs": ("Consolidated income statement", "Segment results", "Balance sheet", "Cash flow", "Working capital",
           "Notes to the accounts", "Other operating costs"),
    "kpi": ("Commercial KPIs", "Operational KPIs", "People KPIs", "Regional scorecard", "Service levels", "Pipeline"),
    "risk": ("Principal risks", "Risk heat map", "Emerging risks", "Mitigation actions", "Control environment"),
    "strategy": ("Strategic pillars", "Initiative tracker", "Market review", "Portfolio", "Milestones", "Investment case"),
}

_SENTENCES: tuple[Callable[[Stream], str], ...] = (
    lambda r: f"Order intake in {r.choice(_REGIONS)} was {_m(_tenth(r, 20, 240))}, against {_m(_tenth(r, 20, 240))} in the prior quarter.",
    lambda r: f"The {r.choice(_CITIES)} site ran at {_tenth(r, 600, 980)}% utilisation over the period.",
    lambda r: f"Average days sales outstanding were {r.between(38, 71)} days, with {_tenth(r, 20, 190)}% of receivables overdue.",
    lambda r: f"Inventory stood at {_m(_tenth(r, 50, 400))}, of which {_tenth(r, 20, 150)}% is older than 180 days.",
    lambda r: f"Training hours per employee averaged {_tenth(r, 40, 260)} in the quarter.",
    lambda r: f"We opened {r.between(2, 14)} new accounts in {r.choice(_REGIONS)} with an average contract value of {_m(_tenth(r, 2, 30))}.",
    lambda r: f"Freight costs per unit shipped moved by {_tenth(r, 5, 90)}% compared with the second half.",
    lambda r: f"The pipeline for the next two quarters is valued at {_m(_tenth(r, 300, 1500))}, weighted at {r.between(25, 60)}%.",
    lambda r: f"Employee engagement came in at {r.between(61, 84)}% in the pulse survey, on a {r.between(58, 90)}% response rate.",
    lambda r: f"Energy costs in {r.choice(_CITIES)} were {_m(_tenth(r, 3, 40))}, hedged at {r.between(40, 85)}% for next year.",
    lambda r: f"Warranty claims amounted to {_m(_tenth(r, 2, 30))}, or {_tenth(r, 2, 19)}% of product sales.",
    lambda r: f"Management reviewed {r.between(12, 48)} open audit actions, of which {r.between(2, 11)} are past due.",
    lambda r: f"{r.choice(_FIRST)} {r.choice(_LAST)} joined as regional director for {r.choice(_REGIONS)}.",
    lambda r: f"Service tickets resolved within target reached {_tenth(r, 800, 990)}% across {r.between(3, 9)} support hubs.",
    lambda r: f"The committee noted that {r.choice(_REGIONS)} contributed {_tenth(r, 40, 350)}% of segment profit.",
    lambda r: f"Software development costs of {_m(_tenth(r, 5, 60))} were capitalised in the period.",
)

_TABLE_ROWS = {
    "fs": ("Product revenue", "Services revenue", "Cost of sales", "Distribution costs", "Administrative expenses",
           "Research and development", "Depreciation", "Amortisation", "Finance costs", "Trade receivables",
           "Trade payables", "Inventories", "Provisions", "Lease liabilities", "Capital expenditure"),
    "kpi": ("Orders booked", "Units shipped", "On-time delivery %", "Average deal size", "Support tickets", "Win rate %",
            "Active customers", "Web leads", "First-time fix %", "Backlog weeks", "Attrition %", "Open vacancies"),
    "risk": ("R01 Market demand", "R02 Key supplier", "R03 Cyber security", "R04 Talent retention", "R05 FX exposure",
             "R06 Regulatory change", "R07 Product quality", "R08 Pension scheme", "R09 Climate transition",
             "R10 Data privacy", "R11 Project delivery", "R12 Liquidity"),
    "strategy": ("Platform migration", "Pricing reset", "Channel expansion", "Automation wave 2", "Shared services",
                 "Product line exit", "Partner programme", "Site consolidation", "Digital self-service"),
    "ceo": ("Group", "North America", "UK and Ireland", "Continental Europe", "Asia Pacific"),
}
_TABLE_HEADS = {
    "fs": ("$m", "Quarter", "Prior year", "Budget", "Year to date"),
    "kpi": ("KPI", "Month 1", "Month 2", "Month 3", "Target"),
    "risk": ("Risk", "Likelihood", "Impact", "Score", "Last score"),
    "strategy": ("Initiative", "Budget $m", "Spent $m", "Complete %", "Benefit $m"),
    "ceo": ("Region", "Orders $m", "Sales $m", "Margin %", "Staff"),
}


def _cell(r: Stream, kind: str, col: int) -> str:
    if kind == "risk":
        return str(r.between(1, 5)) if col < 2 else str(r.between(1, 25))
    if kind == "strategy" and col == 2:
        return str(r.between(5, 100))
    if kind == "ceo" and col == 3:
        return str(r.between(80, 2400))
    return str(_tenth(r, 5, 999))


def _table(r: Stream, kind: str, n: int) -> list[tuple[str, str]]:
    heads = _TABLE_HEADS[kind]
    rows = r.sample(_TABLE_ROWS[kind], min(n, len(_TABLE_ROWS[kind])))
    fmt = lambda cells: f"{cells[0]:<30}" + "".join(f"{c:>14}" for c in cells[1:])  # noqa: E731
    lines = [("th", fmt(heads))]
    lines += [("t", fmt((label, *(_cell(r, kind, k) for k in range(len(heads) - 1))))) for label in rows]
    return lines


def _wrap(text: str) -> list[str]:
    lines: list[str] = []
    current = ""
    for word in text.split(" "):
        if current and len(current) + 1 + len(word) > WRAP:
            lines.append(current)
            current = word
        else:
            current = f"{current} {word}" if current else word
    if current:
        lines.append(current)
    return lines


def _bullet(text: str) -> list[tuple[str, str]]:
    lines = _wrap(f"- {text}")
    return [("b", lines[0])] + [("b", f"  {line}") for line in lines[1:]]


def _paragraph(r: Stream, inserts: list[str]) -> list[tuple[str, str]]:
    sentences = [make(r) for make in r.sample(_SENTENCES, r.between(2, 4))]
    for text in inserts:
        sentences.insert(r.below(len(sentences) + 1), text)
    return [("p", line) for line in _wrap(" ".join(sentences))]


def _body_page(r: Stream, kind: str, inserts: list[str]) -> list[tuple[str, str]]:
    """One body page: headings, paragraphs and tables until the page is full; `inserts` go in paragraphs."""
    lines: list[tuple[str, str]] = []
    pending = list(inserts)
    headings = r.shuffled(_HEADINGS[kind])
    blocks = 0
    while True:
        block: list[tuple[str, str]] = [("h", headings[blocks % len(headings)])]
        take: list[str] = []
        if r.chance(2, 5) or kind in ("fs", "risk") and r.chance(1, 2):
            block += _table(r, kind, r.between(4, 8))
        else:
            take = pending[:1]
            block += _paragraph(r, take)
        if lines and len(lines) + len(block) + 1 > LINES_PER_PAGE:
            break
        pending = pending[len(take):]
        blocks += 1
        lines += ([("", "")] if lines else []) + block
    for text in pending:  # a page too short for its inserts still carries them
        lines += [("", "")] + _paragraph(r, [text])
    return lines


_NONKEY_BULLETS = {
    "ceo": ("Minutes of the previous meeting are in the reading room for approval.",
            "The annual board evaluation will run in the next quarter.",
            "Two site visits are proposed for the board this year."),
    "fs": ("The accounts have been prepared on the basis set out in the annual report.",
           "No changes to accounting policies were made this quarter.",
           "The audit committee reviewed the judgements in these statements."),
    "kpi": ("KPI definitions are unchanged from the last pack.",
            "Regional scorecards now include the service business.",
            "Data for the final month is provisional."),
    "risk": ("The risk appetite statement was refreshed in the quarter.",
             "Three emerging risks were added to the watch list.",
             "Internal audit tested the top ten controls."),
    "strategy": ("The strategy offsite is scheduled for the autumn.",
                 "Initiative owners presented progress to the executive committee.",
                 "The portfolio review covers all four strategic pillars."),
}


def _document(r: Stream, ctx: _Ctx, doc: int, buried: set[int], distractors: list[str]) -> list[list[tuple[str, str]]]:
    """The pages of document `doc` as (style, text) lines."""
    name, title, kind, (lo, hi) = DOCUMENTS[doc]
    n_pages = r.between(lo, hi)
    facts = [(i, f) for i, f in enumerate(ctx.facts) if f.doc == doc]
    nonkey = list(r.sample(_NONKEY_BULLETS[kind], 3))
    bullets = [f.sentence if i not in buried else nonkey.pop() for i, f in facts]
    bullets = r.shuffled(bullets)
    body_inserts: dict[int, list[str]] = {}
    for i, f in facts:
        if i in buried:
            body_inserts.setdefault(r.between(2, n_pages), []).append(f.sentence)
    for text in distractors:
        body_inserts.setdefault(r.between(2, n_pages), []).append(text)
    pages: list[list[tuple[str, str]]] = []
    for p in range(1, n_pages + 1):
        head = [("hd", f"{ctx.company} - {title} - {ctx.period}"), ("", "")]
        if p == 1:
            head += [("title", title), ("p", f"Board of Directors meeting, {ctx.period}. Prepared by {ctx.cfo if doc == 1 else ctx.ceo}."),
                     ("", ""), ("h", "Key points")] + [line for b in bullets for line in _bullet(b)] + [("", "")]
            body = _paragraph(r, [])
        else:
            body = _body_page(r, kind, sorted(body_inserts.get(p, [])))
        pages.append(head + body + [("", ""), ("ft", f"Page {p} of {n_pages} - Board of Directors - Confidential")])
    return pages


# --------------------------------------------------------------------------------------
# rendering

_STYLE = {"hd": ("Helvetica", 7.5, 14), "title": ("Helvetica-Bold", 16, 22), "h": ("Helvetica-Bold", 10.5, 15),
          "p": ("Helvetica", 9, 12), "b": ("Helvetica", 9, 12.5), "th": ("Courier-Bold", 8, 11), "t": ("Courier", 8, 11),
          "ft": ("Helvetica", 7.5, 12), "": ("Helvetica", 9, 6)}


def _render(title: str, company: str, pages: list[list[tuple[str, str]]]) -> bytes:
    buffer = io.BytesIO()
    c = new_canvas(buffer, A4, title=title, author=company, subject="Board pack")
    for page in pages:
        y = 800.0
        for style, text in page:
            font, size, leading = _STYLE[style]
            if style == "ft":
                y = min(y, 40.0)
            if text:
                c.setFont(font, size)
                c.drawString(50, y, text)
            y -= leading
        c.showPage()
    c.save()
    return buffer.getvalue()


def page_text(page: list[tuple[str, str]]) -> str:
    """The text of a page as models receive it: its lines, blank lines between blocks."""
    return "\n".join(text for _, text in page).strip("\n")


# --------------------------------------------------------------------------------------
# edition plan and the item


def _plan(seed: str, block: int) -> list[int]:
    return Stream(seed, "board-brief", "plan", block).shuffled(BURIED_PLAN)


def generate(seed: str, index: int, params: Mapping[str, Any]) -> Item:
    """Board pack `index` (0-based) of the edition drawn from `seed`."""
    block, slot = divmod(index, EDITION_SIZE)
    n_buried = _plan(seed, block)[slot]
    r = Stream(seed, "board-brief", "pack", index)
    year = 2026 + r.below(2)
    ctx = _Ctx(r.choice(_COMPANIES), r.between(1, 4), year,
               f"{r.choice(_FIRST)} {r.choice(_LAST)}", f"{r.choice(_FIRST)} {r.choice(_LAST)}", f"{r.choice(_FIRST)} {r.choice(_LAST)}")
    while len({ctx.ceo.split()[-1], ctx.cfo.split()[-1], ctx.chair.split()[-1]}) < 3:
        ctx.cfo = f"{r.choice(_FIRST)} {r.choice(_LAST)}"
        ctx.chair = f"{r.choice(_FIRST)} {r.choice(_LAST)}"
    ctx.facts = _facts(r.child("facts"), ctx)
    buried = set(r.child("buried").sample(range(FACT_COUNT), n_buried))
    # distractors live in a document other than the fact's own, in its body pages
    placed: dict[int, list[str]] = {}
    dr = r.child("distractors")
    for fact in ctx.facts:
        for text in fact.distractors:
            placed.setdefault(dr.choice([d for d in range(len(DOCUMENTS)) if d != fact.doc]), []).append(text)

    documents: list[dict[str, Any]] = []
    files: dict[str, bytes] = {}
    located: dict[int, tuple[str, int]] = {}
    for d, (name, title, _kind, _range) in enumerate(DOCUMENTS):
        pages = _document(r.child("doc", d), ctx, d, buried, placed.get(d, []))
        texts = [page_text(p) for p in pages]
        for i, fact in enumerate(ctx.facts):
            if fact.doc == d:
                flat = [" ".join(t.split()) for t in texts]
                located[i] = (name, next(n for n, t in enumerate(flat, 1) if fact.sentence in t))
        pdf = _render(f"{ctx.company} - {title}", ctx.company, pages)
        files[name] = pdf
        documents.append({"file": name, "title": title, "pdf_sha256": hashlib.sha256(pdf).hexdigest(),
                          "page_count": len(texts), "pages": [{"page": n, "text": t} for n, t in enumerate(texts, 1)]})
    context = {"pack_id": f"BP-{index + 1:03d}", "company": ctx.company, "period": ctx.period,
               "page_count": sum(doc["page_count"] for doc in documents), "documents": documents}
    key = {
        "facts": [{"id": f"F{i + 1:02d}", "text": f.sentence, "figures": list(f.figures), "terms": [list(g) for g in f.terms],
                   "file": located[i][0], "page": located[i][1], "in_key_points": i not in buried}
                  for i, f in enumerate(ctx.facts)],
        "buried": n_buried,
        "distractors": [t for f in ctx.facts for t in f.distractors],
    }
    return Item(index, f"board-pack-{index + 1:02d}", context, key, files=files)
