"""The deck tools of the artifact toolbox: read and edit a python-pptx Presentation in memory.

Why a module of its own: a deck task is judged on editable objects — a table stays a table,
a chart stays a chart with its data range, a layout is never swapped — so the tools edit
objects in place and offer nothing that replaces one: text goes into an existing text frame
(the first run of each paragraph keeps its formatting), a table cell's text into that cell,
and chart data into the chart's own data (python-pptx `replace_data`, which rewrites the
chart's embedded workbook and its caches and keeps the chart's type and formatting; each
label goes into that workbook as text, never a formula, link or number: `text_chart_data`). Two
tools add, and nothing deletes, moves or replaces: `add_slide` makes a slide from one of the
deck's own layouts (the layout's placeholders, its title filled; never a new layout), and
`add_chart` puts a new editable category chart (its data in its own embedded workbook, never a
picture) on a slide — what restoring a lost slide takes. Both are bounded (`Limits.max_slides`,
`max_shapes`, `max_categories`, `max_series`; a chart stays inside the slide) and recorded
(`slide 3` with its layout and title; `slide 3/Revenue chart` with its type and data).

Slides, table rows and columns are numbered from 1, as a person reads them; locations read
`slide 2/Key figures/r2c3`. Each tool is `fn(prs, args, session) -> str`; a refused call
raises `ToolError` and changes nothing.
"""

from __future__ import annotations

import functools
import json
from typing import Any, Mapping

from lrc.runtime.artifacts.booktools import Session
from lrc.runtime.artifacts.toolargs import NO_CONTROLS, ToolError, integer, items, number, only, string

_CHART_NS = "{http://schemas.openxmlformats.org/drawingml/2006/chart}"
_SLIDE_CONTROLS = "\n\v\t"  # \n between paragraphs, \v a line break inside one (python-pptx writes <a:br/>)
_LABEL_CONTROLS = "\n\t"  # what a chart's XML and its embedded workbook both hold and give back
# xlsxwriter's write() turns text starting with '=' into a formula, URL-like text
# (http:, ftp:, mailto:, external:, ...) into a hyperlink and number-like text into a number;
# a chart's labels go into its embedded workbook as the text they are.
_TEXT_ONLY_WORKBOOK = {"in_memory": True, "strings_to_formulas": False, "strings_to_urls": False,
                       "strings_to_numbers": False}


def kind(shape) -> str:
    """The kind the validators see (views / preservation): chart, table, placeholder, ..."""
    if getattr(shape, "has_chart", False) and shape.has_chart:
        return "chart"
    if getattr(shape, "has_table", False) and shape.has_table:
        return "table"
    if shape.is_placeholder:
        return "placeholder"
    return str(shape.shape_type).split(".")[-1].split(" ")[0].lower() if shape.shape_type is not None else "shape"


def _slide(prs, args: Mapping[str, Any]):
    slides = list(prs.slides)
    n = integer(args["slide"], "slide", 1, max(1, len(slides)))
    if n > len(slides):
        raise ToolError("the deck has no slides")
    return n, slides[n - 1]


def _shape(slide, n: int, name: Any):
    name = string(name, "shape", 200)
    for shape in slide.shapes:
        if shape.name == name:
            return shape
    names = ", ".join(repr(s.name) for s in slide.shapes)
    raise ToolError(f"slide {n} has no shape {name!r}; its shapes are {names}")


def title(slide) -> str:
    shape = slide.shapes.title
    return shape.text_frame.text if shape is not None and shape.has_text_frame else ""


def chart_data(chart) -> dict[str, Any]:
    """Categories and series (name, values) of a category chart, as JSON-able values."""
    plot = chart.plots[0]
    categories = [str(c) for c in plot.categories]
    series = [{"name": s.name, "values": [None if v is None else float(v) for v in s.values]}
              for p in chart.plots for s in p.series]
    return {"type": str(chart.chart_type).split(" ")[0], "categories": categories, "series": series}


def _describe(shape) -> dict[str, Any]:
    out: dict[str, Any] = {"name": shape.name, "kind": kind(shape)}
    k = out["kind"]
    if k == "table":
        out["table"] = [[c.text for c in row.cells] for row in shape.table.rows]
    elif k == "chart":
        out["chart"] = chart_data(shape.chart)
    elif getattr(shape, "has_text_frame", False) and shape.has_text_frame:
        out["text"] = shape.text_frame.text
    return out


