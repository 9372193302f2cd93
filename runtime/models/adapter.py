"""Every model call goes through here, and through litellm.

litellm is imported only by this module (and the reference provider), only when a plan
runs, and always offline-safe: the cost map is the bundled one and no tokenizer is fetched.
Retries are ours (`num_retries=0`, `max_retries=0` for the provider SDK) so infrastructure
errors and model failures stay apart: 429, 5xx, timeouts and connection errors are retried
with backoff and counted; a content-policy refusal is a model result; authentication, bad
requests and unknown models abort the run as configuration problems. When and how often a
call is retried, how many run at once, and when a run or a model is given up are decided by
`infra` (`ModelLane`, `RunBudget`, `InfraSettings`); none of it changes what is sent.
"""

from __future__ import annotations

import asyncio
import errno
import gc
import json
import os
import re
import sys
import time
from dataclasses import dataclass, field
from typing import Any, Callable

from lrc.runtime.models import infra
from lrc.runtime.models.infra import AdaptiveLimiter, InfraSettings, ModelLane, RunBudget  # noqa: F401 - re-exported
from lrc.runtime.models.offline import OFFLINE_ENV

_litellm: Any = None


def load_litellm() -> Any:
    """Import litellm once, offline-safe, with the reference provider registered."""
    global _litellm
    if _litellm is not None:
        return _litellm
    for key, value in OFFLINE_ENV.items():
        os.environ[key] = value  # again, in case a caller changed them after import
    import logging

    import litellm

    litellm.suppress_debug_info = True
    litellm.drop_params = False
    litellm.telemetry = False
    _trim_per_call_path(litellm)
    from lrc.runtime.models import bounded_http  # imports httpx: only with litellm, never on the report's path

    bounded_http.install(litellm)  # a provider's response holds at most MAX_RESPONSE_BYTES
    for name in ("LiteLLM", "LiteLLM Router", "LiteLLM Proxy", "httpx"):
        logging.getLogger(name).setLevel(logging.ERROR)
    from lrc.runtime.models import reference

    reference.register(litellm)
    # litellm and what it imports are ~480,000 objects that live as long as the process; moved
    # out of the collector's generations (gc.freeze), no later collection walks them again: a
    # fresh `lrc execute` of 400 stub runs took 16.2 -> 13.5 s of CPU (issue 11 §4, 3 pairs).
    # What is frozen is never collected, so only what exists now is: the imports, the lock.
    gc.freeze()
    _litellm = litellm
    return litellm


def _trim_per_call_path(litellm: Any) -> None:
    """Turn off what litellm does on every call that lrc never reads.

    Measured on a loopback server (benchmarks/throughput.py; /tmp micro-benchmark of 400
    calls at concurrency 16, 2 busy cores): ~11 ms CPU per call with litellm's defaults,
    ~6-7 ms with the two changes below. What lrc records is untouched: usage, finish_reason,
    the message and its tool calls and the response's model come from the response object;
    errors, their classes, status codes and Retry-After come from the exception litellm maps
    and raises (`exception_type`), which happens before and apart from any logging handler.

    - Cost: litellm prices every response (`Logging.response_cost_calculator`, called from
      `set_hidden_params` and again from the success handler), ~1-2 ms per call. lrc never reads
      `response_cost` -- cost is usage x the lock's frozen prices, in Decimal (DESIGN §9) -- so it
      returns None (what litellm itself returns for a model it has no price for).
    - Success and failure logging: with no callback configured litellm still builds its
      "standard logging payload" per call (in a thread pool for the sync handler, on the event
      loop for the async one), ~3 ms per call, competing for the GIL with the event loop. lrc
      configures no callback (`litellm.callbacks`, `success_callback`, ... stay empty), so the
      four handlers become no-ops.
    Kept as is: the transport -- litellm's default aiohttp transport measured cheaper than
    httpx (`disable_aiohttp_transport = True`: +3 ms per call); litellm's response cache is
    off by default (`litellm.cache is None`); retries are already ours (`num_retries=0`).
    If a litellm release renames these methods, nothing is patched and calls cost what they
    cost by default."""
    try:
        from litellm.litellm_core_utils.litellm_logging import Logging
    except ImportError:  # pragma: no cover - another release: keep its defaults
        return

    def no_cost(self: Any, *args: Any, **kwargs: Any) -> None:
        return None

    def no_log(self: Any, *args: Any, **kwargs: Any) -> None:
        return None

    async def no_log_async(self: Any, *args: Any, **kwargs: Any) -> None:
        return None

    for name, replacement in (("response_cost_calculator", no_cost), ("success_handler", no_log),
                              ("failure_handler", no_log), ("async_success_handler", no_log_async),
                              ("async_failure_handler", no_log_async)):
        if callable(getattr(Logging, name, None)):
            setattr(Logging, name, replacement)


class ConfigError(Exception):
    """A problem no retry can fix: bad key, unknown model, a request the provider rejects."""


