"""The response cache (`runtime/response_cache.py`) in process: keys, what is reused, hostile rows and files.

The end-to-end behaviour (zero provider calls, costs, traces, concurrent executes) is in
tests/test_e2e_response_cache.py; these tests cover each rule with many variants quickly.
"""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from lrc.runtime.redact import build_redactor
from lrc.runtime.response_cache import FILE_NAME, CacheError, ResponseCache, deterministic, entry_digest

PLAN_A = "sha256:" + "a" * 64
PLAN_B = "sha256:" + "b" * 64
PRICE = {"currency": "USD", "per_tokens": 1000000, "input": "1.25", "cached_input": "0.125", "output": "10.00",
         "as_of": "2026-11-29", "source": "test"}
PRICE_REASONING = {**PRICE, "reasoning": "20.00"}
MODEL = {"id": "openai/m", "role": "candidate", "sampling": {"temperature": 0}, "price": PRICE}


def request(n: int) -> str:
    return "sha256:" + f"{n:064x}"


def call(n: int, content: str = "ok", usage: dict | None = None, **response) -> dict:
    return {"type": "call", "run": f"w.v1|openai/m|single-shot|I{n}|r1", "step": 1, "request": request(n),
            "response": {"message": {"role": "assistant", "content": content}, "finish_reason": "stop", "refusal": False,
                         **response},
            "usage": usage or {"input": 100, "cached_input": 20, "cache_write": 0, "output": 30, "reasoning": 0},
            "attempts": 2, "response_model": "m-2026", "infra_failures": [], "latency_ms": 5}


def fill(folder: Path, calls: list[tuple[dict, str, int]], model: dict = MODEL, **kw) -> ResponseCache:
    cache = ResponseCache(folder, PLAN_A, "local.v1", **kw)
    for rec, item, rep in calls:
        cache.store(rec, item, rep, model)
    cache.close()
    return cache


def rows(folder: Path) -> list[tuple]:
    with sqlite3.connect(folder / FILE_NAME) as db:
        return db.execute("SELECT request, slot, payload, digest, stored_at FROM responses ORDER BY request").fetchall()


# -- what is keyed, what is reused ---------------------------------------------------------------

@pytest.mark.parametrize("sampling, expected", [
    ({"temperature": 0}, True), ({"temperature": 0.0}, True), ({"temperature": 0, "top_p": 1}, True),
    ({}, False), (None, False), ({"top_p": 0.1}, False), ({"temperature": 0.7}, False), ({"temperature": 1}, False),
    ({"temperature": False}, False), ({"temperature": "0"}, False), ({"temperature": None}, False),
])
def test_only_temperature_zero_is_deterministic(sampling, expected):
    assert deterministic(sampling) is expected


def test_a_stored_response_answers_the_same_request_in_the_same_item_and_repetition_only(tmp_path):
    fill(tmp_path, [(call(1), "I1", 1), (call(2, "two"), "I2", 1)])
    cache = ResponseCache(tmp_path, PLAN_B, "local.v2")
    hit = cache.lookup(request(1), "I1", 1, MODEL)
    assert hit is not None and hit.response["message"]["content"] == "ok"
    assert hit.origin == {"plan": PLAN_A, "edition": "local.v1", "run": "w.v1|openai/m|single-shot|I1|r1", "step": 1}
    assert hit.usage == hit.origin_usage == call(1)["usage"] and hit.response_model == "m-2026"
    assert hit.origin_cost_usd == "0.0004275"  # (80 x 1.25 + 20 x 0.125 + 30 x 10) / 1e6
    for miss in [(request(1), "I1", 2),  # another repetition: an independent sample
                 (request(1), "I2", 1),  # the same request for another item
                 (request(3), "I1", 1)]:  # another request
        assert cache.lookup(*miss, MODEL) is None
    fields = hit.journal_fields()
    assert fields["attempts"] == 0 and fields["latency_ms"] == 0 and fields["infra_failures"] == []
    assert fields["reused"]["plan"] == PLAN_A and fields["reused"]["cost_usd"] == "0.0004275" and fields["reused"]["stored_at"]
    assert cache.hits == 1 and cache.damaged == 0
    cache.close()


