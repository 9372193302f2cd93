"""The HTML report's charts: one Pareto chart per workload (CPO vs pass rate), as inline SVG.

Why matplotlib, not Altair + vl-convert or plotly: the page must be one static file that opens
from disk with no script, and the same run folder must give the same bytes. matplotlib writes
SVG itself, in-process, with no JavaScript and no browser or JS engine behind it; its output is
reproducible once three things are pinned (below). plotly's figures are JavaScript objects
drawn by plotly.js in the browser (a ~3.5 MB script inline, or a CDN), and its static export
needs kaleido, a headless Chromium. Altair describes a chart in Vega-Lite JSON; its SVG comes
from vl-convert, a bundled Deno/V8 engine running Vega -- a second runtime whose text metrics
and version decide the bytes. matplotlib's Agg/SVG path needs neither and is already what the
scientific Python stack pins.

Deterministic SVG: `svg.hashsalt` fixes the ids matplotlib derives for clip paths and markers
(else they come from `uuid4`); it is salted with the chart's key, so two charts inlined in one
page never share an id. `metadata={"Date": None}` drops the timestamp, and the `Creator` is
the constant "lrc" (not matplotlib's version string). `svg.fonttype: none` writes text as
<text> with a fixed family (DejaVu Sans, shipped inside matplotlib, so layout metrics are the
same on every machine), not as glyph paths: smaller, searchable, and no font file embedded.
`tests/test_html_report.py` checks that two processes with different PYTHONHASHSEED give
byte-identical SVG.

matplotlib is imported only here, only inside `pareto_svg` (the Agg backend, never a GUI):
`lrc compile` never imports it, and `lrc execute` pays for it only when it writes the page.
"""

from __future__ import annotations

import io
import re
from typing import Any

from lrc.runtime.report.labels import model_label

#: Colours: scored models in a fixed cycle (by model id order), checks of the harness in grey.
_COLOURS = ("#1f5fa8", "#c2410c", "#15803d", "#7e22ce", "#b91c1c", "#0f766e", "#a16207", "#be185d")
_CHECK = "#8a8a8a"
#: Each panel is this many inches; at 96 px per inch the page knows each chart's size.
PANEL_W, PANEL_H = 4.6, 3.9

_RC = {
    # Labels are data (model ids, job names from specs): never mathtext, so a "$" is a dollar
    # and "$x$" is not parsed (nor a malformed one an exception).
    "text.parse_math": False,
    "svg.fonttype": "none",
    "font.family": "DejaVu Sans",
    "font.size": 8.5,
    "axes.titlesize": 9.5,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "svg.image_inline": True,
    "path.simplify": False,
}


def _matplotlib():
    import matplotlib

    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    return matplotlib, plt


def pareto_svg(key: str, title: str, panels: list[dict[str, Any]], footer: str, threshold: float) -> str:
    """One SVG (an <svg> element, no XML prologue) with a panel per system.

    Each panel: {"system", "points": [{"model", "check", "pass_rate", "wilson_low", "wilson_high",
    "cpo", "cpo_low", "cpo_high"}]} with CPO as float dollars or None (no success: drawn in the
    "no success" band at the right, never at $0). Points without a measurement are not passed in."""
    matplotlib, plt = _matplotlib()
    with matplotlib.rc_context({**_RC, "svg.hashsalt": f"lrc-chart-{key}"}):
        fig, axes = plt.subplots(1, len(panels), figsize=(PANEL_W * len(panels), PANEL_H), squeeze=False)
        models = sorted({p["model"] for panel in panels for p in panel["points"] if not p["check"]})
        colour = {m: _COLOURS[i % len(_COLOURS)] for i, m in enumerate(models)}
        for ax, panel in zip(axes[0], panels):
            _panel(ax, panel, colour, threshold)
        fig.suptitle(title, fontsize=10.5, x=0.01, ha="left", y=0.985)
        fig.text(0.01, 0.012, footer, fontsize=7.5, color="#555555", ha="left", va="bottom")
        fig.subplots_adjust(left=0.1 / len(panels) + 0.04, right=0.98, top=0.84, bottom=0.2, wspace=0.28)
        buf = io.StringIO()
        fig.savefig(buf, format="svg", metadata={"Date": None, "Creator": "lrc"})
        plt.close(fig)
    svg = buf.getvalue()
    svg = svg[svg.index("<svg"):]  # drop the XML declaration and DOCTYPE: inlined in HTML
    # matplotlib's structural ids (figure_1, axes_1, ...) repeat in every chart; prefix them so
    # the page's ids stay unique (hash ids are already unique through the salt).
    return re.sub(r'id="((?:figure|axes|patch|line2d|text|matplotlib\.axis|xtick|ytick|LineCollection|legend|'
                  r'PolyCollection|FillBetweenPolyCollection|PathCollection)_\d+)"',
                  lambda m: f'id="{_ident(key)}-{m.group(1)}"', svg)


def _ident(key: str) -> str:
    return re.sub(r"[^A-Za-z0-9_-]", "-", key)


