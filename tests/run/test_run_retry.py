"""Backoff, the adaptive limiter and the retry loop, without a network."""

from __future__ import annotations

import asyncio
import random

import pytest

from helmbench.run.calls import Completion, ProviderError, parse_retry_after
from helmbench.run.config import RetryPolicy
from helmbench.run.limiter import AdaptiveLimiter
from helmbench.run.retry import backoff_delay, call_with_retries

POLICY = RetryPolicy(max_attempts=4, base_delay=0.001, max_delay=0.01)
OK = Completion(content="{}", finish_reason="stop")


def test_full_jitter_stays_within_the_exponential_envelope():
    policy = RetryPolicy(max_attempts=9, base_delay=1.0, max_delay=60.0)
    rng = random.Random(1)
    for attempt in range(1, 9):
        for _ in range(50):
            assert 0 <= backoff_delay(policy, attempt, None, rng) <= min(60.0, 2 ** (attempt - 1))


def test_retry_after_is_honoured_and_capped():
    policy = RetryPolicy(max_attempts=3, base_delay=1.0, max_delay=60.0)
    assert backoff_delay(policy, 1, 7.0, random.Random()) == 7.0
    assert backoff_delay(policy, 1, 600.0, random.Random()) == 60.0


@pytest.mark.parametrize("headers, seconds", [({"retry-after": "3"}, 3.0), ({"retry-after-ms": "250"}, 0.25),
                                               ({}, None), ({"retry-after": "soon"}, None)])
def test_parse_retry_after(headers, seconds):
    assert parse_retry_after(headers) == seconds


def _scripted(*outcomes):
    calls = []

    async def call():
        calls.append(1)
        item = outcomes[len(calls) - 1]
        if isinstance(item, Exception):
            raise item
        return item

    return call, calls


def _run(call, **kw):
    return asyncio.run(call_with_retries(call, policy=POLICY, limiter=AdaptiveLimiter(4), **kw))


def test_transient_errors_are_retried_until_success():
    call, calls = _scripted(ProviderError("rate_limit", "429", transient=True, retry_after=0.0),
                            ProviderError("server_error", "502", transient=True), OK)
    assert _run(call) == (OK, 3)


def test_permanent_errors_are_not_retried():
    err = ProviderError("bad_request", "400")
    call, calls = _scripted(err, OK)
    assert _run(call) == (err, 1)


def test_retries_stop_at_max_attempts():
    err = ProviderError("server_error", "500", transient=True)
    call, calls = _scripted(*[err] * 10)
    assert _run(call) == (err, POLICY.max_attempts)


def test_fatal_errors_propagate():
    call, _ = _scripted(ProviderError("auth", "401", fatal=True))
    with pytest.raises(ProviderError):
        _run(call)


def test_nothing_is_sent_once_stopping():
    call, calls = _scripted(OK)
    assert _run(call, may_start=lambda: False) == (None, 0) and calls == []


def test_no_retry_once_stopping():
    err = ProviderError("server_error", "500", transient=True)
    call, calls = _scripted(err, OK)
    checks = iter([True, False, False])
    assert _run(call, may_start=lambda: next(checks)) == (err, 1)


def test_limiter_halves_on_rate_limit_and_grows_back_slowly():
    lim = AdaptiveLimiter(16, cooldown=0.0)
    lim.on_rate_limit()
    assert lim.effective == 8
    lim.on_rate_limit()
    assert lim.effective == 4
    for _ in range(5):
        lim.on_success()
    assert lim.effective == 5  # about +1 per `limit` successes
    for _ in range(500):
        lim.on_success()
    assert lim.effective == 16


def test_limiter_bounds_concurrency():
    lim = AdaptiveLimiter(3)
    peak = 0

    async def task():
        nonlocal peak
        async with lim.slot():
            peak = max(peak, lim.in_flight)
            await asyncio.sleep(0.005)

    async def main():
        await asyncio.gather(*(task() for _ in range(30)))

    asyncio.run(main())
    assert peak == 3 and lim.in_flight == 0


def test_limiter_cancellation_frees_the_slot():
    lim = AdaptiveLimiter(1)

    async def main():
        await lim.acquire()
        waiter = asyncio.create_task(lim.acquire())
        await asyncio.sleep(0)
        waiter.cancel()
        await asyncio.gather(waiter, return_exceptions=True)
        lim.release()
        assert lim.in_flight == 0
        await asyncio.wait_for(lim.acquire(), 1)

    asyncio.run(main())


def test_limiter_steps_back_to_the_last_quiet_limit_when_a_probe_above_it_is_refused():
    lim = AdaptiveLimiter(8, cooldown=0.0)
    lim.on_rate_limit()
    assert lim.effective == 4
    for _ in range(5):
        lim.on_success()  # quiet at 4: 4 is known good, and it probes 5
    assert lim.effective == 5 and lim.good == 4
    lim.on_rate_limit()
    assert lim.effective == 4, "back to the known-good limit, not halved to 2"
    lim.on_rate_limit()  # refused at the known-good limit itself: the provider tightened
    assert lim.effective == 2 and lim.good == 0


def test_429s_while_the_limiter_can_still_slow_down_use_up_no_attempt():
    limited = ProviderError("rate_limit", "429", transient=True, retry_after=0.0)
    call, calls = _scripted(*[limited] * 40)
    result = asyncio.run(call_with_retries(call, policy=POLICY, limiter=AdaptiveLimiter(8, cooldown=0.0)))
    assert result == (limited, POLICY.max_attempts + 3)  # 8 → 4 → 2 → 1 were free; at 1 each 429 counts
    call, calls = _scripted(*[limited] * 40)
    assert asyncio.run(call_with_retries(call, policy=POLICY, limiter=AdaptiveLimiter(1))) == (limited, 4)