def test_refusals_and_invalid_responses_are_results_and_are_cached(tmp_path):
    refusal = call(1, None, usage={"input": 0, "cached_input": 0, "cache_write": 0, "output": 0, "reasoning": 0}, refusal=True)
    refusal["response"]["finish_reason"] = "content_filter"
    invalid = call(2, None, invalid="the response could not be read: ValueError")
    invalid["response"]["finish_reason"] = "invalid_response"
    fill(tmp_path, [(refusal, "I1", 1), (invalid, "I2", 1)])
    cache = ResponseCache(tmp_path, PLAN_B, "local.v2")
    assert cache.lookup(request(1), "I1", 1, MODEL).response["refusal"] is True
    assert cache.lookup(request(2), "I2", 1, MODEL).response["invalid"].startswith("the response could not be read")
    cache.close()


def test_reference_models_are_never_stored_nor_answered(tmp_path):
    reference = {**MODEL, "id": "lrc/oracle", "reference": True}
    fill(tmp_path, [(call(1), "I1", 1)], model=reference)
    assert rows(tmp_path) == []
    fill(tmp_path, [(call(1), "I1", 1)])
    cache = ResponseCache(tmp_path, PLAN_B, "local.v2")
    assert cache.lookup(request(1), "I1", 1, reference) is None and cache.lookups == 0
    cache.close()


@pytest.mark.parametrize("sampling", [{"temperature": 0.7}, {}, {"top_p": 0.5}])
def test_sampled_responses_are_stored_but_reused_only_with_cache_sampled(tmp_path, sampling):
    model = {**MODEL, "sampling": sampling}
    fill(tmp_path, [(call(1), "I1", 1)], model=model)
    assert len(rows(tmp_path)) == 1
    plain = ResponseCache(tmp_path, PLAN_B, "local.v2")
    assert plain.lookup(request(1), "I1", 1, model) is None
    plain.close()
    sampled = ResponseCache(tmp_path, PLAN_B, "local.v2", sampled=True)
    assert sampled.lookup(request(1), "I1", 1, model) is not None
    sampled.close()


def test_usage_is_split_as_this_lock_prices_it(tmp_path):
    usage = {"input": 100, "cached_input": 0, "cache_write": 0, "output": 30, "reasoning": 12}
    billed = {**MODEL, "price": PRICE_REASONING}
    fill(tmp_path, [(call(1, usage=usage), "I1", 1)], model=billed)
    cache = ResponseCache(tmp_path, PLAN_B, "local.v2")
    assert cache.lookup(request(1), "I1", 1, billed).usage == usage
    # Billed apart there, inside output here: the same tokens, folded.
    folded = cache.lookup(request(1), "I1", 1, MODEL)
    assert folded.usage == {**usage, "output": 42, "reasoning": 0} and folded.origin_usage == usage
    assert folded.origin_cost_usd == "0.000665"  # at the origin's price: 100 x 1.25 + 30 x 10 + 12 x 20
    cache.close()
    # Folded into output there, billed apart here: the split is unknown, so the call is made.
    other = tmp_path / "other"
    fill(other, [(call(1, usage={**usage, "output": 42, "reasoning": 0}), "I1", 1)])
    cache = ResponseCache(other, PLAN_B, "local.v2")
    assert cache.lookup(request(1), "I1", 1, billed) is None and cache.unsplittable == 1 and cache.damaged == 0
    assert any("reasoning" in line for line in cache.report())
    cache.close()


# -- hostile rows --------------------------------------------------------------------------------

def _edit(entry: dict, path: str, value) -> dict:
    *parents, last = path.split(".")
    node = entry
    for p in parents:
        node = node[int(p)] if isinstance(node, list) else node[p]
    if value is _DELETE:
        del node[last]
    else:
        node[last] = value
    return entry


