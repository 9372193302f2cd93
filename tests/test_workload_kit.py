"""Tests of runtime/workloads/kit.py, the plumbing the workload packages share.

The exact strings each toolbox and reference model produce are pinned by the workload test
modules; this checks the kit's own contract: it is shared code, not a component, its
fingerprint is part of every component that uses it, and its edges behave as documented.
"""

from __future__ import annotations

import re

import json
from pathlib import Path
from typing import Any, Mapping

from lrc.runtime.workloads import kit
from lrc.runtime.workloads.base import ToolOutcome

from helpers.workload import assert_imports_confined

KIT = Path(kit.__file__)
WORKLOADS = ("triage.ap-inbox", "extract.invoice", "reconcile.ledger", "query.nl2sql", "execute.month-end")


def test_kit_is_plain_shared_code_fingerprinted_into_its_users() -> None:
    from lrc.runtime.lock.codeprint import discover, fingerprint

    refs = discover()
    by_id = {c.id: c for c in refs.values()}  # whatever the current version
    assert not hasattr(kit, "COMPONENT_ID") and not hasattr(kit, "COMPONENT_VERSION")
    assert kit.__name__ not in {c.module for c in refs.values()}
    # `from lrc.runtime import boundedjson` reads as an import of lrc.runtime: allow it, and
    # check that boundedjson is all the kit takes from there.
    assert re.findall(r"^from lrc\.runtime import (.+)$", KIT.read_text(encoding="utf-8"), re.MULTILINE) == ["boundedjson"]
    assert_imports_confined(KIT.parent, ("kit",), ("lrc.runtime.workloads.base", "lrc.runtime.boundedjson", "lrc.runtime"),
                            {"__future__", "json", "typing"})
    for workload in WORKLOADS:
        for name in ("tools", "reference"):
            assert "runtime/workloads/kit.py" in fingerprint(by_id[f"{workload}.{name}"]).files, (workload, name)


class _Box(kit.ToolDispatch):
    def __init__(self, max_result_chars: int = 20):
        super().__init__(max_result_chars, {"echo": self._echo, "boom": self._boom})

    def _echo(self, arguments: Mapping[str, Any]) -> ToolOutcome:
        return ToolOutcome(self._cap(json.dumps(dict(arguments))))

    def _boom(self, arguments: Mapping[str, Any]) -> ToolOutcome:
        raise KeyError("secret item detail")


def test_dispatch_never_raises_and_caps_visibly() -> None:
    box = _Box()
    assert box.call("nope", {}) == ToolOutcome("error: unknown tool 'nope'; available: echo, boom", is_error=True)
    assert box.call("echo", ["x"]) == ToolOutcome("error: arguments of echo must be a JSON object", is_error=True)  # type: ignore[arg-type]
    assert box.call("boom", {}) == ToolOutcome("error: boom failed: KeyError", is_error=True)
    assert box.call("echo", {"a": 1}).content == '{"a": 1}'
    long = box.call("echo", {"a": "x" * 50}).content
    assert len(long) == 20 and long.endswith(kit.TRUNCATION_MARKER)
    assert _Box(max_result_chars=3).call("echo", {"a": 1}).content == kit.TRUNCATION_MARKER


def test_conversation_helpers() -> None:
    messages = [
        {"role": "user", "content": [{"type": "text", "text": "a"}, {"type": "file", "file": {}}, {"text": "b"}]},
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "c1", "function": {"name": "read", "arguments": '{"p": 1}'}},
            {"id": "c2", "function": {"name": "list", "arguments": "not json"}}]},
        {"role": "tool", "tool_call_id": "c2", "content": "L"},
        {"role": "tool", "tool_call_id": "c1", "content": [{"type": "text", "text": "R"}]},
        {"role": "tool", "tool_call_id": "unknown", "content": "?"},
    ]
    assert kit.message_text(messages[0]["content"]) == "ab"
    assert kit.message_text(None) == ""
    assert kit.tool_calls_by_id(messages) == {"c1": ("read", {"p": 1}), "c2": ("list", {})}
    assert kit.tool_exchanges(messages) == [("list", {}, "L"), ("read", {"p": 1}, "R")]
    assert kit.tool_results(messages, "read") == [({"p": 1}, "R")]
    assert kit.next_turn(messages) == 2
