"""The seeded board deck: seed 000's presentation artifact, its figures taken from the model.

Why: seed 000's agents also refresh presentations, and what can break there — a table turned
into a text box, a chart pasted as a picture, a layout swapped, a slide dropped — only shows on
a real deck with real editable objects. Built with python-pptx's default template:

1. "Title Slide": the company's board pack and the periods covered;
2. "Title Only" + the table shape "Key figures": one row per figure of `TABLE_ROWS`, one
   column per quarter, numbers as the model computes them (`model.reference_values`);
3. "Title Only" + the chart shape "Revenue chart": a clustered column chart (an editable
   chart with its own data workbook, not a picture) of revenue and gross profit per quarter;
4. "Title and Content": commentary.

Shape names are fixed so locations read `slide 2/shape "Key figures"`. Figures are formatted
from Decimals (`figure_text`), never from floats; the same values give the same bytes.
"""

from __future__ import annotations

from decimal import Decimal

from lrc.runtime.artifacts import model
from lrc.runtime.artifacts.deterministic import presentation_bytes

TABLE_SHAPE = "Key figures"
CHART_SHAPE = "Revenue chart"
TABLE_ROWS = (("Revenue", "IS", 4), ("Net income", "IS", 13), ("Closing cash", "CF", 17), ("Total assets", "BS", 7))
CHART_SERIES = (("Revenue", "IS", 4), ("Gross profit", "IS", 6))
SLIDE_TITLES = ("board pack", "Key figures", "Revenue and gross profit", "Commentary")


def figure_text(value: Decimal) -> str:
    """1234.5 -> '1,234.50'; -12 -> '(12.00)' (the model's number format)."""
    q = value.quantize(model.CENT)
    text = f"{abs(q):,.2f}"
    return f"({text})" if q < 0 else text


def build(a: model.Assumptions, values: dict[tuple[str, str], Decimal], periods: int | None = None):
    """The python-pptx Presentation for assumptions `a` and model values `values`."""
    from pptx import Presentation
    from pptx.chart.data import CategoryChartData
    from pptx.enum.chart import XL_CHART_TYPE, XL_LEGEND_POSITION
    from pptx.util import Inches, Pt

    n = len(a.periods) if periods is None else periods
    quarters = a.periods[:n]
    prs = Presentation()
    prs.slide_width, prs.slide_height = Inches(13.333), Inches(7.5)
    layouts = {layout.name: layout for layout in prs.slide_layouts}

    slide = prs.slides.add_slide(layouts["Title Slide"])
    slide.shapes.title.text = f"{a.company}: {SLIDE_TITLES[0]}"
    slide.placeholders[1].text = f"Quarterly results {quarters[0]} to {quarters[-1]} ({model.UNIT}; synthetic data)"

    slide = prs.slides.add_slide(layouts["Title Only"])
    slide.shapes.title.text = SLIDE_TITLES[1]
    frame = slide.shapes.add_table(len(TABLE_ROWS) + 1, n + 1, Inches(0.6), Inches(1.6), Inches(12.1), Inches(2.6))
    frame.name = TABLE_SHAPE
    table = frame.table
    table.cell(0, 0).text = model.UNIT
    for j, quarter in enumerate(quarters, start=1):
        table.cell(0, j).text = quarter
    for i, (label, sheet, row) in enumerate(TABLE_ROWS, start=1):
        table.cell(i, 0).text = label
        for j in range(n):
            table.cell(i, j + 1).text = figure_text(values[(sheet, f"{model.col(j)}{row}")])
    for r in range(len(TABLE_ROWS) + 1):
        for c in range(n + 1):
            for paragraph in table.cell(r, c).text_frame.paragraphs:
                for run in paragraph.runs:
                    run.font.size = Pt(14)

    slide = prs.slides.add_slide(layouts["Title Only"])
    slide.shapes.title.text = SLIDE_TITLES[2]
    data = CategoryChartData(number_format="#,##0.00")
    data.categories = list(quarters)
    for label, sheet, row in CHART_SERIES:
        data.add_series(label, [values[(sheet, f"{model.col(j)}{row}")].quantize(model.CENT) for j in range(n)])
    chart_frame = slide.shapes.add_chart(XL_CHART_TYPE.COLUMN_CLUSTERED, Inches(0.8), Inches(1.5), Inches(11.7), Inches(5.4), data)
    chart_frame.name = CHART_SHAPE
    chart = chart_frame.chart
    chart.has_legend = True
    chart.legend.position = XL_LEGEND_POSITION.BOTTOM
    chart.legend.include_in_layout = False

    slide = prs.slides.add_slide(layouts["Title and Content"])
    slide.shapes.title.text = SLIDE_TITLES[3]
    body = slide.placeholders[1].text_frame
    first, last = values[("IS", f"{model.col(0)}4")], values[("IS", f"{model.col(n - 1)}4")]
    body.text = f"Revenue moved from {figure_text(first)} in {quarters[0]} to {figure_text(last)} in {quarters[-1]}."
    body.add_paragraph().text = "Figures are taken from the three-statement model; see the appendix workbook."
    return prs


def board_deck(seed: str, periods: int = 4) -> bytes:
    """The seeded deck of the seeded model, as deterministic pptx bytes."""
    a = model.assumptions(seed, periods)
    return presentation_bytes(build(a, model.reference_values(a)))
