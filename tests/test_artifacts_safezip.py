"""A hostile Office package is refused with a clear reason before any Office library reads it."""

from __future__ import annotations

import io
import zipfile

import pytest

from lrc.runtime.artifacts import safezip

CONTENT_TYPES = (b'<?xml version="1.0" encoding="UTF-8"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">'
                 b'<Default Extension="xml" ContentType="application/xml"/></Types>')
WORKBOOK = b'<?xml version="1.0"?><workbook xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"/>'


def package(members: dict[str, bytes], compression=zipfile.ZIP_DEFLATED) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", compression) as z:
        for name, data in members.items():
            z.writestr(zipfile.ZipInfo(name, (1980, 1, 1, 0, 0, 0)), data, compress_type=compression)
    return buf.getvalue()


def minimal(**extra: bytes) -> dict[str, bytes]:
    return {"[Content_Types].xml": CONTENT_TYPES, "xl/workbook.xml": WORKBOOK, **extra}


def refused(data: bytes, kind="xlsx", **limits) -> str:
    got = safezip.inspect(data, kind, safezip.Limits(**limits) if limits else safezip.Limits())
    assert not got.ok and got.parts == {}
    return got.reason


def test_a_minimal_package_is_accepted_with_its_parts():
    got = safezip.inspect(package(minimal()), "xlsx")
    assert got.ok, got.reason
    assert sorted(got.parts) == ["[Content_Types].xml", "xl/workbook.xml"]


def test_a_generated_workbook_and_deck_are_accepted():
    from lrc.runtime.artifacts import deck, model

    book = model.three_statement("canary")
    assert safezip.inspect(book, "xlsx").ok
    wb, pkg = safezip.open_workbook(book)
    assert wb is not None and pkg.ok
    slides = deck.board_deck("canary")
    got = safezip.inspect(slides, "pptx")
    assert got.ok, got.reason  # the chart's embedded workbook is inspected too
    assert any(name.startswith("ppt/embeddings/") for name in got.parts)


@pytest.mark.parametrize("data", [b"", b"not a zip at all", b"PK\x03\x04truncated"])
def test_not_a_zip_is_refused(data):
    assert "zip" in refused(data)


def test_a_zip_bomb_is_refused_by_its_compression_ratio():
    bomb = package(minimal(**{"xl/sharedStrings.xml": b"<a>" + b" " * 5_000_000 + b"</a>"}))
    assert len(bomb) < 20_000
    reason = refused(bomb)
    assert "compression ratio" in reason and "xl/sharedStrings.xml" in reason


def test_a_small_member_may_compress_well():
    data = package(minimal(**{"xl/styles.xml": b"<a>" + b" " * 200_000 + b"</a>"}))
    assert safezip.inspect(data, "xlsx").ok


def test_a_vml_part_with_an_entity_is_refused_and_loose_vml_is_not():
    loose = b"<xml><v:shape><br></v:shape></xml>"
    assert safezip.inspect(package(minimal(**{"xl/drawings/vmlDrawing1.vml": loose})), "xlsx").ok
    hostile = b'<!DOCTYPE x [<!ENTITY e SYSTEM "file:///etc/passwd">]><xml>&e;</xml>'
    reason = refused(package(minimal(**{"xl/drawings/vmlDrawing1.vml": hostile})))
    assert "vmlDrawing1.vml" in reason and "hostile XML" in reason


def test_a_declared_size_over_the_member_cap_is_refused():
    big = package(minimal(**{"xl/big.xml": b"<a>" + b"x" * 3000 + b"</a>"}), zipfile.ZIP_STORED)
    reason = refused(big, max_member_bytes=1000)
    assert "declares" in reason and "xl/big.xml" in reason


def test_a_header_that_understates_the_size_is_caught_while_reading():
    data = bytearray(package(minimal(**{"xl/lie.xml": b"<a>" + b"y" * 200 + b"</a>"}), zipfile.ZIP_STORED))
    # shrink the declared uncompressed size in the central directory to 10 bytes
    index = data.find(b"xl/lie.xml", data.find(b"PK\x01\x02"))
    header = index - 46
    data[header + 24:header + 28] = (10).to_bytes(4, "little")
    reason = refused(bytes(data))
    assert "xl/lie.xml" in reason


