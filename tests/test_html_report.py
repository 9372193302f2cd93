"""OUT/report.html (runtime/report/html.py, charts.py): self-contained, reproducible, honest
about what was not measured, safe with hostile strings, and drawn by a real browser."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from decimal import Decimal
from fractions import Fraction
from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st

from helpers import browser
from helpers.project import REPO, run_lrc

CHART_INPUT = {
    "key": "extract.invoice.v9", "title": "Process 1,000 invoices: CPO vs pass rate", "footer": "Brand · methodology v1.0 · edition 2026-01-01",
    "threshold": 0.8,
    "panels": [{"system": "single-shot", "points": [
        {"model": "a/cheap", "check": False, "pass_rate": 0.6, "wilson_low": 0.36, "wilson_high": 0.8, "cpo": 0.002, "cpo_low": 0.0015, "cpo_high": 0.003},
        {"model": "b/flagship", "check": False, "pass_rate": 0.93, "wilson_low": 0.7, "wilson_high": 0.99, "cpo": 0.02, "cpo_low": 0.018, "cpo_high": 0.024},
        {"model": "c/never", "check": False, "pass_rate": 0.0, "wilson_low": 0.0, "wilson_high": 0.2, "cpo": None, "cpo_low": None, "cpo_high": None},
    ]}],
}


def _lock(path: Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))


def _copy(src: Path, dst: Path) -> Path:
    shutil.copytree(src, dst, symlinks=True)
    return dst


@pytest.fixture(scope="module")
def small(small_demo_run):
    lock, out, res = small_demo_run
    assert res.returncode == 0, res.stderr
    return lock, out


def test_execute_writes_a_self_contained_page(small):
    _, out = small
    page = (out / "report.html").read_text(encoding="utf-8")
    assert page.startswith("<!DOCTYPE html>")
    assert "<script" not in page.lower()  # no script at all, inline or not
    assert not re.search(r"""(?:src|href)\s*=\s*["']?\s*(?:https?:)?//""", page, re.I)  # nothing remote
    assert not re.search(r"@import|url\(\s*['\"]?(?:https?:)?//", page, re.I)  # no remote CSS
    hrefs = re.findall(r'href="([^"]+)"', page)
    ids = set(re.findall(r'\bid="([^"]+)"', page))
    for ref in (h for h in hrefs if h.startswith("#")):  # the SVGs' own markers and clip paths
        assert ref[1:] in ids, ref
    hrefs = [h for h in hrefs if not h.startswith("#")]
    assert hrefs, "failure examples link to their trace files"
    for href in hrefs:  # every link is a relative path to a file of the folder itself
        assert not href.startswith(("/", "file:")) and ".." not in href, href
        assert (out / href).is_file(), href
    assert any(h.endswith("/trace.json") for h in hrefs)
    assert page.count("<svg") >= 7  # a chart per workload


def test_same_run_folder_gives_the_same_bytes(small, tmp_path):
    lock, out = small
    from lrc.runtime.report import html

    first = html.build_page(_lock(lock), out, memo=False)  # every chart drawn (as `lrc verify` does)
    assert first == html.build_page(_lock(lock), out) == (out / "report.html").read_text(encoding="utf-8")
    # a copy of the folder elsewhere: same page (no absolute path in it)
    assert html.build_page(_lock(lock), _copy(out, tmp_path / "elsewhere")) == first


def test_chart_svg_is_byte_identical_across_processes_and_hash_seeds(tmp_path):
    script = ("import json, sys; from lrc.runtime.report.charts import pareto_svg; a = json.loads(sys.argv[1]); "
              "sys.stdout.write(pareto_svg(a['key'], a['title'], a['panels'], a['footer'], a['threshold']))")
    outs = [subprocess.run([sys.executable, "-c", script, json.dumps(CHART_INPUT)], capture_output=True, text=True, check=True,
                           env={**os.environ, "PYTHONHASHSEED": seed}).stdout for seed in ("1", "4242")]
    assert outs[0] == outs[1]
    svg = outs[0]
    assert svg.startswith("<svg") and "<?xml" not in svg
    assert "Date" not in svg and "matplotlib v" not in svg  # no timestamp, no version string
    assert "no success" in svg and "c/never" in svg  # the model without a success is drawn in its band, labelled
    assert "quality bar 0.80" in svg and CHART_INPUT["footer"] in svg  # the bar and the standard footer on the chart


