"""The artifact toolbox: confined to its run folder, bounded, hostile arguments answered as
tool errors, hostile files refused on open, every change recorded, the same calls the same bytes."""

from __future__ import annotations

import io
import json
import os
import zipfile

import pytest

from helpers.artifacts import task as make_task
from lrc.runtime.artifacts import formulatext, model, tasks
from lrc.runtime.artifacts.toolargs import Limits
from lrc.runtime.artifacts.toolbox import ArtifactToolbox

SEED = "toolbox"
BOOK, DECK = tasks.MODEL, tasks.DECK


@pytest.fixture(scope="module")
def files() -> dict[str, bytes]:
    return dict(make_task("refresh-deck-table", SEED).inputs)


@pytest.fixture
def tb(tmp_path, files) -> ArtifactToolbox:
    return ArtifactToolbox(tmp_path / "run", files)


def error(tb: ArtifactToolbox, name: str, args) -> str:
    before = list(tb.mutations)
    out = tb.call(name, args)
    assert out.is_error and not out.terminal, out.content
    assert out.content.startswith("error: ")
    assert tb.mutations == before  # a refused call changes nothing
    return out.content


def ok(tb: ArtifactToolbox, name: str, args) -> str:
    out = tb.call(name, args)
    assert not out.is_error, out.content
    return out.content


def rezip(data: bytes, change: dict[str, bytes]) -> bytes:
    src = zipfile.ZipFile(io.BytesIO(data))
    members = {i.filename: src.read(i.filename) for i in src.infolist()}
    members.update(change)
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as z:
        for name, body in members.items():
            z.writestr(name, body)
    return out.getvalue()


# -- the private copy and its paths --------------------------------------------------------------

def test_the_inputs_are_copied_and_the_task_bytes_never_change(tmp_path, files):
    original = dict(files)
    tb = ArtifactToolbox(tmp_path / "run", files)
    assert sorted(os.listdir(tmp_path / "run")) == [DECK, BOOK]
    ok(tb, "write_cells", {"file": BOOK, "cells": [{"cell": "Inputs!C4", "value": 1}]})
    ok(tb, "submit", {})
    assert files == original
    assert tb.outputs()[BOOK] != original[BOOK] and tb.outputs()[DECK] == original[DECK]


@pytest.mark.parametrize("path", ["../model.xlsx", "/etc/passwd", "sub/model.xlsx", "model.xlsx\x00", "C:model.xlsx",
                                  "..\\model.xlsx", "~/model.xlsx", "", "x" * 300, "other.xlsx", "%2e%2e/model.xlsx"])
def test_paths_outside_the_manifest_are_refused(tb, path):
    message = error(tb, "list_sheets", {"file": path})
    assert any(why in message for why in ("refused", "no such file", "NUL", "characters long", "must not be empty"))


@pytest.mark.parametrize("path", [123, None, ["model.xlsx"], {"a": 1}, True])
def test_a_path_that_is_not_a_string_is_refused(tb, path):
    assert "file must be a string" in error(tb, "list_sheets", {"file": path})


def test_a_symlink_planted_in_the_run_folder_is_never_followed(tmp_path, files):
    secret = tmp_path / "secret.xlsx"
    secret.write_bytes(files[BOOK])
    tb = ArtifactToolbox(tmp_path / "run", files)
    (tmp_path / "run" / BOOK).unlink()
    (tmp_path / "run" / BOOK).symlink_to(secret)
    assert "symlink" in error(tb, "list_sheets", {"file": BOOK})


def test_a_save_replaces_a_planted_symlink_instead_of_writing_through_it(tmp_path, files):
    outside = tmp_path / "outside.pptx"
    outside.write_bytes(b"keep me")
    tb = ArtifactToolbox(tmp_path / "run", files)
    ok(tb, "edit_table_cell", {"file": DECK, "slide": 2, "shape": "Key figures", "row": 2, "column": 2, "text": "1.00"})
    (tmp_path / "run" / DECK).unlink()
    (tmp_path / "run" / DECK).symlink_to(outside)
    # the save reads the old bytes for the record first: the symlink is refused, nothing is written
    assert "symlink" in error(tb, "save", {"file": DECK})
    assert outside.read_bytes() == b"keep me"