def list_slides(prs, args: Mapping[str, Any], session: Session) -> str:
    only(args, "list_slides", ("file",))
    slides = [{"slide": n, "layout": s.slide_layout.name, "title": title(s),
               "shapes": [{"name": sh.name, "kind": kind(sh)} for sh in s.shapes]}
              for n, s in enumerate(prs.slides, start=1)]
    return json.dumps({"slides": slides, "layouts": [layout.name for layout in prs.slide_layouts]}, ensure_ascii=False)


def read_slide(prs, args: Mapping[str, Any], session: Session) -> str:
    only(args, "read_slide", ("file", "slide"))
    n, slide = _slide(prs, args)
    return json.dumps({"slide": n, "layout": slide.slide_layout.name, "shapes": [_describe(s) for s in slide.shapes]},
                      ensure_ascii=False)


def set_text(frame, text: str) -> None:
    """Replace a text frame's text, one paragraph per line, keeping the formatting of each
    paragraph's first run (python-pptx's `text_frame.text = ...` would drop it)."""
    lines = text.split("\n")
    paragraphs = list(frame.paragraphs)
    for i, line in enumerate(lines):
        if i < len(paragraphs):
            p = paragraphs[i]
            runs = list(p.runs)
            if "\v" in line:  # a line break inside the paragraph: python-pptx writes <a:br/>, runs restart
                p.text = line
            elif runs:
                runs[0].text = line
                for r in runs[1:]:
                    r._r.getparent().remove(r._r)
                for br in p._p.findall("{http://schemas.openxmlformats.org/drawingml/2006/main}br"):
                    p._p.remove(br)
            else:
                p.text = line
        else:
            frame.add_paragraph().text = line
    for p in paragraphs[len(lines):]:
        p._p.getparent().remove(p._p)


def _text(args: Mapping[str, Any], session: Session, key: str = "text") -> str:
    return string(args[key], key, session.limits.max_text_chars, empty=True, controls=_SLIDE_CONTROLS)


def edit_slide_text(prs, args: Mapping[str, Any], session: Session) -> str:
    only(args, "edit_slide_text", ("file", "slide", "shape", "text"))
    n, slide = _slide(prs, args)
    shape = _shape(slide, n, args["shape"])
    if kind(shape) in ("table", "chart") or not getattr(shape, "has_text_frame", False) or not shape.has_text_frame:
        raise ToolError(f"{shape.name!r} on slide {n} is a {kind(shape)} without its own text: use edit_table_cell or set_chart_data")
    text = _text(args, session)
    old = shape.text_frame.text
    set_text(shape.text_frame, text)
    if shape.text_frame.text != old:
        session.record("edit_slide_text", f"slide {n}/{shape.name}", old, shape.text_frame.text)
    return f"slide {n}/{shape.name} now reads {shape.text_frame.text[:200]!r}"


def edit_table_cell(prs, args: Mapping[str, Any], session: Session) -> str:
    only(args, "edit_table_cell", ("file", "slide", "shape", "row", "column", "text"))
    n, slide = _slide(prs, args)
    shape = _shape(slide, n, args["shape"])
    if kind(shape) != "table":
        raise ToolError(f"{shape.name!r} on slide {n} is a {kind(shape)}, not a table")
    table = shape.table
    r = integer(args["row"], "row", 1, len(table.rows))
    c = integer(args["column"], "column", 1, len(table.columns))
    text = _text(args, session)
    cell = table.cell(r - 1, c - 1)
    old = cell.text
    set_text(cell.text_frame, text)
    if cell.text != old:
        session.record("edit_table_cell", f"slide {n}/{shape.name}/r{r}c{c}", old, cell.text)
    return f"slide {n}/{shape.name}/r{r}c{c} now reads {cell.text[:200]!r}"


def number_format(chart) -> str:
    """The number format of a chart's data (its first numCache's formatCode), General if none."""
    codes = [e.text for e in chart._chartSpace.iter(f"{_CHART_NS}numCache") for e in e.iter(f"{_CHART_NS}formatCode")]
    return codes[0] if codes and codes[0] else "General"


@functools.cache
def _text_chart_data_class():
    """python-pptx's CategoryChartData whose embedded workbook holds every label as text.

    python-pptx opens its xlsxwriter Workbook with default options in
    `_BaseWorkbookWriter._open_worksheet`; this subclass (one writer class, no global patch)
    opens it with `_TEXT_ONLY_WORKBOOK` and lays the sheet out exactly as python-pptx does."""
    from contextlib import contextmanager

    from pptx.chart.data import CategoryChartData
    from pptx.chart.xlsx import CategoryWorkbookWriter
    from pptx.util import lazyproperty
    from xlsxwriter import Workbook

    class TextWorkbookWriter(CategoryWorkbookWriter):
        @contextmanager
        def _open_worksheet(self, xlsx_file):
            workbook = Workbook(xlsx_file, dict(_TEXT_ONLY_WORKBOOK))
            worksheet = workbook.add_worksheet()
            yield workbook, worksheet
            workbook.close()

    class TextCategoryChartData(CategoryChartData):
        @lazyproperty
        def _workbook_writer(self):
            return TextWorkbookWriter(self)

    return TextCategoryChartData


