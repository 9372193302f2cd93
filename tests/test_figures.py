"""Tests of runtime/checks/figures.py: every declared reading and matching rule, number
boundaries, and linear time on hostile text."""

from __future__ import annotations

import time
from decimal import Decimal

import pytest
from hypothesis import given, settings, strategies as st

from lrc.runtime.checks import figures
from lrc.runtime.checks.figures import Rules, TextTooLong, check, cited_figures, matches, scan, unmatched

D = Decimal


def kinds(text: str) -> list[tuple[str, str]]:
    return [(f.text, f.kind) for f in scan(text)]


def values(text: str) -> list[Decimal]:
    return [f.value for f in cited_figures(text)]


# --- reading --------------------------------------------------------------------------


@pytest.mark.parametrize("text, expected", [
    ("1.5m", D("1500000")), ("$1.5 million", D("1500000")), ("1.5M", D("1500000")), ("€1.2bn", D("1200000000")),
    ("12%", D("12")), ("12.5 %", D("12.5")), ("(1,234)", D("-1234")), ("-1,234.50", D("-1234.50")),
    ("+4.2k", D("4200")), ("1,234,567.89", D("1234567.89")), ("USD 1,200", D("1200")), ("1,200 USD", D("1200")),
    ("US$5k", D("5000")), ("−7,500", D("-7500")), ("($1.2m)", D("-1200000")), ("4 k", D("4000")),
    ("2 thousand", D("2000")), ("3.1 billion", D("3100000000")), ("12 per cent", D("12")), ("2.5pp", D("2.5")),
    ("15 bps", D("0.15")), (".5%", D("0.5")), ("４２０", D("420")), ("1,200€", D("1200")), ("7.5 percent", D("7.5")),
    ("1.5mn", D("1500000")), ("2MM", D("2000000")), ("9B", D("9000000000")),
])
def test_one_figure_is_read_with_its_value(text, expected):
    found = cited_figures(f"Note: {text} here.")
    assert [f.value for f in found] == [expected]
    assert found[0].text == text


def test_percent_and_scale_flags():
    pct, money = cited_figures("down 12.5% or $1.50m")
    assert pct.percent and pct.decimals == 1 and pct.scale == 0
    assert not money.percent and money.scale == 6 and money.decimals == 2 and money.currency == "$"
    assert money.mantissa == D("1.50")


@pytest.mark.parametrize("text, expected", [
    ("1,000", [D(1000)]), ("2100", [D(2100)]),   # 2100 is a year only if plain and 4 digits: see below
    ("1,23", [D(23)]),                           # R3: "1" is a count, "23" a figure
    ("1.234,56", [D("1.234"), D(56)]),           # R3: US grouping only
    ("12,34,567", [D(34567)]),                   # "12" a count, then a well-formed 34,567
    ("1234,567", [D(1234), D(567)]),             # first group of 4 digits: the comma is punctuation
    ("1,2345", [D(2345)]),
    ("revenue 100, cogs 200.", [D(100), D(200)]),  # a trailing "," or "." is punctuation
])
def test_number_boundaries(text, expected):
    if text == "2100":
        assert kinds(text) == [("2100", "year")]
        return
    assert values(text) == expected


def test_100_never_matches_inside_bigger_numbers():
    for text in ("1,000", "2100 units", "1.005", "100.5", "$1,100", "1001", "100k", "100%"):
        assert unmatched(cited_figures(text), [D(100)]) == cited_figures(text), text
    assert unmatched(cited_figures("100"), [D(100)]) == []


@pytest.mark.parametrize("text, kind", [
    ("2026", "year"), ("in 1999", "year"), ("2026-11-03", "date"), ("03/11/2026", "date"), ("11/2026", "date"),
    ("2026-11", "date"), ("11/3", "date"), ("14:30", "time"), ("3 Nov", "day"), ("Nov 3", "day"),
    ("3rd November", "day"), ("November 30", "day"), ("1st", "ordinal"), ("22nd", "ordinal"), ("F01", "identifier"),
    ("Q3", "identifier"), ("FY2026", "identifier"), ("top-3", "identifier"), ("COVID-19", "identifier"),
    ("3D", "identifier"), ("10am", "identifier"), ("an 18-month lease", "identifier"), ("30-Nov", "day"),
    ("Nov-30", "identifier"), ("v1.2.3", "version"), ("2026.11.03", "version"), ("#1", "marker"),
    ("top 3 drivers", "count"), ("12 lines", "count"), ("see (2)", "count"),
])
def test_declared_exclusions(text, kind):
    found = scan(text)
    assert found and all(f.kind == kind for f in found), found
    assert cited_figures(text) == []


def test_hyphenated_dates_and_compounds():
    assert kinds("30-Nov-2026") == [("30", "day"), ("2026", "identifier")]
    assert values("a $5-million deal and a 5%-point gap") == [D(5000000), D(5)]