# -- bounds and hostile arguments -----------------------------------------------------------------

def test_a_read_over_the_cell_bound_is_refused(tb):
    assert "spans" in error(tb, "read_range", {"file": BOOK, "sheet": "IS", "range": "A1:ZZ10000"})


def test_a_result_over_the_character_bound_is_cut_visibly(tmp_path, files):
    tb = ArtifactToolbox(tmp_path / "run", files, limits=Limits(max_result_chars=300))
    out = ok(tb, "read_range", {"file": BOOK, "sheet": "IS", "range": "A1:F13"})
    assert len(out) == 300 and out.endswith("…[truncated]")


@pytest.mark.parametrize("cells,why", [
    ([{"cell": "IS!G5", "value": 1}] * 501, "the limit is 500"),
    ([{"cell": "IS!G5", "value": "x" * 2001}], "the limit is 2,000"),
    ([{"cell": "IS!XFD1048576", "value": 1}], "outside the reach"),
    ([{"cell": "IS!A10001", "value": 1}], "outside the reach"),
    ([{"cell": "IS!G5", "value": 1e300}], "finite number below"),
    ([{"cell": "IS!G5", "value": 10 ** 20}], "finite number below"),
    ([{"cell": "IS!G5", "value": {"a": 1}}], "must be a number"),
    ([{"cell": "IS!G5", "value": [1, 2]}], "must be a number"),
    ([{"cell": "IS!G5", "value": 1, "formula": "=1"}], "not both"),
    ([{"cell": "IS!G5"}], "changes nothing"),
    ([{"cell": "G5", "value": 1}], "must name its sheet"),
    ([{"cell": "Nope!G5", "value": 1}], "no sheet"),
    ([{"cell": "IS!G5", "value": 1, "colour": "red"}], "unexpected: colour"),
    ([{"cell": "IS!G5", "bold": "yes"}], "true or false"),
    ([{"cell": "IS!G5", "value": 1}, {"cell": "IS!G5", "value": 2}], "appears twice"),
    (["IS!G5"], "must be an object"),
    ({"cell": "IS!G5"}, "must be a list"),
    ([], "must not be empty"),
    ([{"cell": "IS!G5", "value": "=1+1"}], "may not start with '='"),
])
def test_hostile_write_arguments_are_tool_errors(tb, cells, why):
    assert why in error(tb, "write_cells", {"file": BOOK, "cells": cells})


