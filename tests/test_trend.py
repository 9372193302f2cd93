"""CPO trendlines across editions (seed §2.2, §7): three synthetic editions, the workload version
changing between the second and the third; the line breaks and restarts, annotated, never one
line across versions. Built from synthetic cell tables (no run), so these take milliseconds
(the chart a second)."""

from __future__ import annotations

import subprocess
import sys
from decimal import Decimal
from pathlib import Path

import polars as pl
import pytest

from lrc.runtime.publish import history as hist
from lrc.runtime.publish import trend as tr
from lrc.runtime.publish import trend_page
from lrc.runtime.publish.trend_chart import trend_svg
from lrc.runtime.report.aggregate import cell_schema

EDITIONS = (  # id, date, workload version, digest hex
    ("2026-10", "2026-10-01", 4, "a" * 64),
    ("2026-11", "2026-11-01", 4, "b" * 64),
    ("2026-12", "2026-12-01", 5, "c" * 64),
)
MODELS = (("acme/cheap", "candidate"), ("acme/flagship", "flagship"), ("lrc/oracle", "infrastructure-check"))


def _cells(version: int, index: int) -> pl.DataFrame:
    """Synthetic cells of one edition: two scored models, one check, two systems."""
    rows = []
    for model, role in MODELS:
        for system in ("single-shot", "agentic"):
            passes = 15 if role == "infrastructure-check" else (13 if model == "acme/flagship" else 11 - index)
            if model == "acme/cheap" and system == "agentic" and index == 1:
                passes = 0  # no success: an infinite CPO in the middle edition
            cost = Decimal("0.0450") * (index + 1) if role != "infrastructure-check" else Decimal(0)
            cpo = None if passes == 0 else str((cost / passes).quantize(Decimal("1e-12")))
            rows.append({
                "workload": f"extract.invoice.v{version}", "model": model, "system": system, "role": role, "n": 15,
                "items": 15, "passes": passes, "partials": 0, "pass_rate": passes / 15, "wilson_low": max(0.0, passes / 15 - 0.2),
                "wilson_high": min(1.0, passes / 15 + 0.1), "cost_usd": str(cost), "infra_cost_usd": "0",
                "cpo_usd": cpo, "cpo_low": None if cpo is None else str(Decimal(cpo) * Decimal("0.9")),
                "cpo_high": None if cpo is None else str(Decimal(cpo) * Decimal("1.2")),
                "qualifying": passes / 15 >= 0.8, "partial": False,
            })
    schema = cell_schema(1)
    return pl.DataFrame([{k: r.get(k) for k in schema} for r in rows], schema=schema)


def _edition(i: int) -> hist.Edition:
    eid, date, version, hexd = EDITIONS[i]
    return hist.Edition(id=eid, version=1, date=date, plan_digest=f"sha256:{hexd}", brand="LedgerRate", methodology="1.0",
                        workloads={f"extract.invoice.v{version}": ("extract.invoice", version, "Process 1,000 invoices")})


def _publish_all(folder: Path, order=(0, 1, 2)) -> None:
    for i in order:
        assert hist.append(folder, hist.rows(_cells(EDITIONS[i][2], i), _edition(i))).written


PLAN = {"workloads": {"extract.invoice.v5": {"spec": {"id": "extract.invoice"}}},
        "edition": {"spec": {"brand": "LedgerRate", "date": "2026-12-01", "id": "2026-12", "version": 1}},
        "standard": {"spec": {"methodology": "1.0"}}}
LOCK = {"root_digest": "sha256:" + "c" * 64}


@pytest.fixture
def history(tmp_path) -> Path:
    folder = tmp_path / "history"
    _publish_all(folder, order=(2, 0, 1))  # published out of order: the trend orders by edition date
    return folder


