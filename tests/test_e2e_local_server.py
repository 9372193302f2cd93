"""End to end against a local OpenAI-compatible HTTP server, through litellm's real client.

A temporary project compiles an edition whose candidate, `openai/stub-model`, is served by
`helpers.stub_server.StubServer` (the triage baseline policy behind real HTTP) next to the
in-process `lrc/baseline`. `lrc execute` runs as a subprocess. The server records every
request, so the tests check what really went over the wire: tool calls, token usage and
cost, the API key, retries of scripted infrastructure faults, exclusion and resume, model
failures that must not be retried, the agentic step cap, a missing key and a rejected one.
"""

from __future__ import annotations

import base64
import json
import re
from collections import Counter
from decimal import Decimal
from pathlib import Path

import pytest

from helpers.project import (
    KEY_ENV,
    PER_TOKENS,
    STUB_MODEL,
    STUB_PRICE,
    TRIAGE,
    build_project,
    journal_records,
    lrc_env,
    read_cells,
    run_lrc,
    tree,
)
from helpers.stub_server import CACHED_SHARE, Fault, Record, StubServer

KEY = "sk-lrc-test-canary-7f3a9c2e51d04b6b"
SYSTEMS = ("single-shot", "agentic")
N = 15
SMALL_N = 4
STUB_SLUG = "openai__stub-model"
BASELINE = "lrc/baseline"
_BATCH = re.compile(r"AP-B(\d\d)")


# -- fixtures -----------------------------------------------------------------------------

@pytest.fixture(scope="module")
def local_lock(stub: StubServer, tmp_path_factory) -> Path:
    return build_project(tmp_path_factory.mktemp("local-project"), stub.api_base, n_per_cell=N)


@pytest.fixture(scope="module")
def small_lock(stub: StubServer, tmp_path_factory) -> Path:
    """The same edition with fewer items per cell, for tests whose point is not the count."""
    return build_project(tmp_path_factory.mktemp("small-project"), stub.api_base, n_per_cell=SMALL_N)


@pytest.fixture
def server(stub: StubServer) -> StubServer:
    stub.reset()
    return stub


@pytest.fixture(scope="module")
def clean(stub: StubServer, local_lock: Path, tmp_path_factory):
    """One fault-free run: (out folder, completed process, the server's records)."""
    stub.reset()
    out = tmp_path_factory.mktemp("clean") / "out"
    res = run_lrc("execute", local_lock, "--out", out, env=lrc_env(KEY))
    return out, res, stub.snapshot()


def execute(lock: Path, out: Path, key: str | None = KEY, **env: str):
    return run_lrc("execute", lock, "--out", out, env=lrc_env(key, **env))


# -- small readers -----------------------------------------------------------------------

def system_of(record: Record) -> str:
    return "agentic" if record.has_tools else "single-shot"


def batch_of(record: Record) -> str:
    found = {m for m in _BATCH.findall(json.dumps(record.body["messages"]))}
    assert len(found) == 1, f"request {record.number} names batches {found}"
    return found.pop()


def expected_usage(records: list[Record]) -> dict[str, int]:
    total = {"input": 0, "cached_input": 0, "output": 0}
    for r in records:
        u = r.response["usage"]
        cached = u["prompt_tokens_details"]["cached_tokens"]
        total["input"] += u["prompt_tokens"] - cached
        total["cached_input"] += cached
        total["output"] += u["completion_tokens"]
    return total


def expected_cost(records: list[Record]) -> Decimal:
    """Exact USD from what the server reported × the frozen prices (input = prompt − cached)."""
    u = expected_usage(records)
    return (u["input"] * Decimal(STUB_PRICE["input"]) + u["cached_input"] * Decimal(STUB_PRICE["cached_input"])
            + u["output"] * Decimal(STUB_PRICE["output"])) / PER_TOKENS


def evaluations(out: Path, model_slug: str = STUB_SLUG) -> dict[str, bytes]:
    return {k: v for k, v in tree(out / "runs", "evaluation.json").items() if f"/{model_slug}/" in f"/{k}"}


def stub_calls(out: Path) -> list[dict]:
    return [r for r in journal_records(out) if r["type"] == "call" and f"|{STUB_MODEL}|" in r["run"]]


def without(row: dict[str, str], *columns: str) -> dict[str, str]:
    return {k: v for k, v in row.items() if k not in columns}


# -- the fault-free path -------------------------------------------------------------------