@dataclass
class InfraFailure:
    kind: str
    status: int | None  # an HTTP status or a provider's error code: a whole number, never true/false
    message: str
    # What the provider billed for this failed attempt (a generation that failed mid-answer);
    # None when nothing was billed. A call that then succeeded holds it in its usage already; a
    # call that ran out of retries has no usage, so the report prices the exclusion's `billed`.
    billed: dict[str, int] | None = None

    def record(self) -> dict[str, Any]:
        """The failure as the journal holds it (`journal.failure_problem` checks that shape)."""
        rec: dict[str, Any] = {"kind": self.kind, "status": self.status, "message": self.message}
        if self.billed:
            rec["billed"] = dict(self.billed)
        return rec


class InfraExhausted(Exception):
    """Infrastructure errors outlasted every retry; the run is excluded, not graded."""

    def __init__(self, failures: list[InfraFailure]):
        super().__init__(f"{len(failures)} infrastructure failure(s); last: {failures[-1].kind}: {failures[-1].message}")
        self.failures = failures

    def billed(self) -> dict[str, int]:
        """What the provider billed for the failed attempts (generations that failed mid-answer):
        paid although the call ran out of retries (`--budget` settles it, the report prices it)."""
        total: dict[str, int] = {}
        for failure in self.failures:
            total = _add_usage(total, failure.billed or {})
        return total


@dataclass
class CallResult:
    message: dict[str, Any]
    finish_reason: str | None
    refusal: bool
    usage: dict[str, int]
    attempts: int
    failures: list[InfraFailure] = field(default_factory=list)
    latency_ms: int = 0  # the provider's: the last attempt, from sending the request to its answer
    queue_ms: int = 0  # waiting for a concurrency slot, summed over the attempts (not in latency_ms)
    response_model: str | None = None
    invalid: str | None = None  # the response arrived but could not be read: the model's invalid output


_NO_USAGE = {"input": 0, "cached_input": 0, "cache_write": 0, "output": 0, "reasoning": 0}
# Exceptions of the transport or of an HTTP status: the response did not arrive (an outage).
_TRANSPORT_PACKAGES = frozenset({"openai", "httpx", "httpcore", "aiohttp", "anyio", "h11", "ssl", "socket"})
# Exceptions of decoding or validating a response that did arrive.
_DECODING = (ValueError, RecursionError, TypeError, KeyError, IndexError, AttributeError, UnicodeError)
_UNREADABLE_TEXT = ("Invalid response object", "Empty or invalid response", "LiteLLM: provider returned")


def _cause_chain(exc: BaseException) -> list[BaseException]:
    """`exc` and its causes (at most 32; a cycle ends it)."""
    chain: list[BaseException] = []
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen and len(chain) < 32:
        seen.add(id(current))
        chain.append(current)
        current = current.__cause__ or current.__context__
    return chain


def _redirect_in(exc: BaseException) -> Any:
    """The RedirectRefused in `exc`'s cause chain (the SDK reports it as a connection error), or None."""
    bounded = sys.modules.get("lrc.runtime.models.bounded_http")
    if bounded is None:
        return None
    return next((e for e in _cause_chain(exc) if isinstance(e, bounded.RedirectRefused)), None)


def unreadable_response(exc: BaseException) -> bool:
    """Did a response arrive that could not be read (the model's output, not an outage)?

    litellm reports a 200 response it cannot convert (tool-call arguments nested 5,000 deep,
    an integer of 5,000 digits, content of the wrong type, no choices, a body that is not
    JSON) as a 500 "InternalServerError". What tells it apart from a real 5xx or a dropped
    connection is its cause chain: a real outage carries an exception of the transport or of
    an HTTP status (openai, httpx, aiohttp...); an unreadable response only exceptions of
    decoding and validating.
    """
    chain = _cause_chain(exc)
    # Imported with litellm (load_litellm); before that no response was read, so none was too large.
    bounded = sys.modules.get("lrc.runtime.models.bounded_http")
    if bounded is not None and any(isinstance(e, bounded.ResponseTooLarge) for e in chain):
        return True  # it arrived, too large to read: the same request would fetch it again
    for e in chain:
        if type(e).__module__.split(".")[0] in _TRANSPORT_PACKAGES or isinstance(e, (ConnectionError, TimeoutError, asyncio.TimeoutError)):
            return False
    status = getattr(exc, "status_code", None)
    if isinstance(status, int) and status != 500:
        return False
    return any(isinstance(e, _DECODING) or type(e).__name__ == "ValidationError" for e in chain) or \
        any(marker in str(e)[:2000] for e in chain for marker in _UNREADABLE_TEXT)


_CONNECT_TYPES = frozenset({"ConnectError", "ClientConnectorError", "ClientConnectorDNSError", "ClientConnectorSSLError",
                            "ClientConnectorCertificateError", "ConnectionRefusedError", "gaierror"})
_CONNECT_ERRNOS = frozenset(getattr(errno, n) for n in ("ECONNREFUSED", "EHOSTUNREACH", "ENETUNREACH", "EADDRNOTAVAIL", "EHOSTDOWN")
                            if hasattr(errno, n))