def test_two_segments_never_one_line_across_versions(history):
    [t] = tr.trends(hist.read(history).iter_rows(named=True))
    assert t.workload_id == "extract.invoice"
    assert [e[0] for e in t.editions] == ["2026-10", "2026-11", "2026-12"]
    assert [(b.after_edition, b.before_edition, b.annotation) for b in t.breaks] == [
        ("2026-11", "2026-12", "workload v4 → v5: not comparable")]
    assert {(s.model, s.system) for s in t.series} == {(m, s) for m in ("acme/cheap", "acme/flagship")
                                                         for s in ("single-shot", "agentic")}  # checks never drawn
    for s in t.series:
        assert [seg.workload_version for seg in s.segments] == [4, 5]
        assert [[p.edition_id for p in seg.points] for seg in s.segments] == [["2026-10", "2026-11"], ["2026-12"]]
        assert [seg.annotation for seg in s.segments] == [None, "workload v4 → v5: not comparable"]
        for seg in s.segments:
            assert len({p.workload_version for p in seg.points}) == 1
    cheap = next(s for s in t.series if s.model == "acme/cheap" and s.system == "agentic")
    assert cheap.segments[0].points[1].cpo is None  # no success: infinite, never $0
    flag = next(s for s in t.series if s.model == "acme/flagship" and s.system == "single-shot")
    assert flag.segments[0].points[0].cpo == Decimal("0.003461538462")  # Decimal from the string, never float


def test_a_version_that_returns_is_a_segment_of_its_own():
    pts = [tr.Point(f"e{i}", f"2026-0{i + 1}-01", "d", v, 1, 1, Decimal(1), None, None, Decimal(1), True)
           for i, v in enumerate((4, 4, 5, 4))]
    segs = tr.segments(pts)
    assert [s.workload_version for s in segs] == [4, 5, 4]
    assert [s.annotation for s in segs] == [None, "workload v4 → v5: not comparable", "workload v5 → v4: not comparable"]


def test_history_is_append_only_one_file_per_publication(history):
    names = sorted(p.name for p in history.iterdir())
    assert names == ["2026-10-aaaaaaaaaaaa.parquet", "2026-11-bbbbbbbbbbbb.parquet", "2026-12-cccccccccccc.parquet"]
    before = {p.name: p.read_bytes() for p in history.iterdir()}
    again = hist.append(history, hist.rows(_cells(4, 0), _edition(0)))  # the same rows: a no-op
    assert not again.written
    changed = _cells(4, 0).with_columns(pl.lit("0.99").alias("cost_usd"))
    with pytest.raises(hist.Duplicate, match="already published .* with other rows .*cost_usd"):
        hist.append(history, hist.rows(changed, _edition(0)))
    other_plan = hist.Edition(**{**_edition(0).__dict__, "plan_digest": "sha256:" + "d" * 64})
    with pytest.raises(hist.Duplicate, match="edition 2026-10 is already published under plan"):
        hist.append(history, hist.rows(_cells(4, 0), other_plan))
    assert {p.name: p.read_bytes() for p in history.iterdir()} == before  # nothing rewritten, nothing added
    rows = hist.read(history)
    assert rows.schema["cpo_usd"] == pl.String and rows.schema["cost_usd"] == pl.String  # money is never float
    assert rows.height == 3 * 6


def test_partial_cells_never_publish(tmp_path):
    partial = _cells(4, 0).with_columns(pl.lit(True).alias("partial"), pl.lit(None, pl.Boolean).alias("qualifying"))
    with pytest.raises(hist.HistoryError, match="partial folders never publish"):
        hist.rows(partial, _edition(0))


@pytest.mark.parametrize("damage", ["garbage", "foreign", "renamed", "other-file", "bad-money"])
def test_a_corrupt_or_foreign_history_file_is_a_clear_error(history, damage):
    target = history / "2026-11-bbbbbbbbbbbb.parquet"
    if damage == "garbage":
        target.write_bytes(b"PAR1 this is not parquet")
        match = "not a readable parquet file"
    elif damage == "foreign":
        target.unlink()
        pl.DataFrame({"a": [1]}).write_parquet(target)
        match = "not an lrc history file"
    elif damage == "renamed":
        target.rename(history / "2026-11-000000000000.parquet")
        match = "which is named 2026-11-bbbbbbbbbbbb.parquet"
    elif damage == "other-file":
        (history / "notes.txt").write_text("hello")
        match = "not history files"
    else:
        frame = pl.read_parquet(target).with_columns(pl.lit("-3").alias("cost_usd"))
        target.unlink()
        frame.write_parquet(target)
        match = "damaged or foreign history file: .*cost_usd"
    with pytest.raises(hist.HistoryError, match=match):
        hist.read(history)


