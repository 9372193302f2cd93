"""A provider's token usage is priced only when it is a count: never made up, never $0.

Found by replaying odd provider replies against `lrc execute`: a reply whose usage said
`completion_tokens: -5` (or a negative `cached_tokens`) ended in `internal error (this is a bug
in lrc): PricingError` with exit 70, and a reply with no `usage` at all was priced at $0 --
litellm turns a missing usage into zero tokens, so the run's cost, the cell's cost per success
and the rate card's "Process 1,000 ...: $X" all read $0 for calls that were paid; and 10**400
prompt tokens crashed the report's exact money sums (exit 70). Now each
count must be a whole number, zero or more, and a call cannot have zero prompt tokens; anything
else stops the execute with one message naming the model, the endpoint and the field (exit 1),
nothing journaled is lost, and the same command resumes once the endpoint reports usage.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from helpers.project import STUB_MODEL, build_project, journal_records, lrc_env, run_lrc
from helpers.stub_server import StubServer, reply_for
from lrc.runtime.models import adapter

KEY = "sk-lrc-test-usage-5e2b7c19d04a8f63"
PRICE = {"currency": "USD", "per_tokens": 1_000_000, "input": "1.25", "cached_input": "0.125", "output": "10"}
GOOD = {"prompt_tokens": 120, "completion_tokens": 30, "total_tokens": 150}


@pytest.mark.parametrize("usage, field", [
    ({**GOOD, "completion_tokens": -5}, "completion_tokens"),
    ({**GOOD, "prompt_tokens": -1}, "prompt_tokens"),
    ({**GOOD, "prompt_tokens_details": {"cached_tokens": -40}}, "cached_tokens"),
    ({**GOOD, "cache_creation_input_tokens": -7}, "cache_creation_input_tokens"),
    ({**GOOD, "completion_tokens_details": {"reasoning_tokens": -2}}, "reasoning_tokens"),
    ({**GOOD, "completion_tokens": 2.5}, "completion_tokens"),
    ({**GOOD, "completion_tokens": "30"}, "completion_tokens"),
    ({**GOOD, "completion_tokens": True}, "completion_tokens"),
    ({**GOOD, "prompt_tokens": [120]}, "prompt_tokens"),
    ({**GOOD, "prompt_tokens": 10 ** 400}, "401 digits"),  # crashed the report's exact sums (exit 70)
    ({**GOOD, "completion_tokens": adapter.MAX_TOKENS_PER_CALL + 1}, "1,000,000,001"),
    ({**GOOD, "completion_tokens": 1e300}, "completion_tokens"),
])
def test_a_count_that_is_not_a_whole_number_zero_or_more_is_refused(usage: dict[str, Any], field: str):
    with pytest.raises(adapter.ConfigError, match=field):
        adapter.split_usage(usage, PRICE)


@pytest.mark.parametrize("usage", [None, {}, {"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0},
                                   {"prompt_tokens": 0, "completion_tokens": 12}])
def test_no_prompt_tokens_means_the_provider_reported_no_usage(usage):
    with pytest.raises(adapter.ConfigError, match="no (token usage|prompt tokens)"):
        adapter.split_usage(usage, PRICE)


def test_counts_are_split_into_the_priced_token_classes():
    usage = {**GOOD, "prompt_tokens_details": {"cached_tokens": 20}, "cache_creation_input_tokens": 10,
             "completion_tokens_details": {"reasoning_tokens": 8}}
    priced = {**PRICE, "cache_write": "1.5"}
    assert adapter.split_usage(usage, priced) == {"input": 90, "cached_input": 20, "cache_write": 10, "output": 30, "reasoning": 0}
    assert adapter.split_usage(usage, {**priced, "reasoning": "10"})["output"] == 22
    assert adapter.split_usage({**GOOD, "completion_tokens": 30.0}, PRICE)["output"] == 30  # a whole number written as 30.0
    assert adapter.split_usage({**GOOD, "prompt_tokens": adapter.MAX_TOKENS_PER_CALL}, PRICE)["input"] == adapter.MAX_TOKENS_PER_CALL
    # fully cached prompt (some providers count cached tokens apart): still a reported usage
    assert adapter.split_usage({"prompt_tokens": 0, "completion_tokens": 3, "prompt_tokens_details": {"cached_tokens": 50}},
                               PRICE)["cached_input"] == 50


@pytest.mark.parametrize("usage, price, said", [
    ({**GOOD, "cache_creation_input_tokens": 10}, PRICE, "10 cache_write tokens"),
    ({**GOOD, "prompt_tokens_details": {"cached_tokens": 154}, "prompt_tokens": 300},
     {k: v for k, v in PRICE.items() if k != "cached_input"}, "154 cached_input tokens"),  # vLLM's prefix cache
])
def test_a_class_the_edition_gives_no_price_is_refused_at_the_reply_never_priced_later(usage, price, said):
    # Priced later, it was journaled and paid for every run, then `lrc execute` and every `lrc
    # report` of the folder ended with an internal error (PricingError, exit 70).
    with pytest.raises(adapter.ConfigError, match=said) as refused:
        adapter.split_usage(usage, price)
    assert "explicit price" in str(refused.value)
    assert adapter.split_usage({**usage, "cache_creation_input_tokens": 0, "prompt_tokens_details": {}}, price)["input"] == usage["prompt_tokens"]


def test_counts_a_provider_reports_apart_from_the_total_are_not_taken_out_of_it():
    # more cached than prompt tokens: they can only be counted apart (clamped, the uncached input was dropped)
    got = adapter.split_usage({**GOOD, "prompt_tokens": 7, "prompt_tokens_details": {"cached_tokens": 50}}, PRICE)
    assert (got["input"], got["cached_input"]) == (7, 50)
    # more reasoning than completion tokens under a reasoning price: the output went negative (the report crashed)
    got = adapter.split_usage({**GOOD, "completion_tokens": 4, "completion_tokens_details": {"reasoning_tokens": 400}},
                              {**PRICE, "reasoning": "10"})
    assert (got["output"], got["reasoning"]) == (4, 400)
    assert all(v >= 0 for v in got.values())


@given(prompt=st.integers(0, 10_000), completion=st.integers(0, 10_000), cached=st.integers(0, 10_000),
       write=st.integers(0, 10_000), reasoning=st.integers(0, 10_000), separate=st.booleans())
@settings(max_examples=200, deadline=None)
def test_every_split_is_a_set_of_counts_never_below_zero_and_never_less_than_reported(prompt, completion, cached, write,
                                                                                    reasoning, separate):
    usage = {"prompt_tokens": prompt, "completion_tokens": completion, "prompt_tokens_details": {"cached_tokens": cached},
             "cache_creation_input_tokens": write, "completion_tokens_details": {"reasoning_tokens": reasoning}}
    price = {**PRICE, "cache_write": "1.5", **({"reasoning": "10"} if separate else {})}
    if prompt + cached + write == 0:
        return
    got = adapter.split_usage(usage, price)
    assert all(isinstance(v, int) and v >= 0 for v in got.values())
    assert got["input"] + got["cached_input"] + got["cache_write"] >= prompt  # no prompt token dropped
    assert got["output"] + got["reasoning"] >= completion  # no completion token dropped


@pytest.fixture(scope="module")
def usage_lock(stub: StubServer, tmp_path_factory) -> Path:
    return build_project(tmp_path_factory.mktemp("usage-project"), stub.api_base, n_per_cell=4, reference_models=(),
                         systems=("single-shot",))


def _with_usage(usage: Any):
    """A reply hook: the stub model's usual answer, with `usage` replaced (None: left out)."""
    def hook(body: dict[str, Any]) -> bytes:
        reply = reply_for(body, "baseline")
        if usage is None:
            reply.pop("usage")
        else:
            reply["usage"] = usage
        return json.dumps(reply).encode("utf-8")
    return hook