def unreachable(exc: BaseException | None) -> str | None:
    """Why no connection could be made at all (refused, unknown host, unreachable network),
    from the exception's cause chain; None for anything else -- a 5xx, a 429, a timeout
    (connect timeouts included: they have their own rule) or a connection dropped mid-answer."""
    chain: list[BaseException] = []
    seen: set[int] = set()
    current = exc
    while current is not None and id(current) not in seen and len(chain) < 32:
        seen.add(id(current))
        chain.append(current)
        current = current.__cause__ or current.__context__
    if any(isinstance(e, (TimeoutError, asyncio.TimeoutError)) or "Timeout" in type(e).__name__ for e in chain):
        return None
    found = [e for e in chain if type(e).__name__ in _CONNECT_TYPES
             or (isinstance(e, OSError) and getattr(e, "errno", None) in _CONNECT_ERRNOS)]
    if not found:
        return None
    detail = str(found[-1]) or type(found[-1]).__name__  # the innermost cause words it best
    return " ".join(detail.split())[:200]


class InfraStopped(InfraExhausted):
    """A call given up before its retries ran out: its run's deadline passed, its model was
    stopped (hung, or past its deadline), or --budget cannot hold a retry of a billed attempt.
    The run is excluded like an exhausted one."""

    def __init__(self, reason: str, message: str, failures: list[InfraFailure]):
        Exception.__init__(self, message)
        self.failures = failures
        self.reason = reason  # "run-deadline" | "model-stopped" | "budget-reached"


def _classify(exc: Exception, litellm: Any) -> tuple[str, InfraFailure | None, bool]:
    """('infra'|'refusal'|'invalid'|'context'|'config', failure, is_rate_limit).

    'context' is the provider refusing a request longer than the model's context window (an
    agentic transcript that grew past it, or a prompt a small model cannot hold): the model's
    limit, so its run's result, never retried -- as a configuration problem it stopped the
    whole execute, and every resume reached the same request and stopped again."""
    ex = litellm.exceptions
    status = getattr(exc, "status_code", None)
    redirect = _redirect_in(exc)
    if redirect is not None:  # the endpoint's configuration: the same answer on every attempt
        return "config", InfraFailure("Redirect", redirect.status, str(redirect)), False
    message = str(exc).splitlines()[0][:300] if str(exc) else type(exc).__name__
    failure = InfraFailure(type(exc).__name__, status if isinstance(status, int) and not isinstance(status, bool) else None,
                           message)
    if isinstance(exc, ex.RateLimitError):
        return "infra", failure, True
    if unreadable_response(exc):
        return "invalid", failure, False
    if isinstance(exc, getattr(ex, "ContextWindowExceededError", ())):
        return "context", failure, False
    if isinstance(exc, getattr(ex, "ContentPolicyViolationError", ())):
        return "refusal", failure, False
    infra_types = tuple(t for t in (getattr(ex, n, None) for n in (
        "Timeout", "APIConnectionError", "InternalServerError", "ServiceUnavailableError", "BadGatewayError")) if t)
    if isinstance(exc, infra_types) or isinstance(exc, (asyncio.TimeoutError, ConnectionError)):
        return "infra", failure, False
    if isinstance(exc, getattr(ex, "APIError", ())) and isinstance(status, int) and status >= 500:
        return "infra", failure, False
    if isinstance(exc, getattr(ex, "APIError", ())) and status is not None and not isinstance(status, int):
        # an error object in a 200 body whose code is a word ("server_error"): litellm passes the
        # word on as the status. No HTTP status says it is the request's fault, so it is retried
        # and counted like a 5xx (as a configuration error it had stopped the whole execute).
        return "infra", failure, False
    return "config", failure, False


#: More tokens than any model reads or writes in one call: a count above it is not a usage figure
#: (and 10**400 tokens would overflow the report's exact money arithmetic).
MAX_TOKENS_PER_CALL = 1_000_000_000


def _tokens(value: Any, field: str) -> int:
    """One token count of the provider's usage: a whole number, zero or more (absent: 0), at
    most `MAX_TOKENS_PER_CALL`. Anything else -- negative, fractional, text, a boolean, an
    absurd size -- is refused, never truncated or clamped: a count lrc made up would be a price
    it made up."""
    if value is None:
        return 0
    if isinstance(value, float) and value.is_integer() and abs(value) <= MAX_TOKENS_PER_CALL:
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ConfigError(f"the provider reported {field} = {str(value)[:40]!r}, not a whole number of tokens (zero or more): "
                          f"the call's cost cannot be computed, and lrc never guesses it")
    if value > MAX_TOKENS_PER_CALL:
        raise ConfigError(f"the provider reported {field} = {str(value)[:20]}... ({len(str(value))} digits), more than "
                          f"{MAX_TOKENS_PER_CALL:,} tokens in one call, which no model reads or writes: the call's cost "
                          f"cannot be computed, and lrc never guesses it" if value >= 10 ** 20 else
                          f"the provider reported {field} = {value:,}, more than {MAX_TOKENS_PER_CALL:,} tokens in one call, "
                          f"which no model reads or writes: the call's cost cannot be computed, and lrc never guesses it")
    return value


