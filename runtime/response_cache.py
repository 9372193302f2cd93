"""`lrc execute --cache DIR`: a content-addressed response cache shared across output folders and plans.

A journal belongs to one plan, so every bump (a prompt fix, an erratum) would make the next
run pay again for cells whose requests did not change. The cache answers such requests
without a provider call. It is opt-in, lives in one SQLite file (`DIR/responses.sqlite3`,
WAL mode, several `lrc execute` processes may share it at once), and is outside the lock's
guarantees: everything read from it is checked like a provider's reply.

What is keyed: the request digest the journal records for every call (model id, sampling,
messages, tools -- exactly what is sent), within one *sample slot*, the item id and the
repetition index. Repetitions are independent samples (pass^k measures how often a model
agrees with itself), so repetition r is only ever answered by a response paid for repetition
r of the same item, and identical requests of different items are never merged into one
sample.

What is stored: every answered call of a real model -- a normal reply, a refusal and an
unreadable ("invalid") response alike. Refusals and invalid responses are the model's
results (graded, never retried, DESIGN §4): asking again after a bump until the model
answers would be retrying model failures by the back door. Never stored: infrastructure
failures and excluded runs (they produced no answer), and calls of the embedded reference
models (`lrc/...`: free, in-process, and their code is fingerprinted by the lock while the
request digest is not -- a cached oracle answer could hide a changed oracle).

What is reused: only for deterministic sampling, `temperature` given and equal to 0. A model
whose sampling sets `temperature > 0`, or sets no temperature at all (the provider's default,
usually 1, applies), is sampled: its stored responses are reused only with
`--cache-sampled`.

Costs stay honest (`Hit.journal_fields`): a reused call is journaled with the origin's usage,
so the measurement's tokens, cost and CPO are exactly those the call would have had -- the
cache never makes a cell cheaper. Its cost in the measurement is those tokens at *this*
lock's frozen prices (the edition's price table is part of what it measures; a result must
not depend on an operating setting such as the cache); what the origin paid (its usage at its
own frozen prices) travels with the call under `reused` and is reported beside what this
folder paid to providers. The one case where the origin's usage cannot be priced here is
refused as a miss: the origin's price billed no separate reasoning tokens (so its usage
folded them into output) and this lock's price does.

Hostile input: a row is used only if its digest matches its payload text, the text is bounded
JSON (`boundedjson`, the limits of a provider reply), it was written for this request and
slot, every field has its type, and its stored cost is its usage at its stored price.
Anything else is a miss (the call is made and paid), counted and reported once per execute,
never an internal error. A file that is not an lrc response cache (not SQLite, other tables,
triggers, another format) is refused before any call. The digest detects damage, not a
forger: whoever can write the cache can recompute it and feed a run well-formed answers, so
a cache is shared only among those who trust each other, and every reused call names its
origin (plan, run, step) for an audit against the origin's journal. Entries are redacted
like the journal (`redact`) before they are written.

Writes never block the event loop: entries go to a writer thread that commits them in
batches (`synchronous=NORMAL`: a crash may lose the last batch -- such calls are simply
paid again by the next folder; the same folder resumes from its journal, which is
authoritative, and stores its journaled calls again on resume). Lookups are primary-key reads
on the loop thread (WAL readers do not wait for writers).
"""

from __future__ import annotations

import queue
import re
import sqlite3
import threading
import time
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping

from lrc.runtime import boundedjson
from lrc.runtime.journal import MAX_TOKENS
from lrc.runtime.lock.canonical import digest_bytes
from lrc.runtime.pricing import TOKEN_CLASSES, PricingError, call_cost, decimal_str
from lrc.runtime.redact import redact_value

CACHE_FORMAT = 1
FILE_NAME = "responses.sqlite3"
_ENTRY_KIND = "lrc-response-cache-entry"
_TABLE_SQL = ("CREATE TABLE responses (request TEXT NOT NULL, slot TEXT NOT NULL, payload TEXT NOT NULL, "
              "digest TEXT NOT NULL, stored_at TEXT NOT NULL, PRIMARY KEY (request, slot)) WITHOUT ROWID")
_BUSY_MS = 30_000
_BATCH = 512
_CLOSE_WAIT_SECONDS = 120

