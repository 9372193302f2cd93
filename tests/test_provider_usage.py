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


def _replacing(**fields: Any):
    """A reply hook: the stub model's usual answer with these top-level fields replaced (None: left out)."""
    def hook(body: dict[str, Any]) -> bytes:
        reply = reply_for(body, "baseline")
        for name, value in fields.items():
            if value is None:
                reply.pop(name, None)
            else:
                reply[name] = value
        return json.dumps(reply).encode("utf-8")
    return hook


def _with_usage(usage: Any):
    """A reply hook: the stub model's usual answer, with `usage` replaced (None: left out)."""
    return _replacing(usage=usage)


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


# -- what litellm rewrites: usage and the finish reason are read as the provider sent them --------

@pytest.mark.parametrize("usage, said", [
    ({**GOOD, "completion_tokens": True}, "completion_tokens = 'True'"),  # litellm: 1 token
    ({k: v for k, v in GOOD.items() if k != "completion_tokens"}, "no completion_tokens"),  # litellm: 0, output at $0
    ({**GOOD, "completion_tokens": None}, "no completion_tokens"),
    ({**GOOD, "completion_tokens": "30"}, "completion_tokens = '30'"),  # litellm: 30
    ({**GOOD, "completion_tokens": 233.5}, "completion_tokens = '233.5'"),  # litellm: the reply "invalid", at $0
    ({**GOOD, "completion_tokens": 1e300}, "completion_tokens = '1e+300'"),
    ({**GOOD, "prompt_tokens_details": {"cached_tokens": False}}, "cached_tokens = 'False'"),
    ({**GOOD, "completion_tokens_details": {"reasoning_tokens": 2.5}}, "reasoning_tokens = '2.5'"),
])
def test_usage_is_read_as_the_provider_sent_it_not_as_litellm_converted_it(stub, usage_lock, tmp_path, usage, said):
    """litellm converts usage before lrc sees it: `true` became 1 token, a missing or null
    `completion_tokens` 0 (every answer's output priced at $0), "30" 30, and a fractional count
    made the whole reply the model's invalid output at $0. Each is now refused like any count lrc
    cannot price (exit 1, nothing journaled, the same command resumes)."""
    out = tmp_path / "out"
    stub.reset(reply_hook=_with_usage(usage))
    res = run_lrc("execute", usage_lock, "--out", out, env=lrc_env(KEY))
    stub.reset()
    message = res.stdout + res.stderr
    assert res.returncode == 1, message
    assert said in message and "Traceback" not in message and KEY not in message
    assert not [r for r in journal_records(out) if r.get("type") in ("call", "run")], "nothing priced at a converted count"


def test_a_count_sent_as_nan_is_refused_not_graded_as_an_invalid_answer(stub, usage_lock, tmp_path):
    def hook(body: dict[str, Any]) -> bytes:
        text = json.dumps({**reply_for(body, "baseline"), "usage": {**GOOD, "completion_tokens": 123456789}})
        return text.replace("123456789", "NaN").encode("utf-8")

    out = tmp_path / "out"
    stub.reset(reply_hook=hook)
    res = run_lrc("execute", usage_lock, "--out", out, env=lrc_env(KEY))
    stub.reset()
    assert res.returncode == 1, res.stdout + res.stderr
    assert "completion_tokens = 'nan'" in res.stdout + res.stderr
    assert not [r for r in journal_records(out) if r.get("type") in ("call", "run")]