@pytest.mark.parametrize("name,args,why", [
    ("insert_rows", {"file": BOOK, "sheet": "IS", "at": 5, "count": 1000}, "between 1 and 100"),
    ("insert_rows", {"file": BOOK, "sheet": "IS", "at": True}, "must be an integer"),
    ("insert_rows", {"file": BOOK, "sheet": "IS", "at": 5.0}, "must be an integer"),
    ("insert_columns", {"file": BOOK, "sheet": "IS", "at": 0}, "between 1 and 200"),
    ("read_slide", {"file": DECK, "slide": "2"}, "must be an integer"),
    ("read_slide", {"file": DECK, "slide": 99}, "between 1 and 4"),
    ("read_slide", {"file": BOOK, "slide": 1}, "not an pptx file"),
    ("list_sheets", {"file": DECK}, "not an xlsx file"),
    ("edit_table_cell", {"file": DECK, "slide": 2, "shape": "Key figures", "row": 9, "column": 1, "text": "x"}, "between 1 and 5"),
    ("edit_table_cell", {"file": DECK, "slide": 3, "shape": "Revenue chart", "row": 1, "column": 1, "text": "x"}, "not a table"),
    ("edit_slide_text", {"file": DECK, "slide": 2, "shape": "Key figures", "text": "x"}, "use edit_table_cell"),
    ("edit_slide_text", {"file": DECK, "slide": 1, "shape": "Title 1", "text": "a\x07b"}, "control characters"),
    ("edit_slide_text", {"file": DECK, "slide": 1, "shape": "nope", "text": "x"}, "no shape"),
    ("set_chart_data", {"file": DECK, "slide": 3, "shape": "Revenue chart", "categories": ["a"],
                        "series": [{"name": "s", "values": [1, 2]}]}, "one per category"),
    ("set_chart_data", {"file": DECK, "slide": 3, "shape": "Revenue chart", "categories": ["a"] * 201,
                        "series": [{"name": "s", "values": [1] * 201}]}, "the limit is 200"),
    ("set_chart_data", {"file": DECK, "slide": 3, "shape": "Revenue chart", "categories": ["a"],
                        "series": [{"name": "s", "values": ["1"]}]}, "must be a number"),
    ("set_defined_name", {"file": BOOK, "name": "A1", "refers_to": "IS!$C$4"}, "not a usable defined name"),
    ("set_defined_name", {"file": BOOK, "name": "Ext", "refers_to": "[1]IS!$C$4"}, "no sheet"),
    ("set_defined_name", {"file": BOOK, "name": "Ext", "refers_to": "IS!$C$4+1"}, "not a range"),
    ("add_sheet", {"file": BOOK, "sheet": "IS"}, "already exists"),
    ("add_sheet", {"file": BOOK, "sheet": "a/b"}, "may not contain"),
    ("add_slide", {"file": DECK, "layout": "No such layout", "title": "x"}, "no layout 'No such layout'"),
    ("add_slide", {"file": DECK, "layout": "Title Only", "title": "x", "position": 6}, "between 1 and 5"),
    ("add_slide", {"file": DECK, "layout": "Title Only", "title": "x", "position": 0}, "between 1 and 5"),
    ("add_slide", {"file": DECK, "layout": "Title Only", "title": "a\x00b"}, "title contains a NUL"),
    ("add_slide", {"file": DECK, "layout": "Title Only", "title": "a\x07b"}, "title may contain line breaks"),
    ("add_slide", {"file": DECK, "layout": "Title Only", "title": "x" * 2_001}, "the limit is 2,000"),
    ("add_slide", {"file": DECK, "layout": "Blank", "title": "x"}, "no title placeholder"),
    ("add_slide", {"file": DECK, "layout": ["Title Only"], "title": "x"}, "must be a string"),
    ("add_slide", {"file": DECK, "layout": "Title Only"}, "title"),
    ("add_slide", {"file": BOOK, "layout": "Title Only", "title": "x"}, "not an pptx file"),
    ("add_chart", {"file": DECK, "slide": 3, "shape": "Revenue chart", "chart_type": "column_clustered",
                   "categories": ["a"], "series": [{"name": "s", "values": [1]}]}, "already has a shape"),
    ("add_chart", {"file": DECK, "slide": 2, "shape": "New", "chart_type": "xy_scatter",
                   "categories": ["a"], "series": [{"name": "s", "values": [1]}]}, "chart_type must be one of"),
    ("add_chart", {"file": DECK, "slide": 2, "shape": "New", "chart_type": "line", "legend": "everywhere",
                   "categories": ["a"], "series": [{"name": "s", "values": [1]}]}, "legend must be one of"),
    ("add_chart", {"file": DECK, "slide": 2, "shape": "New", "chart_type": "line", "left": 13.0, "width": 1,
                   "categories": ["a"], "series": [{"name": "s", "values": [1]}]}, "width must be between"),
    ("add_chart", {"file": DECK, "slide": 2, "shape": "New", "chart_type": "line", "top": -1,
                   "categories": ["a"], "series": [{"name": "s", "values": [1]}]}, "top must be between"),
    ("add_chart", {"file": DECK, "slide": 2, "shape": "New", "chart_type": "line", "height": 1e300,
                   "categories": ["a"], "series": [{"name": "s", "values": [1]}]}, "must be"),
    ("add_chart", {"file": DECK, "slide": 2, "shape": " ", "chart_type": "line",
                   "categories": ["a"], "series": [{"name": "s", "values": [1]}]}, "shape must"),
    ("add_chart", {"file": DECK, "slide": 2, "shape": "a\tb", "chart_type": "line",
                   "categories": ["a"], "series": [{"name": "s", "values": [1]}]}, "without control characters"),
    ("add_chart", {"file": DECK, "slide": 2, "shape": "New", "chart_type": "line",
                   "categories": ["a"] * 201, "series": [{"name": "s", "values": [1] * 201}]}, "the limit is 200"),
    ("add_chart", {"file": DECK, "slide": 2, "shape": "New", "chart_type": "line",
                   "categories": ["a"], "series": [{"name": "s", "values": [1]}] * 21}, "the limit is 20"),
    ("add_chart", {"file": DECK, "slide": 2, "shape": "New", "chart_type": "line",
                   "categories": ["a"], "series": [{"name": "s", "values": [float("nan")]}]}, "number"),
    ("add_chart", {"file": DECK, "slide": 2, "shape": "New", "chart_type": "line", "number_format": "0\n0",
                   "categories": ["a"], "series": [{"name": "s", "values": [1]}]}, "control characters"),
    ("add_chart", {"file": DECK, "slide": 9, "shape": "New", "chart_type": "line",
                   "categories": ["a"], "series": [{"name": "s", "values": [1]}]}, "between 1 and 4"),
    ("submit", {"files": ["model.xlsx"]}, "unexpected: files"),
    ("nope", {}, "unknown tool"),
])
def test_hostile_arguments_of_every_tool_are_tool_errors(tb, name, args, why):
    assert why in error(tb, name, args)