_DIGEST = re.compile(r"sha256:[0-9a-f]{64}")
_STAMP = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ")
_MAX_ENTRY_CHARS = 64 << 20
"""The longest payload read: a reply's body is at most 32 MiB (`bounded_http`), so a longer entry
was never stored by lrc and is a miss before its digest is computed (a 400 MB row cost seconds
of the event loop's thread)."""
_MAX_CALL_USD = Decimal(10) ** 6
"""The most one stored call may have cost: far above any frozen price times the largest usage
lrc journals, and small enough that every figure derived from it prints (a stored price of
1E+900000 made the rate card's "paid originally" line an internal error)."""
_MESSAGE_KEYS = {"role", "content", "tool_calls"}
_RESPONSE_KEYS = {"message", "finish_reason", "refusal", "invalid"}
_PAYLOAD_KEYS = {"format", "request", "slot", "response", "usage", "reasoning_billed", "price", "cost_usd",
                 "response_model", "origin"}


class CacheError(Exception):
    """The cache folder cannot be used (not a cache, unreadable, unwritable): nothing was run."""


class _Damaged(Exception):
    """A row that cannot be trusted: treated as a miss."""


def deterministic(sampling: Mapping[str, Any] | None) -> bool:
    """Is this sampling deterministic (temperature given and 0)? No temperature means the
    provider's default, which samples."""
    t = (sampling or {}).get("temperature")
    return isinstance(t, (int, float)) and not isinstance(t, bool) and t == 0


def slot(item_id: str, repetition: int) -> str:
    """The sample a response belongs to: one item, one repetition."""
    return f"{item_id}|r{repetition}"


@dataclass(frozen=True)
class Hit:
    """A stored response that answers a request, with what it cost where it was paid."""

    response: dict[str, Any]
    usage: dict[str, int]  # the origin's tokens, in this lock's token classes
    response_model: str | None
    origin: dict[str, Any]  # plan, edition, run, step of the call that paid for it
    origin_usage: dict[str, int]
    origin_cost_usd: str  # the origin's usage at the origin's frozen price
    stored_at: str

    def journal_fields(self) -> dict[str, Any]:
        """The fields of the journal's call record (beside type, run, step and request): the
        response and its usage like any call; no attempt was made (`attempts` 0, no latency);
        `reused` says where the response was paid and what it cost there. `stored_at` is the
        one wall-clock value; it stays in the journal and never reaches a trace or a figure."""
        return {"response": self.response, "usage": self.usage, "attempts": 0, "response_model": self.response_model,
                "infra_failures": [], "latency_ms": 0,
                "reused": {**self.origin, "usage": self.origin_usage, "cost_usd": self.origin_cost_usd,
                           "stored_at": self.stored_at}}


def _usage_here(usage: dict[str, int], origin_billed: bool, here_billed: bool) -> dict[str, int] | None:
    """The origin's usage in this lock's token classes; None if it cannot be split here."""
    if origin_billed == here_billed:
        return dict(usage)
    if origin_billed:  # reasoning billed apart there, inside output here
        return {**usage, "output": usage["output"] + usage["reasoning"], "reasoning": 0}
    return None  # folded into output there: how much of it was reasoning is unknown


def _check(cond: bool, reason: str) -> None:
    if not cond:
        raise _Damaged(reason)


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _check_message(message: Any) -> None:
    _check(isinstance(message, dict) and set(message) <= _MESSAGE_KEYS, "the message is not an assistant message")
    _check(message.get("role") == "assistant", "the message's role is not assistant")
    _check(message.get("content") is None or isinstance(message.get("content"), str), "the message's content is not text")
    calls = message.get("tool_calls")
    if "tool_calls" in message:
        _check(isinstance(calls, list) and calls, "tool_calls is not a list of calls")
        for c in calls:
            fn = c.get("function") if isinstance(c, dict) else None
            _check(isinstance(c, dict) and set(c) == {"id", "type", "function"} and isinstance(c["id"], str)
                   and c["type"] == "function" and isinstance(fn, dict) and set(fn) == {"name", "arguments"}
                   and isinstance(fn["name"], str) and isinstance(fn["arguments"], str), "a tool call has the wrong shape")


def _surrogate_free(message: Mapping[str, Any]) -> bool:
    """Whether the message's text holds no lone surrogate, raw or as a JSON escape -- the check a
    live reply passes (`adapter.lone_surrogate`, on its content and each tool call's id, name and
    arguments). A live reply holding one is the model's invalid output and never reaches the
    journal, so never the cache; an entry holding one was not stored by lrc, and reused it ended
    the next request's digest in an error on every resume of the folder."""
    from lrc.runtime.models.adapter import lone_surrogate

    texts = [message.get("content") or ""]
    for c in message.get("tool_calls") or []:
        texts += [c["id"], c["function"]["name"], c["function"]["arguments"]]
    return all(lone_surrogate(t) is None for t in texts)


