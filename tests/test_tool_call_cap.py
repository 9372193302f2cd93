"""A workload run makes at most MAX_TOOL_CALLS_PER_RUN tool calls (runtime/tool_call_cap.py).

Found by replaying a model that answered every agentic request with 2,000 `list_emails` calls:
one triage run executed 50,000 tool calls, took ~190 s and wrote a 204 MB journal (nothing
bounded a workload run's tool calls but its 25-step cap). Now the reply that takes the run past
the cap ends it, before any of that reply's calls runs, as a fail (`budget_exceeded`, category
budget-exceeded), and a resume replays it to the same end; a run under the cap, and a run of a
system that offers no tools, are as before.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from helpers.project import build_project, journal_records, lrc_env, run_lrc
from helpers.stub_server import StubServer, reply_for
from lrc.runtime.tool_call_cap import MAX_TOOL_CALLS_PER_RUN

KEY = "sk-lrc-test-toolcap-3c8d1e6a0b9f4d27"


@pytest.fixture(scope="module")
def cap_lock(stub: StubServer, tmp_path_factory) -> Path:
    return build_project(tmp_path_factory.mktemp("toolcap-project"), stub.api_base, n_per_cell=2, reference_models=())


def _many_calls(per_reply: int):
    """A model that answers every request offering tools with `per_reply` list_emails calls
    (single-shot requests get the stub model's usual answer, with the same calls attached)."""
    def hook(body: dict[str, Any]) -> bytes:
        reply = reply_for(body, "baseline")
        step = sum(1 for m in body.get("messages") or [] if m.get("role") == "assistant") + 1
        calls = [{"id": f"call_{step}_{i}", "type": "function", "function": {"name": "list_emails", "arguments": "{}"}}
                 for i in range(per_reply)]
        reply["choices"][0]["message"] = {"role": "assistant", "content": None, "tool_calls": calls}
        reply["choices"][0]["finish_reason"] = "tool_calls"
        return json.dumps(reply).encode("utf-8")
    return hook


def _runs(out: Path, system: str) -> list[dict]:
    return [r for r in journal_records(out) if r.get("type") == "run" and r["system"] == system]


@pytest.mark.parametrize("per_reply, ends_at_step", [(MAX_TOOL_CALLS_PER_RUN + 1, 1), (2000, 1), (40, 6)])
def test_the_reply_that_passes_the_cap_ends_the_run_as_a_budget_fail(stub, cap_lock, tmp_path, per_reply, ends_at_step):
    out = tmp_path / "out"
    stub.reset(reply_hook=_many_calls(per_reply))
    res = run_lrc("execute", cap_lock, "--out", out, env=lrc_env(KEY))
    requests = len(stub.snapshot())
    stub.reset()
    assert res.returncode == 0, res.stdout + res.stderr
    agentic = _runs(out, "agentic")
    assert len(agentic) == 2
    for run in agentic:
        assert run["outcome"] == "budget_exceeded" and run["steps"] == ends_at_step, run["events"]
        assert run["events"] == [{"step": ends_at_step, "event": "stop", "reason": "tool call cap", "limit": "max_tool_calls",
                                  "observed": per_reply * ends_at_step, "allowed": MAX_TOOL_CALLS_PER_RUN}]
        # none of the last reply's calls ran: the transcript ends with that reply, no tool results after it
        assert run["transcript"][-1]["role"] == "assistant" and len(run["transcript"][-1]["tool_calls"]) == per_reply
        assert sum(1 for m in run["transcript"] if m["role"] == "tool") == per_reply * (ends_at_step - 1)
    for path in (out / "runs").rglob("agentic/*/evaluation.json"):
        evaluation = json.loads(path.read_text(encoding="utf-8"))
        assert evaluation["verdict"] == "fail" and evaluation["failure"]["primary"] == "budget-exceeded"
    # single-shot offers no tools: its runs are graded on their answer as before, never capped
    assert all(r["outcome"] != "budget_exceeded" for r in _runs(out, "single-shot"))
    # a resume replays the journaled replies to the same end, with no request
    again = run_lrc("execute", cap_lock, "--out", out, env=lrc_env(KEY))
    assert again.returncode == 0 and len(stub.snapshot()) == 0, again.stdout + again.stderr
    assert requests >= 2 * ends_at_step


def test_a_run_under_the_cap_is_not_touched(stub, cap_lock, tmp_path):
    """The stub model's own agentic policy (the triage baseline: list, read each email, submit)
    stays far under the cap and ends as it always did."""
    out = tmp_path / "out"
    stub.reset()
    res = run_lrc("execute", cap_lock, "--out", out, env=lrc_env(KEY))
    assert res.returncode == 0, res.stdout + res.stderr
    agentic = _runs(out, "agentic")
    assert agentic and all(r["outcome"] == "answered" for r in agentic)
    made = [sum(len(m.get("tool_calls") or []) for m in r["transcript"] if m["role"] == "assistant") for r in agentic]
    assert 0 < max(made) < MAX_TOOL_CALLS_PER_RUN