def _usage_refused(model_id: str, at: str, problem: Exception) -> "ConfigError":
    """The execute's stop for a reply whose usage cannot be priced (`check_raw_usage`,
    `billed_usage`, `split_usage`): a configuration error, raised before anything of the call is
    journaled, so the same command resumes once the endpoint reports its usage."""
    return ConfigError(f"{model_id}{at}: {problem}. Nothing journaled is lost: once the endpoint reports its usage, "
                       f"the same command resumes")


def split_usage(usage: Any, price: dict[str, Any]) -> dict[str, int]:
    """Provider usage -> our token classes (input, cached_input, cache_write, output, reasoning).

    A ConfigError (the execute stops; nothing journaled is lost) when the usage is missing or
    cannot be a count: litellm turns a response without `usage` into zero tokens, which would
    price the call at $0 -- and no request is sent without prompt tokens, so zero prompt tokens
    (cached and cache writes included) means the provider reported none."""
    if usage is None:
        raise ConfigError("the provider returned no token usage; cost cannot be computed")
    u = usage.model_dump() if hasattr(usage, "model_dump") else dict(usage)
    prompt = _tokens(u.get("prompt_tokens"), "prompt_tokens")
    completion = _tokens(u.get("completion_tokens"), "completion_tokens")
    details = u.get("prompt_tokens_details") or {}
    cached = _tokens(details.get("cached_tokens") if isinstance(details, dict) else None, "prompt_tokens_details.cached_tokens")
    cache_write = _tokens(u.get("cache_creation_input_tokens"), "cache_creation_input_tokens")
    cdetails = u.get("completion_tokens_details") or {}
    reasoning = _tokens(cdetails.get("reasoning_tokens") if isinstance(cdetails, dict) else None,
                        "completion_tokens_details.reasoning_tokens")
    if prompt + cached + cache_write == 0:
        raise ConfigError("the provider reported no prompt tokens (its response has no usage, or zero): the call's cost "
                          "cannot be computed, and lrc never counts a call as $0")
    # OpenAI's usage (and litellm's, for every provider it maps) counts cached and cache-write
    # tokens inside prompt_tokens, and reasoning inside completion_tokens; a provider that
    # reports more of them than the total can only be counting them apart, so they are not
    # taken out of it (taken out and clamped at 0, the uncached input or the visible output
    # was dropped from the cost; unclamped, the output went negative and the report crashed).
    apart = cached + cache_write > prompt
    separate_reasoning = "reasoning" in price
    reasoning_apart = separate_reasoning and reasoning > completion
    split = {
        "input": prompt if apart else prompt - cached - cache_write,
        "cached_input": cached,
        "cache_write": cache_write,
        "output": completion if reasoning_apart or not separate_reasoning else completion - reasoning,
        "reasoning": reasoning if separate_reasoning else 0,
    }
    # A class the provider billed that the edition gives no price: refused here, at the first
    # such reply, before anything is journaled -- priced later, it stopped `lrc execute` and every
    # `lrc report` of the folder with an internal error after all the calls were paid (vLLM,
    # DeepSeek and OpenRouter report prefix-cache hits; an unknown provider needs only input and
    # output prices at compile time). Never $0, never a guess (DESIGN: unknown prices are errors).
    unpriced = [f"{tokens:,} {cls} tokens" for cls, tokens in split.items() if tokens and cls not in price]
    if unpriced:
        raise ConfigError(f"the provider billed {', '.join(unpriced)}, and the edition has no price for that class: the "
                          f"call's cost cannot be computed, and lrc never counts tokens as $0 -- give the class an explicit "
                          f"price in the edition's pricing (\"0\" if it is free) and bump the edition")
    return split


#: Token counts read from the provider's body as it sent it (`raw_reply`): OpenAI's names, and the
#: input/output names of the providers litellm maps from theirs.
_RAW_COUNTS = (("prompt_tokens",), ("completion_tokens",), ("prompt_tokens_details", "cached_tokens"),
               ("completion_tokens_details", "reasoning_tokens"), ("cache_creation_input_tokens",),
               ("cache_read_input_tokens",), ("input_tokens",), ("output_tokens",))


def raw_reply(body: bytes | bytearray | None) -> dict[str, Any] | None:
    """The provider's answer as it sent it -- a JSON object -- or None when there is none to read
    (no HTTP body: an in-process model; or not a JSON object lrc's parser takes, which litellm
    then judges alone). Read only for the fields litellm rewrites (`check_raw_usage`,
    `generation_error`); everything else comes from litellm's reading."""
    if not body:
        return None
    try:
        doc = json.loads(bytes(body))
    except (ValueError, RecursionError, UnicodeError):
        return None
    return doc if isinstance(doc, dict) else None


