"""OpenAI tool schemas of the artifact toolbox (what a model is shown; `toolbox` enforces them).

Why data in one place: the schemas are part of what a lock freezes (prompts and tools), so
they live beside the code that implements them and are built the same way every time. The
bounds quoted in descriptions are `toolargs.Limits`' defaults; the toolbox checks the real
ones whatever a schema says, since a model may ignore a schema.
"""

from __future__ import annotations

from typing import Any

_FILE = {"type": "string", "description": "A file of the run, as list_files shows it (e.g. model.xlsx)."}
_SLIDE = {"type": "integer", "minimum": 1, "description": "Slide number, from 1."}
_SHAPE = {"type": "string", "description": "The shape's name, as list_slides or read_slide shows it."}
_SERIES = {"type": "array", "minItems": 1, "maxItems": 20, "items": {
    "type": "object", "additionalProperties": False, "required": ["name", "values"],
    "properties": {"name": {"type": "string"}, "values": {"type": "array", "items": {"type": ["number", "null"]}}}}}
_CELL_ENTRY = {
    "type": "object", "additionalProperties": False, "required": ["cell"],
    "properties": {
        "cell": {"type": "string", "description": "Sheet and cell, e.g. IS!G5 or 'My sheet'!B2."},
        "value": {"type": ["number", "string", "boolean", "null"],
                  "description": "A plain value (null clears the cell). Text may not start with '='."},
        "formula": {"type": "string", "description": "A formula starting with '=', e.g. =SUM(G6:G8). Never evaluated "
                    "by the tool; references to other files, DDE and WEBSERVICE/INDIRECT/HYPERLINK-like functions are refused."},
        "number_format": {"type": "string", "description": "An Excel number format, e.g. #,##0.00;(#,##0.00)."},
        "bold": {"type": "boolean"},
        "style_from": {"type": "string", "description": "Copy the whole style (font, fill, border, format) of this cell, e.g. IS!F5."},
    },
}


def _tool(name: str, description: str, properties: dict[str, Any], required: list[str]) -> dict[str, Any]:
    return {"type": "function", "function": {"name": name, "description": description, "parameters": {
        "type": "object", "additionalProperties": False, "required": required, "properties": properties}}}


