"""A reply that is not Unicode text is the model's invalid output; the journal never hangs.

Found by replaying odd provider replies: a reply whose content held a lone surrogate
(`"\\ud800"` in the response JSON) made `lrc execute` wait forever. The journal's writer could
not encode the line as UTF-8, its thread died with a ValueError its caller did not expect, and
every run waiting for that acknowledgement waited for good. Now (1) the adapter takes a reply
holding a lone surrogate -- raw, or as a JSON escape that an answer or tool arguments would
decode into one -- as the model's invalid output (graded fail, never retried, priced at what the
provider billed); (2) the journal escapes a lone surrogate any other way in (`\\ud800`), so the
line is written and reads back to the same record; (3) any failure of a write fails the records
waiting on it (the execute stops and says why) instead of leaving them waiting.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from helpers.project import build_project, journal_records, lrc_env, run_lrc
from helpers.stub_server import StubServer, reply_for
from lrc.runtime.journal import Journal, JournalWriteError
from lrc.runtime.models.adapter import lone_surrogate

KEY = "sk-lrc-test-unicode-8a41d2c7e95b3f06"


@pytest.mark.parametrize("text, found", [
    ("plain text, ünïcödé, 数字, 🙂", None),
    ("raw " + chr(0xD800) + " surrogate", "U+D800"),
    ("raw low " + chr(0xDFFF), "U+DFFF"),
    ('{"a": "\\ud800"}', "U+D800"),
    ('{"a": "\\uDBFF tail"}', "U+DBFF"),
    ('{"a": "x \\udc00 y"}', "U+DC00"),
    ('{"a": "\\ud83d\\ude00"}', None),  # a pair: an emoji, written as two escapes
    ('{"a": "\\\\ud800"}', None),  # an escaped backslash, then the letters "ud800": text
    ('{"a": "\\\\\\ud800"}', "U+D800"),  # an escaped backslash, then an escape
    ('{"a": "\\ud83d abc"}', "U+D83D"),  # a high surrogate not followed by a low one
])
def test_lone_surrogate_finds_raw_and_escaped_ones_but_not_pairs(text: str, found: str | None):
    assert lone_surrogate(text) == found


def test_a_journal_line_with_a_lone_surrogate_is_written_and_reads_back(tmp_path: Path):
    journal = Journal(tmp_path / "journal.jsonl", "sha256:" + "0" * 64, "demo.v1")
    record = {"type": "note", "text": "a" + chr(0xD800) + "b"}
    journal.append(record)
    journal.close()
    raw = (tmp_path / "journal.jsonl").read_bytes()
    raw.decode("utf-8")  # valid UTF-8
    assert b"\\ud800" in raw
    assert json.loads(raw.splitlines()[-1]) == record


def test_a_write_that_fails_in_an_unexpected_way_fails_its_waiters_instead_of_hanging(tmp_path: Path, monkeypatch):
    journal = Journal(tmp_path / "journal.jsonl", "sha256:" + "0" * 64, "demo.v1")

    def broken(lines):
        raise ValueError("not an OSError")

    monkeypatch.setattr(journal, "_write_lines", broken)

    async def main() -> None:
        with pytest.raises(JournalWriteError, match="ValueError: not an OSError"):
            await asyncio.wait_for(journal.commit({"type": "note", "n": 1}), timeout=10)
        with pytest.raises(JournalWriteError):  # broken for this process from then on
            journal.submit({"type": "note", "n": 2})

    asyncio.run(main())
    journal.close()


@pytest.fixture(scope="module")
def unicode_lock(stub: StubServer, tmp_path_factory) -> Path:
    return build_project(tmp_path_factory.mktemp("unicode-project"), stub.api_base, n_per_cell=2, reference_models=())


def _hook(where: str):
    """The stub model's usual reply with a lone surrogate put in: `content` (raw, decoded from
    the response JSON's escape) or `arguments` (an escape inside the tool call's JSON text)."""
    def hook(body: dict[str, Any]) -> bytes:
        reply = reply_for(body, "baseline")
        message = reply["choices"][0]["message"]
        if where == "content" and not body.get("tools"):
            message["content"] = (message.get("content") or "") + " " + chr(0xD800)
        if where == "arguments" and message.get("tool_calls"):
            message["tool_calls"][0]["function"]["arguments"] = '{"email_id": "\\ud800"}'
        return json.dumps(reply).encode("utf-8")  # ensure_ascii: the surrogate travels as \ud800
    return hook


@pytest.mark.parametrize("where, system", [("content", "single-shot"), ("arguments", "agentic")])
def test_a_reply_holding_a_lone_surrogate_is_the_models_invalid_output(stub, unicode_lock, tmp_path, where, system):
    out = tmp_path / "out"
    stub.reset(reply_hook=_hook(where))
    res = run_lrc("execute", unicode_lock, "--out", out, env=lrc_env(KEY), timeout=240)
    stub.reset()
    assert res.returncode == 0, res.stdout + res.stderr
    runs = [r for r in journal_records(out) if r.get("type") == "run" and r["system"] == system]
    assert runs and all(r["outcome"] == "invalid_output" for r in runs)
    assert all("lone surrogate (U+D800)" in r["events"][-1]["detail"] for r in runs)
    calls = [r for r in journal_records(out) if r.get("type") == "call" and "|" + system + "|" in r["run"]]
    assert calls and all(c["usage"]["input"] > 0 for c in calls), "priced at what the provider billed, never $0"
    (out / "journal.jsonl").read_bytes().decode("utf-8")
