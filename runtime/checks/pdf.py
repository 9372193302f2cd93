"""PDF writing and text extraction with fixed settings, so documents are byte-identical.

Why it is built this way:

- reportlab stamps the wall-clock creation date and a random document /ID unless its
  invariant mode is on; `new_canvas` always turns it on and fixes the producer metadata.
- Page streams are written uncompressed: zlib implementations (zlib, zlib-ng) may deflate
  the same bytes differently, which would break byte identity across machines.
- Only the 14 standard PDF fonts are used, so no font file (and no font subset with a
  random prefix) is embedded.
- Text is extracted with pypdf's layout mode, which keeps table columns apart by spacing
  the way `pdftotext -layout` does; trailing spaces and runs of blank lines are trimmed.
  This text is what text-only models receive, so the rule lives here, in one place.
"""

from __future__ import annotations

import io
import logging
import re

from pypdf import PdfReader
from reportlab.pdfgen.canvas import Canvas

MAX_PDF_BYTES = 5_000_000
MAX_PAGES = 20

_BLANK_RUN = re.compile(r"\n{3,}")


class PdfError(ValueError):
    """Bytes that are not a PDF this module will read."""


def new_canvas(buffer: io.BytesIO, pagesize: tuple[float, float], *, title: str, author: str, subject: str = "") -> Canvas:
    """A reportlab canvas in invariant (reproducible) mode with fixed metadata."""
    canvas = Canvas(buffer, pagesize=pagesize, invariant=1, pageCompression=0)
    canvas.setTitle(title)
    canvas.setAuthor(author)
    canvas.setSubject(subject)
    canvas.setCreator("lrc synthetic document generator")
    canvas.setProducer("lrc (reportlab, invariant mode)")
    return canvas


def _tidy(text: str) -> str:
    lines = [line.rstrip() for line in text.replace("\r\n", "\n").replace("\r", "\n").split("\n")]
    return _BLANK_RUN.sub("\n\n", "\n".join(lines)).strip("\n")


def extract_pages(data: bytes) -> list[str]:
    """The text of every page, in layout mode, tidied. Raises PdfError."""
    if not isinstance(data, (bytes, bytearray)) or not data.startswith(b"%PDF-"):
        raise PdfError("not a PDF")
    if len(data) > MAX_PDF_BYTES:
        raise PdfError(f"PDF larger than {MAX_PDF_BYTES} bytes")
    quiet = logging.getLogger("pypdf")
    level = quiet.level
    quiet.setLevel(logging.ERROR)
    try:
        reader = PdfReader(io.BytesIO(bytes(data)), strict=False)
        if len(reader.pages) > MAX_PAGES:
            raise PdfError(f"PDF has more than {MAX_PAGES} pages")
        return [_tidy(page.extract_text(extraction_mode="layout")) for page in reader.pages]
    except PdfError:
        raise
    except Exception as exc:  # noqa: BLE001 - any parser failure means "not a PDF we read"
        raise PdfError(f"cannot read the PDF: {type(exc).__name__}") from exc
    finally:
        quiet.setLevel(level)