def _panel(ax, panel: dict[str, Any], colour: dict[str, str], threshold: float) -> None:
    points = panel["points"]
    finite = [v for p in points for v in (p["cpo"], p.get("cpo_high")) if v is not None]
    top = max(finite) if finite and max(finite) > 0 else 1.0
    band = (top * 1.14, top * 1.42)  # where a model with no success is drawn: CPO is infinite
    ax.set_xlim(-top * 0.06, band[1])
    ax.set_ylim(-0.04, 1.08)
    ax.axvspan(*band, color="#f1f1f1", zorder=0)
    ax.text(sum(band) / 2, 1.035, "no success\n(CPO ∞)", ha="center", va="top", fontsize=7, color="#555555")
    ax.axhline(threshold, color="#b45309", linestyle="--", linewidth=1, zorder=1)
    ax.text(-top * 0.05, threshold + 0.012, f"quality bar {threshold:.2f}", color="#b45309", fontsize=7, va="bottom")
    from matplotlib.ticker import FuncFormatter, MaxNLocator

    if finite and max(finite) == 0:
        ax.set_xticks([0.0])  # no scale to show: every finite CPO is exactly $0
        ax.text(top * 0.55, 0.5, "every CPO here is $0.00:\nthe edition prices\nthese models at $0",
                ha="center", va="center", fontsize=7.5, color="#555555")
    else:  # ticks only where CPOs are finite, none inside the "no success" band
        ax.set_xticks([t for t in MaxNLocator(5).tick_values(0.0, top) if 0 <= t <= top * 1.02])
    ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _pos: f"${v:.3g}"))
    ax.set_xlabel("CPO, USD per successful outcome (bootstrap 95%)")
    ax.set_ylabel("pass rate (Wilson 95%)")
    ax.set_title(panel["system"], loc="left")
    ax.grid(True, color="#e5e5e5", linewidth=0.6, zorder=0)
    scored = []
    marks = _Marks()
    for i, p in enumerate(points):
        x = (band[0] + band[1]) / 2 if p["cpo"] is None else p["cpo"]
        c = _CHECK if p["check"] else colour[p["model"]]
        if p["cpo"] is not None and p.get("cpo_low") is not None:
            marks.bar((max(0.0, p["cpo"] - p["cpo_low"]), max(0.0, p["cpo_high"] - p["cpo"])), None, x, p["pass_rate"], c)
        marks.bar(None, (p["pass_rate"] - p["wilson_low"], p["wilson_high"] - p["pass_rate"]), x, p["pass_rate"], c)
        marks.point(x, p["pass_rate"], c, p["check"])
        label = model_label(p["model"]) + (" (check)" if p["check"] else "")
        in_band = p["cpo"] is None
        ax.annotate(label, (x, p["pass_rate"]), xytext=(-7 if in_band else 6, 4 - 9 * (i % 2)), textcoords="offset points",
                    fontsize=7, color=c, zorder=4, ha="right" if in_band else "left")
        if not p["check"] and p["cpo"] is not None:
            scored.append((p["cpo"], -p["pass_rate"]))
    marks.draw(ax)
    # The Pareto frontier of the scored models: none is both cheaper and better than a point on it.
    frontier, best = [], -1.0
    for cpo, neg in sorted(scored):
        if -neg > best:
            frontier.append((cpo, -neg))
            best = -neg
    if len(frontier) > 1:
        ax.step([f[0] for f in frontier], [f[1] for f in frontier], where="post", color="#444444",
                linewidth=0.8, alpha=0.6, zorder=2)


class _Marks:
    """A panel's points with their error bars, drawn as a few collections for the whole panel.

    Why not one `errorbar` per point: each call builds ~8 artists (the marker line, a bar
    collection per direction, four cap lines), which was a third of a chart's CPU. The look is
    the same: 1-pt bars with 6-pt caps (`capsize=3` each side) under 5.5-pt markers, a circle
    filled with the model's colour, a hollow square for a check of the harness; one colour per
    point for its bars, caps and marker."""

    def __init__(self) -> None:
        self.segments: list[tuple[tuple[float, float], tuple[float, float]]] = []
        self.segment_colours: list[str] = []
        self.caps: dict[str, tuple[list[tuple[float, float]], list[str]]] = {"|": ([], []), "_": ([], [])}
        self.points: dict[bool, tuple[list[tuple[float, float]], list[str]]] = {False: ([], []), True: ([], [])}

    def bar(self, xerr: tuple[float, float] | None, yerr: tuple[float, float] | None, x: float, y: float, colour: str) -> None:
        """A horizontal (`xerr`: below, above) or vertical (`yerr`) error bar through (x, y), capped at both ends."""
        lo, hi = xerr if xerr is not None else yerr
        ends = ((x - lo, y), (x + hi, y)) if xerr is not None else ((x, y - lo), (x, y + hi))
        self.segments.append(ends)
        self.segment_colours.append(colour)
        where, colours = self.caps["|" if xerr is not None else "_"]
        where.extend(ends)
        colours.extend((colour, colour))

    def point(self, x: float, y: float, colour: str, check: bool) -> None:
        where, colours = self.points[check]
        where.append((x, y))
        colours.append(colour)

    def draw(self, ax) -> None:
        from matplotlib.collections import LineCollection

        if self.segments:
            ax.add_collection(LineCollection(self.segments, colors=self.segment_colours, linewidths=1, zorder=3),
                              autolim=False)
        for marker, (where, colours) in self.caps.items():
            if where:
                ax.scatter([w[0] for w in where], [w[1] for w in where], s=6 ** 2, marker=marker, c=colours,
                           linewidths=1, zorder=3)
        for check, (where, colours) in self.points.items():
            if where:
                ax.scatter([w[0] for w in where], [w[1] for w in where], s=5.5 ** 2, marker="s" if check else "o",
                           facecolors=["white" if check else c for c in colours], edgecolors=colours,
                           linewidths=1, zorder=3)
