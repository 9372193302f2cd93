"""The agentic system's inbox tools for triage.ap-inbox: list, read, submit.

Why it is built this way: the tools are the model's only window on the batch, so they are
read-only and confined to the one item (no way to reach another batch or the answer key),
every failure is returned to the model as an error result instead of an exception (a bad
tool call is a model mistake to be graded, not an infrastructure fault), and results are
capped with a visible marker so a runaway result cannot blow the context silently.
"""

from __future__ import annotations

import json
from typing import Any, Mapping

from lrc.runtime.workloads.base import Item, ToolOutcome
from lrc.runtime.workloads.kit import TRUNCATION_MARKER, ToolDispatch, tool_error  # noqa: F401 - the marker of this toolbox's capped results

COMPONENT_ID = "triage.ap-inbox.tools"
COMPONENT_VERSION = 2


class Toolbox(ToolDispatch):
    """The tools of one batch. `call` never raises."""

    def __init__(self, item: Item, max_result_chars: int = 20000):
        self._emails: dict[str, Mapping[str, Any]] = {e["id"]: e for e in item.context["emails"]}
        self._order: list[str] = [e["id"] for e in item.context["emails"]]
        super().__init__(max_result_chars, {
            "list_emails": self._list_emails,
            "read_email": self._read_email,
            "submit_labels": self._submit_labels,
        })

    # tools ------------------------------------------------------------------------------
    def _list_emails(self, arguments: Mapping[str, Any]) -> ToolOutcome:
        if arguments:
            return tool_error(f"list_emails takes no arguments (got: {', '.join(sorted(map(str, arguments)))})")
        rows = [{k: self._emails[i][k] for k in ("id", "from", "date", "subject")} for i in self._order]
        return ToolOutcome(self._cap(json.dumps(rows, ensure_ascii=False, indent=1)))

    def _read_email(self, arguments: Mapping[str, Any]) -> ToolOutcome:
        extra = sorted(str(k) for k in arguments if k != "email_id")
        if extra:
            return tool_error(f"read_email takes only email_id (unexpected: {', '.join(extra)})")
        email_id = arguments.get("email_id")
        if not isinstance(email_id, str) or not email_id:
            return tool_error("read_email needs email_id, a non-empty string")
        email = self._emails.get(email_id) or self._emails.get(email_id.strip())
        if email is None:
            return tool_error(f"no email with id {email_id!r} in this batch; use list_emails to see the ids")
        return ToolOutcome(self._cap(json.dumps(dict(email), ensure_ascii=False, indent=1)))

    def _submit_labels(self, arguments: Mapping[str, Any]) -> ToolOutcome:
        extra = sorted(str(k) for k in arguments if k != "labels")
        if extra:
            return tool_error(f"submit_labels takes only labels (unexpected: {', '.join(extra)})")
        labels = arguments.get("labels")
        if not isinstance(labels, list):
            return tool_error('submit_labels needs labels, a list of {"email_id", "label"} objects')
        return ToolOutcome("labels received", terminal=True, answer={"labels": labels})