def check_raw_usage(doc: dict[str, Any]) -> None:
    """ConfigError if the usage the provider sent is not a set of counts lrc can price.

    Why here, before litellm's reading: litellm converts usage on the way -- `completion_tokens:
    true` became 1 token, a missing or null `completion_tokens` 0 (the output priced at $0),
    `"30"` 30, and 233.5, NaN or 1e300 made the whole reply "invalid" (graded as the model's
    failure, at $0). Each count present must be a whole number, zero or more (`_tokens`), and a
    usage that gives the input must give the output too."""
    usage = doc.get("usage")
    if not isinstance(usage, dict):
        return  # none at all: split_usage refuses litellm's empty reading of it
    for path in _RAW_COUNTS:
        value: Any = usage
        for part in path:
            value = value.get(part) if isinstance(value, dict) else None
        _tokens(value, ".".join(path))
    for given, missing in (("prompt_tokens", "completion_tokens"), ("input_tokens", "output_tokens")):
        if given in usage and usage.get(missing) is None:
            raise ConfigError(f"the provider reported {given} but no {missing}: the output's cost cannot be computed, "
                              f"and lrc never counts it as $0")


def generation_error(doc: dict[str, Any]) -> tuple[str, int | None] | None:
    """(what the provider said, its code if a number) when the provider reports that the
    generation itself failed -- `finish_reason: "error"` or an `error` object in the choice
    (OpenRouter, when the model's upstream provider fails mid-answer) -- else None.

    Why: litellm rewrites that finish reason to "stop", so the cut-off text was graded as the
    model's whole answer. It is the provider's failure, not the model's: retried and counted."""
    choices = doc.get("choices")
    choice = choices[0] if isinstance(choices, list) and choices else None
    if not isinstance(choice, dict):
        return None
    error = choice.get("error")
    if choice.get("finish_reason") != "error" and not error:
        return None
    detail = error.get("message") if isinstance(error, dict) else error
    code = error.get("code") if isinstance(error, dict) else None
    text = " ".join(str(detail).split())[:200] if detail else "no detail"
    return text, code if isinstance(code, int) and not isinstance(code, bool) and 100 <= code <= 599 else None


def billed_usage(doc: dict[str, Any], price: dict[str, Any]) -> dict[str, int] | None:
    """The usage of an answer litellm could not convert (no choices, content that is not text),
    read from the body as sent when it gives OpenAI's counts; None when it gives none. Why: such
    an answer is the model's invalid output, and the provider billed it -- journaled at zero usage,
    the cell's cost was short of the bill by every such call."""
    usage = doc.get("usage")
    if not isinstance(usage, dict) or "prompt_tokens" not in usage:
        return None
    return split_usage(usage, price)


def _add_usage(a: dict[str, int], b: dict[str, int]) -> dict[str, int]:
    return {k: a.get(k, 0) + b.get(k, 0) for k in {**a, **b}}


def _usage_words(usage: dict[str, int]) -> str:
    return ", ".join(f"{n:,} {cls}" for cls, n in usage.items() if n) or "no tokens"


def _answered_as(value: Any) -> str | None:
    """The model name the provider answered as (the manifests' `api_version`): text, at most
    200 characters; anything else (an object, a list) is not a name and is recorded as unknown."""
    return value[:200] if isinstance(value, str) and value else None


_RAW_SURROGATE = re.compile(f"[{chr(0xD800)}-{chr(0xDFFF)}]")  # built, not a literal: the code fingerprint reads constants as text
_ESCAPED_SURROGATE = re.compile(r"(\\+)u([dD][89a-fA-F][0-9a-fA-F]{2})")


def lone_surrogate(text: str) -> str | None:
    """The first lone UTF-16 surrogate `text` holds, raw or as a JSON escape (`\\ud800` not
    paired with a low surrogate), as `U+D800`; None when there is none.

    Why: a lone surrogate is not Unicode text. Held raw it cannot be written as UTF-8 -- the
    journal's writer failed on one and `lrc execute` waited for that write forever -- and as a
    JSON escape it becomes one as soon as an answer or tool arguments are parsed, to fail
    wherever they are written next. A surrogate pair (an emoji written as two escapes) is text."""
    raw = _RAW_SURROGATE.search(text)
    if raw is not None:
        return f"U+{ord(raw.group()):04X}"
    if "\\" not in text:
        return None
    for m in _ESCAPED_SURROGATE.finditer(text):
        if len(m.group(1)) % 2 == 0:  # an escaped backslash followed by "u...": text, not an escape
            continue
        unit = int(m.group(2), 16)
        if unit <= 0xDBFF:  # a high surrogate must be followed by an escaped low one
            after = text[m.end():m.end() + 6]
            if re.fullmatch(r"\\u[dD][c-fC-F][0-9a-fA-F]{2}", after):
                continue
            return f"U+{unit:04X}"
        before = text[max(0, m.start() - 6):m.start()] if len(m.group(1)) == 1 else ""
        if not re.fullmatch(r"\\u[dD][89abAB][0-9a-fA-F]{2}", before):  # a low one must follow a high one
            return f"U+{unit:04X}"
    return None