def test_the_section_is_deterministic_and_draws_the_break(history):
    rows = hist.read(history)
    first = trend_page.section(PLAN, LOCK, rows, history)
    second = trend_page.section(PLAN, LOCK, hist.read(history), history)
    assert first == second
    assert first.startswith(trend_page.HEADING)
    assert first.count("<svg") == 1 and 'data-trend="extract.invoice"' in first
    assert "workload v4 → v5: not comparable" in first
    assert "LedgerRate · methodology v1.0 · edition 2026-12-01" in first  # the standard footer, on the chart too
    svg = first[first.index("<svg"):first.index("</svg>")]
    assert "LedgerRate · methodology v1.0" in svg and "not comparable" in svg
    assert "This edition is not in the history" not in first
    page = trend_page.with_section("<main><h2>Judge</h2></main>", first)
    assert page.index("Trend across editions") < page.index("<h2>Judge</h2>")
    assert trend_page.without_section(page.encode("utf-8")) == (b"<main><h2>Judge</h2></main>", True)
    assert trend_page.without_section(b"<main><h2>Judge</h2></main>") == (b"<main><h2>Judge</h2></main>", False)


def test_a_zero_priced_model_reads_as_not_billed_never_as_cheap(tmp_path):
    """A $0.00 CPO with successes (a model priced at $0, like lrc/baseline) says so in the table
    and the caption; a real CPO and an infinite one never do."""
    folder = tmp_path / "history"
    for i in range(3):
        cells = _cells(EDITIONS[i][2], i).with_columns(
            pl.when(pl.col("model") == "acme/cheap").then(pl.lit("0")).otherwise(pl.col("cost_usd")).alias("cost_usd"),
            pl.when((pl.col("model") == "acme/cheap") & (pl.col("passes") > 0)).then(pl.lit("0")).otherwise(pl.col("cpo_usd")).alias("cpo_usd"))
        assert hist.append(folder, hist.rows(cells, _edition(i))).written
    page = trend_page.section(PLAN, LOCK, hist.read(folder), folder)
    rows = [r for r in page.split("<tr") if r.startswith("><td>acme/cheap<")]  # the table's rows of the $0 model
    zero = [r for r in rows if f"$0.00 — {trend_page.ZERO_NOTE}" in r]
    assert len(zero) == 5  # 3 editions x 2 systems, less the middle edition's agentic cell with no success
    assert all(trend_page.ZERO_NOTE not in r for r in rows if r not in zero)
    assert any("∞ (no success; spent $0.00)" in r for r in rows)
    assert all(trend_page.ZERO_NOTE not in r for r in page.split("<tr") if r.startswith("><td>acme/flagship<"))
    assert "priced at $0 ($0 price: not billed), not a cheap one" in page
    plain = trend_page.section(PLAN, LOCK, hist.read(_history_of(tmp_path)), tmp_path / "h2")
    assert trend_page.ZERO_NOTE not in plain  # no $0 model: no note


def _history_of(tmp_path: Path) -> Path:
    folder = tmp_path / "h2"
    _publish_all(folder)
    return folder


def test_svg_is_byte_identical_across_processes(history, tmp_path):
    code = ("import sys; from pathlib import Path; from lrc.runtime.publish import history as h, trend as t; "
            "from lrc.runtime.publish.trend_chart import trend_svg; "
            "[w] = t.trends(h.read(Path(sys.argv[1])).iter_rows(named=True)); sys.stdout.write(trend_svg(w, 'footer'))")
    outs = [subprocess.run([sys.executable, "-c", code, str(history)], capture_output=True, text=True, check=True,
                           env={"PYTHONHASHSEED": seed, "PATH": "/usr/bin:/bin", "MPLBACKEND": "Agg",
                                "MPLCONFIGDIR": str(tmp_path / f"mpl{seed}")}).stdout for seed in ("1", "2")]
    assert outs[0] == outs[1] and outs[0].startswith("<svg")
