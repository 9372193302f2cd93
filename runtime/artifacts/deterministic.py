"""Office files written to the same bytes for the same content (DESIGN §4.2, §9 "Office files").

Why: a task's input artifact is inlined in the lock by its sha256, and generators keep a
golden digest of their canary output, so a workbook or deck must not carry the clock, the
user, the host or the time zone. openpyxl stamps `modified` (and `created`) into
docProps/core.xml at every save and zipfile stamps each member's local time; python-pptx
keeps its template's dates but zipfile still stamps; the chart workbook python-pptx embeds
(written by xlsxwriter) carries its own creation time.

`normalize_package` rewrites any Office zip: members in a fixed order (`[Content_Types].xml`
first, as Office expects, then `_rels/.rels`, then the rest sorted), one fixed date and mode
on every entry, deflate, docProps/core.xml's dates fixed and its creator / last-modified-by
set to "lrc", and every embedded package normalized the same way. `workbook_bytes` and
`presentation_bytes` save through it.

(`runtime/review/workbook.py` re-zips its review workbook with fixed dates too; it stays as it
is because it is fingerprinted into committed locks; it can call this module when next bumped.)
"""

from __future__ import annotations

import datetime
import io
import re
import zipfile

FIXED_TIME = datetime.datetime(2000, 1, 1, 0, 0, 0)
FIXED_W3CDTF = b"2000-01-01T00:00:00Z"
ZIP_TIME = (1980, 1, 1, 0, 0, 0)
AUTHOR = "lrc"

_DATES = re.compile(rb"(<dcterms:(created|modified)\b[^>]*>)[^<]*(</dcterms:\2>)")
_PEOPLE = re.compile(rb"(<(dc:creator|cp:lastModifiedBy)\b[^>]*>)[^<]*(</\2>)")
_EMPTY_PEOPLE = re.compile(rb"<(dc:creator|cp:lastModifiedBy)\b[^>]*/>")
_EMBEDDED = (".xlsx", ".pptx", ".docx")


def _order(name: str) -> tuple[int, str]:
    return ({"[Content_Types].xml": 0, "_rels/.rels": 1}.get(name, 2), name)


def _core(xml: bytes) -> bytes:
    xml = _DATES.sub(lambda m: m.group(1) + FIXED_W3CDTF + m.group(3), xml)
    xml = _PEOPLE.sub(lambda m: m.group(1) + AUTHOR.encode() + m.group(3), xml)
    return _EMPTY_PEOPLE.sub(lambda m: b"<" + m.group(1) + b">" + AUTHOR.encode() + b"</" + m.group(1) + b">", xml)


def normalize_package(data: bytes) -> bytes:
    """The same package with every source of noise fixed (see the module docstring)."""
    with zipfile.ZipFile(io.BytesIO(data)) as src:
        members = {info.filename: src.read(info.filename) for info in src.infolist() if not info.is_dir()}
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as dst:
        for name in sorted(members, key=_order):
            body = members[name]
            if name == "docProps/core.xml":
                body = _core(body)
            elif name.lower().endswith(_EMBEDDED) and body.startswith(b"PK\x03\x04"):
                body = normalize_package(body)
            info = zipfile.ZipInfo(name, date_time=ZIP_TIME)
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = 0o600 << 16
            info.create_system = 0  # the same "made by" byte on every platform
            dst.writestr(info, body, compresslevel=6)
    return out.getvalue()


def workbook_bytes(wb) -> bytes:
    """An openpyxl Workbook as deterministic xlsx bytes."""
    from openpyxl.writer.excel import ExcelWriter

    props = wb.properties
    props.creator, props.lastModifiedBy = AUTHOR, AUTHOR
    props.created = props.modified = FIXED_TIME
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED, allowZip64=True) as archive:
        ExcelWriter(wb, archive).save()  # `Workbook.save` would stamp the current time first
    return normalize_package(buf.getvalue())


def presentation_bytes(prs) -> bytes:
    """A python-pptx Presentation as deterministic pptx bytes."""
    core = prs.core_properties
    core.author, core.last_modified_by = AUTHOR, AUTHOR
    core.created = core.modified = FIXED_TIME
    core.revision = 1
    buf = io.BytesIO()
    prs.save(buf)
    return normalize_package(buf.getvalue())