#: The most characters a reply may hold (its text, plus each tool call's id, name and arguments):
#: the longest text lrc parses (`boundedjson.MAX_CHARS`). A longer reply is the model's invalid
#: output, journaled without its text -- a provider answering with 20 MB made the journal and the
#: run files hold it three times over (a 120 MB journal from two such replies), for an answer no
#: check could read.
MAX_REPLY_CHARS = 1_000_000


def _message_dict(message: Any) -> dict[str, Any]:
    """The assistant message as plain data; TypeError if any part has the wrong type or is not
    Unicode text (a lone surrogate: `lone_surrogate`), ValueError if it is longer than
    MAX_REPLY_CHARS."""
    calls = []
    size = 0
    for c in getattr(message, "tool_calls", None) or []:
        fn = c.function
        if not isinstance(c.id, str) or not isinstance(fn.name, str) or not isinstance(fn.arguments or "{}", str):
            raise TypeError("a tool call's id, name or arguments is not a string")
        for part, text in (("id", c.id), ("name", fn.name), ("arguments", fn.arguments or "")):
            found = lone_surrogate(text)
            if found is not None:
                raise TypeError(f"a tool call's {part} holds a lone surrogate ({found}), which is not Unicode text")
        calls.append({"id": c.id, "type": "function", "function": {"name": fn.name, "arguments": fn.arguments or "{}"}})
        size += len(c.id) + len(fn.name) + len(fn.arguments or "")
    content = getattr(message, "content", None)
    if content is not None and not isinstance(content, str):
        raise TypeError(f"the content is a {type(content).__name__}, not text")
    size += len(content or "")
    if size > MAX_REPLY_CHARS:
        raise ValueError(f"the reply holds {size:,} characters, more than the {MAX_REPLY_CHARS:,} a reply may hold")
    found = lone_surrogate(content) if content else None
    if found is not None:
        raise TypeError(f"the content holds a lone surrogate ({found}), which is not Unicode text")
    out: dict[str, Any] = {"role": "assistant", "content": content}
    if calls:
        out["tool_calls"] = calls
    return out


