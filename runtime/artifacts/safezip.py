"""An Office file is checked as a zip package before openpyxl or python-pptx opens it.

Why: the xlsx/pptx an agent hands back is untrusted input (DESIGN §4, §8), and neither
library guards against a hostile package: zipfile trusts declared sizes (a zip bomb inflates
to gigabytes), openpyxl and python-pptx parse every XML part, and a workbook can carry VBA
macros or links to other files. So `inspect` reads the package once, with limits, and either
accepts it (returning every part's bytes, the external links it found, and nothing executed)
or refuses it with one clear reason. Refusals are values, never exceptions into a run.

What is refused, in the order checked:

- not a zip, an encrypted member, or too many members, or a duplicated member name;
- a member path that is absolute, has `..`, a backslash, a drive letter or a control
  character (the rules of `checks.filesandbox.clean_path`);
- a declared uncompressed size over the per-member or total cap, or a compression ratio
  over the cap for a member over 1 MB; and when reading, more bytes than declared (a lying header);
- macros: a `vbaProject.bin`, an XLM macro sheet or ActiveX part, or a macro-enabled content
  type (`.xlsm`, `.pptm`): refused, never stripped, since a stripped file is no longer what
  the agent produced;
- any XML part (`.xml`, `.rels`) that does not parse under defusedxml with DTDs,
  entity declarations and external references forbidden (billion laughs, XXE), and a legacy
  `.vml` part (often not well-formed XML, so scanned, not parsed) with a DTD or entity;
- a package with no `[Content_Types].xml`, or whose main part is not of the declared kind.

External relationships (`TargetMode="External"`: linked workbooks, hyperlinks, linked
pictures) are never followed; they are reported in `Package.external_links` so a validator
can decide. Embedded packages (a chart's workbook inside a deck) are checked the same way,
to a bounded depth, and an embedded workbook must hold data only: a formula, a defined name,
a link to another workbook or any external relationship in it is refused. Such a workbook is
what a chart's "Edit Data" opens in Excel, where a formula runs (`=cmd|...` is DDE,
`=WEBSERVICE(...)` fetches) and a hyperlink is one click away, and no validator reads inside it;
a chart's data needs none of them.
"""

from __future__ import annotations

import io
import zipfile
from dataclasses import dataclass, field
from typing import Literal

from lrc.runtime.checks.filesandbox import PathRefused, clean_path

Kind = Literal["xlsx", "pptx"]

_MAIN_PART = {"xlsx": "xl/workbook.xml", "pptx": "ppt/presentation.xml"}
_MACRO_PARTS = ("vbaproject.bin", "vbadata.xml", "/macrosheets/", "/activex/")
_MACRO_TYPES = ("macroenabled", "vbaproject", "ms-office.activex", "ms-excel.macrosheet", "ms-excel.intlmacrosheet")
_XML_SUFFIXES = (".xml", ".rels")
_VML_SUFFIX = ".vml"  # legacy VML is often not well-formed XML: scanned for declarations, not parsed
_EMBEDDED_SUFFIXES = {".xlsx": "xlsx", ".pptx": "pptx"}
_CHUNK = 65_536


@dataclass(frozen=True)
class Limits:
    max_file_bytes: int = 20_000_000
    max_members: int = 2_000
    max_member_bytes: int = 50_000_000
    max_total_bytes: int = 200_000_000
    max_ratio: int = 200  # uncompressed / compressed, per member over `ratio_from_bytes`
    ratio_from_bytes: int = 1_000_000  # a small member is harmless whatever its ratio
    max_depth: int = 2  # how deep packages may nest (a deck's chart workbook is depth 1)


@dataclass(frozen=True)
class ExternalLink:
    part: str  # the .rels part holding the relationship
    target: str
    type: str  # the relationship type's last segment: hyperlink, externalLinkPath, image, ...


@dataclass(frozen=True)
class Package:
    """The result of `inspect`: `ok` with every part's bytes, or a refusal `reason`."""

    ok: bool
    kind: str
    reason: str = ""
    parts: dict[str, bytes] = field(default_factory=dict)
    external_links: tuple[ExternalLink, ...] = ()


class Refused(Exception):
    """Raised inside `inspect` only; callers get a refused Package."""


def inspect(data: bytes, kind: Kind, limits: Limits = Limits()) -> Package:
    """Check `data` as an Office package of `kind`; never raises for any input bytes."""
    try:
        parts, links = _inspect(data, kind, limits, depth=0, where="")
    except Refused as exc:
        return Package(ok=False, kind=kind, reason=str(exc))
    return Package(ok=True, kind=kind, parts=parts, external_links=tuple(links))