def text_chart_data(number_format: str):
    """An empty CategoryChartData (of `number_format`) whose labels are written as text."""
    return _text_chart_data_class()(number_format=number_format)


def _label(value: Any, what: str) -> str:
    """A category or series name: text a chart and its workbook hold, never formula-like."""
    text = string(value, what, 100, controls=_LABEL_CONTROLS)
    if text.startswith("="):
        raise ToolError(f"{what} may not start with '=': a chart label is text, never a formula")
    return text


def _chart_args(args: Mapping[str, Any], session: Session, number_format: str):
    """A CategoryChartData of the call's `categories` and `series`, every entry checked first."""
    limits = session.limits
    given = items(args["categories"], "categories", limits.max_categories)
    categories = [_label(c, f"categories[{i}]") for i, c in enumerate(given)]
    data = text_chart_data(number_format)
    data.categories = categories
    for i, s in enumerate(items(args["series"], "series", limits.max_series)):
        if not isinstance(s, Mapping):
            raise ToolError(f"series[{i}] must be an object with name and values")
        only(s, f"series[{i}]", ("name", "values"))
        values = s["values"]
        if not isinstance(values, list) or len(values) != len(categories):
            raise ToolError(f"series[{i}].values must be a list of {len(categories)} numbers (one per category) or nulls")
        data.add_series(_label(s["name"], f"series[{i}].name"),
                        [None if v is None else float(number(v, f"series[{i}].values[{j}]")) for j, v in enumerate(values)])
    return data


def set_chart_data(prs, args: Mapping[str, Any], session: Session) -> str:
    """New categories and series values for an existing category chart, which stays the same
    chart (type, formatting, position) with its data in its own embedded workbook."""
    only(args, "set_chart_data", ("file", "slide", "shape", "categories", "series"))
    from pptx.enum.chart import XL_CHART_TYPE

    n, slide = _slide(prs, args)
    shape = _shape(slide, n, args["shape"])
    if kind(shape) != "chart":
        raise ToolError(f"{shape.name!r} on slide {n} is a {kind(shape)}, not a chart")
    chart = shape.chart
    if chart.chart_type in (XL_CHART_TYPE.XY_SCATTER, XL_CHART_TYPE.BUBBLE) or "XY_SCATTER" in str(chart.chart_type) \
            or "BUBBLE" in str(chart.chart_type):
        raise ToolError("only category charts (column, bar, line, pie, area) take new data here")
    data = _chart_args(args, session, number_format(chart))
    old = chart_data(chart)
    chart.replace_data(data)
    new = chart_data(chart)
    if new != old:
        session.record("set_chart_data", f"slide {n}/{shape.name}/data",
                       {"categories": old["categories"], "series": old["series"]},
                       {"categories": new["categories"], "series": new["series"]})
    return f"slide {n}/{shape.name} now charts {len(new['series'])} series over {len(new['categories'])} categories"


# The category chart types add_chart makes (lower-case python-pptx names): editable charts whose
# data is categories by series, the kind set_chart_data and fa.summary-ties read.
CHART_TYPES = ("column_clustered", "column_stacked", "bar_clustered", "bar_stacked", "line", "line_markers",
               "pie", "area", "doughnut")
LEGEND_POSITIONS = ("bottom", "top", "left", "right", "corner", "none")
EMU_PER_INCH = 914_400


