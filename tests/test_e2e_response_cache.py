"""`lrc execute --cache DIR` end to end, against the local OpenAI-compatible stub server.

The test editions run two workloads (triage.ap-inbox and reconcile.ledger, single-shot and
agentic) on `openai/stub-model` behind `helpers.stub_server.StubServer`, beside the in-process
`lrc/baseline`. The server counts every request, so "answered from the cache" means what it
says: no request reached the provider. Variants of one plan (a changed prompt of one
workload, other prices, a sampled temperature) are compiled in throw-away projects.
"""

from __future__ import annotations

import csv
import json
import re
import shutil
import sqlite3
import subprocess
from decimal import Decimal
from pathlib import Path

import pytest

from helpers.project import (
    KEY_ENV,
    LRC,
    PROFILE,
    PER_TOKENS,
    REPO,
    STUB_MODEL,
    STUB_PRICE,
    TRIAGE,
    CompileFailed,
    journal_records,
    local_profile_yaml,
    lrc_env,
    run_lrc,
    tree,
    with_profile,
)
from helpers.stub_server import StubServer, reply_for
from support import pinned

KEY = "sk-lrc-cache-canary-93e1c0d5a7b24f18"
RECONCILE = pinned("reconcile.ledger")
N = 2
CACHE_FILE = "responses.sqlite3"
OTHER_PRICE = {"input": "3.00", "cached_input": "0.30", "output": "15.00"}


# -- the test project ----------------------------------------------------------------------

def edition_yaml(api_base: str, price: dict[str, str], sampling: str) -> str:
    return (
        "# yaml-language-server: $schema=../../schemas/edition.schema.json\n"
        "kind: edition\nid: local\nversion: 1\n"
        "title: LedgerRate response-cache test edition\n"
        "date: \"2026-11-29\"\n"
        f"standard: {pinned('ledgerrate')}\n"
        f"analysis: {pinned('lrc.analysis')}\n"
        f"workloads:\n  - {TRIAGE}\n  - {RECONCILE}\n"
        f"systems:\n  - {pinned('single-shot')}\n  - {pinned('agentic')}\n"
        "models:\n"
        f"  - id: {STUB_MODEL}\n    role: candidate\n    sampling: {sampling}\n"
        "  - id: lrc/baseline\n    role: baseline\n    sampling: {temperature: 0}\n"
        "pricing:\n"
        f"  {STUB_MODEL}:\n    currency: USD\n    per_tokens: {PER_TOKENS}\n"
        + "".join(f"    {k}: \"{v}\"\n" for k, v in price.items()) +
        "    as_of: \"2026-11-29\"\n    source: test price for the local stub server\n"
        "  lrc/baseline:\n    currency: USD\n    per_tokens: 1000000\n    input: \"0\"\n    cached_input: \"0\"\n"
        "    output: \"0\"\n    as_of: \"2026-11-29\"\n    source: embedded reference model\n"
        f"n_per_cell: {N}\nrepetitions: 1\nwindow_hours: 72\n"
        "seed:\n  policy: public\n  value: ledgerrate-demo-2026-11\n"
        "qualifying:\n  min_pass_rate: \"0.80\"\n"
        "brand: LedgerRate\nfooter: LedgerRate · response-cache test\n"
        "disclaimer: Test edition against a local stub server; not a measurement.\nerrata: []\n"
    )