def entry_digest(text: str) -> str:
    """The digest a row keeps of its payload text (checked before the text is parsed)."""
    return digest_bytes(_ENTRY_KIND, text.encode("utf-8", "surrogatepass"))


def _decode(request: str, slot_: str, raw_payload: Any, raw_digest: Any, stored_at: Any) -> dict[str, Any]:
    """The row's payload, if it can be trusted; else `_Damaged`."""
    _check(isinstance(raw_payload, str), "the entry is not text")
    _check(len(raw_payload) <= _MAX_ENTRY_CHARS, "the entry is longer than any reply lrc stores")
    _check(isinstance(raw_digest, str) and raw_digest == entry_digest(raw_payload), "the entry's digest does not match its content")
    try:
        payload = boundedjson.loads(raw_payload)
    except boundedjson.Unparseable as exc:
        raise _Damaged(f"the entry is not bounded JSON ({exc})") from None
    _check(isinstance(payload, dict), "the entry is not an object")
    _check(isinstance(stored_at, str) and bool(_STAMP.fullmatch(stored_at)), "the entry's time stamp is malformed")
    _check(set(payload) == _PAYLOAD_KEYS, "the entry's fields are not a cache entry's")
    _check(payload["format"] == CACHE_FORMAT, "the entry is of another format")
    _check(payload["request"] == request and payload["slot"] == slot_, "the entry was stored for another request")
    response = payload["response"]
    _check(isinstance(response, dict) and {"message", "finish_reason", "refusal"} <= set(response) <= _RESPONSE_KEYS,
           "the response's fields are wrong")
    _check_message(response["message"])
    _check(_surrogate_free(response["message"]), "the response holds a lone surrogate (not Unicode text)")
    _check(response["finish_reason"] is None or isinstance(response["finish_reason"], str), "finish_reason is not text")
    _check(isinstance(response["refusal"], bool), "refusal is not a boolean")
    _check("invalid" not in response or isinstance(response["invalid"], str), "invalid is not text")
    usage = payload["usage"]
    _check(isinstance(usage, dict) and set(usage) == set(TOKEN_CLASSES)
           and all(_is_int(v) and 0 <= v <= MAX_TOKENS for v in usage.values()), "the usage is not token counts "
           "(zero to the most one call can use)")
    _check(isinstance(payload["reasoning_billed"], bool), "reasoning_billed is not a boolean")
    _check(payload["response_model"] is None or isinstance(payload["response_model"], str), "response_model is not text")
    origin = payload["origin"]
    _check(isinstance(origin, dict) and set(origin) == {"plan", "edition", "run", "step"}
           and isinstance(origin["plan"], str) and bool(_DIGEST.fullmatch(origin["plan"]))
           and isinstance(origin["edition"], str) and isinstance(origin["run"], str)
           and _is_int(origin["step"]) and origin["step"] >= 0, "the origin is malformed")
    price = payload["price"]
    _check(isinstance(price, dict), "the price is not an object")
    _check(("reasoning" in price) == payload["reasoning_billed"], "reasoning_billed disagrees with the price")
    try:
        cost = Decimal(payload["cost_usd"]) if isinstance(payload["cost_usd"], str) else None
        _check(cost is not None and cost.is_finite() and 0 <= cost <= _MAX_CALL_USD and cost == call_cost(usage, price),
               "the stored cost is not the usage at the stored price, or beyond what one call can cost")
    except (InvalidOperation, PricingError) as exc:
        raise _Damaged(f"the stored cost cannot be checked ({exc})") from None
    return payload


