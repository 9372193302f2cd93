"""How lrc rides out infrastructure trouble: retries, backoff, concurrency, deadlines.

Everything here decides *when* a request is sent, never *what* is sent or what its answer
means, so none of it can change a result: a retried call sends the same request, and only
an answered call is journaled. Wall-clock randomness (the backoff jitter) is therefore fine.

- `InfraSettings`: the operating settings of one `lrc execute`, with documented defaults;
  `operate.from_request` fills them from flags, the run profile and the `LRC_*` variables.
- Failure classes: a 429 says "slow down" (it cuts the model's concurrency and honours
  `Retry-After`); a 5xx or a dropped connection says nothing about rate (retried with
  backoff, concurrency untouched); a timeout is retried too, but a model whose calls all
  time out is stopped (`stop_after_timeouts`); a connection that cannot be made at all
  (refused, unknown host, unreachable network) is retried too, but a model whose last
  `stop_after_connection_failures` attempts all failed to connect is stopped with one
  message: nothing listens at its endpoint, and retrying every run would cost minutes.
- Backoff is "full jitter" (uniform in [0, min(cap, base·2^(n-1))]), so retries of a storm
  spread out instead of arriving together. A `Retry-After` (seconds or HTTP-date) is a floor,
  capped at `retry_after_max_seconds`, plus up to 10% jitter.
- `AdaptiveLimiter`: AIMD concurrency per model. One cut (×3/4) per window: a 429 for a
  request sent before the last cut says nothing about the new limit and is ignored. It
  recovers one slot per ⌈limit/2⌉ successes (about two per round trip), so a burst of 429s
  costs a few round trips, not the rest of the run.
- Deadlines: a run's budget (`RunBudget`) counts the time its calls and backoffs take (not
  the wait for a concurrency slot, which measures the queue, not the provider); a model's
  deadline counts the wall time of this execute from its first call. Either ends in an exclusion (journaled,
  retried by the next `lrc execute`, finished calls never repaid).
"""

from __future__ import annotations

import asyncio
import email.utils
import math
import os
import random
import time
from dataclasses import dataclass, field, fields
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any, Callable, Mapping

if TYPE_CHECKING:
    from lrc.runtime.operate import ModelEndpoint

# -- settings ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class InfraSettings:
    """Operating settings of a run's infrastructure handling; none of them changes a result."""

    max_attempts: int = 8  # attempts per call (the first one included)
    retry_base_seconds: float = 1.0  # backoff base: attempt n waits U(0, min(max, base·2^(n-1)))
    retry_max_seconds: float = 60.0  # backoff cap
    retry_after_max_seconds: float = 120.0  # a provider's Retry-After is honoured up to this
    request_timeout_seconds: float | None = None  # caps the system's locked per-request timeout
    run_deadline_seconds: float = 1800.0  # a run's calls and backoffs together, then excluded
    model_deadline_seconds: float = 8 * 3600.0  # a model's wall time in one execute, then stopped
    stop_after_timeouts: int = 6  # consecutive timed-out calls (no success between) stop a model
    stop_after_connection_failures: int = 8  # consecutive failures to connect (no success between) stop a model

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> "InfraSettings":
        """The defaults, overridden by the `LRC_*` variables of `ENV` (a bad value raises ValueError)."""
        env = os.environ if env is None else env
        values: dict[str, Any] = {}
        for name, var in ENV.items():
            raw = env.get(var)
            if raw is None or raw.strip() == "":
                continue
            values[name] = parse_setting(name, raw, var)
        return cls(**values)

    def call_timeout(self, locked: float) -> float:
        """The per-request timeout: the system's locked one, capped by the operator's."""
        return locked if self.request_timeout_seconds is None else min(locked, self.request_timeout_seconds)