@pytest.mark.parametrize("args", [None, [], "model.xlsx", 3])
def test_arguments_that_are_not_an_object_are_refused(tb, args):
    assert "must be a JSON object" in error(tb, "list_files", args)


def test_a_refused_entry_leaves_the_whole_call_unapplied(tb):
    error(tb, "write_cells", {"file": BOOK, "cells": [{"cell": "IS!G5", "value": 1}, {"cell": "IS!G6", "formula": "=[1]S!A1"}]})
    cells = json.loads(ok(tb, "read_range", {"file": BOOK, "sheet": "IS", "range": "G5:G6"}))["cells"]
    assert cells == []


# -- formulas ----------------------------------------------------------------------------------------

@pytest.mark.parametrize("formula,why", [
    ("=[1]Sheet1!A1", "another file"),
    ("='[book.xlsx]IS'!C4", "another file"),
    ("='http://evil.example/[x.xlsx]IS'!A1", "another file"),
    ("='C:\\dir\\[x.xlsx]IS'!A1", "another file"),
    ('=WEBSERVICE("http://evil.example/")', "WEBSERVICE is not allowed"),
    ('=_xlfn.WEBSERVICE("http://evil.example/")', "WEBSERVICE is not allowed"),
    ('=HYPERLINK("http://evil.example/","x")', "HYPERLINK is not allowed"),
    ('=INDIRECT("IS!C4")', "INDIRECT is not allowed"),
    ("=cmd|' /C calc'!A0", "DDE"),
    ("=SUM((C4)", "do not balance"),
    ("=SUM(C4))", "do not balance"),
    ("SUM(C4)", "must start with '='"),
    ("=", "must start with '='"),
    ("={1,2}", "array"),
    ("=1+" + "1+" * 1000, "characters long"),
])
def test_formulas_that_reach_outside_or_do_not_parse_are_refused(tb, formula, why):
    assert why in error(tb, "write_cells", {"file": BOOK, "cells": [{"cell": "IS!G5", "formula": formula}]})


