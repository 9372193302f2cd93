"""The infrastructure policy (runtime/models/infra.py and adapter.complete), in process.

Classification (a 429 is about rate, a 5xx is not), full-jitter backoff bounds, Retry-After
in both forms with its cap, AIMD concurrency (one cut per window, fast recovery), the
settings read from the environment, and the deadlines: a hung call is cut at the run's
budget, a model whose calls all time out is stopped, and a stop cancels the calls in flight.
The end-to-end behaviour through a real HTTP server is in test_infra_trouble.py.
"""

from __future__ import annotations

import asyncio
import random
import time
from datetime import datetime, timedelta, timezone
from email.utils import format_datetime
from types import SimpleNamespace

import pytest

from lrc.runtime.models import adapter, infra
from lrc.runtime.models.infra import CONNECT, RATE, SERVER, TIMEOUT, AdaptiveLimiter, InfraSettings, InfraStats, ModelLane
from lrc.runtime.operate import ModelEndpoint

NOW = datetime(2026, 12, 1, 12, 0, 0, tzinfo=timezone.utc)


# -- classification -----------------------------------------------------------------------

@pytest.mark.parametrize("status, rate, timed_out, expected", [
    (429, True, False, RATE),
    (429, False, False, RATE),      # a 429 without litellm's RateLimitError type is still about rate
    (None, True, False, RATE),
    (500, False, False, SERVER),
    (502, False, False, SERVER),
    (503, False, False, SERVER),
    (None, False, False, SERVER),   # a dropped connection
    (None, False, True, TIMEOUT),
    (504, False, False, TIMEOUT),
    (408, False, False, TIMEOUT),
])
def test_failure_classes(status, rate, timed_out, expected):
    assert infra.failure_class(status, rate, timed_out) == expected


def test_a_5xx_never_cuts_concurrency_but_a_429_does():
    stats = InfraStats()
    lane = ModelLane("m/x", {}, InfraSettings(), stats, endpoint=ModelEndpoint(max_concurrency=8))
    for status in (500, 502, 503, None):
        lane.failed(infra.failure_class(status, False, False), time.monotonic(), 1.0)
    assert lane.limiter.limit == 8 and stats.server_errors == 4 and stats.retries == 4
    lane.failed(infra.failure_class(429, True, False), time.monotonic(), 1.0)
    assert lane.limiter.limit == 6 and stats.rate_limited == 1


# -- Retry-After ----------------------------------------------------------------------------

@pytest.mark.parametrize("value, expected", [
    ("3", 3.0), ("0", 0.0), ("0.5", 0.5), (" 12 ", 12.0), (7, 7.0),
    (format_datetime(NOW + timedelta(seconds=30), usegmt=True), 30.0),   # IMF-fixdate
    ("Tuesday, 01-Dec-26 12:00:45 GMT", 45.0),                             # RFC 850
    ("Tue Dec  1 12:01:00 2026", 60.0),                                    # asctime
    (format_datetime(NOW - timedelta(seconds=30), usegmt=True), 0.0),    # in the past: now
])
def test_retry_after_seconds_and_http_dates(value, expected):
    assert infra.parse_retry_after(value, now=NOW) == pytest.approx(expected)


@pytest.mark.parametrize("value", [None, "", "soon", "-1", "nan", "inf", "1e999", "12s", "Mon, 99 Foo 2026", "9" * 100])
def test_unreadable_retry_after_is_ignored(value):
    assert infra.parse_retry_after(value, now=NOW) is None


def test_retry_after_is_a_floor_with_little_jitter_and_capped():
    settings = InfraSettings(retry_after_max_seconds=30)
    rng = random.Random(1)
    for ra in (0.0, 0.5, 2.0, 29.0):
        waits = [infra.retry_wait(1, ra, settings, rng) for _ in range(200)]
        assert min(waits) >= ra and max(waits) <= ra * 1.1 + 1e-9
    for ra in (31.0, 3600.0, 1e9):
        waits = [infra.retry_wait(5, ra, settings, rng) for _ in range(200)]
        assert min(waits) >= 30 and max(waits) <= 33 + 1e-9