def _drawn_marks(panel: dict, colour: dict[str, str]) -> tuple[set, dict]:
    """What a panel draws for its points: every bar as ((x0, y0), (x1, y1), colour), and every
    marker position with its (edge colour, face colour), whichever artists carry them."""
    import matplotlib

    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt
    from matplotlib.collections import LineCollection, PathCollection
    from matplotlib.colors import to_hex

    from lrc.runtime.report import charts

    fig, ax = plt.subplots()
    try:
        charts._panel(ax, panel, colour, 0.8)
        bars = set()
        for coll in ax.collections:
            if isinstance(coll, LineCollection):
                colours = [to_hex(c) for c in coll.get_colors()]
                for i, seg in enumerate(coll.get_segments()):
                    (x0, y0), (x1, y1) = seg
                    bars.add(((round(x0, 9), round(y0, 9)), (round(x1, 9), round(y1, 9)), colours[i % len(colours)]))
        marks: dict = {}
        for coll in ax.collections:
            if isinstance(coll, PathCollection):
                edges = [to_hex(c) for c in coll.get_edgecolors()]
                faces = [to_hex(c) for c in coll.get_facecolors()]
                for i, (x, y) in enumerate(coll.get_offsets()):
                    marks.setdefault((round(float(x), 9), round(float(y), 9)), []).append((edges[i % len(edges)], faces[i % len(faces)]))
        for line in ax.lines:
            if line.get_marker() not in (None, "None", "", " "):
                for x, y in zip(line.get_xdata(), line.get_ydata()):
                    marks.setdefault((round(float(x), 9), round(float(y), 9)), []).append(
                        (to_hex(line.get_markeredgecolor()), to_hex(line.get_markerfacecolor())))
        return bars, marks
    finally:
        plt.close(fig)


def test_each_point_is_drawn_with_its_wilson_bar_its_cpo_bar_and_caps_in_its_colour():
    panel = {"system": "single-shot", "points": [
        {"model": "a/m", "check": False, "pass_rate": 0.5, "wilson_low": 0.25, "wilson_high": 0.75,
         "cpo": 0.02, "cpo_low": 0.01, "cpo_high": 0.04},
        {"model": "b/never", "check": False, "pass_rate": 0.0, "wilson_low": 0.0, "wilson_high": 0.25,
         "cpo": None, "cpo_low": None, "cpo_high": None},
        {"model": "lrc/oracle", "check": True, "pass_rate": 1.0, "wilson_low": 0.75, "wilson_high": 1.0,
         "cpo": 0.01, "cpo_low": None, "cpo_high": None}]}
    a, b, grey = "#1f5fa8", "#c2410c", "#8a8a8a"
    bars, marks = _drawn_marks(panel, {"a/m": a, "b/never": b})
    band_middle = round((0.04 * 1.14 + 0.04 * 1.42) / 2, 9)  # a model with no success: drawn in its band
    assert bars == {((0.01, 0.5), (0.04, 0.5), a), ((0.02, 0.25), (0.02, 0.75), a),  # CPO (bootstrap) and Wilson bars
                    ((band_middle, 0.0), (band_middle, 0.25), b),                     # no CPO: the Wilson bar only
                    ((0.01, 0.75), (0.01, 1.0), grey)}                                # a check without a CPO interval
    for end in ((0.01, 0.5), (0.04, 0.5), (0.02, 0.25), (0.02, 0.75), (band_middle, 0.0), (band_middle, 0.25), (0.01, 0.75)):
        assert end in marks, f"a cap at the end of a bar {end}"
    assert (a, a) in marks[(0.02, 0.5)]               # a scored model: a filled marker in its colour
    assert (b, b) in marks[(band_middle, 0.0)]
    assert (grey, "#ffffff") in marks[(0.01, 1.0)]    # a check of the harness: hollow, in grey


def test_chart_labels_are_text_never_markup_or_mathtext():
    from lrc.runtime.report.charts import pareto_svg

    hostile = "<script>alert(1)</script> $\\frac{1}{0}$ & $5"
    panels = [{"system": "single-shot", "points": [{**CHART_INPUT["panels"][0]["points"][0], "model": hostile}]}]
    svg = pareto_svg("k", f"title {hostile}", panels, f"footer {hostile}", 0.8)
    assert "<script" not in svg and "&lt;script&gt;alert(1)&lt;/script&gt;" in svg
    assert svg.count("$\\frac{1}{0}$ &amp; $5") >= 3  # title, footer and the label, as written