_DELETE = object()
DEEP = json.loads("[" * 70 + "]" * 70)
#: (name, field path, forged value): each is re-digested, as a forger who knows the scheme would.
FORGERIES = [
    ("extra field", "x", 1),
    ("missing field", "price", _DELETE),
    ("format", "format", 2),
    ("role", "response.message.role", "user"),
    ("content type", "response.message.content", ["a"]),
    ("tool call shape", "response.message.tool_calls", [{"id": 1, "type": "function", "function": {"name": "f", "arguments": "{}"}}]),
    ("empty tool calls", "response.message.tool_calls", []),
    ("refusal type", "response.refusal", "no"),
    ("finish type", "response.finish_reason", 3),
    ("invalid type", "response.invalid", True),
    ("usage string", "usage.output", "30"),
    ("usage bool", "usage.input", True),
    ("usage negative", "usage.output", -1),
    ("usage unknown class", "usage.bonus", 1),
    ("usage float", "usage.output", 30.0),
    ("cost lowered", "cost_usd", "0"),
    ("cost not a number", "cost_usd", "cheap"),
    ("cost float", "cost_usd", 0.0004275),
    ("price without output", "price.output", _DELETE),
    ("price float", "price.input", 1.25),
    ("reasoning flag", "reasoning_billed", True),
    ("origin plan", "origin.plan", "not-a-digest"),
    ("origin step", "origin.step", "1"),
    ("origin extra", "origin.where", "/tmp"),
    ("other request", "request", request(9)),
    ("other slot", "slot", "I1|r2"),
    ("too deep", "response.message.content", DEEP),
    ("model type", "response_model", 5),
]


@pytest.mark.parametrize("name, path, value", FORGERIES, ids=[f[0] for f in FORGERIES])
def test_a_forged_entry_with_a_matching_digest_is_still_a_miss(tmp_path, name, path, value):
    fill(tmp_path, [(call(1), "I1", 1)])
    (req, slot_, payload, _, _), = rows(tmp_path)
    entry = _edit(json.loads(payload), path, value)
    forged_digest = entry_digest(json.dumps(entry))
    with sqlite3.connect(tmp_path / FILE_NAME) as db:
        db.execute("UPDATE responses SET payload = ?, digest = ?", (json.dumps(entry), forged_digest))
    cache = ResponseCache(tmp_path, PLAN_B, "local.v2")
    assert cache.lookup(req, "I1", 1, MODEL) is None
    assert cache.damaged == 1 and cache.hits == 0
    lines = cache.report()
    assert len([line for line in lines if "damaged or tampered" in line]) == 1
    cache.close()


def _forged(text: str, stamp: str) -> tuple:
    """A damaged text under its own digest, as a forger would store it: the limits must catch it."""
    return text, entry_digest(text), stamp


RAW_DAMAGE = [
    ("digest mismatch", lambda p, d, s: (p.replace('"ok"', '"OK"'), d, s)),
    ("digest of other text", lambda p, d, s: (p, entry_digest(p + " "), s)),
    ("truncated JSON", lambda p, d, s: _forged(p[:-3], s)),
    ("not UTF-8 text", lambda p, d, s: (b"\xff" + p.encode(), d, s)),
    ("a blob of the right text", lambda p, d, s: (p.encode(), d, s)),
    ("integer payload", lambda p, d, s: (7, d, s)),
    ("not an object", lambda p, d, s: _forged("[1, 2]", s)),
    ("NaN", lambda p, d, s: _forged(p.replace('"ok"', "NaN"), s)),
    ("huge number", lambda p, d, s: _forged(p.replace('"ok"', "9" * 500), s)),
    ("oversized", lambda p, d, s: _forged(p.replace('"ok"', '"' + "x" * 1_100_000 + '"'), s)),
    ("nested past the limit", lambda p, d, s: _forged(p.replace('"ok"', "[" * 5000 + "]" * 5000), s)),
    ("digest blob", lambda p, d, s: (p, d.encode(), s)),
    ("time stamp", lambda p, d, s: (p, d, "yesterday")),
    ("time stamp integer", lambda p, d, s: (p, d, 1764374400)),
]


