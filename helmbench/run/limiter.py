"""Adaptive concurrency (AIMD): at most `limit` calls in flight; halve on a 429, grow back slowly.

Why not a plain semaphore: a fixed concurrency that trips a provider's rate limit keeps
tripping it, and every 429 costs a backoff. Halving on a 429 (at most once per `cooldown`,
so one burst of 429s counts once) and adding one slot per `limit` successes converges on
what the provider accepts, like TCP congestion control. It grows back only once no 429 has
arrived for a `cooldown`: the 429s of calls sent before a cut would otherwise be outrun by the
successes of the others, and the limit would never settle below what the provider refuses.
It also remembers the highest limit that went a whole `cooldown` without a 429 (`good`): when
growing past it draws a 429, it steps back to it rather than halving, so a provider with a
fixed ceiling is used at that ceiling (one probing 429 now and then), not at half of it.

Each model (and the judge) has its own limiter: OpenRouter routes each model to a different
upstream provider with its own limits, so a 429 from one says nothing about the others.
A storm of 429s is reported once, at the end (`summary`), not as one line per halving.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import deque
from contextlib import asynccontextmanager

log = logging.getLogger("helmbench.run.limiter")


class AdaptiveLimiter:
    def __init__(self, maximum: int, *, minimum: int = 1, cooldown: float = 1.0, name: str = ""):
        self.maximum = max(1, maximum)
        self.minimum = max(1, min(minimum, self.maximum))
        self.limit = float(self.maximum)
        self.cooldown = cooldown
        self.name = name
        self.in_flight = 0
        self.rate_limited = 0  # 429s seen
        self.lowest = self.maximum  # the lowest concurrency they brought it to
        self._last_cut = -float("inf")
        self._last_429 = -float("inf")
        self.good = 0  # the highest limit that went a cooldown without a 429 (0: unknown)
        self._waiters: deque[asyncio.Future] = deque()

    @property
    def effective(self) -> int:
        return max(self.minimum, int(self.limit))

    async def acquire(self) -> None:
        if self.in_flight < self.effective and not self._waiters:
            self.in_flight += 1
            return
        fut = asyncio.get_running_loop().create_future()
        self._waiters.append(fut)
        try:
            await fut  # the slot is counted for us by _wake
        except asyncio.CancelledError:
            if fut.done() and not fut.cancelled():
                self.release()
            else:
                try:
                    self._waiters.remove(fut)
                except ValueError:
                    pass
            raise

    def release(self) -> None:
        self.in_flight -= 1
        self._wake()

    def _wake(self) -> None:
        while self._waiters and self.in_flight < self.effective:
            fut = self._waiters.popleft()
            if not fut.done():
                self.in_flight += 1
                fut.set_result(None)

    @asynccontextmanager
    async def slot(self):
        await self.acquire()
        try:
            yield
        finally:
            self.release()

    def on_success(self) -> None:
        if self.limit < self.maximum and time.monotonic() - self._last_429 >= self.cooldown:
            self.good = max(self.good, self.effective)
            before = self.effective
            self.limit = min(self.maximum, self.limit + 1 / max(self.limit, 1))
            if self.effective > before:
                self._wake()

    def on_rate_limit(self) -> None:
        self.rate_limited += 1
        now = self._last_429 = time.monotonic()
        if now - self._last_cut < self.cooldown:
            return
        self._last_cut = now
        old = self.effective
        if 0 < self.good < old:  # a probe above the known-good limit: step back to it
            self.limit = float(self.good)
        else:  # the provider's limit is lower than we knew: halve, and learn it again
            self.limit = max(float(self.minimum), self.limit / 2)
            self.good = 0
        self.lowest = min(self.lowest, self.effective)
        if self.effective != old:
            log.debug("%s rate limited: concurrency %d → %d", self.name, old, self.effective)

    def summary(self) -> str | None:
        """One line for the whole invocation, or None if it was never rate limited."""
        if not self.rate_limited:
            return None
        who = f"{self.name}: " if self.name else ""
        text = f"{who}rate limited {self.rate_limited} time(s): concurrency {self.maximum} → {self.lowest}"
        if self.effective != self.lowest:
            text += f" (back to {self.effective} at the end)"
        return text


def report(limiters) -> None:
    """Log each limiter's summary line, once, at the end of a phase."""
    for limiter in limiters:
        line = limiter.summary()
        if line:
            log.info("%s", line)