def _failing_generation(failures_per_request: int, finish_reason: str | None = "error", error: Any = "default",
                        billed: tuple[int, int] = (12, 3)):
    """A reply hook: the first `failures_per_request` answers to each request are cut off by a
    provider error (OpenRouter's shape: `finish_reason: "error"`, `choices[0].error`), billed
    `billed` = (prompt, completion) tokens (12 and 3 unless told); then the usual answer."""
    import threading

    seen: dict[str, int] = {}
    lock = threading.Lock()

    def hook(body: dict[str, Any]) -> bytes:
        key = json.dumps(body.get("messages"), sort_keys=True)
        with lock:
            seen[key] = seen.get(key, 0) + 1
            n = seen[key]
        reply = reply_for(body, "baseline")
        if n <= failures_per_request:
            choice = reply["choices"][0]
            choice["message"]["content"] = (choice["message"]["content"] or "")[:5]
            if finish_reason is not None:
                choice["finish_reason"] = finish_reason
            choice["error"] = {"code": 502, "message": "Upstream provider error: connection reset"} if error == "default" else error
            reply["usage"] = {"prompt_tokens": billed[0], "completion_tokens": billed[1], "total_tokens": sum(billed)}
        return json.dumps(reply).encode("utf-8")
    return hook


@pytest.mark.parametrize("finish_reason, error", [("error", "default"), ("stop", "default"), ("error", None)])
def test_a_generation_the_provider_reports_as_failed_is_retried_and_its_billed_tokens_counted(stub, usage_lock, tmp_path,
                                                                                              finish_reason, error):
    """litellm rewrites `finish_reason: "error"` to "stop": the cut-off text was graded as the
    model's whole answer. It is the provider's failure: retried and counted, and what the provider
    billed for the cut-off answer is in the call's usage."""
    out = tmp_path / "out"
    stub.reset(reply_hook=_failing_generation(1, finish_reason, error))
    res = run_lrc("execute", usage_lock, "--out", out, env=lrc_env(KEY))
    stub.reset()
    assert res.returncode == 0, res.stdout + res.stderr
    calls = [r for r in journal_records(out) if r.get("type") == "call"]
    assert calls
    for c in calls:
        assert c["attempts"] == 2, c
        assert [f["kind"] for f in c["infra_failures"]] == ["GenerationError"]
        assert "generation failed" in c["infra_failures"][0]["message"]
        assert c["infra_failures"][0]["status"] == (502 if error == "default" else None)
        assert c["usage"]["input"] + c["usage"]["cached_input"] >= 12 + 1 and c["usage"]["output"] >= 3 + 1
    assert all(len(c["response"]["message"]["content"] or "") > 5 for c in calls), "the cut-off answer is never the one graded"


def test_a_generation_that_always_fails_at_the_provider_excludes_the_run_never_grades_the_cut_off_text(stub, usage_lock,
                                                                                                      tmp_path):
    out = tmp_path / "out"
    stub.reset(reply_hook=_failing_generation(10 ** 6))
    res = run_lrc("execute", usage_lock, "--out", out, env=lrc_env(KEY, LRC_MAX_ATTEMPTS="2"))
    stub.reset()
    assert res.returncode == 3, res.stdout + res.stderr
    records = journal_records(out)
    assert not [r for r in records if r.get("type") in ("call", "run")]
    excluded = [r for r in records if r.get("type") == "infra_exhausted"]
    assert excluded and all(f["kind"] == "GenerationError" for r in excluded for f in r["failures"])
    assert all("billed: 12 input, 3 output" in f["message"] for r in excluded for f in r["failures"])
    # What each failed attempt was billed is journaled as counts, and priced: the excluded runs'
    # spend (infra_cost_usd) holds every attempt's tokens -- before, $0 (only the message said it).
    assert all(f["billed"] == {"input": 12, "output": 3} for r in excluded for f in r["failures"])
    _assert_excluded_spend_is_every_billed_attempt(usage_lock, out, attempts=2)
    summary = json.loads((out / "summary.json").read_text())
    assert summary["runs_incomplete"] == len(excluded)
    # `lrc report` rebuilds the same figure from the journal alone
    (out / "cells.csv").unlink()
    assert run_lrc("report", usage_lock, "--out", out, env=lrc_env(KEY)).returncode == 3
    _assert_excluded_spend_is_every_billed_attempt(usage_lock, out, attempts=2)