def test_the_compile_path_never_imports_matplotlib():
    code = ("import sys; import lrc.compiler.cli, lrc.runtime.report.html, lrc.runtime.report.outputs; "
            "print(any(m.split('.')[0] == 'matplotlib' for m in sys.modules))")
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert res.stdout.strip() == "False"  # imported lazily, only when a chart is drawn


def test_footer_is_built_from_the_standard_and_the_edition(small):
    lock, out = small
    from lrc.runtime.report import html

    plan = _lock(lock)["plan"]
    edition = plan["edition"]["spec"]
    footer = html.footer(plan)
    assert footer.startswith(f"{edition['brand']} · methodology v{plan['standard']['spec']['methodology']} · edition {edition['date']}")
    page = (out / "report.html").read_text(encoding="utf-8")
    assert page.count(html.esc(footer)) >= 1 + 7 * 2  # card + page footer, each chart's caption and inside each SVG


@pytest.fixture(scope="module")
def zero_priced(tmp_path_factory):
    """The small demo without its priced candidates, executed: every model $0, no flagship."""
    from helpers.shared import shared_execute, zero_priced_demo_lock

    out, res = shared_execute(tmp_path_factory, "demo-zero-priced-run", ["execute", zero_priced_demo_lock(tmp_path_factory)], run_lrc)
    assert res.returncode == 0, res.stderr
    return out


def test_an_edition_of_zero_prices_and_no_flagship_reads_honestly(zero_priced):
    """Every model priced $0, no flagship, the baseline the only rate-card candidate (and not
    qualifying everywhere at n = 2): each state is said, never drawn as a cheap model."""
    page = (zero_priced / "report.html").read_text(encoding="utf-8")
    assert "no qualifying model at pass ≥ 0.80" in page
    assert "no flagship in this edition" in page
    assert "every CPO here is $0.00" in page  # the $0 prices are said, never drawn as a cheap model
    assert "$0: this model is not billed" in page
    assert "demo model" not in page  # no candidate, no demo label


def test_demo_states_read_honestly(small):
    """The small demo: the baseline ($0) and the two candidates (demo prices), checks not scored."""
    _, out = small
    page = (out / "report.html").read_text(encoding="utf-8")
    assert "(lrc/careful [demo model, demo price], flagship)" in page
    assert "$0: this model is not billed" in page
    assert "∞ (no success; spent $0.00)" in page  # lrc/null: no CPO, never $0
    assert "check (not scored)" in page
    # at n = 2 the baseline qualifies on some workloads: its $0 rate says it is a $0 price, not a cost
    assert "(lrc/baseline, cheapest qualifying) — $0 price: not billed" in page
    assert "P(cheapest qualifier)" in page and "(no model qualifies)" in page
    assert "Judge" in page and "lrc/judge" in page


def test_preregistration_page_from_the_lock_alone(small, tmp_path):
    lock, _ = small
    target = tmp_path / "pre" / "page.html"
    res = run_lrc("report", lock, "--html", "--html-out", target)
    assert res.returncode == 0, res.stderr
    assert res.stdout.strip() == f"pre-registration page: {target}"
    page = target.read_text(encoding="utf-8")
    assert "Pre-registration" in page and "<svg" not in page and "<script" not in page.lower()
    cells = re.findall(r"<td[^>]*>([^<]*)</td>", page)
    assert cells.count("not run") >= 3 * 2 * 6  # every cell's every result
    for measured in ("bootstrap 95% $", "/2</td>", "yes</td>", "no qualifying model"):
        assert measured not in page
    printed = run_lrc("report", lock, "--html")
    assert printed.returncode == 0 and printed.stdout == page  # no --html-out: printed
    from lrc.runtime.report import html

    assert html.preregistration_page(_lock(lock)) == page


def test_report_html_prints_the_page_path_and_rewrites_a_deleted_page(small, tmp_path):
    lock, out = small
    run = _copy(out, tmp_path / "run")
    (run / "report.html").unlink()
    res = run_lrc("report", lock, "--out", run, "--html")
    assert res.returncode == 0, res.stderr
    assert res.stdout.rstrip().endswith(f"page: {run / 'report.html'}")
    assert (run / "report.html").read_bytes() == (out / "report.html").read_bytes()
    # `lrc report RUN_DIR --html`: the folder in place of the lock, its lock found under generated/ above here
    by_dir = run_lrc("report", run, "--html", cwd=lock.parent.parent.parent)
    assert by_dir.returncode == 0, by_dir.stderr
    assert by_dir.stdout.rstrip().endswith(f"page: {run / 'report.html'}")