def test_list_markers_and_the_figures_after_them():
    text = "1. Revenue +$120,500 (4.2%)\n2) COGS -35,000\n  - 3. Opex 15.5%\n(4) Travel 1,250\ndrivers: 5) rent"
    assert [(f.text, f.kind) for f in scan(text) if f.kind == "marker"] == [("1", "marker"), ("2", "marker"), ("3", "marker"),
                                                                           ("(4)", "marker"), ("5", "marker")]
    assert values(text) == [D(120500), D("-4.2"), D(-35000), D("15.5"), D(1250)]


def test_years_and_small_integers_are_figures_when_decorated():
    assert values("$2026 and 2,026 and 2026.5 and 2026%") == [D(2026), D(2026), D("2026.5"), D(2026)]
    assert values("$3 and 3% and -3 and 3k") == [D(3), D(3), D(-3), D(3000)]
    assert values("range 10-12%") == [D(12)]   # 10 is a count, 12% a percent
    assert values("2025-2030 growth 15-40") == [D(15), D(40)]


def test_count_rule_can_be_switched_off():
    assert [f.value for f in cited_figures("top 3 drivers", Rules(count_max=None))] == [D(3)]
    assert [f.value for f in cited_figures("13 lines")] == [D(13)]


def test_span_and_negative_flags():
    (f,) = cited_figures("a ($1,234.5k) b")
    assert f.text == "($1,234.5k)" and f.negative and f.value == D("-1234500")
    (g,) = cited_figures("x: -12%")
    assert g.negative and g.percent and g.value == D(-12)
    (h,) = cited_figures("1-2,000")   # a "-" after a digit is a separator, not a sign
    assert not h.negative


# --- matching -------------------------------------------------------------------------


def test_written_precision_matching():
    (m,) = cited_figures("1.5m")
    assert matches(m, D("1450000")) and matches(m, D("1550000")) and matches(m, D("-1500000"))
    assert not matches(m, D("1449999.99")) and not matches(m, D("1550000.01"))
    (i,) = cited_figures("1,234")
    assert matches(i, D("1234.4")) and matches(i, D("1233.5")) and not matches(i, D("1234.51"))
    (c,) = cited_figures("1,234.56")
    assert matches(c, D("1234.555")) and not matches(c, D("1234.566"))


def test_coarse_scaled_figures_match_only_exactly():
    (two,) = cited_figures("$2m")
    assert matches(two, D(2000000)) and not matches(two, D(1600000)) and not matches(two, D(2000001))
    (two_one,) = cited_figures("$2.1m")
    assert matches(two_one, D(2140000))
    assert matches(cited_figures("$12k")[0], D(12400))   # two significant digits
    assert not matches(cited_figures("$0.1m")[0], D(120000))


def test_percent_matches_percent_allowed_at_written_precision():
    found = cited_figures("up 12% then 12.3% then 12.35% and 5%")
    assert unmatched(found, [D(12), D(5)], [D("12.3456"), D("4.7")]) == []
    assert [f.text for f in unmatched(found, [D("12.3456")], [D("11.4")])] == ["12%", "12.3%", "12.35%", "5%"]
    assert [f.text for f in unmatched(cited_figures("12.4%"), [], [D("12.3456")])] == ["12.4%"]


def test_unmatched_reports_only_figures_and_keeps_order():
    text = "1. In Nov 2026 revenue was $1.5m vs budget $1,400,000 (+7.1%); F02 says 999 and top 3."
    bad = check(text, [D(1500000), D(1400000)], [D("7.142857")])
    assert [f.text for f in bad] == ["999"]
    assert unmatched(cited_figures("5,000"), []) == cited_figures("5,000")


def test_overlong_numerals_never_match():
    big = "9" * 60
    (f,) = cited_figures(big)
    assert f.overlong and not matches(f, D(big))
    assert unmatched([f], [D(big)]) == [f]


def test_hostile_and_odd_inputs():
    with pytest.raises(TextTooLong):
        scan("1" * (figures.MAX_TEXT_CHARS + 1))
    with pytest.raises(TypeError):
        scan(123)  # type: ignore[arg-type]
    for text in ("", ".", ",", "-", "(", ")", "%", "$", "1", ".1.", ",1,", "1,,", "((1))", "1%%", "$$1", "\u0000 1 \ud800",
                 "1e5", "NaN", "Infinity", "1_000", "٣٤٥", "¹²³", "½"):
        for f in scan(text):
            assert f.text == text[f.start:f.end]
            assert f.value.is_finite()


# --- time -----------------------------------------------------------------------------

HOSTILE = [
    "1," * 22_000, "1." * 22_000, "(" * 22_000 + "1", "-" * 22_000 + "1", "1" * 122_000, "1 k " * 11_000,
    "$" * 22_000 + "1", "a1" * 22_000, "1-" * 22_000, "1/" * 22_000, "1:" * 22_000, ("Nov 3 " * 8_000),
    "1,234.5" + ".5" * 22_000, "%1" * 22_000, ("x" * 5000 + "1") * 9,
]