# -- backoff ----------------------------------------------------------------------------------

@pytest.mark.parametrize("base, cap", [(1.0, 60.0), (2.0, 10.0), (0.01, 0.05)])
def test_backoff_is_full_jitter_within_bounds(base, cap):
    settings = InfraSettings(retry_base_seconds=base, retry_max_seconds=cap)
    rng = random.Random(7)
    for attempt in range(1, 12):
        ceiling = min(cap, base * 2 ** (attempt - 1))
        waits = [infra.retry_wait(attempt, None, settings, rng) for _ in range(400)]
        assert 0 <= min(waits) and max(waits) <= ceiling
        # spread over the whole range: retries of a storm do not arrive together
        assert min(waits) < 0.1 * ceiling and max(waits) > 0.9 * ceiling
        assert len(set(waits)) == len(waits)


def test_backoff_of_a_huge_attempt_number_stays_at_the_cap():
    settings = InfraSettings(retry_base_seconds=2, retry_max_seconds=60)
    assert 0 <= infra.backoff(10_000, settings, random.Random(0)) <= 60


# -- concurrency --------------------------------------------------------------------------------

class Clock:
    def __init__(self) -> None:
        self.t = 100.0

    def __call__(self) -> float:
        return self.t


def test_one_cut_per_window_then_fast_recovery():
    clock = Clock()
    lim = AdaptiveLimiter(8, clock=clock)
    sent_before = clock.t
    clock.t += 1
    assert lim.rate_limited(sent_before) and lim.limit == 6
    # 429s for requests sent before that cut say nothing about the new limit
    for _ in range(10):
        assert not lim.rate_limited(sent_before)
    assert lim.limit == 6 and lim.reductions == 1
    # a request sent after the cut that still gets a 429: cut again
    clock.t += 1
    assert lim.rate_limited(clock.t) and lim.limit == 5
    # recovery: one slot per ceil(limit / 2) successes
    for expected, needed in ((6, 3), (7, 3), (8, 4)):
        for _ in range(needed - 1):
            lim.succeeded()
        assert lim.limit == expected - 1
        lim.succeeded()
        assert lim.limit == expected
    lim.succeeded()
    assert lim.limit == 8  # never above the configured maximum


