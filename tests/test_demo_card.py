"""The demo's card shows what the product is (issue 15 §1), on the committed demo lock.

The demo edition runs two embedded reference candidates with declared demo prices
(`lrc/careful`, flagship; `lrc/cheap`, candidate: lrc.runtime.models.reference). These tests
read the session's demo run (conftest.py `demo_run`) and check the card's kinds of line --
real rates with the cheapest qualifying model and the flagship, a CPO with its bootstrap
interval, a frontier premium, an agentic multiplier, a workload no model qualifies on, while
the oracle and the null model never appear as candidates (the full demo's own numbers: slow
tests) -- and that every line naming a candidate, in every published text, says "demo model,
demo price" (on the small demo by default, on the full demo as well under `--slow`). The candidates' policy itself
is checked in-process: deterministic, exact shares per 15 items, the same items under every
system.
"""

from __future__ import annotations

import html
import json
import re
from decimal import Decimal
from pathlib import Path

import pytest

from lrc.runtime.models import reference
from lrc.runtime.report.labels import DEMO_MODELS, DEMO_NOTE, model_label
from lrc.runtime.workloads.base import Item

CANDIDATES = ("lrc/careful", "lrc/cheap")
DOLLARS = re.compile(r"\$([0-9][0-9,]*\.[0-9]+)")


@pytest.fixture
def card(demo_run) -> str:
    out, res = demo_run
    assert res.returncode == 0, res.stdout + res.stderr
    return (out / "rate-card.md").read_text(encoding="utf-8")


def _rate_lines(card: str) -> list[str]:
    return [line for line in card.splitlines() if line.startswith("- ") and " — " in line]


@pytest.mark.slow  # the full demo's own card (n = 15 per cell)
def test_the_card_has_real_rates_from_the_cheap_and_the_flagship_candidate(card):
    lines = _rate_lines(card)
    assert lines
    cheap_first = [line for line in lines if f"({model_label('lrc/cheap')}, cheapest qualifying)" in line]
    assert cheap_first, "the cheap candidate is the cheapest qualifying model somewhere"
    for line in cheap_first:
        assert f"({model_label('lrc/careful')}, flagship)" in line
        rates = [Decimal(v.replace(",", "")) for v in DOLLARS.findall(line)]
        assert len(rates) >= 2 and all(r > 0 for r in rates), line  # priced, never $0.00
        assert rates[0] < rates[1], "the cheap rate is below the flagship's"
    triage = next(line for line in lines if line.startswith("- Sort 1,000 AP emails — "))
    assert "lrc/cheap" in triage and "lrc/careful" in triage


@pytest.mark.slow  # the full demo's own card (n = 15 per cell)
def test_the_card_shows_cpo_intervals_premium_multiplier_and_a_workload_nobody_qualifies_on(card):
    assert re.search(r"CPO \$[0-9.]+ \(bootstrap 95% \$[0-9.]+–\$[0-9.]+\)", card)
    premiums = re.findall(r"frontier premium \(flagship CPO ÷ cheapest-qualifying CPO\): ×([0-9.]+)", card)
    assert any(Decimal(p) > 1 for p in premiums)
    multipliers = re.findall(r"^- .* · lrc/(?:careful|cheap) \[demo model, demo price\]: ×([0-9.]+)$", card, re.M)
    assert multipliers and all(Decimal(m) > 0 for m in multipliers)
    nobody = [line for line in _rate_lines(card) if "no qualifying model at pass ≥ 0.80" in line]
    assert nobody, "at least one workload has no qualifying model"


@pytest.mark.slow  # the full demo's own card (n = 15 per cell)
def test_oracle_and_null_are_never_rated(card):
    for line in _rate_lines(card):
        assert "lrc/oracle" not in line and "lrc/null" not in line, line


def _lines_naming_a_candidate(text: str) -> list[str]:
    return [line for line in text.splitlines() if any(m in line for m in DEMO_MODELS)]