def _inspect(data: bytes, kind: str, limits: Limits, depth: int, where: str) -> tuple[dict[str, bytes], list[ExternalLink]]:
    if not isinstance(data, (bytes, bytearray)):
        raise Refused(f"{where}the artifact is not bytes")
    if len(data) > limits.max_file_bytes:
        raise Refused(f"{where}the file is {len(data):,} bytes, over the {limits.max_file_bytes:,}-byte limit")
    if not data.startswith(b"PK\x03\x04"):
        raise Refused(f"{where}not a zip package (an {kind} file is a zip)")
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
        infos = archive.infolist()
    except (zipfile.BadZipFile, zipfile.LargeZipFile, ValueError, OSError, EOFError) as exc:
        raise Refused(f"{where}not a readable zip package: {exc}") from None
    if len(infos) > limits.max_members:
        raise Refused(f"{where}{len(infos):,} members, over the {limits.max_members:,}-member limit")
    seen: set[str] = set()
    total = 0
    for info in infos:
        name = info.filename
        try:
            clean_path(name.rstrip("/") or name)
        except PathRefused as exc:
            raise Refused(f"{where}member path {name!r} refused: {exc}") from None
        if name.lower() in seen:
            raise Refused(f"{where}member {name!r} appears twice")
        seen.add(name.lower())
        if info.flag_bits & 0x1:
            raise Refused(f"{where}member {name!r} is encrypted")
        if info.file_size > limits.max_member_bytes:
            raise Refused(f"{where}member {name!r} declares {info.file_size:,} bytes uncompressed, "
                          f"over the {limits.max_member_bytes:,}-byte limit (zip bomb?)")
        if info.file_size and info.compress_size == 0:
            raise Refused(f"{where}member {name!r} declares {info.file_size:,} bytes from 0 compressed bytes")
        if info.compress_size and info.file_size > limits.ratio_from_bytes and info.file_size / info.compress_size > limits.max_ratio:
            raise Refused(f"{where}member {name!r} has a compression ratio of {info.file_size // info.compress_size:,}:1, "
                          f"over the {limits.max_ratio}:1 limit (zip bomb?)")
        total += info.file_size
        if total > limits.max_total_bytes:
            raise Refused(f"{where}members declare over {limits.max_total_bytes:,} bytes uncompressed in all (zip bomb?)")
        lowered = "/" + name.lower()
        if any(marker in lowered for marker in _MACRO_PARTS):
            raise Refused(f"{where}member {name!r} is a macro or ActiveX part: macros are refused, never run")

    parts: dict[str, bytes] = {}
    for info in infos:
        if info.is_dir():
            continue
        parts[info.filename] = _read(archive, info, where)

    content_types = parts.get("[Content_Types].xml")
    if content_types is None:
        raise Refused(f"{where}no [Content_Types].xml: not an Office package")
    links: list[ExternalLink] = []
    embedded_workbook = depth > 0 and kind == "xlsx"
    for name in sorted(parts):
        if name.lower().endswith(_XML_SUFFIXES):
            root = _parse_xml(parts[name], f"{where}{name}")
            if name.endswith(".rels"):
                links.extend(_external(root, name))
            if embedded_workbook:
                _data_only(root, name, where)
        elif name.lower().endswith(_VML_SUFFIX) and (b"<!DOCTYPE" in parts[name].upper() or b"<!ENTITY" in parts[name].upper()):
            raise Refused(f"{where}{name}: hostile XML refused (a DTD or entity declaration in a VML part)")
    if embedded_workbook and links:
        raise Refused(f"{where}{links[0].part}: an embedded workbook holds an external {links[0].type} "
                      f"({links[0].target[:100]!r}): a chart's data workbook may hold data only")
    lowered_types = content_types.decode("utf-8", "replace").lower()
    for marker in _MACRO_TYPES:
        if marker in lowered_types:
            raise Refused(f"{where}[Content_Types].xml declares a macro-enabled or ActiveX content type ({marker}): "
                          "macros are refused, never run")
    main = _MAIN_PART.get(kind)
    if main is not None and main not in parts:
        raise Refused(f"{where}no {main}: not an {kind} package")
    for name in sorted(parts):
        suffix = name[name.rfind("."):].lower() if "." in name else ""
        if suffix in _EMBEDDED_SUFFIXES:
            if depth + 1 >= limits.max_depth:
                raise Refused(f"{where}member {name!r}: packages nested deeper than {limits.max_depth} are refused")
            _inner, inner_links = _inspect(parts[name], _EMBEDDED_SUFFIXES[suffix], limits, depth + 1, f"{where}{name}: ")
            links.extend(ExternalLink(f"{name}/{l.part}", l.target, l.type) for l in inner_links)
    return parts, links