@pytest.mark.parametrize("usage, said", [
    (None, "no prompt tokens"),
    ({**GOOD, "completion_tokens": -5}, "completion_tokens = '-5'"),
    ({**GOOD, "prompt_tokens_details": {"cached_tokens": -40}}, "cached_tokens = '-40'"),
    ({**GOOD, "prompt_tokens": 10 ** 400}, "401 digits"),
    ({**GOOD, "cache_creation_input_tokens": 10}, "10 cache_write tokens"),  # a class the edition does not price
])
def test_an_execute_stops_on_usage_it_cannot_price_and_resumes_when_the_endpoint_is_fixed(stub, usage_lock, tmp_path,
                                                                                          usage, said):
    out = tmp_path / "out"
    stub.reset(reply_hook=_with_usage(usage))
    res = run_lrc("execute", usage_lock, "--out", out, env=lrc_env(KEY))
    assert res.returncode == 1, res.stdout + res.stderr
    message = res.stdout + res.stderr
    assert "internal error" not in message and "Traceback" not in message
    assert f"{STUB_MODEL} at {stub.api_base}" in message and said in message and "never" in message
    assert KEY not in message
    assert not [r for r in journal_records(out) if r.get("type") in ("call", "run")], "nothing priced at a made-up count"
    stub.reset()
    again = run_lrc("execute", usage_lock, "--out", out, env=lrc_env(KEY))
    assert again.returncode == 0, again.stdout + again.stderr
    calls = [r for r in journal_records(out) if r.get("type") == "call"]
    assert calls and all(sum(c["usage"].values()) > 0 for c in calls)