@pytest.mark.parametrize("name", ["rate-card.md", "reliability-report.md", "forecast-vs-actual.md", "report.html"])
def test_every_line_naming_a_candidate_says_demo_model_demo_price(demo_run_of_each_size, name, request):
    _, out, _ = demo_run_of_each_size
    if name == "reliability-report.md" and not (out / name).exists():  # the small demo runs no task: the tasks' own folder
        out, _ = request.getfixturevalue("task_subset_run")
    text = (out / name).read_text(encoding="utf-8")
    if name.endswith(".html"):
        # the page's visible text, one line per table row or paragraph (tags and SVG ids aside)
        body = re.sub(r"<svg.*?</svg>", "", text, flags=re.S)
        text = html.unescape(re.sub(r"<[^>]+>", " ", re.sub(r"</(tr|p|li|h[1-6]|div)>", "\n", body)))
    lines = _lines_naming_a_candidate(text)
    if name != "forecast-vs-actual.md":
        assert lines, f"{name} names no candidate"
    for line in lines:
        for model in DEMO_MODELS:
            for m in re.finditer(re.escape(model), line):
                # the label, or the demo price's own source note ("… lrc/cheap is an embedded demo model …"),
                # or a run key (workload|model|system|item|rN: a partial folder lists the runs not made)
                rest = line[m.end():]
                in_key = line[m.start() - 1:m.start()] == "|" and rest.startswith("|")
                assert rest.startswith(f" [{DEMO_NOTE}]") or rest.startswith(" is an embedded demo model") or in_key, \
                    f"{name}: {line}"


def test_the_charts_legends_carry_the_label(demo_run_of_each_size):
    _, out, _ = demo_run_of_each_size
    page = (out / "report.html").read_text(encoding="utf-8")
    svgs = re.findall(r"<svg.*?</svg>", page, flags=re.S)
    legend = " ".join(svgs)
    for model in CANDIDATES:
        assert html.escape(model_label(model)) in legend or model_label(model) in legend


def test_the_candidates_are_priced_declared_demo_prices_in_the_lock():
    from helpers.project import REPO

    plan = json.loads((REPO / "generated" / "demo" / "plan.lock").read_bytes())["plan"]
    for model in CANDIDATES:
        entry = plan["models"][model]
        assert entry["reference"] is True and entry["role"] in ("flagship", "candidate")
        assert Decimal(entry["price"]["input"]) > 0 and Decimal(entry["price"]["output"]) > 0
        assert "demo price" in entry["price"]["source"]


class _Policies:
    """A workload's reference component reduced to what the candidates pick between."""

    @staticmethod
    def oracle(messages, tools, item):
        return reference.Reply(content="oracle")

    @staticmethod
    def baseline(messages, tools):
        return reference.Reply(content="baseline")


def _answers(name: str, workload: str, n: int) -> list[str]:
    out = []
    for index in range(n):
        item = Item(index=index, item_id=f"i-{index:02d}", context={}, answer_key={})
        token = reference.CURRENT.set(reference.ReferenceContext(_Policies(), item, workload=workload))
        try:
            out.append(reference.respond(f"lrc/{name}", [{"role": "user", "content": "x"}], None).content)
        finally:
            reference.CURRENT.reset(token)
    return out


@pytest.mark.parametrize("name", sorted(reference.CANDIDATES))
@pytest.mark.parametrize("workload", ["triage.ap-inbox.v4", "reconcile.ledger.v4", "query.nl2sql.v4", "a.new-workload.v1"])
def test_a_candidate_misses_exactly_its_share_of_every_15_items(name, workload):
    skill = reference.CANDIDATES[name]
    misses = skill.misses.get(workload.rsplit(".v", 1)[0], skill.default_misses)
    answers = _answers(name, workload, 45)
    for block in range(3):
        assert answers[15 * block:15 * (block + 1)].count("baseline") == misses
    assert answers == _answers(name, workload, 45), "deterministic"
    # the version does not move the missed items: a re-versioned workload stays comparable
    assert answers == _answers(name, workload.rsplit(".v", 1)[0] + ".v9", 45)


def test_a_task_is_missed_by_its_id():
    for name, skill in reference.CANDIDATES.items():
        for task in ("fa.extend-quarter.v5", "fa.fix-sign.v5", "fa.refresh-deck-table.v5"):
            expected = "baseline" if task.rsplit(".v", 1)[0] in skill.tasks_missed else "oracle"
            assert _answers(name, task, 1) == [expected]


def test_a_candidate_outside_a_run_is_refused():
    token = reference.CURRENT.set(None)
    try:
        with pytest.raises(LookupError):
            reference.respond("lrc/careful", [], None)
    finally:
        reference.CURRENT.reset(token)


def test_the_label_is_only_for_the_candidates():
    assert model_label("lrc/careful") == "lrc/careful [demo model, demo price]"
    for other in ("lrc/oracle", "lrc/null", "lrc/baseline", "openai/gpt-4.1", "lrc/careful-2"):
        assert model_label(other) == other