def test_a_string_literal_may_hold_a_link_as_text(tb):
    ok(tb, "write_cells", {"file": BOOK, "cells": [{"cell": "IS!H1", "formula": '="see http://x.example/[a]|b"'}]})


@pytest.mark.parametrize("formula,expected", [
    ("=C6+C7", "=C8+C9"),  # rows at and below the insertion move
    ("=C4+C5", "=C4+C5"),  # rows above stay
    ("=SUM(C4:C6)", "=SUM(C4:C8)"),  # a range that straddles grows
    ("=$C$6*2", "=$C$8*2"),  # absolute references move too
    ("=Inputs!C6", "=Inputs!C6"),  # another sheet's reference stays
    ("=IS!C6", "=IS!C8"),  # this sheet, named
    ("=SUM(C:C)", "=SUM(C:C)"),  # whole columns keep their rows
    ("=SUM(6:7)", "=SUM(8:9)"),  # whole rows move
    ("=C6*TaxRate", "=C8*TaxRate"),  # a defined name is not a reference
    ('="C6"&C6', '="C6"&C8'),  # text in a string literal stays
])
def test_inserted_rows_shift_references_as_excel_does(formula, expected):
    assert formulatext.shift(formula, "IS", "IS", "row", 6, 2) == expected


def test_inserted_columns_shift_references_on_their_sheet_only():
    assert formulatext.shift("=D4+'IS'!E4+BS!E4", "IS", "IS", "col", 5, 1) == "=D4+'IS'!F4+BS!E4"
    assert formulatext.shift("=IS!E4", "CF", "IS", "col", 5, 1) == "=IS!F4"
    assert formulatext.shift("=E4", "CF", "IS", "col", 5, 1) == "=E4"


def test_an_inserted_row_keeps_the_model_balanced(tb, files):
    from lrc.runtime.artifacts import validators
    from lrc.runtime.artifacts.views import Submission

    out = ok(tb, "insert_rows", {"file": BOOK, "sheet": "IS", "at": 6, "count": 1})
    assert "shifted the references of" in out and "Not shifted" in out
    ok(tb, "submit", {})
    task = tasks.make("refresh-deck-table", SEED)
    identities = next(c for c in tasks.extend_quarter(SEED).checks if c["validator"] == "fa.identities")
    got = validators.run(identities, Submission(task.inputs, tb.outputs()))
    assert got["status"] == "pass", got["message"]
    shifted = [m for m in tb.mutations if m["tool"] == "insert_rows" and m["location"] == "BS!C12"]
    assert shifted == [{"tool": "insert_rows", "file": BOOK, "location": "BS!C12", "old": "=B12+IS!C13", "new": "=B12+IS!C14"}]
    assert {"tool": "insert_rows", "file": BOOK, "location": 'name "NetIncome"', "old": "IS!$C$13:$F$13",
            "new": "IS!$C$14:$F$14"} in tb.mutations


def test_insertion_is_refused_on_a_sheet_with_merged_cells(tmp_path):
    from openpyxl import load_workbook

    from lrc.runtime.artifacts.deterministic import workbook_bytes

    wb = load_workbook(io.BytesIO(model.three_statement(SEED)))
    wb["IS"].merge_cells("A1:C1")
    tb = ArtifactToolbox(tmp_path / "run", {BOOK: workbook_bytes(wb)})
    assert "merged cells" in error(tb, "insert_rows", {"file": BOOK, "sheet": "IS", "at": 5})


# -- hostile files ---------------------------------------------------------------------------------

def _hostile(tmp_path, name: str, data: bytes) -> ArtifactToolbox:
    tb = ArtifactToolbox(tmp_path / "run", {name: data})  # constructing never opens the file
    assert "refused" in ok(tb, "list_files", {})
    return tb