def parse_setting(name: str, raw: Any, label: str) -> int | float:
    """One setting's value from a variable's text or a profile's number, checked (ValueError
    naming `label` otherwise): whole numbers >= 1 for counts, finite numbers >= 0 for
    seconds (> 0 for the timeout and the deadlines)."""
    if isinstance(raw, bool):
        raise ValueError(f"{label}={raw!r} is not a number")
    try:
        number = float(raw)
    except (TypeError, ValueError):
        raise ValueError(f"{label}={raw!r} is not a number") from None
    if not math.isfinite(number) or number < 0:
        raise ValueError(f"{label}={raw!r} must be a finite number >= 0")
    if _TYPES[name] == "int":
        if number != int(number) or number < 1:
            raise ValueError(f"{label}={raw!r} must be a whole number >= 1")
        return int(number)
    if name in _POSITIVE and number <= 0:
        raise ValueError(f"{label}={raw!r} must be > 0")
    return number


_TYPES = {f.name: f.type for f in fields(InfraSettings)}

#: The environment variable of each setting (the fallback below a run profile; README, "Run profile").
ENV = {
    "max_attempts": "LRC_MAX_ATTEMPTS",
    "retry_base_seconds": "LRC_RETRY_BASE_SECONDS",
    "retry_max_seconds": "LRC_RETRY_MAX_SECONDS",
    "retry_after_max_seconds": "LRC_RETRY_AFTER_MAX_SECONDS",
    "request_timeout_seconds": "LRC_REQUEST_TIMEOUT_SECONDS",
    "run_deadline_seconds": "LRC_RUN_DEADLINE_SECONDS",
    "model_deadline_seconds": "LRC_MODEL_DEADLINE_SECONDS",
    "stop_after_timeouts": "LRC_STOP_AFTER_TIMEOUTS",
    "stop_after_connection_failures": "LRC_STOP_AFTER_CONNECTION_FAILURES",
}
_POSITIVE = {"request_timeout_seconds", "run_deadline_seconds", "model_deadline_seconds"}

# -- failure classes and waits -------------------------------------------------------------

RATE, SERVER, TIMEOUT, CONNECT = "rate", "server", "timeout", "connect"


def failure_class(status: int | None, rate_limited: bool, timed_out: bool, unreachable: bool = False) -> str:
    """rate (429: slow down) | timeout (no answer in time) | connect (no connection could be
    made: refused, unknown host, unreachable network) | server (5xx, dropped connection)."""
    if rate_limited or status == 429:
        return RATE
    if timed_out or status in (408, 504):
        return TIMEOUT
    if unreachable:  # litellm reports a refused connection as a 500; the cause chain says otherwise
        return CONNECT
    return SERVER


def parse_retry_after(value: Any, now: datetime | None = None) -> float | None:
    """Seconds to wait from a `Retry-After` header (delta-seconds or HTTP-date); None if absent
    or unreadable. A date in the past means 0. Not capped here (see `retry_wait`)."""
    if value is None:
        return None
    text = str(value).strip()
    if not text or len(text) > 64:
        return None
    try:
        seconds = float(text)
    except ValueError:
        try:
            when = email.utils.parsedate_to_datetime(text)
        except (TypeError, ValueError, IndexError, OverflowError):
            return None
        if when is None:
            return None
        if when.tzinfo is None:
            when = when.replace(tzinfo=timezone.utc)
        now = now or datetime.now(timezone.utc)
        return max(0.0, (when - now).total_seconds())
    if not math.isfinite(seconds) or seconds < 0:
        return None
    return seconds


def backoff(attempt: int, settings: InfraSettings, rng: random.Random) -> float:
    """Full jitter: uniform in [0, min(cap, base·2^(attempt-1))] for the attempt that failed."""
    ceiling = min(settings.retry_max_seconds, settings.retry_base_seconds * (2 ** min(attempt - 1, 30)))
    return rng.uniform(0.0, ceiling)


def retry_wait(attempt: int, retry_after: float | None, settings: InfraSettings, rng: random.Random) -> float:
    """How long to wait before the next attempt: the provider's Retry-After (capped, plus up to
    10% jitter) when it gave one, else the jittered backoff."""
    if retry_after is None:
        return backoff(attempt, settings, rng)
    floor = min(retry_after, settings.retry_after_max_seconds)
    return floor + rng.uniform(0.0, 0.1 * floor)


