"""The agentic system's document tools for extract.invoice: info, read a page, search, submit.

Why it is built this way: an AP clerk keying an invoice looks at the document page by page
and searches it for a label; the tools offer exactly that over the text extracted from the
item's own PDF (the same text a text-only model receives), and nothing else. They are
read-only and confined to the one item, never raise (a bad call is a model mistake, returned
as an error result), and cap every result with a visible marker.
"""

from __future__ import annotations

import json
from typing import Any, Callable, Mapping

from lrc.runtime.workloads.base import Item, ToolOutcome

COMPONENT_ID = "extract.invoice.tools"
COMPONENT_VERSION = 1

TRUNCATION_MARKER = "…[truncated]"
MAX_SEARCH_HITS = 30
MAX_QUERY_CHARS = 100


class Toolbox:
    """The tools of one invoice. `call` never raises."""

    def __init__(self, item: Item, max_result_chars: int = 20000):
        ctx = item.context
        self._doc = {k: ctx[k] for k in ("document_id", "filename", "media_type", "page_count")}
        self._pages: list[str] = [p["text"] for p in ctx["pages"]]
        self._max = max_result_chars
        self._tools: dict[str, Callable[[Mapping[str, Any]], ToolOutcome]] = {
            "get_document_info": self._info,
            "read_page": self._read_page,
            "search_document": self._search,
            "submit_invoice": self._submit,
        }

    def call(self, name: str, arguments: Mapping[str, Any]) -> ToolOutcome:
        tool = self._tools.get(name)
        if tool is None:
            return _error(f"unknown tool {name!r}; available: {', '.join(self._tools)}")
        if not isinstance(arguments, Mapping):
            return _error(f"arguments of {name} must be a JSON object")
        try:
            return tool(arguments)
        except Exception as exc:  # noqa: BLE001 - a tool fault is reported to the model, never raised
            return _error(f"{name} failed: {type(exc).__name__}")

    # tools ------------------------------------------------------------------------------
    def _info(self, arguments: Mapping[str, Any]) -> ToolOutcome:
        if arguments:
            return _error(f"get_document_info takes no arguments (got: {', '.join(sorted(map(str, arguments)))})")
        info = dict(self._doc)
        info["characters_per_page"] = [len(p) for p in self._pages]
        return ToolOutcome(self._cap(json.dumps(info, ensure_ascii=False, indent=1)))

    def _read_page(self, arguments: Mapping[str, Any]) -> ToolOutcome:
        extra = sorted(str(k) for k in arguments if k != "page")
        if extra:
            return _error(f"read_page takes only page (unexpected: {', '.join(extra)})")
        page = arguments.get("page")
        if isinstance(page, bool) or not isinstance(page, int):
            return _error("read_page needs page, an integer (1 is the first page)")
        if not 1 <= page <= len(self._pages):
            return _error(f"page {page} does not exist; the document has {len(self._pages)} page(s)")
        body = {"page": page, "page_count": len(self._pages), "text": self._pages[page - 1]}
        return ToolOutcome(self._cap(json.dumps(body, ensure_ascii=False, indent=1)))

    def _search(self, arguments: Mapping[str, Any]) -> ToolOutcome:
        extra = sorted(str(k) for k in arguments if k != "query")
        if extra:
            return _error(f"search_document takes only query (unexpected: {', '.join(extra)})")
        query = arguments.get("query")
        if not isinstance(query, str) or not query.strip() or len(query) > MAX_QUERY_CHARS:
            return _error(f"search_document needs query, a non-empty string of at most {MAX_QUERY_CHARS} characters")
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

    def _cap(self, text: str) -> str:
        if len(text) <= self._max:
            return text
        return text[: max(0, self._max - len(TRUNCATION_MARKER))] + TRUNCATION_MARKER


def _error(message: str) -> ToolOutcome:
    return ToolOutcome(f"error: {message}", is_error=True)