def test_a_zip_bomb_workbook_is_refused_cleanly(tmp_path, files):
    bomb = rezip(files[BOOK], {"xl/sharedStrings.xml": b"<sst>" + b" " * 30_000_000 + b"</sst>"})
    tb = _hostile(tmp_path, BOOK, bomb)
    assert "zip bomb" in error(tb, "list_sheets", {"file": BOOK})


def test_an_xxe_workbook_is_refused_cleanly(tmp_path, files):
    src = zipfile.ZipFile(io.BytesIO(files[BOOK]))
    workbook = src.read("xl/workbook.xml")
    body = workbook.split(b"?>", 1)[1] if workbook.startswith(b"<?xml") else workbook
    xxe = b'<?xml version="1.0"?><!DOCTYPE x [<!ENTITY e SYSTEM "file:///etc/passwd">]>' + body
    tb = _hostile(tmp_path, BOOK, rezip(files[BOOK], {"xl/workbook.xml": xxe}))
    assert "hostile XML" in error(tb, "read_range", {"file": BOOK, "sheet": "IS", "range": "A1"})


def test_a_workbook_with_a_vba_project_is_refused_never_run(tmp_path, files):
    with_macros = rezip(files[BOOK], {"xl/vbaProject.bin": b"\xd0\xcf\x11\xe0 not really ole"})
    tb = _hostile(tmp_path, BOOK, with_macros)
    assert "macro" in error(tb, "list_sheets", {"file": BOOK})
    tb = _hostile(tmp_path / "xlsm", "model.xlsm", with_macros)
    assert "macro-enabled file" in error(tb, "list_sheets", {"file": "model.xlsm"})


def test_external_links_are_listed_never_followed(tmp_path, files):
    rels = zipfile.ZipFile(io.BytesIO(files[BOOK])).read("xl/_rels/workbook.xml.rels")
    link = (b'<Relationship Id="rIdX" TargetMode="External" Target="http://evil.example/book.xlsx" '
            b'Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/externalLinkPath"/></Relationships>')
    tb = ArtifactToolbox(tmp_path / "run", {BOOK: rezip(files[BOOK], {"xl/_rels/workbook.xml.rels": rels.replace(b"</Relationships>", link)})})
    assert "1 external link(s), never followed" in ok(tb, "list_files", {})
    ok(tb, "list_sheets", {"file": BOOK})


# -- the mutation record ---------------------------------------------------------------------------

def test_every_change_is_recorded_with_its_location_old_and_new(tb):
    ok(tb, "write_cells", {"file": BOOK, "cells": [{"cell": "IS!G4", "formula": "=Inputs!G4", "style_from": "IS!F4"},
                                                   {"cell": "Inputs!C4", "value": 12.5}]})
    ok(tb, "set_defined_name", {"file": BOOK, "name": "Revenue", "refers_to": "IS!$C$4:$G$4"})
    ok(tb, "edit_table_cell", {"file": DECK, "slide": 2, "shape": "Key figures", "row": 2, "column": 3, "text": "9.99"})
    ok(tb, "edit_slide_text", {"file": DECK, "slide": 1, "shape": "Title 1", "text": "New title"})
    ok(tb, "set_chart_data", {"file": DECK, "slide": 3, "shape": "Revenue chart", "categories": ["Q1", "Q2"],
                              "series": [{"name": "Revenue", "values": [1, 2]}, {"name": "Gross profit", "values": [0.5, None]}]})
    ok(tb, "submit", {"note": "done"})
    seen = [(m["tool"], m["file"], m["location"]) for m in tb.mutations]
    assert seen == [
        ("write_cells", BOOK, "IS!G4"), ("write_cells", BOOK, "IS!G4 style"), ("write_cells", BOOK, "Inputs!C4"),
        ("set_defined_name", BOOK, 'name "Revenue"'),
        ("edit_table_cell", DECK, "slide 2/Key figures/r2c3"), ("edit_slide_text", DECK, "slide 1/Title 1"),
        ("set_chart_data", DECK, "slide 3/Revenue chart/data"), ("save", DECK, DECK), ("save", BOOK, BOOK)]
    by = {m["location"]: m for m in tb.mutations}
    assert (by["IS!G4"]["old"], by["IS!G4"]["new"]) == (None, "=Inputs!G4")
    assert by["IS!G4 style"]["new"]["number_format"] == model.MONEY_FORMAT
    assert by["Inputs!C4"]["new"] == "12.5" and isinstance(by["Inputs!C4"]["old"], (int, float))
    assert by['name "Revenue"']["old"] == "IS!$C$4:$F$4" and by['name "Revenue"']["new"] == "IS!$C$4:$G$4"
    assert by["slide 2/Key figures/r2c3"]["new"] == "9.99"
    assert by["slide 3/Revenue chart/data"]["new"]["series"][1] == {"name": "Gross profit", "values": [0.5, None]}
    assert by[BOOK]["old"].startswith("sha256:") and by[BOOK]["old"] != by[BOOK]["new"]
    json.dumps(tb.mutations)  # the record is plain JSON for the trace
    assert tb.submitted["note"] == "done" and set(tb.submitted["files"]) == {BOOK, DECK}