def schemas() -> list[dict[str, Any]]:
    """Every tool's schema, in the toolbox's order (a new list on every call)."""
    return [
        _tool("list_files", "List the run's files (a private copy of the task's input) with their kind, size and "
              "whether they can be opened.", {}, []),
        _tool("list_sheets", "List a workbook's sheets (with their used size) and its defined names.", {"file": _FILE}, ["file"]),
        _tool("read_range", "Read the non-empty cells of one range of a sheet: values, and formulas as text. At most "
              "2,000 cells per call. With computed: true, formulas also show the value they give now (recalculated).",
              {"file": _FILE, "sheet": {"type": "string"}, "range": {"type": "string", "description": "e.g. A1:G20"},
               "computed": {"type": "boolean"}}, ["file", "sheet", "range"]),
        _tool("write_cells", "Set cells to values or formulas (and optionally a number format, bold, or another cell's "
              "style). At most 500 cells per call, rows up to 10,000 and columns up to GR. A refused call changes nothing.",
              {"file": _FILE, "cells": {"type": "array", "items": _CELL_ENTRY, "minItems": 1, "maxItems": 500}},
              ["file", "cells"]),
        _tool("insert_rows", "Insert empty rows before row `at` of a sheet. References in every formula and defined name "
              "are shifted as Excel would; row heights, charts and print areas are not.",
              {"file": _FILE, "sheet": {"type": "string"}, "at": {"type": "integer", "minimum": 1},
               "count": {"type": "integer", "minimum": 1, "maximum": 100}}, ["file", "sheet", "at"]),
        _tool("insert_columns", "Insert empty columns before column number `at` (A = 1) of a sheet. References in every "
              "formula and defined name are shifted as Excel would; column widths, charts and print areas are not.",
              {"file": _FILE, "sheet": {"type": "string"}, "at": {"type": "integer", "minimum": 1},
               "count": {"type": "integer", "minimum": 1, "maximum": 100}}, ["file", "sheet", "at"]),
        _tool("set_defined_name", "Create or move a workbook-level defined name over a range of a sheet, or delete it "
              "(refers_to null).", {"file": _FILE, "name": {"type": "string"},
                                    "refers_to": {"type": ["string", "null"], "description": "e.g. IS!$C$4:$G$4"}},
              ["file", "name", "refers_to"]),
        _tool("add_sheet", "Add an empty sheet after the named one (or at the end).",
              {"file": _FILE, "sheet": {"type": "string"}, "after": {"type": "string"}}, ["file", "sheet"]),
        _tool("list_slides", "List a deck's slides: layout, title, and each shape's name and kind (table, chart, ...).",
              {"file": _FILE}, ["file"]),
        _tool("read_slide", "Read one slide: every shape's text, a table's cells, a chart's categories and series.",
              {"file": _FILE, "slide": _SLIDE}, ["file", "slide"]),
        _tool("edit_slide_text", "Replace the text of a shape that holds text (one paragraph per line); the formatting "
              "of each paragraph's first run is kept.", {"file": _FILE, "slide": _SLIDE, "shape": _SHAPE, "text": {"type": "string"}},
              ["file", "slide", "shape", "text"]),
        _tool("edit_table_cell", "Replace the text of one cell of a table (row and column from 1); the table stays a table.",
              {"file": _FILE, "slide": _SLIDE, "shape": _SHAPE, "row": {"type": "integer", "minimum": 1},
               "column": {"type": "integer", "minimum": 1}, "text": {"type": "string"}},
              ["file", "slide", "shape", "row", "column", "text"]),
        _tool("set_chart_data", "Replace a category chart's categories and series values; the chart stays the same "
              "editable chart (type, formatting), with its data in its own workbook.",
              {"file": _FILE, "slide": _SLIDE, "shape": _SHAPE,
               "categories": {"type": "array", "items": {"type": "string"}, "minItems": 1, "maxItems": 200},
               "series": _SERIES},
              ["file", "slide", "shape", "categories", "series"]),
        _tool("add_slide", "Add a slide made from one of the deck's own layouts (list_slides shows the layouts in use), "
              "with its title, at a position (from 1; default the end). At most 100 slides.",
              {"file": _FILE, "layout": {"type": "string", "description": "A layout name, e.g. Title Only."},
               "title": {"type": "string"}, "position": {"type": "integer", "minimum": 1}},
              ["file", "layout", "title"]),
        _tool("add_chart", "Add a new editable category chart (data in its own workbook, never a picture) to a slide, "
              "named `shape`, inside the slide (inches; default below the title).",
              {"file": _FILE, "slide": _SLIDE, "shape": {"type": "string", "description": "The new chart's name (unique on the slide)."},
               "chart_type": {"type": "string", "enum": ["column_clustered", "column_stacked", "bar_clustered", "bar_stacked",
                                                          "line", "line_markers", "pie", "area", "doughnut"]},
               "categories": {"type": "array", "items": {"type": "string"}, "minItems": 1, "maxItems": 200},
               "series": _SERIES,
               "number_format": {"type": "string", "description": "e.g. #,##0.00"},
               "left": {"type": "number", "minimum": 0}, "top": {"type": "number", "minimum": 0},
               "width": {"type": "number", "exclusiveMinimum": 0}, "height": {"type": "number", "exclusiveMinimum": 0},
               "legend": {"type": "string", "enum": ["bottom", "top", "left", "right", "corner", "none"]}},
              ["file", "slide", "shape", "chart_type", "categories", "series"]),
        _tool("save", "Save a file's changes to the run folder.", {"file": _FILE}, ["file"]),
        _tool("submit", "Save every changed file and end the run: the saved files are your result.",
              {"note": {"type": "string", "description": "Optional: what you changed, for the reviewer."}}, []),
    ]
