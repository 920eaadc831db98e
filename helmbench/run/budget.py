"""The money of one invocation: what is billed, and what the calls in flight will likely add.

Why reserve: with 8 calls in flight, checking only what is billed lets all 8 land after the
limit was reached, so `--max-cost 0.001` overshoots by up to 8 calls. Each call in flight
reserves the dearest cost seen so far, and a call starts only while billed + reserved is
under the limit: the limit is overshot by at most about one call. Until the first call is
priced nothing is known, so calls start one at a time. Unpriced calls reserve nothing
(OpenRouter did not bill them as far as anyone can tell; a warning says so).
"""

from __future__ import annotations

import asyncio
from typing import Callable


class Budget:
    def __init__(self, max_cost: float | None, spent: float = 0.0, estimate: float | None = None):
        self.max_cost = max_cost
        self.spent = spent
        self.estimate = estimate  # the dearest priced attempt so far; None until one has finished
        self.in_flight = 0
        self.refused = 0  # attempts not started because of the limit
        self._changed: asyncio.Event | None = None

    def reached(self) -> bool:
        return self.max_cost is not None and self.spent >= self.max_cost

    def _room(self) -> bool | None:
        """True: start now; False: never (limit reached); None: wait for a call in flight to finish."""
        if self.max_cost is None:
            return True
        if self.reached():
            return False
        if self.estimate is None:
            return True if self.in_flight == 0 else None
        if self.spent + self.in_flight * self.estimate < self.max_cost:
            return True
        return None if self.in_flight else False

    async def admit(self, may_start: Callable[[], bool] = lambda: True) -> bool:
        """Wait until a call may start; False when the limit (or a stop) rules it out. Counts it in flight."""
        while True:
            if not may_start():
                return False
            room = self._room()
            if room is None:
                if self._changed is None:
                    self._changed = asyncio.Event()
                self._changed.clear()
                try:  # a stop sets no event: look again now and then
                    await asyncio.wait_for(self._changed.wait(), 0.5)
                except TimeoutError:
                    pass
                continue
            if not room:
                self.refused += 1
                return False
            self.in_flight += 1
            return True

    def next_phase(self) -> None:
        """A new phase (its own event loop) starts: what was billed stays, the price is learnt afresh
        (a judge's is not a model's)."""
        self.estimate = None
        self._changed = None

    def settle(self, cost: float | None, *, answered: bool = True) -> None:
        """An admitted attempt ended, billed `cost` (None: unpriced); an unanswered one teaches no price."""
        self.in_flight -= 1
        self.spent += cost or 0.0
        if answered:
            self.estimate = max(self.estimate or 0.0, cost or 0.0)
        if self._changed is not None:
            self._changed.set()