def make_project(root: Path, api_base: str, price: dict[str, str] = STUB_PRICE, sampling: str = "{temperature: 0}",
                 triage_note: str | None = None) -> Path:
    """Compile a throw-away project; `triage_note` appends a sentence to triage's system prompt."""
    from lrc.compiler.pipeline import compile_project

    root.mkdir(parents=True)
    for name in ("specs", "schemas"):
        shutil.copytree(REPO / name, root / name)
    standard = root / "specs" / "standard" / "ledgerrate.yaml"
    text = standard.read_text(encoding="utf-8")
    found = re.search(r"(?m)^  n_per_cell: (\d+)", text)
    if found and N < int(found.group(1)):
        standard.write_text(text[:found.start(1)] + str(N) + text[found.end(1):], encoding="utf-8")
    if triage_note:
        prompt = root / "specs" / "workloads" / "triage.ap-inbox" / "prompts" / "system.j2"
        prompt.write_text(prompt.read_text(encoding="utf-8") + triage_note + "\n", encoding="utf-8")
    (root / "specs" / "editions" / "local.yaml").write_text(edition_yaml(api_base, price, sampling), encoding="utf-8")
    # How the stub is reached is an operating setting: the project's run profile, which
    # `run_lrc("execute", lock, ...)` passes (helpers.project.with_profile).
    (root / PROFILE).write_text(local_profile_yaml(api_base), encoding="utf-8")
    result = compile_project(root)
    if result.diagnostics.has_errors:
        raise CompileFailed("\n".join(str(d) for d in result.diagnostics.sorted()))
    return root / "generated" / "local" / "plan.lock"


def answer_reconcile(body: dict) -> bytes | None:
    """The stub's triage policy would loop on reconcile's tools: answer those requests at once with text."""
    names = {t["function"]["name"] for t in body.get("tools") or []}
    if names and "list_emails" not in names:
        return json.dumps(reply_for({**body, "tools": None}, "baseline")).encode("utf-8")
    return None


@pytest.fixture(scope="module")
def server(stub: StubServer) -> StubServer:
    stub.reset(reply_hook=answer_reconcile)
    return stub