def test_billion_laughs_is_refused():
    laughs = (b'<?xml version="1.0"?><!DOCTYPE lolz [<!ENTITY lol "lol"><!ENTITY lol2 "&lol;&lol;&lol;&lol;">'
              b'<!ENTITY lol3 "&lol2;&lol2;&lol2;&lol2;">]><sst>&lol3;</sst>')
    reason = refused(package(minimal(**{"xl/sharedStrings.xml": laughs})))
    assert "xl/sharedStrings.xml" in reason and "hostile XML" in reason


def test_an_external_entity_is_refused():
    xxe = b'<?xml version="1.0"?><!DOCTYPE x [<!ENTITY e SYSTEM "file:///etc/passwd">]><x>&e;</x>'
    reason = refused(package(minimal(**{"xl/worksheets/sheet1.xml": xxe})))
    assert "xl/worksheets/sheet1.xml" in reason and "hostile XML" in reason


@pytest.mark.parametrize("name", ["../evil.xml", "xl/../../evil.xml", "/etc/evil.xml", "xl\\evil.xml", "C:/evil.xml"])
def test_path_traversal_members_are_refused(name):
    reason = refused(package(minimal(**{name: b"<a/>"})))
    assert "member path" in reason and "refused" in reason


def test_a_duplicated_member_is_refused():
    data = package(minimal(**{"xl/Workbook.XML": WORKBOOK}))
    assert "twice" in refused(data)


@pytest.mark.parametrize("name", ["xl/vbaProject.bin", "xl/macrosheets/sheet1.xml", "xl/activeX/activeX1.xml"])
def test_macro_parts_are_refused(name):
    reason = refused(package(minimal(**{name: b"<a/>"})))
    assert "macro" in reason and name in reason


def test_a_macro_enabled_content_type_is_refused():
    types = CONTENT_TYPES.replace(b"</Types>", b'<Override PartName="/xl/workbook.xml" '
                                  b'ContentType="application/vnd.ms-excel.sheet.macroEnabled.main+xml"/></Types>')
    reason = refused(package({"[Content_Types].xml": types, "xl/workbook.xml": WORKBOOK}))
    assert "macro-enabled" in reason


def test_too_many_members_are_refused():
    members = minimal(**{f"xl/p{i}.xml": b"<a/>" for i in range(20)})
    assert "member limit" in refused(package(members), max_members=10)


def test_wrong_kind_is_refused():
    assert "ppt/presentation.xml" in refused(package(minimal()), kind="pptx")


def test_external_links_are_reported_never_followed():
    rels = (b'<?xml version="1.0"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">'
            b'<Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/externalLinkPath" '
            b'Target="file:///C:/secret/budget.xlsx" TargetMode="External"/></Relationships>')
    got = safezip.inspect(package(minimal(**{"xl/externalLinks/_rels/externalLink1.xml.rels": rels})), "xlsx")
    assert got.ok
    assert got.external_links == (safezip.ExternalLink("xl/externalLinks/_rels/externalLink1.xml.rels",
                                                       "file:///C:/secret/budget.xlsx", "externalLinkPath"),)


def test_a_hostile_embedded_workbook_inside_a_deck_is_refused():
    from lrc.runtime.artifacts import deck

    data = deck.board_deck("canary")
    with zipfile.ZipFile(io.BytesIO(data)) as z:
        members = {i.filename: z.read(i.filename) for i in z.infolist()}
    embedded = next(n for n in members if n.startswith("ppt/embeddings/"))
    members[embedded] = package(minimal(**{"xl/vbaProject.bin": b"\0"}))
    reason = refused(package(members), kind="pptx")
    assert reason.startswith(embedded) and "macro" in reason


def test_open_workbook_refuses_without_reading():
    wb, pkg = safezip.open_workbook(b"PK\x03\x04junk")
    assert wb is None and not pkg.ok and pkg.reason