def _assert_excluded_spend_is_every_billed_attempt(lock_path: Path, out: Path, attempts: int) -> None:
    import csv
    from decimal import Decimal

    from lrc.runtime.execute import load_verified
    from lrc.runtime.pricing import call_cost

    plan = load_verified(lock_path)["plan"]
    rows = list(csv.DictReader((out / "cells.csv").open(encoding="utf-8")))
    assert rows
    for row in rows:
        per_run = attempts * call_cost({"input": 12, "output": 3}, plan["models"][row["model"]]["price"])
        assert int(row["infra_excluded"]) > 0
        assert Decimal(row["infra_cost_usd"]) == int(row["infra_excluded"]) * per_run > 0, row
        assert Decimal(row["cost_usd"]) == 0, row


def test_a_budget_counts_what_the_failed_attempts_of_excluded_calls_were_billed(tmp_path, usage_lock):
    from decimal import Decimal

    from lrc.runtime.budget import Budget
    from lrc.runtime.execute import load_verified
    from lrc.runtime.journal import Journal
    from lrc.runtime.pricing import call_cost

    lock = load_verified(usage_lock)
    plan = lock["plan"]
    model = sorted(plan["models"])[0]
    key = f"triage.ap-inbox|{model}|single-shot|item-1|r1"
    journal = Journal(tmp_path / "journal.jsonl", lock["root_digest"], plan["edition"]["ref"])
    failure = adapter.InfraFailure("GenerationError", 502, "the provider reported that the generation failed", {"input": 12, "output": 3})
    for _ in range(2):  # an execute and its resume, each ran out of retries after one billed attempt
        journal.append({"type": "infra_exhausted", "run": key, "failures": [failure.record(), {"kind": "Timeout", "status": None,
                                                                                               "message": "no response"}],
                        "reason": "retries-exhausted"})
    assert journal.billed_in_exclusions(key) == ({"input": 24, "output": 6}, {})
    budget = Budget(Decimal("100"), plan, journal, calling=set())
    assert budget.earlier == 2 * call_cost({"input": 12, "output": 3}, plan["models"][model]["price"]) > 0
    journal.close()


def test_a_failure_records_billed_tokens_only_when_something_was_billed():
    assert adapter.InfraFailure("Timeout", None, "no response").record() == {"kind": "Timeout", "status": None, "message": "no response"}
    billed = adapter.InfraFailure("GenerationError", None, "failed", {"input": 3}).record()
    assert billed["billed"] == {"input": 3}
    exhausted = adapter.InfraExhausted([adapter.InfraFailure("GenerationError", None, "x", {"input": 3, "output": 1}),
                                        adapter.InfraFailure("Timeout", None, "y"),
                                        adapter.InfraFailure("GenerationError", 502, "z", {"input": 3})])
    assert exhausted.billed() == {"input": 6, "output": 1}


def test_usage_is_read_as_sent_with_httpxs_own_transport_too(stub, usage_lock, tmp_path):
    """The body is kept by lrc's bounded transport, which wraps litellm's aiohttp transport and
    httpx's own alike (DISABLE_AIOHTTP_TRANSPORT)."""
    out = tmp_path / "out"
    stub.reset(reply_hook=_with_usage({**GOOD, "completion_tokens": True}))
    res = run_lrc("execute", usage_lock, "--out", out, env=lrc_env(KEY, DISABLE_AIOHTTP_TRANSPORT="True"))
    stub.reset()
    assert res.returncode == 1 and "completion_tokens = 'True'" in res.stdout + res.stderr, res.stdout + res.stderr