@pytest.mark.parametrize("name, damage", RAW_DAMAGE, ids=[d[0] for d in RAW_DAMAGE])
def test_a_damaged_row_is_a_miss_never_an_error(tmp_path, name, damage):
    fill(tmp_path, [(call(1), "I1", 1), (call(2), "I2", 1)])
    (req, slot_, payload, dig, stamp), second = rows(tmp_path)
    with sqlite3.connect(tmp_path / FILE_NAME) as db:
        db.execute("UPDATE responses SET payload = ?, digest = ?, stored_at = ? WHERE request = ?", (*damage(payload, dig, stamp), req))
    cache = ResponseCache(tmp_path, PLAN_B, "local.v2")
    for _ in range(3):
        assert cache.lookup(req, "I1", 1, MODEL) is None
    assert cache.lookup(second[0], "I2", 1, MODEL) is not None  # the healthy row is still used
    assert cache.damaged == 3
    assert len([line for line in cache.report() if "damaged or tampered" in line]) == 1
    cache.close()


# -- hostile or unusable files -----------------------------------------------------------------

def _garbage(folder: Path) -> None:
    folder.mkdir()
    (folder / FILE_NAME).write_bytes(b"SQLite format 3\x00" + b"\x07" * 4000)


def _other_db(folder: Path) -> None:
    folder.mkdir()
    with sqlite3.connect(folder / FILE_NAME) as db:
        db.execute("CREATE TABLE notes (x TEXT)")


def _trigger(folder: Path) -> None:
    fill(folder, [(call(1), "I1", 1)])
    with sqlite3.connect(folder / FILE_NAME) as db:
        db.execute("CREATE TRIGGER t AFTER INSERT ON responses BEGIN DELETE FROM responses; END")


def _other_format(folder: Path) -> None:
    fill(folder, [(call(1), "I1", 1)])
    with sqlite3.connect(folder / FILE_NAME) as db:
        db.execute("PRAGMA user_version = 99")


def _other_schema(folder: Path) -> None:
    folder.mkdir()
    with sqlite3.connect(folder / FILE_NAME) as db:
        db.execute("CREATE TABLE responses (request TEXT, slot TEXT, payload TEXT, digest TEXT, stored_at TEXT)")
        db.execute("PRAGMA user_version = 1")


def _a_file(folder: Path) -> None:
    folder.write_text("a file where the folder should be")


@pytest.mark.parametrize("make", [_garbage, _other_db, _trigger, _other_format, _other_schema, _a_file])
def test_a_file_that_is_not_an_lrc_cache_is_refused(tmp_path, make):
    folder = tmp_path / "cache"
    make(folder)
    before = {p.name: p.read_bytes() for p in folder.iterdir()} if folder.is_dir() else None
    with pytest.raises(CacheError) as raised:
        ResponseCache(folder, PLAN_B, "local.v2")
    assert str(folder) in str(raised.value)
    if before is not None:  # refused without changing what is there
        assert {p.name: p.read_bytes() for p in folder.iterdir() if p.name == FILE_NAME} == {FILE_NAME: before[FILE_NAME]}


def test_no_api_key_is_written_to_the_cache(tmp_path):
    secret = "sk-cache-secret-5d1e9a7c3b"
    redact = build_redactor({"OPENAI_API_KEY": secret})
    echoed = call(1, f"your key {secret} and its piece {secret[:12]}")
    echoed["response"]["message"]["tool_calls"] = [{"id": "c1", "type": "function",
                                                    "function": {"name": "f", "arguments": json.dumps({"k": secret})}}]
    fill(tmp_path, [(echoed, "I1", 1)], redact=redact)
    for path in tmp_path.iterdir():
        assert secret.encode() not in path.read_bytes() and secret[:12].encode() not in path.read_bytes(), path
    cache = ResponseCache(tmp_path, PLAN_B, "local.v2")
    hit = cache.lookup(request(1), "I1", 1, MODEL)
    assert "[REDACTED:OPENAI_API_KEY]" in hit.response["message"]["content"]
    cache.close()


