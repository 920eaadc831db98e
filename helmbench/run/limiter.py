"""Adaptive concurrency (AIMD): at most `limit` calls in flight; halve on a 429, grow back slowly.

Why not a plain semaphore: a fixed concurrency that trips a provider's rate limit keeps
tripping it, and every 429 costs a backoff. Halving on a 429 (at most once per `cooldown`,
so one burst of 429s counts once) and adding one slot per `limit` successes converges on
what the provider accepts, like TCP congestion control.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import deque
from contextlib import asynccontextmanager

log = logging.getLogger("helmbench.run.limiter")


class AdaptiveLimiter:
    def __init__(self, maximum: int, *, minimum: int = 1, cooldown: float = 1.0):
        self.maximum = max(1, maximum)
        self.minimum = max(1, min(minimum, self.maximum))
        self.limit = float(self.maximum)
        self.cooldown = cooldown
        self.in_flight = 0
        self._last_cut = -float("inf")
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
        if self.limit < self.maximum:
            before = self.effective
            self.limit = min(self.maximum, self.limit + 1 / max(self.limit, 1))
            if self.effective > before:
                self._wake()

    def on_rate_limit(self) -> None:
        now = time.monotonic()
        if now - self._last_cut < self.cooldown:
            return
        self._last_cut = now
        old = self.effective
        self.limit = max(float(self.minimum), self.limit / 2)
        if self.effective != old:
            log.info("rate limited: concurrency %d → %d", old, self.effective)