def test_a_new_slide_and_chart_are_real_objects_bounded_and_recorded(tb):
    from pptx import Presentation

    out = ok(tb, "add_slide", {"file": DECK, "layout": "Title Only", "title": "Margins", "position": 2})
    assert "added slide 2 (Title Only)" in out and "5 slides" in out
    ok(tb, "add_chart", {"file": DECK, "slide": 2, "shape": "Margin chart", "chart_type": "line_markers",
                         "categories": ["Q1", "Q2"], "series": [{"name": "Margin", "values": [0.25, None]}],
                         "number_format": "0.0%", "left": 1, "top": 1.5, "width": 6, "height": 4, "legend": "none"})
    ok(tb, "set_chart_data", {"file": DECK, "slide": 2, "shape": "Margin chart", "categories": ["Q1", "Q2"],
                              "series": [{"name": "Margin", "values": [0.25, 0.5]}]})
    listed = json.loads(ok(tb, "list_slides", {"file": DECK}))
    assert [s["title"] for s in listed["slides"]][:3] == [listed["slides"][0]["title"], "Margins", "Key figures"]
    assert "Title Only" in listed["layouts"]
    ok(tb, "submit", {})
    seen = [(m["tool"], m["location"], m["old"]) for m in tb.mutations]
    assert seen[:3] == [("add_slide", "slide 2", None), ("add_chart", "slide 2/Margin chart", None),
                        ("set_chart_data", "slide 2/Margin chart/data", seen[2][2])]
    assert tb.mutations[0]["new"] == {"layout": "Title Only", "title": "Margins"}
    assert tb.mutations[1]["new"]["type"] == "LINE_MARKERS" and tb.mutations[1]["new"]["box_inches"] == [1, 1.5, 6, 4]
    prs = Presentation(io.BytesIO(tb.outputs()[DECK]))
    assert len(prs.slides) == 5 and prs.slides[1].slide_layout.name == "Title Only"
    frame = next(s for s in prs.slides[1].shapes if s.name == "Margin chart")
    assert frame.has_chart and not frame.chart.has_legend  # an editable chart, its data in its own workbook
    assert frame.chart.part.chart_workbook.xlsx_part is not None
    assert [list(s.values) for s in frame.chart.plots[0].series] == [[0.25, 0.5]]