@pytest.mark.parametrize("content", ["accents é, 漢字 and emoji 🧾", "nul \x00 byte", "an escaped pair \\ud83e\\uddfe is text"])
def test_any_text_a_model_sent_is_stored_and_read_back_exactly(tmp_path, content):
    fill(tmp_path, [(call(1, content), "I1", 1)])
    cache = ResponseCache(tmp_path, PLAN_B, "local.v2")
    hit = cache.lookup(request(1), "I1", 1, MODEL)
    assert hit is not None and hit.response["message"]["content"] == content
    cache.close()


def test_a_reply_beyond_the_limits_is_not_stored_and_nothing_fails(tmp_path):
    cache = fill(tmp_path, [(call(1, "x" * 1_100_000), "I1", 1), (call(2), "I2", 1)])
    assert [r[1] for r in rows(tmp_path)] == ["I2|r1"]
    assert cache.write_error is None and cache.unstored == 1
    assert any("not stored" in line for line in cache.report())


# -- writing -------------------------------------------------------------------------------------

def test_storing_never_waits_for_the_database(tmp_path):
    """While another process holds the database locked, `store` still returns at once; the
    writer thread commits the entries when the lock is released."""
    cache = ResponseCache(tmp_path, PLAN_A, "local.v1")
    holder = sqlite3.connect(tmp_path / FILE_NAME, isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")
    for n in range(20):
        cache.store(call(n), f"I{n}", 1, MODEL)
    assert cache.stored == 0  # nothing could be written yet, and nothing blocked
    holder.execute("ROLLBACK")
    holder.close()
    cache.close()
    assert cache.stored == 20 and len(rows(tmp_path)) == 20


def test_a_failing_write_stops_storing_with_one_message_and_no_error(tmp_path):
    cache = ResponseCache(tmp_path, PLAN_A, "local.v1")
    with sqlite3.connect(tmp_path / FILE_NAME) as db:
        db.execute("DROP TABLE responses")
    for n in range(5):
        cache.store(call(n), f"I{n}", 1, MODEL)
    cache.close()
    assert cache.write_error is not None and cache.stored == 0
    assert len([line for line in cache.report() if "storing stopped" in line]) == 1


def test_an_entry_is_stored_once_whoever_pays_for_it(tmp_path):
    fill(tmp_path, [(call(1, "first"), "I1", 1)])
    cache = ResponseCache(tmp_path, PLAN_B, "local.v2")
    cache.store(call(1, "second"), "I1", 1, MODEL)
    cache.store({**call(2), "reused": {"plan": PLAN_A}}, "I2", 1, MODEL)  # a reused call is not stored again
    cache.close()
    (row,) = rows(tmp_path)
    assert json.loads(row[2])["response"]["message"]["content"] == "first"
    assert json.loads(row[2])["origin"]["plan"] == PLAN_A


_WRITER = """
import sys
from pathlib import Path
sys.path.insert(0, {tests!r})
from test_response_cache import MODEL, call
from lrc.runtime.response_cache import ResponseCache
cache = ResponseCache(Path({folder!r}), "sha256:" + {tag!r} * 64, "local.v1")
for n in range(300):
    cache.store(call(n, {tag!r}), f"I{{n}}", 1, MODEL)
cache.close()
assert cache.write_error is None, cache.write_error
print(cache.stored)
"""


def test_several_processes_write_one_cache_at_once(tmp_path):
    procs = [subprocess.Popen([sys.executable, "-c", _WRITER.format(tests=str(Path(__file__).parent), folder=str(tmp_path), tag=tag)],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for tag in "abcd"]
    outs = [p.communicate(timeout=300) for p in procs]
    for p, (out, err) in zip(procs, outs):
        assert p.returncode == 0, err
    assert sum(int(out) for out, _ in outs) == 300  # each entry stored by exactly one of them
    stored = rows(tmp_path)
    assert len(stored) == 300 and len({r[0] for r in stored}) == 300
    cache = ResponseCache(tmp_path, PLAN_B, "local.v2")
    assert all(cache.lookup(request(n), f"I{n}", 1, MODEL) is not None for n in range(300)) and cache.damaged == 0
    cache.close()


class _Busy:
    """A connection whose switch to WAL finds the file locked `times` times (another process
    creating the same fresh cache: SQLite answers at once, without its busy handler)."""

    def __init__(self, times: int, error: str = "database is locked"):
        self.times, self.error, self.tries = times, error, 0

    def execute(self, sql: str):
        assert sql == "PRAGMA journal_mode = WAL"
        self.tries += 1
        if self.tries <= self.times:
            raise sqlite3.OperationalError(self.error)
        return self

    def fetchone(self):
        return ("wal",)


def test_the_switch_to_wal_waits_for_another_process_instead_of_failing(tmp_path):
    cache = ResponseCache(tmp_path, PLAN_B, "local.v2")
    try:
        busy = _Busy(5)
        assert cache._to_wal(busy) == ("wal",) and busy.tries == 6
        with pytest.raises(sqlite3.OperationalError, match="disk I/O"):  # not a lock: never waited for
            cache._to_wal(_Busy(1, "disk I/O error"))
    finally:
        cache.close()


# -- the options ---------------------------------------------------------------------------------

@pytest.mark.parametrize("request_, expected", [
    ({}, (None, False)),
    ({"cache_dir": None, "cache_sampled": False}, (None, False)),
    ({"cache_dir": Path("c")}, (Path("c"), False)),
    ({"cache_dir": "c", "cache_sampled": True}, (Path("c"), True)),
])
def test_the_cache_options_come_from_the_request(request_, expected):
    from lrc.runtime.operate import from_request

    options = from_request(request_)
    assert (options.cache_dir, options.cache_sampled) == expected
    assert not options.partial  # a cache changes which calls are paid, never which runs are made


def test_cache_sampled_without_a_cache_is_an_options_error():
    from lrc.runtime.operate import OptionsError, from_request

    with pytest.raises(OptionsError, match="--cache-sampled needs --cache"):
        from_request({"cache_sampled": True})


# -- found by a probe of hostile caches (2026-12-07): consistent entries lrc could not have stored ----

def _reforge(folder: Path, change) -> tuple[str, str]:
    """Rewrite the one row as a forger who knows the scheme would: the change applied, the cost
    recomputed at the stored price, the digest recomputed. (request, slot) of the row."""
    from lrc.runtime.pricing import call_cost, decimal_str

    (req, slot_, payload, _, _), = rows(folder)
    entry = json.loads(payload)
    change(entry)
    entry["cost_usd"] = decimal_str(call_cost(entry["usage"], entry["price"]))
    text = json.dumps(entry)
    with sqlite3.connect(folder / FILE_NAME) as db:
        db.execute("UPDATE responses SET payload = ?, digest = ?", (text, entry_digest(text)))
    return req, slot_


@pytest.mark.parametrize("name, change", [
    # journaled, it made the folder unreadable: the journal refuses usage over the adapter's bound
    ("usage beyond one call", lambda e: e["usage"].update(output=2_000_000_000)),
    # reused into an agentic run, the next request's digest failed on it (exit 70, on every resume)
    ("raw lone surrogate", lambda e: e["response"]["message"].update(content="ok\ud800")),
    ("escaped lone surrogate", lambda e: e["response"]["message"].update(content='{"a": "\\ud800"}')),
    ("surrogate in tool arguments", lambda e: e["response"]["message"].update(
        tool_calls=[{"id": "c1", "type": "function", "function": {"name": "f", "arguments": '{"a": "\\udc00"}'}}])),
    # its origin cost made the rate card's "paid originally" line an internal error
    ("huge stored price", lambda e: e["price"].update(input="1E+900000")),
])
def test_a_consistent_entry_lrc_could_not_have_stored_is_a_miss(tmp_path, name, change):
    fill(tmp_path, [(call(1), "I1", 1)])
    req, _ = _reforge(tmp_path, change)
    cache = ResponseCache(tmp_path, PLAN_B, "local.v2")
    assert cache.lookup(req, "I1", 1, MODEL) is None
    assert cache.damaged == 1 and cache.hits == 0
    cache.close()


def test_a_stored_response_using_a_token_class_this_edition_does_not_price_is_not_reused(tmp_path):
    """A genuine entry of an edition that priced cache writes, looked up by one that does not:
    reused, its tokens could not be priced here (exit 70 on every report). A miss, said once."""
    origin_model = {**MODEL, "price": {**PRICE, "cache_write": "3.75"}}
    fill(tmp_path, [(call(1, usage={"input": 100, "cached_input": 0, "cache_write": 10, "output": 30, "reasoning": 0}), "I1", 1)],
         model=origin_model)
    cache = ResponseCache(tmp_path, PLAN_B, "local.v2")
    assert cache.lookup(request(1), "I1", 1, MODEL) is None
    assert cache.unpriceable == 1 and cache.damaged == 0
    assert any("token class this edition does not price" in line for line in cache.report())
    assert cache.lookup(request(1), "I1", 1, origin_model) is not None  # an edition that prices it reuses it
    cache.close()


def test_every_response_not_stored_after_storing_stopped_is_counted(tmp_path):
    cache = ResponseCache(tmp_path, PLAN_A, "local.v1")
    with sqlite3.connect(tmp_path / FILE_NAME) as db:
        db.execute("DROP TABLE responses")
    cache.store(call(0), "I0", 1, MODEL)
    cache.close()
    assert cache.write_error is not None
    # Storing stopped (as when the database turned read-only): each later paid call is counted.
    cache = ResponseCache(tmp_path / "again", PLAN_A, "local.v1")
    cache.write_error = "attempt to write a readonly database"
    for n in range(6):
        cache.store(call(n), f"I{n}", 1, MODEL)
    cache.close()
    assert cache.unstored == 6
    assert any("6 response(s) were not stored" in line for line in cache.report())


def test_a_damaged_row_is_replaced_by_the_response_paid_in_its_place(tmp_path):
    fill(tmp_path, [(call(1), "I1", 1), (call(2), "I2", 1)])
    with sqlite3.connect(tmp_path / FILE_NAME) as db:
        db.execute("UPDATE responses SET digest = 'sha256:0' WHERE request = ?", (request(1),))
    cache = ResponseCache(tmp_path, PLAN_B, "local.v2")
    assert cache.lookup(request(1), "I1", 1, MODEL) is None and cache.damaged == 1
    cache.store(call(1, content="paid again"), "I1", 1, MODEL)  # the call made in its place
    cache.store(call(2, content="another answer"), "I2", 1, MODEL)  # a healthy row is never replaced
    cache.close()
    assert cache.replaced == 1 and any("1 damaged entry was replaced" in line for line in cache.report())
    again = ResponseCache(tmp_path, PLAN_B, "local.v3")
    assert again.lookup(request(1), "I1", 1, MODEL).response["message"]["content"] == "paid again"
    assert again.lookup(request(2), "I2", 1, MODEL).response["message"]["content"] == "ok"
    assert again.damaged == 0
    again.close()


def test_a_reused_call_journaled_by_an_earlier_execute_costs_the_budget_nothing():
    """The folder's earlier calls count as spent, except those answered from the cache (paid by
    the folder they came from): a resume under --budget refused work a fresh execute did."""
    from decimal import Decimal
    from types import SimpleNamespace

    from lrc.runtime.budget import Budget

    model = {**MODEL, "sampling": {"temperature": 0, "max_tokens": 100}}
    plan = {"models": {"openai/m": model}}
    paid, reused = call(1), {**call(2), "attempts": 0, "reused": {"plan": PLAN_A, "edition": "e", "run": "r", "step": 1}}
    journal = SimpleNamespace(calls={(paid["run"], 1): paid, (reused["run"].replace("I1", "I2"), 1): reused}, judges={})
    budget = Budget(Decimal("1"), plan, journal)
    from lrc.runtime.pricing import call_cost

    assert budget.earlier == call_cost(paid["usage"], PRICE)