def test_report_usage_errors(small, tmp_path):
    lock, out = small
    assert run_lrc("report", lock).returncode == 2  # neither a run folder nor --html
    assert run_lrc("report", lock, "--out", out, "--html", "--html-out", tmp_path / "x.html").returncode == 2


def _hostile_folder(small, tmp_path) -> tuple[dict, Path]:
    lock, out = small
    run = _copy(out, tmp_path / "hostile")
    from lrc.runtime.report import html

    page = (run / "report.html").read_text(encoding="utf-8")
    first = re.search(r'href="([^"]+)/trace.json"', page).group(1)
    trace = json.loads((run / first / "trace.json").read_text(encoding="utf-8"))
    trace["messages"].append({"role": "assistant", "content": "<script>alert('pwned')</script><img src=x onerror=alert(1)>"})
    (run / first / "trace.json").write_text(json.dumps(trace), encoding="utf-8")
    evaluation = json.loads((run / first / "evaluation.json").read_text(encoding="utf-8"))
    for v in evaluation["validators"]:
        if v["status"] == "fail":
            v["message"] = "</pre><script>document.write('x')</script>"
            v["location"] = "<b onmouseover=alert(2)>"
    (run / first / "evaluation.json").write_text(json.dumps(evaluation), encoding="utf-8")
    return _lock(lock), run


def test_hostile_strings_from_traces_render_as_text(small, tmp_path):
    lock, run = _hostile_folder(small, tmp_path)
    from lrc.runtime.report import html

    page = html.build_page(lock, run)
    assert "<script" not in page.lower() and "<img" not in page and "<b onmouseover" not in page
    assert "&lt;script&gt;alert(&#x27;pwned&#x27;)&lt;/script&gt;&lt;img src=x onerror=alert(1)&gt;" in page
    assert "&lt;/pre&gt;&lt;script&gt;document.write(&#x27;x&#x27;)&lt;/script&gt;" in page
    assert "&lt;b onmouseover=alert(2)&gt;" in page


def _triage(lock) -> str:
    """The triage workload's ref as the lock pins it (a re-lock moves the version)."""
    return next(ref for ref in _lock(lock)["plan"]["workloads"] if ref.startswith("triage.ap-inbox.v"))


def test_not_run_and_n_a_states(small, tmp_path):
    """A cell missing from the folder reads "not run"; a cell with no graded run reads "n/a" and
    is listed under its chart, never drawn; a partial folder derives nothing."""
    lock, out = small
    import polars as pl

    from lrc.runtime.report import html

    run = _copy(out, tmp_path / "states")
    cells = pl.read_parquet(run / "cells.parquet")
    wl = _triage(lock)
    gone = (pl.col("workload") == wl) & (pl.col("model") == "lrc/baseline") & (pl.col("system") == "agentic")
    empty = (pl.col("workload") == wl) & (pl.col("model") == "lrc/baseline") & (pl.col("system") == "single-shot")
    cells = cells.filter(~gone).with_columns(
        *(pl.when(empty).then(0).otherwise(pl.col(c)).alias(c) for c in ("n", "passes", "items")),
        pl.when(empty).then(2).otherwise(pl.col("infra_excluded")).alias("infra_excluded"),
        *(pl.when(empty).then(None).otherwise(pl.col(c)).alias(c) for c in ("pass_rate", "wilson_low", "wilson_high", "p_qualifying",
                                                                           "cpo_usd", "cpo_low", "cpo_high", "cpo_p_no_success")))
    cells.write_parquet(run / "cells.parquet")
    page = html.build_page(_lock(lock), run)
    section = page[page.index(f"({wl})"):]
    section = section[:section.index("<h2", 10)]
    assert "lrc/baseline · agentic: not run" in section
    assert "lrc/baseline · single-shot: n/a (0 graded runs; 2 infra-excluded)" in section
    row = re.search(r"<tr><td>lrc/baseline</td><td>agentic</td>.*?</tr>", section).group(0)
    assert row.count(">not run<") == 7
    row = re.search(r"<tr><td>lrc/baseline</td><td>single-shot</td>.*?</tr>", section).group(0)
    assert "n/a (0 graded; 2 infra-excluded)" in row
    # the multiplier of a cell not run
    assert re.search(rf"<td>{re.escape(wl)}</td><td>lrc/baseline</td><td class=\"notrun\">not run</td>", page)

    summary = json.loads((run / "summary.json").read_text(encoding="utf-8"))
    summary.update(partial=True, runs_not_run=5, derived="partial run: not a full measurement")
    (run / "summary.json").write_text(json.dumps(summary), encoding="utf-8")
    page = html.build_page(_lock(lock), run)
    assert "PARTIAL RUN — not a measurement" in page
    assert "no qualifying model" not in page and "partial run: not a full measurement" in page