@pytest.fixture(scope="module")
def locks(server: StubServer, tmp_path_factory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("cache-projects")
    return {
        "base": make_project(root / "base", server.api_base),
        # A bump of the edition: one workload's prompt changed, and the prices corrected.
        "bumped": make_project(root / "bumped", server.api_base, price=OTHER_PRICE,
                               triage_note="Read every email to its end before you label it."),
        "sampled": make_project(root / "sampled", server.api_base, sampling="{temperature: 0.7}"),
    }


def execute(server: StubServer, lock: Path, out: Path, *flags: str | Path) -> tuple[subprocess.CompletedProcess, int]:
    """`lrc execute` once; (the process, how many requests reached the server)."""
    server.reset(reply_hook=answer_reconcile)
    res = run_lrc("execute", lock, "--out", out, "--no-progress", *flags, env=lrc_env(KEY), timeout=300)
    assert "Traceback" not in res.stderr, res.stderr
    return res, server.count


@pytest.fixture(scope="module")
def paid(server: StubServer, locks, tmp_path_factory):
    """The base plan run once with a fresh cache: (out, cache folder, requests made)."""
    root = tmp_path_factory.mktemp("paid")
    res, count = execute(server, locks["base"], root / "out", "--cache", root / "cache")
    assert res.returncode == 0, res.stderr
    return root / "out", root / "cache", count


def copy_cache(cache: Path, to: Path) -> Path:
    shutil.copytree(cache, to)
    return to


def stub_calls(out: Path) -> list[dict]:
    return [r for r in journal_records(out) if r["type"] == "call" and f"|{STUB_MODEL}|" in r["run"]]


def cost_of(calls: list[dict], price: dict[str, str], usage_key: str | None = None) -> Decimal:
    total = Decimal(0)
    for c in calls:
        usage = c["reused"]["usage"] if usage_key == "origin" else c["usage"]
        total += sum(Decimal(usage[k]) * Decimal(price[k]) for k in ("input", "cached_input", "output"))
    return total / PER_TOKENS


def rows(cache: Path) -> list[tuple]:
    with sqlite3.connect(cache / CACHE_FILE) as db:
        return db.execute("SELECT request, slot, payload, digest, stored_at FROM responses ORDER BY request, slot").fetchall()


def readable(cache: Path, out: Path) -> int:
    """How many of the stub calls journaled in `out` the cache answers (checked as an execute would)."""
    from lrc.runtime.response_cache import ResponseCache

    summary = json.loads((out / "summary.json").read_text())
    view = ResponseCache(cache, summary["plan_digest"], summary["edition"])
    model = {"id": STUB_MODEL, "sampling": {"temperature": 0}, "price": {**STUB_PRICE, "currency": "USD", "per_tokens": PER_TOKENS}}
    try:
        hits = [view.lookup(c["request"], c["run"].split("|")[3], 1, model) for c in stub_calls(out)]
        assert view.damaged == 0
    finally:
        view.close()
    return sum(h is not None and h.response == c["response"] for h, c in zip(hits, stub_calls(out)))


def results(out: Path) -> dict[str, bytes]:
    """What a measurement is: cells and every evaluation record."""
    return {"cells.csv": (out / "cells.csv").read_bytes(), **tree(out / "runs", "evaluation.json")}


@pytest.fixture(scope="module")
def reused(server: StubServer, locks, paid, tmp_path_factory):
    """The base plan again, in a new folder, with a copy of the paid run's cache:
    (out, its cache, the process, requests made)."""
    root = tmp_path_factory.mktemp("reused")
    res, count = execute(server, locks["base"], root / "out", "--cache", copy_cache(paid[1], root / "cache"))
    assert res.returncode == 0, res.stderr
    return root / "out", root / "cache", res, count


# -- reuse ---------------------------------------------------------------------------------

def test_the_paying_run_stores_every_answered_stub_call_and_no_reference_call(paid):
    out, cache, count = paid
    calls = stub_calls(out)
    assert count == len(calls) > 0
    assert not any("reused" in c for c in calls)
    stored = rows(cache)
    assert len(stored) == len(calls)
    payloads = [json.loads(r[2]) for r in stored]
    assert all(f"|{STUB_MODEL}|" in p["origin"]["run"] for p in payloads)  # never lrc/baseline's calls
    assert {(c["request"], c["run"].split("|")[3] + "|r1") for c in calls} == {(r[0], r[1]) for r in stored}
    assert KEY not in (cache / CACHE_FILE).read_bytes().decode("latin-1")


def test_a_second_folder_of_the_same_plan_is_answered_entirely_from_the_cache(paid, reused):
    first, cache, paid_count = paid
    out, its_cache, res, count = reused
    assert count == 0, "a request reached the provider although every response was cached"
    assert results(out) == results(first)
    calls = stub_calls(out)
    assert len(calls) == paid_count and all(c["attempts"] == 0 and c["reused"]["run"] == c["run"] for c in calls)
    assert f"{paid_count} call(s) answered from the cache" in res.stderr
    # Nothing new was stored: the cache holds the same rows, byte for byte.
    assert rows(its_cache) == rows(cache)


def test_traces_and_manifests_mark_every_reused_response_with_its_origin(paid, reused):
    first, cache, _ = paid
    out = reused[0]
    origin_plan = json.loads((first / "summary.json").read_text())["plan_digest"]
    traces = tree(out / "runs", "trace.json")
    stub_traces = {k: json.loads(v) for k, v in traces.items() if "openai__stub-model" in k}
    base_traces = {k: json.loads(v) for k, v in traces.items() if "lrc__baseline" in k}
    assert stub_traces and base_traces
    for path, trace in stub_traces.items():
        assert trace["calls"] and all(c["reused"]["plan"] == origin_plan and c["reused"]["edition"] == "local.v1"
                                      and f"|{STUB_MODEL}|" in c["reused"]["run"] and c["reused"]["step"] == c["step"]
                                      and "stored_at" not in c["reused"] for c in trace["calls"]), path
        manifest = json.loads((out / "runs" / path).with_name("manifest.json").read_text())
        assert [o["plan"] for o in manifest["reused_from"]] == [origin_plan], path
    for path, trace in base_traces.items():  # the reference model is never cached
        assert all("reused" not in c for c in trace["calls"]), path
        assert "reused_from" not in json.loads((out / "runs" / path).with_name("manifest.json").read_text())
    # The paying folder's traces carry no mark.
    assert b'"reused' not in b"".join(tree(first / "runs", "*.json").values())
    # No wall clock from the cache reaches a trace or the summary.
    stamps = {r[4] for r in rows(cache)}
    written = b"".join(tree(out, "*.json").values()).decode("utf-8") + (out / "rate-card.md").read_text()
    assert not any(s in written for s in stamps)


def test_costs_stay_honest_and_the_report_counts_what_was_reused(locks, paid, reused, tmp_path):
    first, cache, paid_count = paid
    shutil.copytree(reused[0], tmp_path / "out")
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())["response_cache"]
    cost = cost_of(stub_calls(first), STUB_PRICE)
    assert summary["reused_calls"] == paid_count
    assert Decimal(summary["reused_cost_usd"]) == Decimal(summary["reused_origin_cost_usd"]) == cost > 0
    assert Decimal(summary["paid_cost_usd"]) == 0  # lrc/baseline is free; the stub model was not called
    assert summary["paid_calls"] == sum(1 for r in journal_records(first) if r["type"] == "call" and "|lrc/baseline|" in r["run"])
    assert summary["reused_from"] == [{"plan": json.loads((first / "summary.json").read_text())["plan_digest"],
                                       "edition": "local.v1", "calls": paid_count, "origin_cost_usd": summary["reused_cost_usd"]}]
    paid_summary = json.loads((first / "summary.json").read_text())["response_cache"]
    assert paid_summary["reused_calls"] == 0 and Decimal(paid_summary["paid_cost_usd"]) == cost
    card = (tmp_path / "out" / "rate-card.md").read_text()
    assert f"Response cache: {paid_count} of {paid_count + summary['paid_calls']} calls were answered" in card
    assert len(re.findall(r"\d+ reused responses \(paid originally \$", card)) == 4  # 2 workloads x 2 systems
    assert "reused" not in (first / "rate-card.md").read_text()
    # `lrc report` rebuilds the same figures from the journal alone.
    (tmp_path / "out" / "summary.json").unlink()
    rep = run_lrc("report", locks["base"], "--out", tmp_path / "out", env=lrc_env(KEY))
    assert rep.returncode == 0, rep.stderr
    assert json.loads((tmp_path / "out" / "summary.json").read_text())["response_cache"] == summary


