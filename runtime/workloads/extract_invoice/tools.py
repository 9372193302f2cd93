"""The agentic system's document tools for extract.invoice: info, read a page, search, submit.

Why it is built this way: an AP clerk keying an invoice looks at the document page by page
and searches it for a label; the tools offer exactly that over the text extracted from the
item's own PDF (the same text a text-only model receives), and nothing else. They are
read-only and confined to the one item, never raise (a bad call is a model mistake, returned
as an error result), and cap every result with a visible marker.
"""

from __future__ import annotations

import json
from typing import Any, Mapping

from lrc.runtime.workloads.base import Item, ToolOutcome
from lrc.runtime.workloads.kit import TRUNCATION_MARKER, ToolDispatch, tool_error  # noqa: F401 - the marker of this toolbox's capped results

COMPONENT_ID = "extract.invoice.tools"
COMPONENT_VERSION = 2

MAX_SEARCH_HITS = 30
MAX_QUERY_CHARS = 100


class Toolbox(ToolDispatch):
    """The tools of one invoice. `call` never raises."""

    def __init__(self, item: Item, max_result_chars: int = 20000):
        ctx = item.context
        self._doc = {k: ctx[k] for k in ("document_id", "filename", "media_type", "page_count")}
        self._pages: list[str] = [p["text"] for p in ctx["pages"]]
        super().__init__(max_result_chars, {
            "get_document_info": self._info,
            "read_page": self._read_page,
            "search_document": self._search,
            "submit_invoice": self._submit,
        })

    # tools ------------------------------------------------------------------------------
    def _info(self, arguments: Mapping[str, Any]) -> ToolOutcome:
        if arguments:
            return tool_error(f"get_document_info takes no arguments (got: {', '.join(sorted(map(str, arguments)))})")
        info = dict(self._doc)
        info["characters_per_page"] = [len(p) for p in self._pages]
        return ToolOutcome(self._cap(json.dumps(info, ensure_ascii=False, indent=1)))

    def _read_page(self, arguments: Mapping[str, Any]) -> ToolOutcome:
        extra = sorted(str(k) for k in arguments if k != "page")
        if extra:
            return tool_error(f"read_page takes only page (unexpected: {', '.join(extra)})")
        page = arguments.get("page")
        if isinstance(page, bool) or not isinstance(page, int):
            return tool_error("read_page needs page, an integer (1 is the first page)")
        if not 1 <= page <= len(self._pages):
            return tool_error(f"page {page} does not exist; the document has {len(self._pages)} page(s)")
        body = {"page": page, "page_count": len(self._pages), "text": self._pages[page - 1]}
        return ToolOutcome(self._cap(json.dumps(body, ensure_ascii=False, indent=1)))

    def _search(self, arguments: Mapping[str, Any]) -> ToolOutcome:
        extra = sorted(str(k) for k in arguments if k != "query")
        if extra:
            return tool_error(f"search_document takes only query (unexpected: {', '.join(extra)})")
        query = arguments.get("query")
        if not isinstance(query, str) or not query.strip() or len(query) > MAX_QUERY_CHARS:
            return tool_error(f"search_document needs query, a non-empty string of at most {MAX_QUERY_CHARS} characters")
        needle = query.strip().casefold()
        hits: list[dict[str, Any]] = []
        total = 0
        for page, text in enumerate(self._pages, 1):
            for line_no, line in enumerate(text.split("\n"), 1):
                if needle in line.casefold():
                    total += 1
                    if len(hits) < MAX_SEARCH_HITS:
                        hits.append({"page": page, "line": line_no, "text": line.strip()})
        body = {"query": query, "matches": total, "shown": len(hits), "hits": hits}
        return ToolOutcome(self._cap(json.dumps(body, ensure_ascii=False, indent=1)))

    def _submit(self, arguments: Mapping[str, Any]) -> ToolOutcome:
        return ToolOutcome("invoice received", terminal=True, answer=dict(arguments))
