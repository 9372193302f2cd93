"""A reply longer than a reply may hold is the model's invalid output, journaled without its text.

Found by replaying odd provider replies: two 20 MB answers made a 120 MB journal (the text is in
the call record, the run record's transcript and the run's trace), for answers no check could
read (lrc parses at most `boundedjson.MAX_CHARS` characters). Now a reply whose text and tool
calls hold more than `adapter.MAX_REPLY_CHARS` characters is the model's invalid output: graded
fail, never retried, priced at the usage the provider billed, and journaled without the text.
"""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from helpers.project import build_project, journal_records, lrc_env, run_lrc
from helpers.stub_server import StubServer, reply_for
from lrc.runtime import boundedjson
from lrc.runtime.models.adapter import MAX_REPLY_CHARS, _message_dict

KEY = "sk-lrc-test-reply-size-51c0e2d9a7"


def _message(content: str | None, arguments: list[str] = ()) -> Any:
    calls = [SimpleNamespace(id=f"c{i}", function=SimpleNamespace(name="f", arguments=a)) for i, a in enumerate(arguments)]
    return SimpleNamespace(content=content, tool_calls=calls or None)


def test_the_limit_is_the_longest_text_lrc_parses():
    assert MAX_REPLY_CHARS == boundedjson.MAX_CHARS


@pytest.mark.parametrize("content, arguments, over", [
    ("x" * MAX_REPLY_CHARS, [], False),
    ("x" * (MAX_REPLY_CHARS + 1), [], True),
    (None, ["y" * (MAX_REPLY_CHARS - 3)], False),  # id "c0" and name "f": 3 characters
    (None, ["y" * (MAX_REPLY_CHARS - 2)], True),
    ("x" * (MAX_REPLY_CHARS // 2), ["y" * (MAX_REPLY_CHARS // 4)] * 2, True),  # the parts add up
])
def test_every_part_of_a_reply_counts_toward_its_limit(content, arguments, over):
    message = _message(content, arguments)
    if over:
        with pytest.raises(ValueError, match=f"more than the {MAX_REPLY_CHARS:,} a reply may hold"):
            _message_dict(message)
    else:
        assert _message_dict(message)["content"] == content


@pytest.fixture(scope="module")
def stub():
    with StubServer() as server:
        yield server


@pytest.fixture(scope="module")
def size_lock(stub: StubServer, tmp_path_factory) -> Path:
    return build_project(tmp_path_factory.mktemp("reply-size-project"), stub.api_base, n_per_cell=2, reference_models=())


def _oversized(body: dict[str, Any]) -> bytes:
    """The stub model's usual reply, padded past the limit: the text of a single-shot answer, the
    arguments of an agentic step's first tool call."""
    reply = reply_for(body, "baseline")
    message = reply["choices"][0]["message"]
    if message.get("tool_calls"):
        message["tool_calls"][0]["function"]["arguments"] = '{"pad": "' + "y" * (MAX_REPLY_CHARS + 10) + '"}'
    else:
        message["content"] = (message.get("content") or "") + " " * (MAX_REPLY_CHARS + 10)
    return json.dumps(reply).encode("utf-8")


def test_an_oversized_reply_is_an_invalid_output_journaled_without_its_text(stub, size_lock, tmp_path):
    out = tmp_path / "out"
    stub.reset(reply_hook=_oversized)
    res = run_lrc("execute", size_lock, "--out", out, env=lrc_env(KEY), timeout=240)
    answered = stub.count
    stub.reset()
    assert res.returncode == 0, res.stdout + res.stderr
    records = journal_records(out)
    runs = [r for r in records if r.get("type") == "run"]
    assert {r["system"] for r in runs} == {"single-shot", "agentic"}
    assert all(r["outcome"] == "invalid_output" for r in runs), [r["outcome"] for r in runs]
    assert all("a reply may hold" in r["events"][-1]["detail"] for r in runs)
    calls = [r for r in records if r.get("type") == "call"]
    assert len(calls) == answered == len(runs), "an invalid output is never retried"
    assert all(c["usage"]["input"] > 0 and c["response"]["message"]["content"] is None for c in calls)
    # The journal and every run file hold none of the padding.
    assert (out / "journal.jsonl").stat().st_size < 200_000
    assert max(p.stat().st_size for p in (out / "runs").rglob("*.json")) < 100_000