@pytest.fixture(scope="module")
def bumped(server: StubServer, locks, paid, tmp_path_factory):
    """The bumped plan (triage's prompt changed, other prices) with a copy of the paid run's
    cache: (out, its cache, requests made)."""
    root = tmp_path_factory.mktemp("bumped")
    res, count = execute(server, locks["bumped"], root / "out", "--cache", copy_cache(paid[1], root / "cache"))
    assert res.returncode == 0, res.stderr
    return root / "out", root / "cache", count


def test_a_bump_that_changes_one_workloads_prompt_repays_only_that_workloads_calls(paid, bumped):
    first, cache, _ = paid
    out, its_cache, count = bumped
    calls = stub_calls(out)
    made = [c for c in calls if "reused" not in c]
    reused = [c for c in calls if "reused" in c]
    assert {c["run"].split("|")[0] for c in made} == {TRIAGE}
    assert {c["run"].split("|")[0] for c in reused} == {RECONCILE}
    assert count == len(made) == sum(1 for c in stub_calls(first) if c["run"].startswith(TRIAGE + "|"))
    assert len(reused) == sum(1 for c in stub_calls(first) if c["run"].startswith(RECONCILE + "|"))
    assert len(rows(its_cache)) == len(rows(cache)) + len(made)  # the new responses are stored too
    summary = json.loads((out / "summary.json").read_text())["response_cache"]
    assert summary["reused_calls"] == len(reused)