# -- concurrency ---------------------------------------------------------------------------


class AdaptiveLimiter:
    """Bounded concurrency per model: AIMD on 429s, fast recovery on successes."""

    def __init__(self, limit: int, clock: Callable[[], float] = time.monotonic):
        self.max = max(1, int(limit))
        self.limit = self.max
        self.active = 0
        self.successes = 0
        self.reductions = 0
        self._clock = clock
        self._cut_at = float("-inf")
        self._cond: asyncio.Condition | None = None

    def _condition(self) -> asyncio.Condition:
        if self._cond is None:  # created inside the running loop
            self._cond = asyncio.Condition()
        return self._cond

    async def __aenter__(self) -> "AdaptiveLimiter":
        cond = self._condition()
        async with cond:
            await cond.wait_for(lambda: self.active < self.limit)
            self.active += 1
        return self

    async def __aexit__(self, *exc: Any) -> None:
        cond = self._condition()
        async with cond:
            self.active -= 1
            cond.notify_all()

    def rate_limited(self, sent_at: float) -> bool:
        """A 429 for a request sent at `sent_at`; True if it cut the limit."""
        self.successes = 0
        if sent_at < self._cut_at or self.limit <= 1:
            return False  # sent under an older limit: the last cut already answered it
        self.limit = max(1, self.limit - max(1, self.limit // 4))
        self._cut_at = self._clock()
        self.reductions += 1
        return True

    def succeeded(self) -> None:
        if self.limit >= self.max:
            return
        self.successes += 1
        if self.successes >= max(1, math.ceil(self.limit / 2)):
            self.limit += 1
            self.successes = 0


# -- deadlines, stopping a model, live figures ------------------------------------------------


class RunBudget:
    """The time one run may spend in calls and backoffs before it is excluded."""

    def __init__(self, seconds: float):
        self.seconds = seconds
        self.spent = 0.0

    def remaining(self) -> float:
        return self.seconds - self.spent

    def spend(self, seconds: float) -> None:
        self.spent += max(0.0, seconds)


@dataclass
class InfraStats:
    """What the progress display shows live, and the final message summarizes."""

    retries: int = 0
    rate_limited: int = 0
    server_errors: int = 0
    timeouts: int = 0
    connection_failures: int = 0
    waited_seconds: float = 0.0  # total backoff slept (summed over calls, not wall time)
    excluded: int = 0
    exclusions: dict[str, int] = field(default_factory=dict)  # reason -> runs
    stopped: dict[str, str] = field(default_factory=dict)  # model -> why
    lanes: list["ModelLane"] = field(default_factory=list)

    def exclude(self, reason: str) -> None:
        self.excluded += 1
        self.exclusions[reason] = self.exclusions.get(reason, 0) + 1

    def describe_exclusions(self) -> str:
        names = {"retries-exhausted": "retries exhausted", "run-deadline": "run deadline passed",
                 "model-stopped": "model stopped"}
        return ", ".join(f"{n} {names.get(r, r)}" for r, n in sorted(self.exclusions.items())) or "none in this execute"

    def postfix(self) -> str:
        limit = sum(lane.limiter.limit for lane in self.lanes)
        top = sum(lane.limiter.max for lane in self.lanes)
        parts = [f"retries={self.retries}", f"excluded={self.excluded}", f"backoff={self.waited_seconds:.0f}s"]
        if limit < top:
            parts.append(f"concurrency={limit}/{top}")
        if self.stopped:
            parts.append(f"stopped={len(self.stopped)}")
        return " ".join(parts)


class ModelLane:
    """One model's concurrency, deadline and health for one execute."""

    def __init__(self, model_id: str, entry: Mapping[str, Any], settings: InfraSettings, stats: InfraStats,
                 on_stop: Callable[[str, str], None] | None = None, clock: Callable[[], float] = time.monotonic,
                 endpoint: "ModelEndpoint | None" = None):
        if endpoint is None:
            from lrc.runtime.operate import ModelEndpoint

            endpoint = ModelEndpoint()
        self.model_id = model_id
        # An embedded reference model runs in-process: it has no provider that could hang, so
        # the operator's request-timeout cap, the deadlines and the hung-provider stop do not
        # apply to it (on a loaded machine they would only exclude healthy runs).
        self.remote = not entry.get("reference")
        # How the model is reached comes from the execute's options (run profile, flags), never
        # from the lock: `entry` is the locked model entry (what is measured).
        self.config = endpoint
        self.endpoint = endpoint.where(model_id)
        self.settings = settings
        self.stats = stats
        self.limiter = AdaptiveLimiter(endpoint.max_concurrency, clock=clock)
        self.deadline: float | None = None  # set at the model's first call (not at start-up)
        self.consecutive_timeouts = 0
        self.consecutive_connection_failures = 0
        self.stop_reason: str | None = None
        self.rng = random.Random()  # wall-clock seeded: timing only, never a result
        self._on_stop = on_stop
        self._clock = clock
        self._event: asyncio.Event | None = None
        self.halt: Any = None  # the execute's lrc.runtime.halt.Halt: after SIGINT/SIGTERM no attempt starts
        stats.lanes.append(self)

    @property
    def event(self) -> asyncio.Event:
        if self._event is None:
            self._event = asyncio.Event()
            if self.stop_reason is not None:
                self._event.set()
        return self._event

    def run_budget(self) -> RunBudget:
        """A new run's budget on this model."""
        return RunBudget(self.settings.run_deadline_seconds if self.remote else math.inf)

    def model_remaining(self) -> float:
        if not self.remote:
            return math.inf
        if self.deadline is None:
            self.deadline = self._clock() + self.settings.model_deadline_seconds
        return self.deadline - self._clock()

    def stop(self, reason: str) -> None:
        if self.stop_reason is not None:
            return
        self.stop_reason = reason
        self.stats.stopped[self.model_id] = reason
        self.event.set()
        if self._on_stop is not None:
            self._on_stop(self.model_id, f"stopped {self.model_id} ({self.endpoint}): {reason}")

    def succeeded(self) -> None:
        self.consecutive_timeouts = 0
        self.consecutive_connection_failures = 0
        self.limiter.succeeded()

    def failed(self, kind: str, sent_at: float, timeout: float, error: str = "") -> None:
        self.stats.retries += 1
        if kind == CONNECT:
            # Every refusal counts, concurrent ones too: a refused connection is no slow or
            # overloaded provider but nothing listening (or no such host), and a wave of them is
            # exactly what must end in seconds. A server that restarts under a high concurrency
            # may trip it too: the rerun resumes, and the setting can be raised.
            self.stats.connection_failures += 1
            self.consecutive_connection_failures += 1
            n = self.settings.stop_after_connection_failures
            if self.remote and self.consecutive_connection_failures >= n:
                self.stop(f"nothing answers there: its last {n} attempts failed to connect ({error or 'connection failed'}) "
                          f"and none succeeded in between. Check that the server runs and the model's api_base "
                          f"(run profile or --api-base), then run the same command again to resume")
        elif kind == RATE:
            self.stats.rate_limited += 1
            self.limiter.rate_limited(sent_at)
        elif kind == TIMEOUT:
            self.stats.timeouts += 1
            self.consecutive_timeouts += 1
            n = self.settings.stop_after_timeouts
            if self.remote and self.consecutive_timeouts >= n:
                self.stop(f"its last {n} calls all timed out (no answer within {timeout:g}s) and none succeeded "
                          f"in between; the provider looks hung")
        else:
            self.stats.server_errors += 1

    def call_timeout(self, locked: float) -> float:
        return self.settings.call_timeout(locked) if self.remote else locked

    def check_deadline(self) -> None:
        if self.stop_reason is None and self.model_remaining() <= 0:
            self.stop(f"its deadline of {self.settings.model_deadline_seconds:g}s for this execute passed "
                      f"(model_deadline_seconds, LRC_MODEL_DEADLINE_SECONDS)")