def _read(archive: zipfile.ZipFile, info: zipfile.ZipInfo, where: str) -> bytes:
    """The member's bytes, never more than it declared (a header may lie)."""
    out = bytearray()
    try:
        with archive.open(info) as stream:
            while True:
                chunk = stream.read(_CHUNK)
                if not chunk:
                    break
                out += chunk
                if len(out) > info.file_size:
                    raise Refused(f"{where}member {info.filename!r} inflates past its declared {info.file_size:,} bytes (zip bomb?)")
    except Refused:
        raise
    except (zipfile.BadZipFile, NotImplementedError, OSError, EOFError, ValueError, RuntimeError) as exc:
        raise Refused(f"{where}member {info.filename!r} cannot be read: {exc}") from None
    except Exception as exc:  # zlib.error and friends: any unreadable member is a refusal, never a traceback
        raise Refused(f"{where}member {info.filename!r} cannot be read: {type(exc).__name__}: {exc}") from None
    return bytes(out)


def _parse_xml(data: bytes, where: str):
    from defusedxml import DefusedXmlException
    from defusedxml.ElementTree import ParseError, fromstring

    try:
        return fromstring(data, forbid_dtd=True, forbid_entities=True, forbid_external=True)
    except DefusedXmlException as exc:
        raise Refused(f"{where}: hostile XML refused ({type(exc).__name__}: DTDs, entities and external "
                      "references are not allowed in Office parts)") from None
    except ParseError as exc:
        raise Refused(f"{where}: not well-formed XML ({exc})") from None
    except Exception as exc:  # noqa: BLE001 - an unparseable part is a refusal, never a traceback
        raise Refused(f"{where}: XML cannot be parsed ({type(exc).__name__})") from None


def _data_only(root, name: str, where: str) -> None:
    """Refuse a part of an embedded workbook that holds more than data (see the module docstring)."""
    lowered = name.lower()
    if lowered.startswith("xl/externallinks/"):
        raise Refused(f"{where}{name}: an embedded workbook links to another workbook: "
                      "a chart's data workbook may hold data only")
    if lowered.startswith("xl/worksheets/") or lowered == "xl/workbook.xml":
        for element in root.iter():
            local = element.tag.rsplit("}", 1)[-1] if isinstance(element.tag, str) else ""
            if local in ("f", "definedName"):
                what = "a formula" if local == "f" else "a defined name"
                raise Refused(f"{where}{name}: an embedded workbook holds {what} "
                              f"({(element.text or '')[:100]!r}): a chart's data workbook may hold data only")


def _external(root, part: str) -> list[ExternalLink]:
    found = []
    for rel in root:
        if rel.get("TargetMode") == "External":
            found.append(ExternalLink(part, rel.get("Target", ""), (rel.get("Type") or "").rsplit("/", 1)[-1]))
    return found


def open_workbook(data: bytes, package: Package | None = None):
    """(openpyxl Workbook with formulas, not cached values; Package). Refused -> (None, Package).

    External links are never loaded (`keep_links=False`); they stay listed in the Package."""
    package = package or inspect(data, "xlsx")
    if not package.ok:
        return None, package
    from openpyxl import load_workbook

    try:
        return load_workbook(io.BytesIO(data), data_only=False, keep_links=False, keep_vba=False), package
    except Exception as exc:  # noqa: BLE001 - a package openpyxl cannot read is the agent's invalid output
        return None, Package(ok=False, kind="xlsx", reason=f"openpyxl cannot read the workbook: {type(exc).__name__}: {exc}")


def open_presentation(data: bytes, package: Package | None = None):
    """(python-pptx Presentation; Package). Refused -> (None, Package)."""
    package = package or inspect(data, "pptx")
    if not package.ok:
        return None, package
    from pptx import Presentation

    try:
        return Presentation(io.BytesIO(data)), package
    except Exception as exc:  # noqa: BLE001
        return None, Package(ok=False, kind="pptx", reason=f"python-pptx cannot read the deck: {type(exc).__name__}: {exc}")