def test_probability_of_being_the_cheapest_qualifier():
    from lrc.runtime.report.html import cheapest_probabilities

    items = [f"i{k:02d}" for k in range(15)]
    per_model = {
        "cheap": {i: (Decimal("0.01"), 1, 1) for i in items},  # always passes, cheap
        "dear": {i: (Decimal("0.50"), 1, 1) for i in items},  # always passes, dear
        "weak": {i: (Decimal("0.001"), int(k < 5), 1) for k, i in enumerate(items)},  # cheapest, never near 0.80
    }
    got = cheapest_probabilities(per_model, Fraction("0.80"), "seed/w", replicates=500)
    assert got["models"] == {"cheap": 1.0, "dear": 0.0, "weak": 0.0} and got["none"] == 0.0
    # 12/15 at the bar: qualifies only in some replicates; deterministic for a seed
    borderline = {"b": {i: (Decimal("0.01"), int(k < 12), 1) for k, i in enumerate(items)}}
    a = cheapest_probabilities(borderline, Fraction("0.80"), "seed/w", replicates=500)
    assert 0.3 < a["models"]["b"] < 0.8 and a["models"]["b"] + a["none"] == 1.0
    assert a == cheapest_probabilities(borderline, Fraction("0.80"), "seed/w", replicates=500)
    assert cheapest_probabilities({}, Fraction("0.80"), "s") == {"models": {}, "none": None}


def _cheapest_by_fractions(per_model, threshold, seed, replicates):
    """P(cheapest qualifier) as the page defines it, in Fractions: a model qualifies in a
    replicate when its pass rate is at least the bar; the lowest CPO wins, a tie the first id."""
    from lrc.runtime.report.stats import _resamples

    items = sorted({i for runs in per_model.values() for i in runs})
    models = sorted(per_model)
    wins, none = dict.fromkeys(models, 0), 0
    for draw in _resamples(seed, len(items), replicates):
        best = None
        for m in models:
            rows = [per_model[m].get(items[i], (Decimal(0), 0, 0)) for i in draw]
            p, g = sum(r[1] for r in rows), sum(r[2] for r in rows)
            if not g or not p or Fraction(p, g) < threshold:
                continue
            value = (Fraction(sum(r[0] for r in rows)) / p, m)
            best = value if best is None or value < best else best
        if best is None:
            none += 1
        else:
            wins[best[1]] += 1
    return {"models": {m: wins[m] / replicates for m in models}, "none": none / replicates, "replicates": replicates}


_COSTS = st.sampled_from([Decimal("0"), Decimal("0.01"), Decimal("0.010"), Decimal("0.02"), Decimal("0.0125"), Decimal("3")])


@settings(max_examples=150, deadline=None)
@given(st.dictionaries(st.sampled_from(["a/x", "b/y", "c/z", "d"]),
                       st.dictionaries(st.sampled_from([f"i{k}" for k in range(6)]),
                                       st.tuples(_COSTS, st.integers(0, 3), st.integers(0, 3)).map(
                                           lambda t: (t[0], min(t[1], t[2]), t[2])), min_size=1),
                       min_size=1, max_size=4),
       st.sampled_from([Fraction(0), Fraction(1, 2), Fraction(4, 5), Fraction(1), Fraction(2, 3)]))
def test_the_cheapest_qualifier_is_exactly_the_fraction_definition(per_model, threshold):
    """Integer cross-multiplication gives the same probabilities as Fractions, ties included
    (equal CPOs from differently scaled costs: 0.01 and 0.010; $0 costs; passes of 0)."""
    from lrc.runtime.report.html import cheapest_probabilities

    assert cheapest_probabilities(per_model, threshold, "seed/w", replicates=60) == \
        _cheapest_by_fractions(per_model, threshold, "seed/w", 60)