def test_a_stop_on_usage_it_cannot_price_journals_the_calls_in_flight_and_the_resume_repays_none(stub, usage_lock, tmp_path):
    """One reply with usage lrc cannot price comes back while the other three requests are still
    at the provider: they come back and are journaled before the execute stops (exit 1), so the
    resume sends only what was never answered. Before, the stop cancelled them (sent and billed,
    never journaled) and the resume sent all four again."""
    import threading

    from helpers.stub_server import Fault

    chosen: list[str] = []
    lock = threading.Lock()

    def first_item(body: dict[str, Any]) -> bool:
        """The request that reached the server first (the one answered at once)."""
        key = json.dumps(body.get("messages"), sort_keys=True)
        with lock:
            if not chosen:
                chosen.append(key)
        return key == chosen[0]

    def hook(body: dict[str, Any]) -> bytes:
        reply = reply_for(body, "baseline")
        if first_item(body):
            reply["usage"] = {**GOOD, "completion_tokens": -5}
        return json.dumps(reply).encode("utf-8")

    out = tmp_path / "out"
    stub.reset(reply_hook=hook, faults=[Fault(kind="delay", delay=2.0, match=lambda body: not first_item(body))])
    res = run_lrc("execute", usage_lock, "--out", out, env=lrc_env(KEY))
    assert res.returncode == 1, res.stdout + res.stderr
    assert "completion_tokens = '-5'" in res.stdout + res.stderr and "Traceback" not in res.stderr
    sent_first = len(stub.requests)
    journaled = {r["run"] for r in journal_records(out) if r.get("type") == "call"}
    assert sent_first == 4 and len(journaled) == 3, (sent_first, journaled)  # the three in flight, not the refused one
    stub.reset()
    again = run_lrc("execute", usage_lock, "--out", out, env=lrc_env(KEY))
    assert again.returncode == 0, again.stdout + again.stderr
    assert len(stub.requests) == 1  # only the refused one is asked again


@pytest.mark.parametrize("answered_as", [{"name": "gpt"}, ["gpt"], 12345, ""])
def test_a_model_name_that_is_not_text_is_recorded_as_unknown(stub, usage_lock, tmp_path, answered_as):
    """The provider's `model` field is what a manifest shows as the model the provider answered
    as. An object there ended `lrc execute` in `internal error ... unhashable type: 'dict'`
    (exit 70) when the manifests were written; it is not a name, so it is recorded as unknown
    (null) and the manifest names the model as planned."""
    def hook(body: dict[str, Any]) -> bytes:
        return json.dumps({**reply_for(body, "baseline"), "model": answered_as}).encode("utf-8")

    out = tmp_path / "out"
    stub.reset(reply_hook=hook)
    res = run_lrc("execute", usage_lock, "--out", out, env=lrc_env(KEY))
    stub.reset()
    assert res.returncode == 0, res.stdout + res.stderr
    calls = [r for r in journal_records(out) if r.get("type") == "call"]
    assert calls and {c["response_model"] for c in calls} == {None}
    manifests = list((out / "runs").rglob("manifest.json"))
    assert manifests and all(json.loads(m.read_text(encoding="utf-8"))["model"]["api_version"] == [STUB_MODEL] for m in manifests)