async def complete(
    model: dict[str, Any],
    messages: list[dict[str, Any]],
    tools: list[dict[str, Any]] | None,
    timeout: float,
    lane: ModelLane,
    budget: RunBudget | None = None,
    retry_billed: Callable[[dict[str, int]], bool] | None = None,
) -> CallResult:
    """One model request with infra retries; raises InfraExhausted (InfraStopped) or ConfigError.

    `timeout` is the system's locked per-request timeout; `lane` holds the model's concurrency,
    deadline and health; `budget` is the run's remaining time (calls and backoffs).
    `retry_billed` (--budget, `lrc.runtime.budget.Budget.retry`) is asked before an attempt
    that was billed (a generation that failed mid-answer) is retried, with what it was billed;
    False: the retry does not start (InfraStopped, reason `budget-reached`)."""
    litellm = load_litellm()
    from lrc.runtime.models import bounded_http  # with litellm, never before (httpx: lrc report makes no call)

    settings = lane.settings
    budget = budget or lane.run_budget()
    kwargs: dict[str, Any] = {"model": model["id"], "messages": messages, "num_retries": 0, "max_retries": 0}
    kwargs.update(model.get("sampling") or {})
    if tools:
        kwargs["tools"] = tools
        kwargs["tool_choice"] = "auto"
    endpoint = lane.config  # how the model is reached: the execute's options, never the lock
    if endpoint.api_base:
        kwargs["api_base"] = endpoint.api_base
    if endpoint.api_key_env:
        kwargs["api_key"] = os.environ.get(endpoint.api_key_env, "")
    failures: list[InfraFailure] = []
    queued = 0.0
    billed = dict(_NO_USAGE)  # what attempts whose generation failed at the provider were billed
    at = f" at {endpoint.api_base}" if endpoint.api_base else ""
    for attempt in range(1, settings.max_attempts + 1):
        attempt_timeout = _attempt_timeout(lane.call_timeout(timeout), lane, budget, failures)
        waiting = time.monotonic()
        body = bytearray()  # the answer's body as sent (bounded_http.RAW_BODY), for what litellm rewrites
        async with lane.limiter:
            queued += time.monotonic() - waiting
            _raise_if_stopped(lane, failures)
            started = time.monotonic()
            kept = bounded_http.RAW_BODY.set(body)
            try:
                response, exc = await _race(litellm.acompletion(**kwargs, timeout=attempt_timeout), lane, attempt_timeout)
            finally:
                bounded_http.RAW_BODY.reset(kept)
            elapsed = time.monotonic() - started
            budget.spend(elapsed)
            if response is None and exc is None:
                _raise_if_stopped(lane, failures)  # the model was stopped while this call hung
            if response is not None:
                lane.succeeded()
        if response is None:
            timed_out = exc is None
            rate_limited = False
            if timed_out:
                failure = InfraFailure("Timeout", None, f"no response within {attempt_timeout:g}s")
            else:
                doc = raw_reply(body)  # a 2xx body litellm could not convert: its usage may be why
                if doc is not None:
                    try:
                        check_raw_usage(doc)
                    except ConfigError as bad:
                        raise _usage_refused(model["id"], at, bad) from None
                kind, failure, rate_limited = _classify(exc, litellm)
                if kind == "refusal":
                    return CallResult({"role": "assistant", "content": None}, "content_filter", True,
                                      {"input": 0, "cached_input": 0, "cache_write": 0, "output": 0, "reasoning": 0},
                                      attempt, failures, int(elapsed * 1000), queue_ms=int(queued * 1000))
                if kind == "invalid":
                    try:
                        read = billed_usage(doc, model["price"]) if doc is not None else None
                    except ConfigError as bad:
                        raise _usage_refused(model["id"], at, bad) from None
                    return CallResult({"role": "assistant", "content": None}, "invalid_response", False,
                                      _add_usage(billed, read or _NO_USAGE), attempt, failures, int(elapsed * 1000),
                                      queue_ms=int(queued * 1000), invalid=f"the response could not be read: {failure.message}")
                if kind == "context":  # refused before any generation: nothing billed, nothing to read
                    return CallResult({"role": "assistant", "content": None}, "context_window_exceeded", False, dict(_NO_USAGE),
                                      attempt, failures, int(elapsed * 1000), queue_ms=int(queued * 1000),
                                      invalid=f"the request does not fit the model's context window: {failure.message}")
                if kind == "config":
                    raise ConfigError(f"{model['id']}: {failure.kind}: {failure.message}") from exc
                timed_out = _is_timeout(exc, litellm)
            failures.append(failure)
            refused = None if timed_out or rate_limited else unreachable(exc)
            lane.failed(infra.failure_class(failure.status, rate_limited, timed_out, refused is not None), started,
                        attempt_timeout, refused or "")
            if attempt == settings.max_attempts:
                raise InfraExhausted(failures) from exc
            await _backoff(infra.retry_wait(attempt, _retry_after(exc), settings, lane.rng), lane, budget, failures)
            continue
        # The call was paid whatever its message holds: its usage is priced first (an answer of the
        # wrong shape below is the model's invalid output, at what the provider billed for it).
        doc = raw_reply(body)
        try:
            if doc is not None:
                check_raw_usage(doc)
            usage = split_usage(getattr(response, "usage", None), model["price"])
        except ConfigError as exc:
            raise _usage_refused(model["id"], at, exc) from None
        failed_generation = generation_error(doc) if doc is not None else None
        if failed_generation is not None:
            # The provider's failure mid-answer: retried and counted like a 5xx; what it billed for
            # the cut-off answer is added to the call's usage (paid for this outcome, never dropped).
            said, code = failed_generation
            billed = _add_usage(billed, usage)
            failures.append(InfraFailure("GenerationError", code, f"the provider reported that the generation failed: "
                                                                  f"{said} (billed: {_usage_words(usage)})",
                                         billed={k: v for k, v in usage.items() if v} or None))
            lane.failed(infra.failure_class(code, False, False), started, attempt_timeout)
            if attempt == settings.max_attempts:
                raise InfraExhausted(failures)
            if retry_billed is not None and not retry_billed(usage):
                raise InfraStopped("budget-reached", f"--budget: a retry after an attempt billed {_usage_words(usage)} "
                                   f"could take the spend past the budget", failures)
            await _backoff(infra.retry_wait(attempt, None, settings, lane.rng), lane, budget, failures)
            continue
        if any(billed.values()):
            usage = _add_usage(billed, usage)
        try:
            choice = response.choices[0]
            message = _message_dict(choice.message)
            finish = getattr(choice, "finish_reason", None)
            finish = finish if isinstance(finish, str) or finish is None else str(finish)[:100]
            refusal = finish == "content_filter" or bool(getattr(choice.message, "refusal", None))
        except (*_DECODING, RecursionError) as exc:  # an answer of the wrong shape: the model's invalid output
            return CallResult({"role": "assistant", "content": None}, "invalid_response", False, usage, attempt, failures,
                              int((time.monotonic() - started) * 1000), queue_ms=int(queued * 1000), response_model=None,
                              invalid=f"the response could not be read: {type(exc).__name__}: {str(exc)[:200]}")
        return CallResult(
            message=message,
            finish_reason=finish,
            refusal=refusal,
            usage=usage,
            attempts=attempt,
            failures=failures,
            latency_ms=int(elapsed * 1000),
            queue_ms=int(queued * 1000),
            response_model=_answered_as(getattr(response, "model", None)),
        )
    raise AssertionError("unreachable")  # pragma: no cover


# Our clock is the real bound of an attempt: the HTTP client's timeout is per read, so a
# provider that trickles bytes never trips it. The grace lets the client's own Timeout win a tie.
_GRACE_SECONDS = 0.1


def _raise_if_stopped(lane: ModelLane, failures: list[InfraFailure]) -> None:
    if lane.halt is not None:  # SIGINT/SIGTERM (lrc.runtime.halt): no attempt starts, a retry included
        lane.halt.check()
    lane.check_deadline()
    if lane.stop_reason is not None:
        raise InfraStopped("model-stopped", f"{lane.model_id} was stopped: {lane.stop_reason}", failures)


