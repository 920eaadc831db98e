"""Call with retries: exponential backoff with full jitter, honouring Retry-After.

Transient failures (429, 5xx, timeouts, dropped connections) are retried up to
`max_attempts` (a 429 met while the model's limiter can still slow down is a signal to slow
down, not a failure of this call, so it does not use up an attempt, up to 4 × `max_attempts`
in all); an answer without choices (which may be billed) only up to the smaller
`max_empty_attempts`; permanent ones (400, 403, 404) are returned at once as the final error;
fatal ones (401, 402) propagate so the run stops. The wait happens outside the concurrency
slot, so a backing-off call does not hold capacity other calls could use.

Money: every attempt is admitted by the invocation's `Budget` (which reserves what calls in
flight will likely cost) and settled with what it was billed; the returned completion or
error carries the sum billed over all its attempts, so a paid failure is never unrecorded.
"""

from __future__ import annotations

import asyncio
import logging
import random
from typing import Awaitable, Callable

from helmbench.run.budget import Budget
from helmbench.run.calls import Completion, ProviderError
from helmbench.run.config import RetryPolicy
from helmbench.run.limiter import AdaptiveLimiter

log = logging.getLogger("helmbench.run.retry")


def backoff_delay(policy: RetryPolicy, attempt: int, retry_after: float | None, rng: random.Random) -> float:
    """Full jitter: uniform(0, min(cap, base·2^(attempt−1))); a Retry-After wins when given (capped)."""
    if retry_after is not None:
        return min(policy.max_delay, retry_after)
    return rng.uniform(0, min(policy.max_delay, policy.base_delay * 2 ** (attempt - 1)))


def _add(total: float | None, cost: float | None) -> float | None:
    return total if cost is None else (total or 0.0) + cost


async def call_with_retries(
    call: Callable[[], Awaitable[Completion]],
    *,
    policy: RetryPolicy,
    limiter: AdaptiveLimiter,
    may_start: Callable[[], bool] = lambda: True,
    rng: random.Random | None = None,
    label: str = "",
    budget: Budget | None = None,
) -> tuple[Completion | ProviderError | None, int]:
    """(completion or final error, attempts made); (None, 0) if stopped before the first attempt.

    `may_start` (and the budget) is checked once a slot is held, right before each attempt, so
    a cost limit or Ctrl-C reached while waiting for a slot stops the call from being sent.
    Raises fatal errors and cancellation.
    """
    rng = rng or random.Random()
    budget = budget or Budget(None)
    attempt = empty = free = 0
    billed: float | None = None
    last: ProviderError | None = None
    while True:
        try:
            async with limiter.slot():
                if not await budget.admit(may_start):  # checks may_start first
                    return last, attempt
                attempt += 1
                try:
                    result = await call()
                except ProviderError as err:
                    budget.settle(err.cost, answered=err.cost is not None)
                    billed = err.cost = _add(billed, err.cost)
                    raise
                except BaseException:
                    budget.settle(None, answered=False)
                    raise
                budget.settle(result.cost)
                if billed is not None:
                    result.cost = _add(billed, result.cost)
            limiter.on_success()
            return result, attempt
        except ProviderError as err:
            if err.fatal:
                raise
            last = err
            empty += err.kind == "empty_choices"
            if err.kind == "rate_limit":
                free += limiter.effective > limiter.minimum and attempt < 4 * policy.max_attempts
                limiter.on_rate_limit()
            if (not err.transient or attempt - free >= policy.max_attempts or empty >= policy.max_empty_attempts
                    or not may_start()):
                log.debug("%s: giving up after %d attempt(s): %s", label, attempt, err.kind)
                return err, attempt
            delay = backoff_delay(policy, attempt, err.retry_after, rng)
            log.debug("%s: attempt %d failed (%s); retrying in %.2fs", label, attempt, err.kind, delay)
            await asyncio.sleep(delay)