def test_slides_and_shapes_are_bounded(tmp_path, files):
    tb = ArtifactToolbox(tmp_path / "run", files, limits=Limits(max_slides=5, max_shapes=3))
    ok(tb, "add_slide", {"file": DECK, "layout": "Title Only", "title": "Fifth"})
    assert "already has 5 slides" in error(tb, "add_slide", {"file": DECK, "layout": "Title Only", "title": "Sixth"})
    chart = {"file": DECK, "slide": 5, "chart_type": "pie", "categories": ["a"], "series": [{"name": "s", "values": [1]}]}
    ok(tb, "add_chart", {**chart, "shape": "One"})
    ok(tb, "add_chart", {**chart, "shape": "Two"})
    assert "already has 3 shapes" in error(tb, "add_chart", {**chart, "shape": "Three"})


def test_a_table_edit_keeps_the_cell_formatting_and_a_chart_stays_a_chart(tb):
    from pptx import Presentation

    ok(tb, "edit_table_cell", {"file": DECK, "slide": 2, "shape": "Key figures", "row": 2, "column": 2, "text": "1.00"})
    ok(tb, "set_chart_data", {"file": DECK, "slide": 3, "shape": "Revenue chart", "categories": ["a", "b", "c", "d"],
                              "series": [{"name": "Revenue", "values": [1, 2, 3, 4]}, {"name": "Gross profit", "values": [1, 2, 3, 4]}]})
    ok(tb, "submit", {})
    prs = Presentation(io.BytesIO(tb.outputs()[DECK]))
    cell = next(s for s in prs.slides[1].shapes if s.name == "Key figures").table.cell(1, 1)
    assert cell.text == "1.00" and cell.text_frame.paragraphs[0].runs[0].font.size.pt == 14
    chart = next(s for s in prs.slides[2].shapes if s.name == "Revenue chart")
    assert chart.has_chart and list(chart.chart.plots[0].categories) == ["a", "b", "c", "d"]


def test_nothing_runs_after_submit_and_an_unchanged_file_is_not_rewritten(tb, files):
    out = tb.call("submit", {})
    assert out.terminal and not out.is_error and "no file was opened" in out.content
    assert "already submitted" in error(tb, "list_files", {})
    assert tb.outputs() == files and tb.mutations == []


def test_the_same_calls_give_the_same_bytes(tmp_path, files):
    calls = [("write_cells", {"file": BOOK, "cells": [{"cell": "IS!G4", "formula": "=Inputs!G4", "style_from": "IS!F4"}]}),
             ("insert_rows", {"file": BOOK, "sheet": "CF", "at": 9}),
             ("save", {"file": BOOK}),
             ("edit_table_cell", {"file": DECK, "slide": 2, "shape": "Key figures", "row": 3, "column": 2, "text": "2.00"}),
             ("set_chart_data", {"file": DECK, "slide": 3, "shape": "Revenue chart", "categories": ["a"],
                                 "series": [{"name": "Revenue", "values": [1]}]}),
             ("add_slide", {"file": DECK, "layout": "Title Only", "title": "Again", "position": 1}),
             ("add_chart", {"file": DECK, "slide": 1, "shape": "C", "chart_type": "bar_clustered", "categories": ["a", "b"],
                            "series": [{"name": "s", "values": [1, 2.5]}]}),
             ("submit", {})]
    outputs = []
    for n in range(2):
        tb = ArtifactToolbox(tmp_path / f"run{n}", files)
        for name, args in calls:
            ok(tb, name, json.loads(json.dumps(args)))
        outputs.append((tb.outputs(), tb.mutations))
    assert outputs[0] == outputs[1]


def test_the_tool_schemas_name_every_tool_once():
    schemas = ArtifactToolbox.tools()
    names = [s["function"]["name"] for s in schemas]
    assert len(names) == len(set(names)) and "submit" in names
    assert all(s["type"] == "function" and s["function"]["parameters"]["type"] == "object" for s in schemas)


def test_the_toolbox_offers_exactly_the_tools_its_schemas_describe(tb):
    names = {s["function"]["name"] for s in ArtifactToolbox.tools()}
    assert names == set(tb._tools)