def test_stub_model_scores_exactly_like_the_in_process_baseline(clean):
    out, res, records = clean
    assert res.returncode == 0, res.stderr
    assert "Traceback" not in res.stderr
    cells = read_cells(out)
    for system in SYSTEMS:
        stub_row, base_row = cells[(STUB_MODEL, system)], cells[(BASELINE, system)]
        assert stub_row["n"] == base_row["n"] == str(N)
        assert stub_row["passes"] == base_row["passes"]
        assert 0 < int(stub_row["passes"]) < N
        for col in ("partials", "calls", "steps", "step_cap", "no_answer", "invalid_output", "infra_excluded", "infra_retries"):
            assert stub_row[col] == base_row[col], col
        assert stub_row["infra_retries"] == "0"
    # Same answers on the same items: every evaluation record is byte-identical to lrc/baseline's.
    stub_evals, base_evals = evaluations(out), evaluations(out, "lrc__baseline")
    assert len(stub_evals) == len(base_evals) == 2 * N
    assert {k.replace(STUB_SLUG, "x"): v for k, v in stub_evals.items()} == \
           {k.replace("lrc__baseline", "x"): v for k, v in base_evals.items()}
    # The server saw what the systems should send: one request per single-shot run, tools in agentic.
    assert all(r.status == 200 for r in records)
    assert all(r.model == "stub-model" for r in records)
    by_system = Counter(system_of(r) for r in records)
    assert by_system == {"single-shot": N, "agentic": int(cells[(STUB_MODEL, "agentic")]["calls"])}
    assert len({r.digest for r in records}) == len(records), "a request was sent twice"
    assert all(r.body.get("temperature") == 0 for r in records)
    agentic = [r for r in records if r.has_tools]
    names = Counter(c["function"]["name"] for r in agentic for c in r.response["choices"][0]["message"].get("tool_calls", []))
    assert names["list_emails"] == N and names["submit_labels"] == N and names["read_email"] >= 19 * N
    assert {t["function"]["name"] for t in agentic[0].body["tools"]} == {"list_emails", "read_email", "submit_labels"}
    # Tool results went back to the model as `tool` messages answering the model's call ids.
    last_steps = [r for r in agentic if any(m.get("role") == "tool" for m in r.body["messages"])]
    assert last_steps
    for r in last_steps:
        asked = {c["id"] for m in r.body["messages"] if m["role"] == "assistant" for c in m.get("tool_calls") or []}
        answered = {m["tool_call_id"] for m in r.body["messages"] if m["role"] == "tool"}
        assert answered and answered <= asked
    single = [r for r in records if not r.has_tools]
    assert all("tools" not in r.body for r in single)


