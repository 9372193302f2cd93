"""The "Trend across editions" section of report.html (`lrc report RUN_DIR --html --history DIR`).

Read from the history alone (`history.read`), for the workloads of the run folder's edition (by
workload id, so earlier versions of the same workload are in the chart, as segments of their
own). Per workload: the chart (`trend_chart`) and a table of the series, one row per (model,
system, edition), with the version change rows that say where the line breaks. Same history and
same folder, same bytes.

The section is inserted into the page `lrc report` already wrote, before the judge section;
without --history the page is exactly what it was (this module is never imported then).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Mapping

from lrc.runtime.publish import history as hist
from lrc.runtime.publish.trend import WorkloadTrend, trends
from lrc.runtime.publish.trend_chart import trend_svg
from lrc.runtime.report.labels import model_label
from lrc.runtime.report.html import esc, footer as standard_footer
from lrc.runtime.report.ratecard import _usd

ANCHOR = "<h2>Judge</h2>"
HEADING = "<h2 id=\"trend\">Trend across editions</h2>"


ZERO_NOTE = "$0 price: not billed"
"""Said beside a CPO of $0.00 with successes: the cell cost nothing because its model is priced
at $0 (an embedded reference model), not because it is cheap -- as the rate card says it."""


def _not_billed(p) -> bool:
    """Successes at no cost at all: the model is priced at $0."""
    return p.cpo == 0 and p.cost == 0 and p.passes > 0


def _cpo(p) -> str:
    if p.cpo is None:
        return f"∞ (no success; spent {_usd(p.cost)})"
    if _not_billed(p):
        return f"{_usd(p.cpo)} — {ZERO_NOTE}"
    text = _usd(p.cpo)
    if p.cpo_low is not None and p.cpo_high is not None:
        text += f" ({_usd(p.cpo_low)}–{_usd(p.cpo_high)})"
    return text


def _table(t: WorkloadTrend) -> str:
    head = ["model", "system", "edition", "date", "workload version", "passes/n", "CPO (bootstrap 95%)", "qualifying"]
    rows: list[str] = []
    for s in t.series:
        for seg in s.segments:
            if seg.annotation:
                rows.append(f"<tr class=\"break\"><td colspan=\"{len(head)}\"><em>{esc(model_label(s.model))} · {esc(s.system)}: "
                            f"{esc(seg.annotation)} — the line breaks and restarts here</em></td></tr>")
            for p in seg.points:
                qual = "n/a" if p.qualifying is None else ("yes" if p.qualifying else "no")
                cells = [model_label(s.model), s.system, p.edition_id, p.edition_date, f"v{p.workload_version}", f"{p.passes}/{p.n}",
                         _cpo(p), qual]
                rows.append("<tr>" + "".join(f"<td>{esc(c)}</td>" for c in cells) + "</tr>")
    return ("<table class=\"trend\"><thead><tr>" + "".join(f"<th>{esc(h)}</th>" for h in head) + "</tr></thead><tbody>\n"
            + "\n".join(rows) + "\n</tbody></table>")


def section(plan: Mapping[str, Any], lock: Mapping[str, Any], history: Any, history_dir: Path) -> str:
    """The section's HTML for this edition's workloads (`history`: the validated rows)."""
    workload_ids = sorted({wl["spec"]["id"] for wl in plan["workloads"].values()})
    found = trends(history.iter_rows(named=True), workload_ids)
    foot = standard_footer(plan)
    published = lock["root_digest"] in set(history["plan_digest"].to_list()) if history.height else False
    parts = [HEADING,
             f"<p>CPO of each scored model per edition, from the results history <code>{esc(history_dir.name)}</code> "
             f"({len(hist.editions(history))} edition(s) published). Lines join editions of one workload version only: "
             "scores are never compared across workload versions (seed §7), so where the version changes the line "
             "breaks and restarts, annotated. Filled markers qualify, hollow ones do not; a model with no success is "
             "drawn in the grey band (CPO ∞), never at $0.</p>"]
    if not published:
        parts.append("<p class=\"banner\">This edition is not in the history yet (<code>lrc publish RUN_DIR --history DIR</code> "
                     "adds it): the trend shows the editions published so far.</p>")
    by_id = {t.workload_id: t for t in found}
    for wid in workload_ids:
        t = by_id.get(wid)
        parts.append(f"<h3>{esc(wid)}</h3>")
        if t is None or not t.series:
            parts.append(f"<p class=\"notrun\">No published edition holds {esc(wid)}.</p>")
            continue
        svg = trend_svg(t, foot)
        notes = "; ".join(f"between {esc(b.after_edition)} and {esc(b.before_edition)}: {esc(b.annotation)}" for b in t.breaks)
        parts.append(f"<figure class=\"chart\" id=\"trend-{esc(wid)}\" data-trend=\"{esc(wid)}\">{svg}<figcaption>"
                     f"CPO across editions, per model and system (solid single-shot, dashed agentic); bootstrap 95% bars."
                     + (f" Version changes: {notes}." if notes else "")
                     + (f" A point at $0.00 is a model priced at $0 ({ZERO_NOTE}), not a cheap one."
                        if any(_not_billed(pt) for s in t.series for seg in s.segments for pt in seg.points)
                        else "")
                     + f"<br>{esc(foot)}</figcaption></figure>")
        parts.append(_table(t))
    return "\n".join(parts)


def with_section(page: str, section_html: str) -> str:
    """The page with the trend section before its judge section (the anchor is on every run page)."""
    if page.count(ANCHOR) != 1:
        raise ValueError("report.html has no single judge section to place the trend before")
    return page.replace(ANCHOR, section_html + "\n" + ANCHOR, 1)


def without_section(page: bytes) -> tuple[bytes, bool]:
    """The page bytes with the trend section (as `with_section` inserted it) taken out, and
    whether it had one: `lrc verify` rebuilds the page without the history and compares the rest."""
    head, found, rest = page.partition(HEADING.encode("utf-8"))
    if not found:
        return page, False
    _, anchor, tail = rest.partition(("\n" + ANCHOR).encode("utf-8"))
    if not anchor:
        return page, False  # not the section `with_section` wrote: compared as it is (and differs)
    return head + ANCHOR.encode("utf-8") + tail, True
