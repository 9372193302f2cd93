"""The trend chart of one workload: CPO per edition, one line per (model, system) and workload
version, as inline SVG -- drawn with the Pareto charts' matplotlib settings (`report.charts`:
deterministic SVG, fixed font, salted ids, the standard footer on the chart).

Editions are evenly spaced categories on x (ordered by date, labelled id and date): an
edition is a measurement, not a point on a calendar. A line only ever joins points of one
segment (`trend.Segment`: one workload version); where the version changes a dotted vertical
rule stands between the two editions with the annotation "workload v4 → v5: not comparable",
and the next segment starts afresh. A cell with no success has an infinite CPO: it is drawn
in the grey "no success" band at the top, never at $0, and no line runs through it. Filled
markers qualify (pass rate ≥ the bar), hollow ones do not; the legend names each line (model ·
system: solid single-shot, dashed agentic).
"""

from __future__ import annotations

import io
import re

from lrc.runtime.publish.trend import WorkloadTrend
from lrc.runtime.report import charts
from lrc.runtime.report.labels import model_label

_LINESTYLE = {"single-shot": "-", "agentic": "--"}
_DODGE = {"single-shot": -0.06, "agentic": 0.06}
TREND_W, TREND_H = 9.2, 4.2


def trend_svg(trend: WorkloadTrend, footer: str) -> str:
    """One <svg> element (no XML prologue) for the workload's trend."""
    matplotlib, plt = charts._matplotlib()
    key = f"trend-{trend.workload_id}"
    with matplotlib.rc_context({**charts._RC, "svg.hashsalt": f"lrc-chart-{key}"}):
        fig, ax = plt.subplots(1, 1, figsize=(TREND_W, TREND_H))
        x_of = {e[0]: i for i, e in enumerate(trend.editions)}
        finite = [float(v) for s in trend.series for seg in s.segments for p in seg.points
                  for v in (p.cpo, p.cpo_high) if v is not None]
        top = max(finite) if finite and max(finite) > 0 else 1.0
        band = (top * 1.12, top * 1.36)
        ax.axhspan(*band, color="#f1f1f1", zorder=0)
        ax.text(len(trend.editions) - 0.5, band[1] * 0.995, "no success (CPO ∞)", ha="right", va="top", fontsize=7,
                color="#555555")
        models = sorted({s.model for s in trend.series})
        colour = {m: charts._COLOURS[i % len(charts._COLOURS)] for i, m in enumerate(models)}
        from matplotlib.lines import Line2D

        handles: list = []
        for s in trend.series:
            c = colour[s.model]
            style = _LINESTYLE.get(s.system, ":")
            dodge = _DODGE.get(s.system, 0.0)  # systems side by side at an edition, so equal CPOs stay apart
            for seg in s.segments:
                run: list[tuple[float, float]] = []  # consecutive finite points of this segment
                for p in seg.points:
                    x = x_of[p.edition_id] + dodge
                    if p.cpo is None:
                        _flush(ax, run, c, style)
                        run = []
                        ax.plot([x], [sum(band) / 2], marker="x", color=c, markersize=6, zorder=3, linestyle="none")
                        continue
                    y = float(p.cpo)
                    run.append((x, y))
                    if p.cpo_low is not None and p.cpo_high is not None:
                        ax.errorbar([x], [y], yerr=[[max(0.0, y - float(p.cpo_low))], [max(0.0, float(p.cpo_high) - y)]],
                                    fmt="none", ecolor=c, elinewidth=0.9, capsize=2.5, zorder=2)
                    ax.plot([x], [y], marker="o", markersize=5, color=c, markerfacecolor=c if p.qualifying else "white",
                            linestyle="none", zorder=4)
                _flush(ax, run, c, style)
            handles.append(Line2D([], [], color=c, linestyle=style, marker="o", markersize=4, linewidth=1.3,
                                  label=f"{model_label(s.model)} · {s.system}"))
        for b in trend.breaks:
            x = (x_of[b.after_edition] + x_of[b.before_edition]) / 2
            ax.axvline(x, color="#7c2d12", linestyle=":", linewidth=1.2, zorder=1)
            ax.text(x, top * 1.06, b.annotation, rotation=90, ha="right", va="top", fontsize=7, color="#7c2d12")
        ax.set_xticks(range(len(trend.editions)))
        ax.set_xticklabels([f"{e[0]}\n{e[1]} · v{e[2]}" for e in trend.editions], fontsize=7)
        ax.set_xlim(-0.5, len(trend.editions) - 0.5)
        if handles:
            ax.legend(handles=handles, loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=6.5, frameon=False)
        ax.set_ylim(-top * 0.05, band[1])
        from matplotlib.ticker import FuncFormatter, MaxNLocator

        ax.set_yticks([t for t in MaxNLocator(5).tick_values(0.0, top) if 0 <= t <= top * 1.02])
        ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _pos: f"${v:.3g}"))
        ax.set_ylabel("CPO, USD per successful outcome")
        ax.grid(True, axis="y", color="#e5e5e5", linewidth=0.6, zorder=0)
        fig.suptitle(f"{trend.job}: CPO across editions ({trend.workload_id})", fontsize=10.5, x=0.01, ha="left", y=0.985)
        fig.text(0.01, 0.012, footer, fontsize=7.5, color="#555555", ha="left", va="bottom")
        fig.subplots_adjust(left=0.08, right=0.8, top=0.88, bottom=0.2)
        buf = io.StringIO()
        fig.savefig(buf, format="svg", metadata={"Date": None, "Creator": "lrc"})
        plt.close(fig)
    svg = buf.getvalue()
    svg = svg[svg.index("<svg"):]
    return re.sub(r'id="((?:figure|axes|patch|line2d|text|matplotlib\.axis|xtick|ytick|LineCollection|legend|'
                  r'PolyCollection|FillBetweenPolyCollection|PathCollection)_\d+)"',
                  lambda m: f'id="{charts._ident(key)}-{m.group(1)}"', svg)


def _flush(ax, run: list[tuple[float, float]], colour: str, style: str) -> None:
    """Draw the line through consecutive finite points of one segment (never across segments)."""
    if len(run) > 1:
        ax.plot([p[0] for p in run], [p[1] for p in run], color=colour, linestyle=style, linewidth=1.3, zorder=3)