def add_slide(prs, args: Mapping[str, Any], session: Session) -> str:
    """A new slide from one of the deck's own layouts, its title placeholder holding `title`,
    at `position` (default: the end). The layout is used as it is (never copied or changed:
    fa.preservation holds layouts and masters unchanged); the slide gets the placeholders
    python-pptx clones from the layout, empty but for the title."""
    only(args, "add_slide", ("file", "layout", "title"), ("position",))
    layouts = {layout.name: layout for layout in prs.slide_layouts}
    name = string(args["layout"], "layout", 100)
    if name not in layouts:
        raise ToolError(f"the deck has no layout {name!r}; its layouts are {', '.join(repr(n) for n in layouts)}")
    title_text = _text(args, session, "title")
    count = len(prs.slides)
    if count >= session.limits.max_slides:
        raise ToolError(f"the deck already has {count:,} slides, the limit")
    position = integer(args["position"], "position", 1, count + 1) if "position" in args else count + 1
    layout = layouts[name]
    if title_text and not any(p.placeholder_format.type is not None and "TITLE" in str(p.placeholder_format.type)
                              for p in layout.placeholders):
        raise ToolError(f"layout {name!r} has no title placeholder: give an empty title or another layout")
    slide = prs.slides.add_slide(layout)
    ids = prs.slides._sldIdLst
    entry = list(ids)[-1]
    if position != count + 1:
        ids.remove(entry)
        ids.insert(position - 1, entry)
    if title_text and slide.shapes.title is not None:
        set_text(slide.shapes.title.text_frame, title_text)
    session.record("add_slide", f"slide {position}", None, {"layout": name, "title": title(slide)})
    return f"added slide {position} ({name}), titled {title(slide)[:200]!r}; the deck now has {count + 1} slides"


def _emu(args: Mapping[str, Any], key: str, default: int, lo: int, hi: int) -> int:
    if key not in args:
        return default
    inches = number(args[key], key)
    emu = int((inches * EMU_PER_INCH).to_integral_value())
    if not lo <= emu <= hi:
        raise ToolError(f"{key} must be between {lo / EMU_PER_INCH:g} and {hi / EMU_PER_INCH:g} inches")
    return emu


def add_chart(prs, args: Mapping[str, Any], session: Session) -> str:
    """A new editable category chart named `shape` on a slide: its categories and series in its
    own embedded workbook (as python-pptx writes it, so set_chart_data and the validators read
    it), of one of `CHART_TYPES`, placed in inches inside the slide (default: below the title)."""
    only(args, "add_chart", ("file", "slide", "shape", "chart_type", "categories", "series"),
         ("number_format", "left", "top", "width", "height", "legend"))
    from pptx.enum.chart import XL_CHART_TYPE, XL_LEGEND_POSITION

    n, slide = _slide(prs, args)
    name = string(args["shape"], "shape", 200, controls=NO_CONTROLS)
    if any(s.name == name for s in slide.shapes):
        raise ToolError(f"slide {n} already has a shape {name!r}: shapes are found by name, so names stay unique")
    if len(slide.shapes) >= session.limits.max_shapes:
        raise ToolError(f"slide {n} already has {len(slide.shapes):,} shapes, the limit")
    chart_type = string(args["chart_type"], "chart_type", 40).lower()
    if chart_type not in CHART_TYPES:
        raise ToolError(f"chart_type must be one of {', '.join(CHART_TYPES)}")
    legend = string(args["legend"], "legend", 20).lower() if "legend" in args else "bottom"
    if legend not in LEGEND_POSITIONS:
        raise ToolError(f"legend must be one of {', '.join(LEGEND_POSITIONS)}")
    fmt = string(args["number_format"], "number_format", 100, controls=NO_CONTROLS) if "number_format" in args else "General"
    width_all, height_all = int(prs.slide_width), int(prs.slide_height)
    left = _emu(args, "left", EMU_PER_INCH // 2, 0, width_all - 1)
    top = _emu(args, "top", min(3 * EMU_PER_INCH // 2, height_all - 1), 0, height_all - 1)
    width = _emu(args, "width", width_all - left - EMU_PER_INCH // 2, 1, width_all - left)
    height = _emu(args, "height", height_all - top - EMU_PER_INCH // 2, 1, height_all - top)
    if width <= 0 or height <= 0:
        raise ToolError("the chart must fit inside the slide: give left, top, width and height in inches")
    data = _chart_args(args, session, fmt)
    frame = slide.shapes.add_chart(getattr(XL_CHART_TYPE, chart_type.upper()), left, top, width, height, data)
    frame.name = name
    chart = frame.chart
    chart.has_legend = legend != "none"
    if chart.has_legend:
        chart.legend.position = getattr(XL_LEGEND_POSITION, legend.upper())
        chart.legend.include_in_layout = False
    made = chart_data(chart)
    session.record("add_chart", f"slide {n}/{name}", None,
                   {"type": made["type"], "categories": made["categories"], "series": made["series"],
                    "box_inches": [round(v / EMU_PER_INCH, 4) for v in (left, top, width, height)], "legend": legend})
    return f"added chart slide {n}/{name} ({chart_type}): {len(made['series'])} series over {len(made['categories'])} categories"