def test_reused_tokens_are_priced_at_this_editions_prices_and_their_original_cost_is_reported(paid, bumped):
    first, _, _ = paid
    out = bumped[0]
    reused = [c for c in stub_calls(out) if "reused" in c]
    here, origin = cost_of(reused, OTHER_PRICE), cost_of(reused, STUB_PRICE, usage_key="origin")
    assert origin == cost_of([c for c in stub_calls(first) if c["run"].startswith(RECONCILE + "|")], STUB_PRICE)
    assert here != origin and all(c["usage"] == c["reused"]["usage"] for c in reused)
    summary = json.loads((out / "summary.json").read_text())["response_cache"]
    assert Decimal(summary["reused_cost_usd"]) == here and Decimal(summary["reused_origin_cost_usd"]) == origin
    made = [c for c in stub_calls(out) if "reused" not in c]
    assert Decimal(summary["paid_cost_usd"]) == cost_of(made, OTHER_PRICE) > 0
    # The cells are what this edition measures: the same tokens at its own prices, as if paid here.
    with open(out / "cells.csv", encoding="utf-8") as fh:
        cells = [r for r in csv.DictReader(fh) if r["model"] == STUB_MODEL and r["workload"] == RECONCILE]
    assert sum(Decimal(r["cost_usd"]) + Decimal(r["infra_cost_usd"]) for r in cells) == here


def test_sampled_responses_are_reused_only_with_cache_sampled(server, locks, tmp_path):
    res, first = execute(server, locks["sampled"], tmp_path / "a", "--cache", tmp_path / "cache")
    assert res.returncode == 0, res.stderr
    assert first > 0 and len(rows(tmp_path / "cache")) == first  # stored all the same
    res, again = execute(server, locks["sampled"], tmp_path / "b", "--cache", tmp_path / "cache")
    assert res.returncode == 0, res.stderr
    assert again == first and not any("reused" in c for c in stub_calls(tmp_path / "b"))
    res, none = execute(server, locks["sampled"], tmp_path / "c", "--cache", tmp_path / "cache", "--cache-sampled")
    assert res.returncode == 0, res.stderr
    assert none == 0 and all("reused" in c for c in stub_calls(tmp_path / "c"))


def test_cache_sampled_without_cache_is_refused_before_anything_runs(server, locks, tmp_path):
    res, count = execute(server, locks["base"], tmp_path / "out", "--cache-sampled")
    assert res.returncode == 1 and count == 0
    assert "--cache-sampled needs --cache" in res.stderr
    assert not (tmp_path / "out").exists()


# -- hostile cache ---------------------------------------------------------------------------

DAMAGES = ("payload-edited", "not-json", "wrong-type-redigested", "cost-lowered", "moved", "blob")


def test_damaged_or_tampered_entries_are_misses_reported_once(server, locks, paid, tmp_path):
    """One entry per kind of damage; each is a miss (its call is made again), the run is
    unaffected, and one note counts them."""
    from lrc.runtime.response_cache import entry_digest

    first, cache, paid_count = paid
    copy = copy_cache(cache, tmp_path / "cache")
    stored = rows(copy)
    assert len(stored) > len(DAMAGES)
    victims, spare = stored[:len(DAMAGES)], stored[-1]
    for damage, (request, slot_, payload, old_digest, _) in zip(DAMAGES, victims):
        entry = json.loads(payload)
        new_payload, new_digest = None, None
        if damage == "payload-edited":
            entry["response"]["message"]["content"] = "tampered"
            new_payload = json.dumps(entry)
        elif damage == "not-json":
            new_payload = payload[:-7]
        elif damage == "wrong-type-redigested":  # a forger who recomputes the digest still fails the type checks
            entry["usage"]["output"] = "12"
            new_payload, new_digest = json.dumps(entry), entry_digest(json.dumps(entry))
        elif damage == "cost-lowered":  # ... and the stored cost must be its usage at its price
            entry["usage"]["output"] = 0
            new_payload, new_digest = json.dumps(entry), entry_digest(json.dumps(entry))
        elif damage == "moved":  # another request's answer under this key, digest and all
            new_payload, new_digest = spare[2], spare[3]
        elif damage == "blob":  # not text at all
            new_payload = b"\xff\xfe" + payload.encode("utf-8")
        with sqlite3.connect(copy / CACHE_FILE) as db:
            db.execute("UPDATE responses SET payload = ?, digest = ? WHERE request = ? AND slot = ?",
                       (new_payload, new_digest or old_digest, request, slot_))
    res, count = execute(server, locks["base"], tmp_path / "out", "--cache", copy)
    assert res.returncode == 0, res.stderr
    assert count == len(DAMAGES), "each damaged entry is a miss: its call is made again"
    assert results(tmp_path / "out") == results(first)
    assert res.stderr.count("damaged or tampered") == 1
    assert f"{len(DAMAGES)} damaged or tampered cache entries were ignored" in res.stderr
    made = [c for c in stub_calls(tmp_path / "out") if "reused" not in c]
    assert sorted(c["request"] for c in made) == sorted(v[0] for v in victims)


