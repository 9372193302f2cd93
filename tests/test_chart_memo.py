"""The sealed per-user memo of the page's charts (lrc.runtime.report.chart_memo).

It may only ever save time: a hit is byte for byte the SVG matplotlib draws for those inputs;
any change to an input, to the drawing code or to the drawing libraries is a miss; an entry
not sealed by this user's key (planted, damaged, another entry's) is never trusted; inputs
that are not plain JSON are drawn and never remembered; a cache that cannot be written costs
nothing but time; and `memo=False` (what `lrc verify` passes) draws every chart, whatever the
memo holds. End to end: a run folder's page is the same with the memo off, cold and warm.
"""

from __future__ import annotations

import copy
import json
import math
from pathlib import Path

import pytest

from lrc.runtime.lock import sealing
from lrc.runtime.report import chart_memo, charts
from lrc.runtime.report.chart_memo import ChartMemo

from helpers.memos import SEAL_DAMAGE, bump_library_version, damage_entry, entries, private_user_cache

POINT = {"model": "a/cheap", "check": False, "pass_rate": 0.6, "wilson_low": 0.36, "wilson_high": 0.8,
         "cpo": 0.002, "cpo_low": 0.0015, "cpo_high": 0.003}
CHECK = {"model": "lrc/oracle", "check": True, "pass_rate": 1.0, "wilson_low": 0.8, "wilson_high": 1.0,
         "cpo": 0.0, "cpo_low": 0.0, "cpo_high": 0.0}
INPUTS = ("extract.invoice.v9", "Process 1,000 invoices: CPO vs pass rate",
          [{"system": "single-shot", "points": [POINT, CHECK]}, {"system": "agentic", "points": [dict(POINT, cpo=None)]}],
          "Brand · methodology v1.0 · edition 2026-01-01", 0.8)


class Counting:
    """`charts.pareto_svg`, counting its calls."""

    def __init__(self):
        self.calls = 0

    def __call__(self, *args):
        self.calls += 1
        return charts.pareto_svg(*args)


@pytest.fixture
def user_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    return private_user_cache(tmp_path, monkeypatch, "charts")


def test_a_second_draw_of_the_same_chart_is_a_hit_and_the_same_bytes(user_cache):
    draw = Counting()
    first = ChartMemo().svg(draw, *copy.deepcopy(INPUTS))
    memo = ChartMemo()  # another process, the same user
    again = memo.svg(draw, *copy.deepcopy(INPUTS))
    assert draw.calls == 1 and (memo.hits, memo.misses) == (1, 0)
    assert again == first == charts.pareto_svg(*copy.deepcopy(INPUTS))
    assert len(entries(user_cache)) == 1


def _changed(change: str) -> tuple:
    key, title, panels, footer, threshold = copy.deepcopy(INPUTS)
    if change == "key":
        key = "extract.invoice.v10"
    elif change == "title":
        title += "!"
    elif change == "a point's value":  # the smallest change a float can make
        panels[0]["points"][0]["cpo_high"] = math.nextafter(0.003, 1.0)
    elif change == "a point's role":
        panels[0]["points"][0]["check"] = True
    elif change == "panel order":
        panels.reverse()
    elif change == "footer":
        footer = footer.replace("2026", "2027")
    elif change == "threshold":
        threshold = 0.75
    return key, title, panels, footer, threshold


@pytest.mark.parametrize("change", ["key", "title", "a point's value", "a point's role", "panel order", "footer", "threshold",
                                    "drawing code", "library"])
def test_anything_that_decides_the_bytes_is_in_the_key(user_cache, monkeypatch, change):
    draw = Counting()
    ChartMemo().svg(draw, *copy.deepcopy(INPUTS))
    inputs = INPUTS
    if change == "drawing code":
        real = chart_memo._sources
        monkeypatch.setattr(chart_memo, "_sources", lambda: {**real(), "charts.py": "0" * 64})
    elif change == "library":
        bump_library_version(monkeypatch, "matplotlib")
    else:
        inputs = _changed(change)
    memo = ChartMemo()
    assert memo.svg(draw, *copy.deepcopy(inputs)) == charts.pareto_svg(*copy.deepcopy(inputs))
    assert draw.calls == 2 and memo.misses == 1


def test_the_drawing_code_named_in_the_key_is_the_code_that_draws():
    """The source digests cover the modules the chart's bytes come from: charts.py and the labels it prints."""
    assert set(chart_memo.DRAWING_MODULES) == {Path(charts.__file__).name, Path(charts.model_label.__code__.co_filename).name}