def _chromium() -> str:
    exe = browser.chromium()
    if exe is None:
        pytest.skip("chromium is not installed and could not be: `python3 dev.py setup` installs Debian's chromium "
                    "package when it can (root and apt-get); this machine has neither")
    return exe


def test_browser_probe_sees_console_errors(tmp_path):
    """The check below can fail: a page that logs an error, throws and loads a missing file is caught."""
    exe = _chromium()
    page = tmp_path / "bad.html"
    page.write_text('<p id="p">x</p><script>console.error("boom"); nope();</script><img src="missing.png">', encoding="utf-8")
    got = browser.render(page, "p", exe=exe)
    assert any("boom" in e for e in got.errors) and any("nope" in e for e in got.errors)
    assert any("ERR_FILE_NOT_FOUND" in e for e in got.errors)


def test_page_renders_in_headless_chromium_with_every_chart_drawn(small, tmp_path):
    exe = _chromium()
    from PIL import Image
    import io

    _, out = small
    got = browser.render(out / "report.html", "figure.chart", exe=exe)
    assert got.errors == []
    assert len(got.boxes) == 7, got.boxes
    shot = Image.open(io.BytesIO(got.png)).convert("RGB")
    for ident, box in sorted(got.boxes.items()):
        assert box["width"] > 300 and box["height"] > 250, (ident, box)
        crop = shot.crop((int(box["x"]), int(box["y"]), int(box["x"] + box["width"]), int(box["y"] + box["height"])))
        pixels = list(crop.get_flattened_data())
        inked = sum(1 for p in pixels if sum(p) < 600)  # not white / near-white
        colours = {p for p in pixels if sum(p) < 600}
        assert inked / len(pixels) > 0.02, f"{ident}: the chart's box is blank"
        blue = sum(1 for r, g, b in pixels if b > 120 and r < 80)  # the scored model's marker and bars
        orange = sum(1 for r, g, b in pixels if r > 150 and 60 < g < 140 and b < 60)  # the quality bar
        assert blue > 20 and orange > 20 and len(colours) > 20, (ident, blue, orange, len(colours))


def test_priced_flagship_rate_lines(small, tmp_path):
    """A priced flagship that is also the cheapest qualifier: both rates, the frontier premium, the
    evidence, and no $0 note (the demo has no flagship; this is the card of a real edition)."""
    lock, out = small
    import polars as pl

    from lrc.runtime.report import html

    run = _copy(out, tmp_path / "priced")
    plan_lock = _lock(lock)
    model = plan_lock["plan"]["models"]["lrc/baseline"]
    model["role"] = "flagship"
    model["price"] = {**model["price"], "input": "2.50", "output": "10"}
    wl, system = _triage(lock), "single-shot"
    key = (pl.col("workload") == wl) & (pl.col("model") == "lrc/baseline") & (pl.col("system") == system)
    cells = pl.read_parquet(run / "cells.parquet")
    passes = cells.filter(key)["passes"][0]
    assert passes, "the baseline passes some triage items at n = 2"
    cells = cells.with_columns(pl.when(key).then(pl.lit("0.30")).otherwise(pl.col("cost_usd")).alias("cost_usd"))
    cells.write_parquet(run / "cells.parquet")
    summary = json.loads((run / "summary.json").read_text(encoding="utf-8"))
    summary["derived"]["workloads"][wl]["systems"][system] = {
        "cheapest_qualifying": {"model": "lrc/baseline", "cpo_usd": "0.15"},
        "flagships": [{"model": "lrc/baseline", "run": True, "cpo_usd": "0.15", "frontier_premium": "1"}]}
    (run / "summary.json").write_text(json.dumps(summary), encoding="utf-8")
    page = html.build_page(plan_lock, run)
    row = re.search(r"<tr><td>Sort 1,000 AP emails</td>.*?</tr>", page).group(0)
    rate = f"${Decimal('0.30') / passes * 50:,.2f}"  # CPO x 50 batches of 20 emails
    assert f"{rate} (lrc/baseline, cheapest qualifying)</td>" in row
    assert f"{rate} (lrc/baseline, flagship) · frontier premium ×1.00</td>" in row
    assert f"lrc/baseline: {passes}/2, Wilson [" in row and "$0 price" not in row