def test_token_usage_and_cost_equal_what_the_server_reported(clean):
    out, res, records = clean
    assert res.returncode == 0, res.stderr
    cells = read_cells(out)
    total_cost = Decimal(0)
    for system in SYSTEMS:
        answered = [r for r in records if system_of(r) == system]
        usage = expected_usage(answered)
        row = cells[(STUB_MODEL, system)]
        assert int(row["tokens_input"]) == usage["input"]
        assert int(row["tokens_cached_input"]) == usage["cached_input"] > 0
        assert int(row["tokens_output"]) == usage["output"]
        assert row["tokens_cache_write"] == row["tokens_reasoning"] == "0"
        assert usage["cached_input"] == sum(r.response["usage"]["prompt_tokens"] // CACHED_SHARE for r in answered)
        cost = expected_cost(answered)
        assert cost > 0
        assert Decimal(row["cost_usd"]) == cost, (system, row["cost_usd"], cost)
        assert row["infra_cost_usd"] == "0"
        total_cost += cost
        # CPO = total cost / successes, exactly (to the places the CSV keeps).
        assert Decimal(row["cpo_usd"]) == (cost / int(row["passes"])).quantize(Decimal(row["cpo_usd"]))
    # Each trace carries its own run's cost; they add up to the cells' cost.
    traces = {k: json.loads(v) for k, v in tree(out / "runs", "trace.json").items() if k.split("/")[1] == STUB_SLUG}
    assert len(traces) == 2 * N
    assert sum(Decimal(t["cost_usd"]) for t in traces.values()) == total_cost
    # Per call, the journal holds the server's usage split into our token classes.
    by_digest = {r.digest: r for r in records}
    assert len(stub_calls(out)) == len(records)
    usage_seen = sorted((c["usage"]["input"], c["usage"]["cached_input"], c["usage"]["output"]) for c in stub_calls(out))
    usage_sent = sorted((r.response["usage"]["prompt_tokens"] - r.response["usage"]["prompt_tokens_details"]["cached_tokens"],
                         r.response["usage"]["prompt_tokens_details"]["cached_tokens"],
                         r.response["usage"]["completion_tokens"]) for r in by_digest.values())
    assert usage_seen == usage_sent
    # The in-process reference model is free, and says so.
    for system in SYSTEMS:
        assert cells[(BASELINE, system)]["cost_usd"] == "0"


def test_api_key_is_sent_as_bearer_but_never_written(clean):
    out, res, records = clean
    assert res.returncode == 0, res.stderr
    assert records and all(r.authorization == f"Bearer {KEY}" for r in records)
    _assert_no_key(out)
    assert KEY not in res.stdout + res.stderr


def _assert_no_key(out: Path) -> None:
    needles = [KEY.encode(), base64.b64encode(KEY.encode()), KEY[8:].encode()]
    files = tree(out)
    assert "journal.jsonl" in files and any(k.endswith("trace.json") for k in files)
    for name, data in files.items():
        for needle in needles:
            assert needle not in data, f"the API key ({needle!r}) was written to {name}"


# -- infrastructure faults -----------------------------------------------------------------

def test_scripted_429s_503s_and_drops_are_retried_counted_and_change_nothing(server, local_lock, clean, tmp_path):
    clean_out, clean_res, clean_records = clean
    assert clean_res.returncode == 0
    wait = 0.5
    faults = [
        Fault("status", status=429, retry_after=str(wait), first=1),   # Retry-After must be honoured
        Fault("status", status=429, retry_after="0", first=4),
        Fault("status", status=503, first=4, echo_auth=True),   # a provider echoing the key in its error
        Fault("drop", first=2),                                  # connection closed without a response
        Fault("status", status=500, first=1),
    ]
    server.reset(faults=faults)
    out = tmp_path / "out"
    res = execute(local_lock, out, LRC_RETRY_MAX_SECONDS="5")
    assert res.returncode == 0, res.stderr
    records = server.snapshot()
    failed = [r for r in records if r.fault is not None]
    limited = next(r for r in records if r.fault == "status 429")
    retry = next(r for r in records if r.digest == limited.digest and r.number > limited.number)
    assert retry.started - limited.finished >= wait * 0.95, "Retry-After was not honoured"
    assert Counter(r.fault for r in failed) == {"status 429": 5, "status 503": 4, "drop": 2, "status 500": 1}
    # Every faulted request was retried with the very same body, and answered in the end.
    answered = [r for r in records if r.status == 200]
    assert {r.digest for r in failed} <= {r.digest for r in answered}
    assert sorted(r.digest for r in answered) == sorted(r.digest for r in clean_records)
    # Counted: infra_retries equals the number of failed attempts, all on the stub's cells.
    cells, clean_cells = read_cells(out), read_cells(clean_out)
    assert sum(int(cells[(STUB_MODEL, s)]["infra_retries"]) for s in SYSTEMS) == len(failed)
    assert sum(int(row["infra_retries"]) for row in cells.values()) == len(failed)
    failures = [f for c in stub_calls(out) for f in c["infra_failures"]]
    assert len(failures) == len(failed)
    assert Counter(f["status"] for f in failures) == {429: 5, 503: 4, 500: 3}
    assert {f["kind"] for f in failures} == {"RateLimitError", "ServiceUnavailableError", "InternalServerError"}
    # litellm maps a dropped connection to InternalServerError("Connection error."): still infra.
    assert sum("Connection error" in f["message"] for f in failures) == 2
    # ...and nothing else changed: same verdicts, same tokens, same cost, same rate.
    for key, row in clean_cells.items():
        assert without(cells[key], "infra_retries") == without(row, "infra_retries")
        assert cells[key]["infra_excluded"] == "0"
    assert evaluations(out) == evaluations(clean_out)
    # The echoed key reached the journal only redacted.
    assert f"[REDACTED:{KEY_ENV}]".encode() in (out / "journal.jsonl").read_bytes()
    _assert_no_key(out)


def _batch_match(*batches: str, min_messages: int = 0):
    def match(body: dict) -> bool:
        text = json.dumps(body["messages"])
        return any(f"AP-B{b}" in text for b in batches) and len(body["messages"]) >= min_messages
    return match


def test_faults_that_outlast_the_retries_exclude_runs_and_a_rerun_completes_them(server, local_lock, clean, tmp_path):
    clean_out, clean_res, clean_records = clean
    out = tmp_path / "out"
    # Batch 03: every request fails (single-shot, and agentic at step 1).
    # Batch 07, agentic: fails from step 3 on (system, user, list, its result, reads and their
    # results: more than 4 messages), so steps 1-2 are already paid.
    faults = [Fault("status", status=503, match=_batch_match("03")),
              Fault("status", status=503, match=_batch_match("07", min_messages=5))]
    server.reset(faults=faults)
    res = execute(local_lock, out, LRC_MAX_ATTEMPTS="3")
    assert res.returncode == 3, res.stdout + res.stderr
    assert "excluded" in res.stderr and "Traceback" not in res.stderr
    first = server.snapshot()
    cells = read_cells(out)
    excluded = {"single-shot": 1, "agentic": 2}
    for system, count in excluded.items():
        row = cells[(STUB_MODEL, system)]
        assert int(row["infra_excluded"]) == count
        assert int(row["n"]) == N - count  # excluded runs are not graded
    for system in SYSTEMS:
        assert cells[(BASELINE, system)]["infra_excluded"] == "0"
    # Each exhausted call was tried exactly LRC_MAX_ATTEMPTS times.
    faulted = Counter(r.digest for r in first if r.fault)
    assert set(faulted.values()) == {3} and len(faulted) == 3
    # Not graded: no evaluation for the excluded runs; their spend is kept apart from CPO.
    for system, batch in (("single-shot", "03"), ("agentic", "03"), ("agentic", "07")):
        assert not (out / "runs" / TRIAGE / STUB_SLUG / system / f"ap-batch-{batch}.r1").exists()
    assert Decimal(cells[(STUB_MODEL, "agentic")]["infra_cost_usd"]) > 0  # batch 07's two paid steps
    summary = json.loads((out / "summary.json").read_text())
    assert summary["runs_incomplete"] == 3

    # The rerun, without faults, completes exactly the excluded runs and repays nothing.
    server.reset()
    res2 = execute(local_lock, out)
    assert res2.returncode == 0, res2.stderr
    assert "resuming" in res2.stderr
    second = server.snapshot()
    paid_before = {r.digest for r in first if r.status == 200}
    assert not paid_before & {r.digest for r in second}, "a finished call was paid twice"
    assert Counter((system_of(r), batch_of(r)) for r in second) == {
        ("single-shot", "03"): 1, ("agentic", "03"): 3, ("agentic", "07"): 1}
    assert all(r.status == 200 for r in second)
    # The end state equals the fault-free run's.
    assert evaluations(out) == evaluations(clean_out)
    cells, clean_cells = read_cells(out), read_cells(clean_out)
    for key, row in clean_cells.items():
        assert without(cells[key], "infra_retries") == without(row, "infra_retries")
    # Every failed attempt is counted, those of the calls that ran out of retries included.
    assert sum(int(cells[(STUB_MODEL, s)]["infra_retries"]) for s in SYSTEMS) == sum(1 for r in first if r.fault)
    assert sorted(r.digest for r in first + second if r.status == 200) == sorted(r.digest for r in clean_records)


# -- model failures --------------------------------------------------------------------------

@pytest.fixture(scope="module")
def misbehaving(stub: StubServer, small_lock: Path, tmp_path_factory):
    """One run where the stub answers garbage in single-shot and never stops calling tools in
    agentic: (out folder, completed process, the server's records)."""
    stub.reset(behaviour="garbage+endless")
    out = tmp_path_factory.mktemp("misbehaving") / "out"
    res = execute(small_lock, out)
    return out, res, stub.snapshot()


def test_unparseable_output_is_a_graded_fail_and_never_retried(misbehaving):
    out, res, records = misbehaving
    assert res.returncode == 0, res.stderr
    single = [r for r in records if not r.has_tools]
    assert all(r.status == 200 for r in records)
    # Exactly one request per single-shot run: the bad answer was not retried.
    assert Counter(batch_of(r) for r in single) == {f"{i:02d}": 1 for i in range(1, SMALL_N + 1)}
    assert all(c["attempts"] == 1 and not c["infra_failures"] for c in stub_calls(out))
    row = read_cells(out)[(STUB_MODEL, "single-shot")]
    n = str(SMALL_N)
    assert (row["n"], row["passes"], row["invalid_output"], row["infra_retries"], row["infra_excluded"], row["calls"]) == \
           (n, "0", n, "0", "0", n)
    singles = {k: json.loads(v) for k, v in evaluations(out).items() if "/single-shot/" in k}
    assert len(singles) == SMALL_N
    assert all(e["verdict"] == "fail" and e["failure"] == {"primary": "artifact-integrity", "secondary": [], "rule": "invalid-output"}
               for e in singles.values())
    # The failure is priced like any answer (the model was paid for it); no success: CPO is infinite.
    assert Decimal(row["cost_usd"]) == expected_cost(single) > 0
    assert row["cpo_usd"] == "inf"


def test_a_model_that_never_stops_calling_tools_hits_the_step_cap(misbehaving):
    out, res, records = misbehaving
    assert res.returncode == 0, res.stderr
    agentic = [r for r in records if r.has_tools]
    assert all(r.status == 200 for r in agentic)
    # Exactly 25 requests per run, then the loop stops: a model failure, never retried.
    assert Counter(batch_of(r) for r in agentic) == {f"{i:02d}": 25 for i in range(1, SMALL_N + 1)}
    assert all(sum(m["role"] == "assistant" for m in r.body["messages"]) < 25 for r in agentic)
    row = read_cells(out)[(STUB_MODEL, "agentic")]
    n = SMALL_N
    assert (row["n"], row["passes"], row["step_cap"], row["steps"], row["calls"], row["infra_retries"]) == \
           (str(n), "0", str(n), str(25 * n), str(25 * n), "0")
    assert Decimal(row["cost_usd"]) == expected_cost(agentic)
    evals = {k: json.loads(v) for k, v in evaluations(out).items() if "/agentic/" in k}
    assert len(evals) == n
    assert all(e["verdict"] == "fail" and (e["failure"]["primary"], e["failure"]["rule"]) == ("budget-exceeded", "step-cap")
               for e in evals.values())
    traces = {k: json.loads(v) for k, v in tree(out / "runs", "trace.json").items() if f"/{STUB_SLUG}/agentic/" in f"/{k}"}
    assert all(t["stop"]["outcome"] == "step_cap" and len(t["calls"]) == 25 for t in traces.values())
    # The in-process baseline in the same run is untouched by the stub's behaviour.
    assert read_cells(out)[(BASELINE, "agentic")]["step_cap"] == "0"


# -- configuration problems ------------------------------------------------------------------

@pytest.mark.parametrize("key", [None, ""], ids=["unset", "empty"])
def test_missing_api_key_aborts_before_any_request(server, small_lock, tmp_path, key):
    out = tmp_path / "out"
    res = execute(small_lock, out, key=key)
    assert res.returncode == 1, res.stdout + res.stderr
    assert KEY_ENV in res.stderr
    assert "Traceback" not in res.stderr
    assert server.count == 0
    assert not (out / "journal.jsonl").exists()


def test_a_subset_needs_only_its_own_models_keys(server, small_lock, tmp_path):
    """`--models` leaves the other models out entirely: no key asked for, no request sent."""
    out = tmp_path / "out"
    res = run_lrc("execute", small_lock, "--out", out, "--no-progress", "--models", BASELINE, "--limit", "2",
                  env=lrc_env(None))
    assert res.returncode == 0, res.stdout + res.stderr
    assert server.count == 0 and KEY_ENV not in res.stderr and "partial run" in res.stderr
    runs = [r for r in journal_records(out) if r["type"] == "run"]
    assert len(runs) == 2 * len(SYSTEMS) and {r["model"] for r in runs} == {BASELINE}
    res = run_lrc("execute", small_lock, "--out", tmp_path / "stub", "--models", STUB_MODEL, env=lrc_env(None))
    assert res.returncode == 1 and KEY_ENV in res.stderr and server.count == 0, res.stderr


@pytest.mark.parametrize("variable", ["LEDGERRATE_OPENAI", "STUB_AUTH_URL"])
def test_a_key_in_a_variable_whose_name_says_nothing_is_still_never_written(server, small_lock, tmp_path, variable):
    """The operator names the key's variable (`--api-key-env`, `api_key_env`); its name need not say
    KEY or TOKEN (and may even end like a setting, _URL). The provider rejects the key and echoes it,
    whole and base64'd in a Basic header: neither the terminal nor any file of the folder holds it."""
    server.reset(faults=[Fault("status", status=401, echo_auth=True,
                               echo=lambda auth: base64.b64encode(f"user:{auth}".encode()).decode())])
    out = tmp_path / "out"
    res = run_lrc("execute", small_lock, "--out", out, "--api-key-env", f"{STUB_MODEL}={variable}",
                  env=lrc_env(None, **{variable: KEY}))
    assert res.returncode == 1, res.stdout + res.stderr
    assert "HTTP 401" in res.stderr and f"[REDACTED:{variable}]" in res.stderr, res.stderr
    assert KEY not in res.stdout + res.stderr, "the API key was printed"
    assert server.snapshot() and all(r.auth_present for r in server.snapshot()), "the key was not sent"
    for name, data in tree(out).items():
        assert KEY.encode() not in data and KEY[10:30].encode() not in data, f"the API key was written to {name}"


def test_a_rejected_key_aborts_the_run_as_a_configuration_problem_without_printing_it(server, small_lock, tmp_path):
    # The provider rejects the key and echoes it in its error, as some providers do.
    status = 401
    server.reset(faults=[Fault("status", status=status, echo_auth=True)])
    out = tmp_path / "out"
    res = execute(small_lock, out)
    assert res.returncode == 1, res.stdout + res.stderr
    assert "Traceback" not in res.stderr
    assert "openai/stub-model" in res.stderr and f"HTTP {status}" in res.stderr
    assert KEY not in res.stdout + res.stderr, "the API key was printed"
    assert f"[REDACTED:{KEY_ENV}]" in res.stderr
    records = server.snapshot()
    assert records and all(r.status == status for r in records)
    # Never retried: each rejected request was sent once, and the run stopped (at most the
    # requests already in flight when the first rejection came back were sent).
    assert len({r.digest for r in records}) == len(records) <= 4
    for name, data in tree(out).items():
        assert KEY.encode() not in data, f"the API key was written to {name}"


CONTEXT_MESSAGE = ("This model's maximum context length is 8192 tokens. However, your messages resulted in 9001 tokens. "
                   "Please reduce the length of the messages.")


def test_a_request_past_the_context_window_is_the_models_failed_run_never_an_abort(server, small_lock, tmp_path):
    """A provider refusing a request longer than the model's context window (HTTP 400,
    context_length_exceeded) is the model's limit: its run is graded fail (invalid output, the
    reason in its events), never retried, and the execute goes on. It used to be a configuration
    error: the whole execute stopped (exit 1), and every resume reached the same request and
    stopped again -- an edition no operator could finish."""
    out = tmp_path / "out"
    # Batch 01: the prompt itself is too long (single-shot, and agentic at step 1); batch 02,
    # agentic: the transcript outgrows the window from step 2 on (step 1 is answered and paid).
    server.reset(faults=[Fault("status", status=400, error_code="context_length_exceeded", error_message=CONTEXT_MESSAGE,
                               match=_batch_match("01")),
                         Fault("status", status=400, error_code="context_length_exceeded", error_message=CONTEXT_MESSAGE,
                               match=_batch_match("02", min_messages=3))])
    res = execute(small_lock, out)
    assert res.returncode == 0, res.stdout + res.stderr
    refused = [r for r in server.snapshot() if r.fault]
    assert len(refused) == 3 and len({r.digest for r in refused}) == 3  # each refused request sent once: never retried
    runs = {(r["system"], r["item"]): r for r in journal_records(out) if r["type"] == "run" and r["model"] == STUB_MODEL}
    for key in (("single-shot", "ap-batch-01"), ("agentic", "ap-batch-01"), ("agentic", "ap-batch-02")):
        assert runs[key]["outcome"] == "invalid_output", runs[key]
        assert any("context window" in (e.get("detail") or "") for e in runs[key]["events"])
        evaluation = json.loads((out / "runs" / TRIAGE / STUB_SLUG / key[0] / f"{key[1]}.r1" / "evaluation.json").read_text())
        assert evaluation["final_disposition"] == "failed"
    calls = [r for r in journal_records(out) if r["type"] == "call" and r["response"].get("invalid")]
    assert len(calls) == 3 and all(c["response"]["finish_reason"] == "context_window_exceeded" and c["attempts"] == 1
                                   and not any(c["usage"].values()) for c in calls)  # refused before generation: not billed
    assert runs[("agentic", "ap-batch-02")]["steps"] == 2  # its first step was answered
    sent = server.count
    again = execute(small_lock, out)
    assert again.returncode == 0 and server.count == sent  # the resume sends nothing: the failed runs are results