def _attempt_timeout(timeout: float, lane: ModelLane, budget: RunBudget, failures: list[InfraFailure]) -> float:
    """The next attempt's timeout: the request timeout, shortened to what the run and the model
    have left; raises InfraStopped if either has nothing left."""
    _raise_if_stopped(lane, failures)
    left = budget.remaining()
    if left <= 0:
        raise InfraStopped("run-deadline", f"the run's deadline of {budget.seconds:g}s passed "
                           f"(run_deadline_seconds, LRC_RUN_DEADLINE_SECONDS)", failures)
    return max(0.001, min(timeout, left, lane.model_remaining()))


async def _race(call: Any, lane: ModelLane, timeout: float) -> tuple[Any, Exception | None]:
    """(response, None) | (None, exception) | (None, None): no answer in time, or the model was
    stopped meanwhile. The call is cancelled, never left running."""
    task = asyncio.ensure_future(call)
    stop = asyncio.ensure_future(lane.event.wait())
    try:
        done, _ = await asyncio.wait({task, stop}, timeout=timeout + _GRACE_SECONDS, return_when=asyncio.FIRST_COMPLETED)
    finally:
        stop.cancel()
        if not task.done():
            task.cancel()
        # Collect the call's outcome in every case (also when we are cancelled), so no
        # "exception was never retrieved" reaches stderr.
        await asyncio.shield(asyncio.gather(task, return_exceptions=True))
    if task not in done:
        return None, None
    exc = task.exception()
    if exc is None:
        return task.result(), None
    if not isinstance(exc, Exception):
        raise exc
    return None, exc


async def _backoff(wait: float, lane: ModelLane, budget: RunBudget, failures: list[InfraFailure]) -> None:
    """Sleep before a retry, charged to the run's budget; give up at once if the wait would
    outlast the run's or the model's deadline, and wake up if the model is stopped."""
    if wait >= budget.remaining():
        budget.spend(budget.remaining())
        raise InfraStopped("run-deadline", f"the run's deadline of {budget.seconds:g}s would pass before its next "
                           f"retry (run_deadline_seconds, LRC_RUN_DEADLINE_SECONDS)", failures)
    if wait >= lane.model_remaining():
        lane.stop(f"its deadline of {lane.settings.model_deadline_seconds:g}s for this execute would pass before "
                  f"the next retry (model_deadline_seconds, LRC_MODEL_DEADLINE_SECONDS)")
    _raise_if_stopped(lane, failures)
    lane.stats.waited_seconds += wait
    budget.spend(wait)
    # Wake early if the model is stopped or the execute is (SIGINT/SIGTERM: lrc.runtime.halt).
    wakers = [asyncio.ensure_future(lane.event.wait())]
    if lane.halt is not None and lane.halt.event is not None:
        wakers.append(asyncio.ensure_future(lane.halt.event.wait()))
    try:
        done, _ = await asyncio.wait(wakers, timeout=wait, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for waker in wakers:
            waker.cancel()
        await asyncio.gather(*wakers, return_exceptions=True)
    if done:
        _raise_if_stopped(lane, failures)


def _is_timeout(exc: Exception, litellm: Any) -> bool:
    timeout_type = getattr(litellm.exceptions, "Timeout", None)
    return isinstance(exc, asyncio.TimeoutError) or (timeout_type is not None and isinstance(exc, timeout_type))


def _retry_after(exc: Exception | None) -> float | None:
    """The provider's Retry-After, in seconds (delta-seconds or HTTP-date), if it sent one."""
    for headers in (getattr(getattr(exc, "response", None), "headers", None), getattr(exc, "litellm_response_headers", None)):
        if headers is not None and hasattr(headers, "get"):
            try:
                value = headers.get("retry-after")
            except Exception:  # noqa: BLE001 - a malformed header object is no Retry-After
                value = None
            seconds = infra.parse_retry_after(value)
            if seconds is not None:
                return seconds
    return None


def missing_credentials(models: list[dict[str, Any]], endpoint: Callable[[str], Any]) -> list[tuple[str, list[str]]]:
    """(model, missing environment variables) for every real model without its key;
    `endpoint(model_id)` is how the execute reaches it (`RunOptions.endpoint`)."""
    missing: list[tuple[str, list[str]]] = []
    real = [m for m in models if not m.get("reference")]
    for model in real:
        config = endpoint(model["id"])
        if config.api_key_env:
            if not os.environ.get(config.api_key_env):
                missing.append((model["id"], [config.api_key_env]))
            continue
        litellm = load_litellm()  # only to ask litellm which variables its provider reads
        try:
            env = litellm.validate_environment(model=model["id"], api_base=config.api_base)
        except Exception:  # noqa: BLE001 - an unknown provider is reported as such
            missing.append((model["id"], ["<litellm does not know this provider>"]))
            continue
        if not env.get("keys_in_environment", False) and env.get("missing_keys"):
            missing.append((model["id"], sorted(env["missing_keys"])))
    return missing