@pytest.mark.parametrize("what", ["garbage-file"])  # the other kinds: tests/test_response_cache.py
def test_a_cache_that_is_not_an_lrc_cache_is_refused_before_any_call(server, locks, tmp_path, what):
    cache = tmp_path / "cache"
    if what == "folder-is-a-file":
        cache.write_text("not a folder")
    else:
        cache.mkdir()
        if what == "garbage-file":
            (cache / CACHE_FILE).write_bytes(b"\x00garbage" * 512)
        else:
            with sqlite3.connect(cache / CACHE_FILE) as db:
                db.execute("CREATE TABLE accounts (id INTEGER PRIMARY KEY, secret TEXT)")
    res, count = execute(server, locks["base"], tmp_path / "out", "--cache", cache)
    assert res.returncode == 1, res.stderr
    assert count == 0 and "nothing was called" in res.stderr
    assert not (tmp_path / "out" / "journal.jsonl").exists()


# -- sharing ---------------------------------------------------------------------------------

@pytest.mark.slow  # two whole executes at once (plain processes, litellm imported twice); the default run keeps the one-execute cases
def test_two_concurrent_executes_share_one_cache(server, locks, paid, tmp_path):
    first, _, paid_count = paid
    server.reset(reply_hook=answer_reconcile)
    cache = tmp_path / "cache"
    procs = [subprocess.Popen([*LRC, *with_profile(["execute", locks["base"]]), "--out", str(tmp_path / name), "--no-progress",
                               "--cache", str(cache)], env=lrc_env(KEY), cwd=REPO, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) for name in ("a", "b")]
    outs = [p.communicate(timeout=300) for p in procs]
    for p, (_, err) in zip(procs, outs):
        assert p.returncode == 0, err
        assert "Traceback" not in err and "database is locked" not in err and "storing stopped" not in err
    assert paid_count <= server.count <= 2 * paid_count
    assert results(tmp_path / "a") == results(tmp_path / "b") == results(first)
    stored = rows(cache)
    assert len(stored) == paid_count and len({(r[0], r[1]) for r in stored}) == paid_count
    assert readable(cache, tmp_path / "a") == paid_count


def test_resuming_a_folder_with_cache_stores_what_it_paid_before(server, locks, paid, tmp_path):
    """A folder run without --cache feeds the cache when it is resumed with it."""
    first, _, paid_count = paid
    res, count = execute(server, locks["base"], tmp_path / "plain")
    assert res.returncode == 0 and count == paid_count
    res, count = execute(server, locks["base"], tmp_path / "plain", "--cache", tmp_path / "cache")
    assert res.returncode == 0 and count == 0
    assert f"{paid_count} response(s) stored" in res.stderr
    assert len(rows(tmp_path / "cache")) == paid_count
    assert readable(tmp_path / "cache", tmp_path / "plain") == paid_count