@pytest.mark.parametrize("start", [1, 2, 4, 8, 16, 64])
def test_limit_never_below_one_and_recovers_from_one_in_few_successes(start):
    clock = Clock()
    lim = AdaptiveLimiter(start, clock=clock)
    for _ in range(50):
        clock.t += 1
        lim.rate_limited(clock.t)
    assert lim.limit == 1
    successes = 0
    while lim.limit < start:
        lim.succeeded()
        successes += 1
    # about two slots per round trip: sum of ceil(l/2) for l < start, i.e. ~start²/4
    assert successes == sum(-(-l // 2) for l in range(1, start))
    assert successes <= start * start // 4 + start


def test_the_limiter_bounds_how_many_calls_run_at_once():
    async def main() -> int:
        lim = AdaptiveLimiter(3)
        peak = 0

        async def work() -> None:
            nonlocal peak
            async with lim:
                peak = max(peak, lim.active)
                await asyncio.sleep(0.01)

        await asyncio.gather(*(work() for _ in range(20)))
        return peak

    assert asyncio.run(main()) == 3


# -- settings -------------------------------------------------------------------------------

def test_settings_defaults_and_overrides():
    default = InfraSettings.from_env({})
    assert default == InfraSettings()
    assert (default.max_attempts, default.run_deadline_seconds, default.stop_after_timeouts) == (8, 1800.0, 6)
    assert default.call_timeout(300) == 300
    s = InfraSettings.from_env({"LRC_MAX_ATTEMPTS": "3", "LRC_RUN_DEADLINE_SECONDS": "2.5",
                                "LRC_REQUEST_TIMEOUT_SECONDS": "0.5", "LRC_STOP_AFTER_TIMEOUTS": "2",
                                "LRC_RETRY_AFTER_MAX_SECONDS": "0", "LRC_MODEL_DEADLINE_SECONDS": "60"})
    assert (s.max_attempts, s.run_deadline_seconds, s.request_timeout_seconds, s.stop_after_timeouts,
            s.retry_after_max_seconds, s.model_deadline_seconds) == (3, 2.5, 0.5, 2, 0.0, 60.0)
    assert s.call_timeout(300) == 0.5 and s.call_timeout(0.2) == 0.2
    assert set(infra.ENV) == {f for f in InfraSettings.__dataclass_fields__}


@pytest.mark.parametrize("var, value", [
    ("LRC_MAX_ATTEMPTS", "many"), ("LRC_MAX_ATTEMPTS", "0"), ("LRC_MAX_ATTEMPTS", "2.5"),
    ("LRC_RETRY_BASE_SECONDS", "-1"), ("LRC_RETRY_MAX_SECONDS", "nan"), ("LRC_RUN_DEADLINE_SECONDS", "0"),
    ("LRC_MODEL_DEADLINE_SECONDS", "inf"), ("LRC_REQUEST_TIMEOUT_SECONDS", "0"), ("LRC_STOP_AFTER_TIMEOUTS", "0"),
])
def test_bad_settings_name_their_variable(var, value):
    with pytest.raises(ValueError, match=var):
        InfraSettings.from_env({var: value})


# -- deadlines and stopping, through adapter.complete with a fake provider ------------------------

MODEL = {"id": "openai/fake", "price": {}}
ENDPOINT = "http://fake.invalid/v1"


@pytest.fixture
def fake_provider(monkeypatch):
    """adapter's litellm with `acompletion` replaced: set `.behaviour` to an async callable."""
    import litellm

    provider = SimpleNamespace(calls=0, cancelled=0, behaviour=None, exceptions=litellm.exceptions)

    async def acompletion(**kwargs):
        provider.calls += 1
        try:
            return await provider.behaviour(kwargs)
        except asyncio.CancelledError:
            provider.cancelled += 1
            raise

    provider.acompletion = acompletion
    monkeypatch.setattr(adapter, "_litellm", provider)
    return provider


async def _hang(kwargs):
    await asyncio.sleep(3600)


def _lane(settings: InfraSettings, stops: list | None = None, concurrency: int = 4) -> ModelLane:
    return ModelLane(MODEL["id"], MODEL, settings, InfraStats(),
                     on_stop=(lambda m, text: stops.append(text)) if stops is not None else None,
                     endpoint=ModelEndpoint(api_base=ENDPOINT, max_concurrency=concurrency))


def test_a_hung_call_is_cut_at_the_run_deadline(fake_provider):
    fake_provider.behaviour = _hang
    settings = InfraSettings(run_deadline_seconds=0.3, stop_after_timeouts=100, retry_base_seconds=0.01)

    async def main():
        lane = _lane(settings)
        started = time.monotonic()
        with pytest.raises(adapter.InfraStopped) as info:
            await adapter.complete(MODEL, [], None, 300, lane, infra.RunBudget(settings.run_deadline_seconds))
        return time.monotonic() - started, info.value, lane

    elapsed, exc, lane = asyncio.run(main())
    assert exc.reason == "run-deadline" and "LRC_RUN_DEADLINE_SECONDS" in str(exc)
    assert [f.kind for f in exc.failures] == ["Timeout"]
    assert elapsed < 2.0  # the 300 s request timeout did not apply; the run's 0.3 s did
    assert lane.stop_reason is None  # one slow run does not stop the model


def test_calls_that_all_time_out_stop_the_model_and_cancel_what_is_in_flight(fake_provider):
    fake_provider.behaviour = _hang
    settings = InfraSettings(request_timeout_seconds=0.2, stop_after_timeouts=3, retry_base_seconds=0.01)
    stops: list[str] = []

    async def main():
        lane = _lane(settings, stops, concurrency=2)
        calls = [adapter.complete(MODEL, [{"role": "user", "content": str(i)}], None, 300, lane) for i in range(6)]
        started = time.monotonic()
        results = await asyncio.gather(*calls, return_exceptions=True)
        return time.monotonic() - started, results, lane

    elapsed, results, lane = asyncio.run(main())
    assert all(isinstance(r, adapter.InfraStopped) and r.reason == "model-stopped" for r in results)
    assert len(stops) == 1 and "openai/fake" in stops[0] and "http://fake.invalid/v1" in stops[0]
    assert "3 calls all timed out" in stops[0]
    assert elapsed < 3.0
    assert lane.stats.stopped == {"openai/fake": lane.stop_reason}
    # once stopped, no call is sent at all
    before = fake_provider.calls
    with pytest.raises(adapter.InfraStopped):
        asyncio.run(adapter.complete(MODEL, [], None, 300, lane))
    assert fake_provider.calls == before


def test_a_success_between_timeouts_keeps_the_model_running():
    lane = _lane(InfraSettings(stop_after_timeouts=2))
    for _ in range(5):
        lane.failed(TIMEOUT, time.monotonic(), 0.05)
        lane.succeeded()
    assert lane.stop_reason is None and lane.consecutive_timeouts == 0
    lane.failed(SERVER, time.monotonic(), 0.05)  # a 5xx neither counts nor resets
    lane.failed(TIMEOUT, time.monotonic(), 0.05)
    assert lane.stop_reason is None
    lane.failed(TIMEOUT, time.monotonic(), 0.05)
    assert lane.stop_reason is not None and lane.stats.timeouts == 7


def test_a_backoff_longer_than_the_run_has_left_gives_up_at_once(fake_provider):
    async def unavailable(kwargs):
        raise fake_provider.exceptions.ServiceUnavailableError("down", model="x", llm_provider="openai")

    fake_provider.behaviour = unavailable
    settings = InfraSettings(retry_base_seconds=100, retry_max_seconds=100, run_deadline_seconds=1)

    async def main():
        lane = _lane(settings)
        lane.rng = random.Random(3)  # a first backoff of U(0, 100) s is > 1 s with this seed
        started = time.monotonic()
        with pytest.raises(adapter.InfraStopped) as info:
            await adapter.complete(MODEL, [], None, 300, lane, infra.RunBudget(1))
        return time.monotonic() - started, info.value

    assert random.Random(3).uniform(0, 100) > 1
    elapsed, exc = asyncio.run(main())
    assert exc.reason == "run-deadline" and len(exc.failures) == 1 and elapsed < 0.5


def test_the_model_deadline_stops_it(fake_provider):
    fake_provider.behaviour = _hang
    settings = InfraSettings(model_deadline_seconds=0.3, stop_after_timeouts=100)
    stops: list[str] = []

    async def main():
        lane = _lane(settings, stops)
        with pytest.raises(adapter.InfraStopped) as info:
            await adapter.complete(MODEL, [], None, 300, lane)
        with pytest.raises(adapter.InfraStopped):
            await adapter.complete(MODEL, [], None, 300, lane)
        return info.value

    exc = asyncio.run(main())
    assert exc.reason == "model-stopped"
    assert len(stops) == 1 and "LRC_MODEL_DEADLINE_SECONDS" in stops[0]
    assert fake_provider.calls == 1


def test_the_progress_postfix_shows_retries_exclusions_waiting_and_concurrency():
    stats = InfraStats()
    lanes = [ModelLane(f"m/{i}", {}, InfraSettings(), stats, endpoint=ModelEndpoint(max_concurrency=4)) for i in range(2)]
    assert stats.postfix() == "retries=0 excluded=0 backoff=0s"
    lanes[0].failed(RATE, time.monotonic(), 1.0)
    lanes[1].failed(SERVER, time.monotonic(), 1.0)
    stats.waited_seconds += 12.4
    stats.exclude("run-deadline")
    stats.exclude("run-deadline")
    stats.exclude("model-stopped")
    lanes[1].stop("test")
    assert stats.postfix() == "retries=2 excluded=3 backoff=12s concurrency=7/8 stopped=1"
    assert stats.describe_exclusions() == "1 model stopped, 2 run deadline passed"


def test_reference_models_run_in_process_without_deadlines_or_stops():
    settings = InfraSettings(request_timeout_seconds=0.1, run_deadline_seconds=0.1, model_deadline_seconds=0.1,
                             stop_after_timeouts=1)
    ref = ModelLane("lrc/baseline", {"reference": True}, settings, InfraStats())
    remote = ModelLane("openai/x", {}, settings, InfraStats())
    assert ref.call_timeout(300) == 300 and remote.call_timeout(300) == 0.1
    assert ref.run_budget().remaining() == float("inf") and remote.run_budget().remaining() == 0.1
    assert ref.model_remaining() == float("inf") and remote.model_remaining() <= 0.1
    ref.failed(TIMEOUT, time.monotonic(), 300)
    remote.failed(TIMEOUT, time.monotonic(), 0.1)
    assert ref.stop_reason is None and remote.stop_reason is not None


# -- an endpoint nothing answers at -----------------------------------------------------------

def _refused(fake_provider, cause: BaseException):
    """A provider whose every call fails the way litellm reports a connection that could not be
    made: an InternalServerError (status 500) whose cause chain holds the transport's error."""
    async def behaviour(kwargs):
        try:
            raise cause
        except BaseException as exc:
            raise fake_provider.exceptions.InternalServerError("Connection error.", llm_provider="openai", model="x") from exc
    return behaviour


class ConnectError(Exception):  # the name httpx's transport error has
    pass


CONNECTION_FAILURES = {
    "refused": ConnectionRefusedError(111, "Connect call failed ('127.0.0.1', 9)"),
    "dns": __import__("socket").gaierror(-2, "Name or service not known"),
    "unreachable": OSError(__import__("errno").ENETUNREACH, "Network is unreachable"),
    "httpx-connect-error": ConnectError("All connection attempts failed"),
}


@pytest.mark.parametrize("case", sorted(CONNECTION_FAILURES))
def test_an_unreachable_endpoint_stops_the_model_after_a_short_streak(fake_provider, case):
    fake_provider.behaviour = _refused(fake_provider, CONNECTION_FAILURES[case])
    settings = InfraSettings(stop_after_connection_failures=4, retry_base_seconds=0.001, retry_max_seconds=0.005)
    stops: list[str] = []

    async def main():
        lane = _lane(settings, stops, concurrency=8)
        calls = [adapter.complete(MODEL, [{"role": "user", "content": str(i)}], None, 300, lane) for i in range(200)]
        started = time.monotonic()
        results = await asyncio.gather(*calls, return_exceptions=True)
        return time.monotonic() - started, results, lane

    elapsed, results, lane = asyncio.run(main())
    assert all(isinstance(r, adapter.InfraExhausted) for r in results), results[:3]
    assert sum(isinstance(r, adapter.InfraStopped) and r.reason == "model-stopped" for r in results) >= 150
    assert len(stops) == 1, stops
    assert ENDPOINT in stops[0] and "failed to connect" in stops[0] and "last 4 attempts" in stops[0]
    assert str(CONNECTION_FAILURES[case]).split("]")[-1].strip()[:20] in stops[0]  # the error itself is named
    assert lane.consecutive_connection_failures >= 4 and lane.stats.connection_failures >= 4
    # 200 calls of 8 attempts each would be 1,600 attempts; a stopped model sends nothing more.
    assert fake_provider.calls <= 4 + 8 and elapsed < 5.0  # the streak plus what was in flight


@pytest.mark.parametrize("other", ["500", "429", "timeout", "connect-timeout"])
def test_other_failures_never_count_as_unreachable(fake_provider, other):
    ex = fake_provider.exceptions

    async def behaviour(kwargs):
        if other == "500":
            raise ex.InternalServerError("boom", llm_provider="openai", model="x")
        if other == "429":
            raise ex.RateLimitError("slow down", llm_provider="openai", model="x")
        if other == "timeout":
            raise ex.Timeout("timed out", model="x", llm_provider="openai")
        try:  # a connect *timeout* is a timeout (its own rule), even with a connection error around it
            raise TimeoutError("connect timed out")
        except TimeoutError as exc:
            raise ex.APIConnectionError("Connection error.", llm_provider="openai", model="x") from exc

    fake_provider.behaviour = behaviour
    settings = InfraSettings(max_attempts=6, stop_after_connection_failures=2, stop_after_timeouts=100,
                             retry_base_seconds=0.001, retry_max_seconds=0.002, retry_after_max_seconds=0.002)
    lane = _lane(settings)
    with pytest.raises(adapter.InfraExhausted) as info:
        asyncio.run(adapter.complete(MODEL, [], None, 300, lane))
    assert not isinstance(info.value, adapter.InfraStopped)
    assert lane.stop_reason is None and lane.stats.connection_failures == 0 and fake_provider.calls == 6


def test_a_success_resets_the_connection_streak():
    lane = _lane(InfraSettings(stop_after_connection_failures=3))
    for _ in range(4):
        lane.failed(CONNECT, time.monotonic(), 1.0, "refused")
        lane.failed(CONNECT, time.monotonic(), 1.0, "refused")
        lane.succeeded()
    assert lane.stop_reason is None and lane.consecutive_connection_failures == 0
    lane.failed(CONNECT, time.monotonic(), 1.0, "refused")
    lane.failed(SERVER, time.monotonic(), 1.0)  # a 5xx neither counts nor resets
    lane.failed(TIMEOUT, time.monotonic(), 1.0)  # nor does a timeout (its own rule)
    lane.failed(CONNECT, time.monotonic(), 1.0, "refused")
    assert lane.stop_reason is None
    lane.failed(CONNECT, time.monotonic(), 1.0, "refused")
    assert lane.stop_reason is not None and "refused" in lane.stop_reason and lane.stats.connection_failures == 8 + 3


def test_an_embedded_reference_model_is_never_stopped_as_unreachable():
    lane = ModelLane("lrc/baseline", {"reference": True}, InfraSettings(stop_after_connection_failures=1), InfraStats())
    for _ in range(5):
        lane.failed(CONNECT, time.monotonic(), 1.0, "refused")
    assert lane.stop_reason is None


def test_the_unreachable_classifier_reads_the_cause_chain():
    def chained(*excs):
        top = None
        for exc in reversed(excs):
            if top is not None:
                exc.__cause__ = top
            top = exc
        return top

    assert adapter.unreachable(chained(RuntimeError("Connection error."), ConnectionRefusedError(111, "refused"))) == "[Errno 111] refused"
    assert adapter.unreachable(chained(RuntimeError("x"), ConnectionResetError(104, "reset by peer"))) is None  # dropped, not refused
    assert adapter.unreachable(RuntimeError("Internal Server Error")) is None
    assert adapter.unreachable(chained(RuntimeError("x"), ConnectionRefusedError(111, "r"), TimeoutError("t"))) is None
    assert infra.failure_class(500, False, False, True) == CONNECT
    assert infra.failure_class(429, False, False, True) == RATE
    assert infra.failure_class(None, False, True, True) == TIMEOUT