@pytest.mark.parametrize("choices", [None, [], [{"index": 0, "message": {"role": "assistant", "content": {"labels": []}}}]])
def test_an_answer_litellm_cannot_convert_is_journaled_at_the_usage_the_provider_billed(stub, usage_lock, tmp_path, choices):
    """No choices, or content that is not text: the model's invalid output (graded, never retried),
    which the provider billed. It was journaled at zero usage -- the cell's cost short of the bill
    by every such call; its usage is now read from the body as sent."""
    hook = _replacing(choices=choices, usage={"prompt_tokens": 40, "completion_tokens": 7, "total_tokens": 47,
                                              "prompt_tokens_details": {"cached_tokens": 10}})
    out = tmp_path / "out"
    stub.reset(reply_hook=hook)
    res = run_lrc("execute", usage_lock, "--out", out, env=lrc_env(KEY))
    stub.reset()
    assert res.returncode == 0, res.stdout + res.stderr
    calls = [r for r in journal_records(out) if r.get("type") == "call"]
    assert calls and all(c["response"].get("invalid") for c in calls)
    assert all(c["attempts"] == 1 for c in calls)
    assert all((c["usage"]["input"], c["usage"]["cached_input"], c["usage"]["output"]) == (30, 10, 7) for c in calls), calls[0]


# -- --budget and billed retries -----------------------------------------------------------------
#: The budget tests' stub model may answer at most this many tokens (`--budget` needs a bound).
MAX_OUT = 200


@pytest.fixture(scope="module")
def bounded_lock(stub: StubServer, tmp_path_factory) -> Path:
    return build_project(tmp_path_factory.mktemp("budget-retry-project"), stub.api_base, n_per_cell=4, reference_models=(),
                         systems=("single-shot",), stub_sampling=f"{{temperature: 0, max_tokens: {MAX_OUT}}}")


def _spent_in_journal(lock_path: Path, out: Path) -> "Decimal":
    """Everything the provider billed, priced from the journal alone: calls and excluded calls' billed attempts."""
    from decimal import Decimal

    from lrc.runtime.execute import load_verified
    from lrc.runtime.pricing import call_cost

    price = load_verified(lock_path)["plan"]["models"][STUB_MODEL]["price"]
    total = Decimal(0)
    for rec in journal_records(out):
        if rec.get("type") == "call":
            total += call_cost(rec["usage"], price)
        elif rec.get("type") == "infra_exhausted":
            total += sum((call_cost(f["billed"], price) for f in rec["failures"] if f.get("billed")), Decimal(0))
    return total


# A call's reservation is ~$0.0069 (its prompt's offline count plus MAX_OUT output tokens); an
# attempt is billed $0.0020125: budgets for one attempt, two, and three or four calls at once.
@pytest.mark.parametrize("limit", ["0.0075", "0.0095", "0.021", "0.0251"])
def test_a_budget_holds_when_billed_attempts_are_retried(stub, bounded_lock, tmp_path, limit):
    """Each attempt is cut off by the provider and billed its whole output (MAX_OUT tokens), so a
    call retried three times costs ~3x the one attempt its reservation covered. Before, such
    retries took the spend past the budget ($0.0075: 4 attempts billed $0.00805; $0.021: three
    calls at once, $0.02415); now a retry
    starts only if the reservation can grow by what the failed attempt was billed: whatever
    the budget, nothing billed goes past it, the stop says so (exit 7), and a resume with a
    larger budget runs the excluded runs again and counts what the first execute was billed."""
    from decimal import Decimal

    out = tmp_path / "out"
    stub.reset(reply_hook=_failing_generation(10 ** 6, billed=(10, MAX_OUT)))
    res = run_lrc("execute", bounded_lock, "--out", out, "--budget", limit, env=lrc_env(KEY, LRC_MAX_ATTEMPTS="4"))
    stub.reset()
    assert res.returncode == 7, res.stdout + res.stderr
    spent = _spent_in_journal(bounded_lock, out)
    assert 0 < spent <= Decimal(limit), (spent, res.stderr)
    assert "budget reached" in res.stderr and f"left ${_plain(Decimal(limit) - spent)}" in res.stderr, res.stderr
    stopped = [r for r in journal_records(out) if r.get("type") == "infra_exhausted" and r["reason"] == "budget-reached"]
    assert stopped and all(len(r["failures"]) < 4 for r in stopped)
    assert all("could take the spend past the budget" in r["failures"][-1]["message"] or r["failures"][-1]["kind"] ==
               "GenerationError" for r in stopped)
    # The endpoint answers again; a larger budget resumes: every run is answered, what was billed before counts.
    res = run_lrc("execute", bounded_lock, "--out", out, "--budget", "10", env=lrc_env(KEY, LRC_MAX_ATTEMPTS="4"))
    assert res.returncode == 0, res.stdout + res.stderr
    assert len([r for r in journal_records(out) if r.get("type") == "run"]) == 4
    assert f"of it by earlier executes in this folder" in res.stderr and f"${_plain(spent)}" in res.stderr, res.stderr