@pytest.mark.parametrize("text", HOSTILE, ids=range(len(HOSTILE)))
def test_linear_time_on_hostile_text(text):
    # CPU time, not wall time: on a loaded machine (CI, the suite's other workers) wall time
    # grew 7x (0.29 s -> 2.06 s) while the work did not.
    start = time.process_time()
    found = scan(text[: figures.MAX_TEXT_CHARS])
    unmatched(found, [D(1)], [D(1)])
    elapsed = time.process_time() - start
    assert elapsed < 2.0, elapsed   # ~5x10^4 characters; ~0.3 s here; a quadratic reader would need minutes


def test_time_grows_linearly():
    def cost(n: int) -> float:
        text = "12,345 " * n
        start = time.process_time()
        scan(text)
        return time.process_time() - start

    small, large = min(cost(2000) for _ in range(3)), min(cost(16000) for _ in range(3))
    assert large < 8 * small * 3, (small, large)


# --- properties -----------------------------------------------------------------------


FAST = settings(max_examples=150, deadline=None)


@FAST
@given(st.integers(min_value=13, max_value=10**12), st.integers(min_value=0, max_value=2))
def test_a_formatted_number_reads_back(n, places):
    value = D(n).scaleb(-places)
    text = f"{value:,.{places}f}"
    (f,) = cited_figures(f"Actual was {text} against budget.")
    assert f.value == value and f.text == text
    assert unmatched([f], [value]) == []


@FAST
@given(st.integers(min_value=100, max_value=10**9), st.integers(min_value=1, max_value=9))
def test_a_prefix_or_suffix_of_digits_never_matches(n, extra):
    text = str(n)
    longer = [text + str(extra), str(extra) + text, f"{n:,}" + ",000"]
    for other in longer:
        assert not any(f.mantissa == D(n) or f.value == D(n) for f in scan(other)), other


@FAST
@given(st.text(alphabet=st.sampled_from(list("0123456789.,-+()%$€ kKmMbnB/:\n#FQ3xNov")), max_size=200))
def test_any_text_reads_without_error_and_spans_are_exact(text):
    for f in scan(text):
        assert text[f.start:f.end] == f.text
        assert f.kind in {"figure", "year", "date", "time", "day", "ordinal", "marker", "identifier", "count", "version"}
    unmatched(scan(text), [D(1)], [D(1)])


@FAST
@given(st.decimals(min_value=D("0.01"), max_value=D("999999999"), places=2), st.sampled_from([("k", 3), ("m", 6), ("bn", 9)]))
def test_scaled_rounding_matches_its_source(source, suffix):
    word, power = suffix
    shown = (source.scaleb(-power)).quantize(D("0.01"))
    (f,) = cited_figures(f"about {shown}{word} ")
    if len(str(shown).replace(".", "").lstrip("0")) >= 2:
        assert matches(f, source)


# -- the C-level fast paths read exactly what the per-character rules say ---------------------

def _naive_runs(s: str) -> list[tuple[int, int]]:
    """R2 one character at a time: [start, end) of every maximal numeral run."""
    n, i, out = len(s), 0, []
    while i < n:
        lead_dot = s[i] == "." and i + 1 < n and s[i + 1].isdigit() and s[i + 1].isascii() and (i == 0 or not ("0" <= s[i - 1] <= "9"))
        if not ("0" <= s[i] <= "9" or lead_dot):
            i += 1
            continue
        j = i + 1 if lead_dot else i
        while j < n and ("0" <= s[j] <= "9" or (s[j] in ".," and j + 1 < n and "0" <= s[j + 1] <= "9")):
            j += 1
        out.append((i, j))
        i = j
    return out


def _naive_lead(s: str) -> list[bool]:
    lead, ok = [], True
    for ch in s:
        lead.append(ok)
        ok = True if ch in "\n\r" else ok and (ch.isspace() or ch in figures._BULLETS)
    return lead + [ok]


_FAST_PATH_TEXT = st.text(alphabet=st.sampled_from(list("0123456789.,- \n\r\t*•#>x\u00a0\u2028\u0663\uff15")), max_size=80)


@settings(max_examples=300, deadline=None)
@given(_FAST_PATH_TEXT)
def test_numeral_runs_and_line_leads_match_the_per_character_rules(text):
    s = figures._normalize(text)
    assert len(s) == len(text)
    assert [(m.start(), m.end()) for m in figures._NUMERAL_RUN.finditer(s)] == _naive_runs(s)
    lead = figures._LineLead(s)
    assert [lead[i] for i in range(len(s) + 1)] == _naive_lead(s)


def test_normalize_maps_only_decimal_digits_and_spaces():
    assert figures._normalize("ab 12") == "ab 12"
    assert figures._normalize("\u0661\u0662\u00a0\uff13%\u2028é") == "12 3%\u2028é"