@pytest.mark.parametrize("damage", ["flipped byte", "another user's key", "truncated", "another entry's name", "not an svg"])
def test_an_entry_not_sealed_by_this_user_is_never_trusted(user_cache, damage):
    draw = Counting()
    ChartMemo().svg(draw, *copy.deepcopy(INPUTS))
    [path] = entries(user_cache)
    forged = {"key": path.stem, "svg": "<svg>forged</svg>"}
    if damage in SEAL_DAMAGE:
        damage_entry(path, damage, forged)
    elif damage == "another entry's name":  # a valid entry of other inputs, copied under this name
        ChartMemo().svg(draw, *_changed("title"))
        source = next(p for p in entries(user_cache) if p != path)
        path.write_bytes(source.read_bytes())
    else:  # sealed by this user, but no SVG text in it
        path.write_bytes(sealing.seal(sealing.secret(), json.dumps({"key": path.stem, "svg": 7}).encode()))
    memo = ChartMemo()
    assert memo.svg(draw, *copy.deepcopy(INPUTS)) == charts.pareto_svg(*copy.deepcopy(INPUTS))
    assert memo.hits == 0 and memo.misses == 1


@pytest.mark.parametrize("off", ["LRC_NO_CACHE", "enabled=False"])
def test_off_the_memo_neither_reads_nor_writes(user_cache, monkeypatch, off):
    draw = Counting()
    ChartMemo().svg(draw, *copy.deepcopy(INPUTS))
    [path] = entries(user_cache)
    trusted_but_wrong = {"key": path.stem, "svg": "<svg>stale</svg>"}  # as if drawn by another matplotlib
    path.write_bytes(sealing.seal(sealing.secret(), json.dumps(trusted_but_wrong).encode()))
    if off == "LRC_NO_CACHE":
        monkeypatch.setenv("LRC_NO_CACHE", "1")
    memo = ChartMemo(enabled=off != "enabled=False")
    assert memo.svg(draw, *copy.deepcopy(INPUTS)) == charts.pareto_svg(*copy.deepcopy(INPUTS))
    assert memo.svg(draw, *_changed("title")) == charts.pareto_svg(*_changed("title"))
    assert draw.calls == 3 and memo.hits == 0
    assert entries(user_cache) == [path]  # nothing new was written


def test_inputs_that_are_not_plain_json_are_drawn_and_never_remembered(user_cache):
    key, title, panels, footer, _ = copy.deepcopy(INPUTS)
    draw = Counting()
    memo = ChartMemo()
    for _ in range(2):
        memo.svg(draw, key, title, panels, footer, math.nan)
    assert draw.calls == 2 and memo.hits == 0 and entries(user_cache) == []


def test_a_cache_that_cannot_be_written_only_costs_time(user_cache):
    user_cache.parent.mkdir(parents=True, exist_ok=True)
    user_cache.write_text("a file where the folder goes")
    draw = Counting()
    for _ in range(2):
        assert ChartMemo().svg(draw, *copy.deepcopy(INPUTS)) == charts.pareto_svg(*copy.deepcopy(INPUTS))
    assert draw.calls == 2


def test_a_run_folders_page_is_the_same_with_the_memo_off_cold_and_warm(small_demo_run, user_cache, monkeypatch):
    lock_path, out, res = small_demo_run
    assert res.returncode == 0, res.stderr
    from lrc.runtime.report import html

    lock = json.loads(lock_path.read_text(encoding="utf-8"))
    drawn = []
    real = charts.pareto_svg
    monkeypatch.setattr(charts, "pareto_svg", lambda *a: drawn.append(a[0]) or real(*a))
    off = html.build_page(lock, out, memo=False)
    charts_on_page = len(drawn)
    assert charts_on_page >= 7
    assert html.build_page(lock, out) == off  # cold: drawn and remembered
    assert len(drawn) == 2 * charts_on_page and len(entries(user_cache)) == charts_on_page
    assert html.build_page(lock, out) == off == (out / "report.html").read_text(encoding="utf-8")  # warm
    assert len(drawn) == 2 * charts_on_page  # nothing drawn
    # What `lrc verify` passes: every chart drawn, whatever the memo holds (here: a trusted entry gone stale).
    for path in entries(user_cache):
        path.write_bytes(sealing.seal(sealing.secret(), json.dumps({"key": path.stem, "svg": "<svg>stale</svg>"}).encode()))
    assert html.build_page(lock, out, memo=False) == off
    assert len(drawn) == 3 * charts_on_page