def test_a_budget_that_holds_every_retry_lets_the_retries_run(stub, bounded_lock, tmp_path):
    """The guard refuses only what does not fit: with room for every attempt, each call is tried
    LRC_MAX_ATTEMPTS times and its runs are excluded for running out of retries, as without --budget."""
    from decimal import Decimal

    out = tmp_path / "out"
    stub.reset(reply_hook=_failing_generation(10 ** 6, billed=(10, MAX_OUT)))
    res = run_lrc("execute", bounded_lock, "--out", out, "--budget", "5", env=lrc_env(KEY, LRC_MAX_ATTEMPTS="3"))
    stub.reset()
    assert res.returncode == 3, res.stdout + res.stderr
    excluded = [r for r in journal_records(out) if r.get("type") == "infra_exhausted"]
    assert len(excluded) == 4 and all(r["reason"] == "retries-exhausted" and len(r["failures"]) == 3 for r in excluded)
    assert _spent_in_journal(bounded_lock, out) == 12 * (Decimal(10) * Decimal("1.25") + MAX_OUT * Decimal(10)) / 10 ** 6


def _plain(amount: "Decimal") -> str:
    from lrc.runtime.pricing import decimal_str

    return decimal_str(amount)


def test_a_retry_grows_the_reservation_or_is_refused_never_waits(tmp_path, usage_lock):
    """`Budget.retry` in process: a retry that fits adds what the failed attempt was billed to the
    call's reservation; one that does not is refused at once -- the budget reached, and from then
    on every retry -- even with other calls in flight. (Waiting for them, as a new call
    does, let three calls each holding money wait for one another forever.)"""
    from decimal import Decimal

    from lrc.runtime.budget import Budget, Hold
    from lrc.runtime.execute import load_verified
    from lrc.runtime.journal import Journal
    from lrc.runtime.pricing import call_cost

    lock = load_verified(usage_lock)
    plan = lock["plan"]
    journal = Journal(tmp_path / "journal.jsonl", lock["root_digest"], plan["edition"]["ref"])
    attempt = {"input": 10, "output": 100}
    one = call_cost(attempt, plan["models"][STUB_MODEL]["price"])

    budget = Budget(one * 3, plan, journal, calling=set())
    mine, other = Hold(one), Hold(one)
    budget.reserved = mine.amount + other.amount
    assert budget.retry(mine, STUB_MODEL, attempt)  # 3 x one held: fits exactly
    assert mine.amount == 2 * one and budget.reserved == 3 * one and not budget.stopped
    assert not budget.retry(other, STUB_MODEL, attempt)  # over, with `mine` in flight: refused, not waited for
    assert budget.stopped and budget.refused == one and other.amount == one
    assert not budget.retry(Hold(Decimal(0)), STUB_MODEL, {"input": 0, "output": 0})  # and from then on
    budget.settle(mine, STUB_MODEL, {"input": 20, "output": 200})  # two attempts billed: what it held, no overrun
    assert budget.overrun == 0 and budget.spent == 2 * one
    journal.close()