class ResponseCache:
    """One execute's view of the cache folder: lookups on the calling thread, writes in batches
    on a writer thread. `plan_digest`/`edition` name this execute's plan (the origin of what it
    stores); `sampled` is `--cache-sampled`."""

    def __init__(self, folder: Path, plan_digest: str, edition: str, sampled: bool = False,
                 redact: Callable[[str], str] = lambda s: s):
        self.folder = folder
        self.path = folder / FILE_NAME
        self.plan_digest = plan_digest
        self.edition = edition
        self.sampled = sampled
        self.redact = redact
        self.lookups = 0
        self.hits = 0
        self.stored = 0
        self.unsplittable = 0
        self.unpriceable = 0  # stored responses using a token class this lock does not price
        self.replaced = 0  # damaged rows replaced by the response paid in their place
        self._damaged_keys: set[tuple[str, str]] = set()  # (request, slot) of rows found damaged at a lookup
        self.damaged = 0
        self.first_damage: str | None = None
        self.write_error: str | None = None
        self.unstored = 0
        self._queue: queue.Queue = queue.Queue()
        self._writer: threading.Thread | None = None
        self._count_lock = threading.Lock()
        if folder.exists() and not folder.is_dir():
            raise CacheError(f"--cache {folder} is a file, not a folder")
        self._reader: sqlite3.Connection | None = None
        try:
            folder.mkdir(parents=True, exist_ok=True)
            self._reader = self._connect()
            self._prepare(self._reader)
            self._reader.execute("PRAGMA query_only = ON")
        except BaseException as exc:
            if self._reader is not None:
                self._reader.close()
            if isinstance(exc, (sqlite3.Error, OSError)):
                raise self._refusal(exc) from exc
            raise

    def _refusal(self, exc: BaseException) -> CacheError:
        if isinstance(exc, sqlite3.Error):
            return CacheError(f"{self.path} cannot be used as a response cache ({exc}); "
                              f"remove it or pass another --cache folder")
        where = f" ({exc.filename})" if getattr(exc, "filename", None) else ""
        return CacheError(f"cannot use {self.folder} as the response cache folder: {getattr(exc, 'strerror', None) or exc}{where}")

    # -- the file ------------------------------------------------------------------------------

    def _connect(self) -> sqlite3.Connection:
        conn = sqlite3.connect(self.path, timeout=_BUSY_MS / 1000, isolation_level=None, check_same_thread=False)
        conn.execute(f"PRAGMA busy_timeout = {_BUSY_MS}")
        conn.execute("PRAGMA trusted_schema = OFF")  # a hostile file's schema runs no functions
        conn.execute("PRAGMA cell_size_check = ON")
        return conn

    def _prepare(self, conn: sqlite3.Connection) -> None:
        """Check (or, when empty, create) the file's one table, in WAL mode. A file that is not
        an lrc response cache is refused before anything in it is changed."""
        self._check_schema(conn)
        mode = self._to_wal(conn)
        if not mode or str(mode[0]).lower() != "wal":
            raise CacheError(f"{self.path}: SQLite could not switch to WAL mode (got {mode and mode[0]}); "
                             f"the cache must be on a local file system")
        conn.execute("PRAGMA synchronous = NORMAL")
        conn.execute("BEGIN IMMEDIATE")
        try:
            if self._check_schema(conn) == "empty":  # checked again: another execute may have created it meanwhile
                conn.execute(_TABLE_SQL)
                conn.execute(f"PRAGMA user_version = {CACHE_FORMAT}")
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise

    def _to_wal(self, conn: sqlite3.Connection) -> Any:
        """`PRAGMA journal_mode = WAL`, waiting for other processes as long as the busy timeout.

        Why a loop: SQLite does not call the busy handler for the switch of a new file's journal
        mode, so several executes opening one fresh cache at once got "database is locked" at
        once instead of waiting (tests/test_response_cache.py, four writers)."""
        deadline = time.monotonic() + _BUSY_MS / 1000
        while True:
            try:
                return conn.execute("PRAGMA journal_mode = WAL").fetchone()
            except sqlite3.OperationalError as exc:
                if "locked" not in str(exc) and "busy" not in str(exc) or time.monotonic() >= deadline:
                    raise
                time.sleep(0.01)

    def _check_schema(self, conn: sqlite3.Connection) -> str:
        """"empty" (a new file), "ok" (an lrc response cache of this format), else CacheError."""
        objects = conn.execute("SELECT type, name, sql FROM sqlite_master ORDER BY name").fetchall()
        version = conn.execute("PRAGMA user_version").fetchone()[0]
        if not objects and version == 0:
            return "empty"
        if version == CACHE_FORMAT and len(objects) == 1 and \
                (objects[0][0], objects[0][1], " ".join(str(objects[0][2]).split())) == ("table", "responses", _TABLE_SQL):
            return "ok"
        raise CacheError(f"{self.path} is not an lrc response cache of format {CACHE_FORMAT} "
                         f"(user_version {version}, objects {[o[1] for o in objects]}); remove it or pass another --cache folder")

    # -- reading -------------------------------------------------------------------------------

    def reusable(self, model: Mapping[str, Any]) -> bool:
        """May this model's calls be answered from the cache?"""
        return not model.get("reference") and (self.sampled or deterministic(model.get("sampling")))

    def lookup(self, request: str, item_id: str, repetition: int, model: Mapping[str, Any]) -> Hit | None:
        """The stored response to this request in this sample slot, or None (a miss)."""
        if not self.reusable(model):
            return None
        key = slot(item_id, repetition)
        self.lookups += 1
        try:
            row = self._reader.execute("SELECT payload, digest, stored_at FROM responses WHERE request = ? AND slot = ?",
                                       (request, key)).fetchone()
        except sqlite3.Error as exc:
            self._damage(f"the lookup failed ({exc})")
            return None
        if row is None:
            return None
        try:
            payload = _decode(request, key, *row)
        except _Damaged as exc:
            self._damage(str(exc), (request, key))
            return None
        except (ValueError, TypeError, KeyError, AttributeError, ArithmeticError, RecursionError) as exc:
            self._damage(f"the entry cannot be read ({type(exc).__name__})", (request, key))
            return None
        usage = _usage_here(payload["usage"], payload["reasoning_billed"], "reasoning" in model["price"])
        if usage is None:
            self.unsplittable += 1
            return None
        try:  # every token class it used must be one this edition prices (a live reply's check, split_usage)
            call_cost(usage, model["price"])
        except (PricingError, InvalidOperation):
            self.unpriceable += 1
            return None
        self.hits += 1
        return Hit(response=payload["response"], usage=usage, response_model=payload["response_model"],
                   origin=payload["origin"], origin_usage=payload["usage"], origin_cost_usd=payload["cost_usd"],
                   stored_at=row[2])

    def _damage(self, reason: str, key: tuple[str, str] | None = None) -> None:
        self.damaged += 1
        if self.first_damage is None:
            self.first_damage = reason
        if key is not None:  # the response paid in its place replaces it (`_write_loop`)
            with self._count_lock:
                self._damaged_keys.add(key)

    # -- writing -------------------------------------------------------------------------------

    def store(self, record: Mapping[str, Any], item_id: str, repetition: int, model: Mapping[str, Any]) -> None:
        """Queue one journaled, paid call (a `call` record of this execute's plan) for storing."""
        if model.get("reference") or record.get("reused"):
            return
        if self.write_error is not None:  # storing stopped: counted, so the report says how many were not stored
            with self._count_lock:
                self.unstored += 1
            return
        if self._writer is None:
            self._writer = threading.Thread(target=self._write_loop, name="lrc-response-cache", daemon=True)
            self._writer.start()
        self._queue.put((record, slot(item_id, repetition), model))

    def store_journaled(self, calls: Iterable[Mapping[str, Any]], runs: Mapping[str, Any], models: Mapping[str, Any]) -> None:
        """Queue every paid call an earlier execute journaled in this folder (with or without
        --cache); the ones already stored are left as they are."""
        for rec in calls:
            spec = runs.get(rec.get("run"))
            if spec is not None:
                self.store(rec, spec.item_id, spec.repetition, models[spec.model])

    def _entry(self, record: Mapping[str, Any], slot_: str, model: Mapping[str, Any]) -> tuple[str, str, str, str] | None:
        price = model["price"]
        response = {k: record["response"][k] for k in ("message", "finish_reason", "refusal", "invalid") if k in record["response"]}
        payload = {"format": CACHE_FORMAT, "request": record["request"], "slot": slot_, "response": response,
                   "usage": {k: int(record["usage"].get(k, 0)) for k in TOKEN_CLASSES},
                   "reasoning_billed": "reasoning" in price, "price": dict(price),
                   "cost_usd": decimal_str(call_cost(record["usage"], price)),
                   "response_model": record.get("response_model"),
                   "origin": {"plan": self.plan_digest, "edition": self.edition, "run": record["run"], "step": record["step"]}}
        plain = boundedjson.dumps(payload, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
        if self.redact(plain) != plain:  # redact the strings, so the entry stays valid JSON
            payload = redact_value(payload, self.redact)
        # Stored as ASCII: a lone surrogate a model sent stays an escape, never text SQLite cannot encode.
        text = boundedjson.dumps(payload, sort_keys=True, ensure_ascii=True, separators=(",", ":"))
        stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())  # only in the cache row
        text_digest = entry_digest(text)
        try:
            _decode(record["request"], slot_, text, text_digest, stamp)
        except _Damaged:
            return None  # it would not read back (a reply beyond the limits): not worth storing
        return record["request"], slot_, text, text_digest, stamp

    def _write_loop(self) -> None:
        conn: sqlite3.Connection | None = None
        done = False
        while not done:
            batch = [self._queue.get()]
            while len(batch) < _BATCH:
                try:
                    batch.append(self._queue.get_nowait())
                except queue.Empty:
                    break
            if batch[-1] is None or None in batch:
                done = True
                batch = [b for b in batch if b is not None]
            if not batch:
                continue
            if self.write_error is not None:
                self.unstored += len(batch)
                continue
            try:
                rows = []
                for record, slot_, model in batch:
                    try:
                        row = self._entry(record, slot_, model)
                    except Exception:  # noqa: BLE001 - an entry that cannot be built is not stored, never a crash
                        row = None
                    if row is not None:
                        rows.append(row)
                    else:
                        self.unstored += 1
                if conn is None:
                    conn = self._connect()
                with self._count_lock:
                    damaged = set(self._damaged_keys)
                # A row found damaged at a lookup is replaced by the response paid in its place
                # (else it stayed, and its call was paid again on every run); any other row that
                # exists is kept as it is: the first response stored for a request is the cache's.
                replace = [r for r in rows if (r[0], r[1]) in damaged]
                keep = [r for r in rows if (r[0], r[1]) not in damaged]
                conn.execute("BEGIN IMMEDIATE")
                try:
                    before = conn.total_changes
                    conn.executemany("INSERT OR IGNORE INTO responses (request, slot, payload, digest, stored_at) "
                                     "VALUES (?, ?, ?, ?, ?)", keep)
                    conn.executemany("INSERT OR REPLACE INTO responses (request, slot, payload, digest, stored_at) "
                                     "VALUES (?, ?, ?, ?, ?)", replace)
                    added = conn.total_changes - before
                    conn.execute("COMMIT")
                except BaseException:
                    conn.execute("ROLLBACK")
                    raise
                with self._count_lock:
                    self.stored += added
                    self.replaced += len(replace)
                    self._damaged_keys -= {(r[0], r[1]) for r in replace}
            except Exception as exc:  # noqa: BLE001 - the journal has every response: storing stops, the run goes on
                self.write_error = f"{type(exc).__name__}: {exc}" if not isinstance(exc, sqlite3.Error) else str(exc)
                self.unstored += len(batch)
        if conn is not None:
            conn.close()

    def close(self) -> None:
        """Write what is queued, then release the file."""
        if self._writer is not None:
            self._queue.put(None)
            self._writer.join(timeout=_CLOSE_WAIT_SECONDS)
            if self._writer.is_alive():
                self.write_error = self.write_error or f"the writer did not finish within {_CLOSE_WAIT_SECONDS}s"
            self._writer = None
        if self._reader is not None:
            self._reader.close()
            self._reader = None

    def report(self) -> list[str]:
        """What the operator should hear after the execute (one line each; none if it was not used)."""
        if not (self.lookups or self.stored or self.unstored or self.write_error):
            return []
        lines = [f"response cache {self.folder}: {self.hits} call(s) answered from the cache, {self.stored} response(s) stored"]
        if self.replaced:
            lines.append(f"  {self.replaced} damaged entr{'y was' if self.replaced == 1 else 'ies were'} replaced by the "
                         f"response paid in {'its' if self.replaced == 1 else 'their'} place")
        if self.unpriceable:
            lines.append(f"  {self.unpriceable} stored response(s) were not reused: they used a token class this edition does "
                         f"not price (the calls were made)")
        if self.unsplittable:
            lines.append(f"  {self.unsplittable} stored response(s) were not reused: their origin's price folded reasoning tokens "
                         f"into output and this edition prices them apart (the calls were made)")
        if self.damaged:
            lines.append(f"  {self.damaged} damaged or tampered cache entr{'y was' if self.damaged == 1 else 'ies were'} "
                         f"ignored (the calls were made); first: {self.first_damage}")
        if self.unstored and self.write_error is None:
            lines.append(f"  {self.unstored} response(s) were not stored (beyond the limits of a reply, or unreadable)")
        if self.write_error is not None:
            lines.append(f"  storing stopped: {self.write_error}; {self.unstored} response(s) were not stored "
                         f"(the journal has them; the next execute of this folder stores them)")
        return lines
