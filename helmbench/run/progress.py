"""Progress as events: each phase counts its calls and hands a `Progress` to whoever listens.

Why events and no display here: the run stage prints nothing (the Python API returns data). A caller
passes `on_progress` and gets each step; the CLI draws its live bar from the same events
(`cli/progress_bar.py`). Without a listener (CI logs, a log file) a plain line is logged every
~10 s with the same numbers: calls done/total, rate, ETA, money billed so far and errors.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass
from typing import Callable

log = logging.getLogger("helmbench.run.progress")


def _eta(seconds: float | None) -> str:
    if seconds is None:
        return "?"
    seconds = int(seconds)
    return f"{seconds // 3600}h{seconds % 3600 // 60:02d}m" if seconds >= 3600 else f"{seconds // 60}m{seconds % 60:02d}s"


@dataclass(frozen=True)
class Progress:
    """One step of a run, as `on_progress` receives it (`helmbench.Progress`): in `phase` ("model calls",
    "conversation turns", "judge calls"), calls done of `total` (a bound: it grows when a phase makes
    more calls than it expected, so `done` never passes it), USD billed so far in the phase, and how
    many of the calls ended in an error."""

    phase: str
    done: int
    total: int
    cost: float
    errors: int


class PhaseCounter:
    """The calls of one phase: counted, sent to `on_progress`, and logged now and then when `log_lines`."""

    def __init__(self, total: int, *, phase: str = "model calls", on_progress: Callable[[Progress], None] | None = None,
                 log_lines: bool = True, interval: float = 10.0):
        self.total = total
        self.phase = phase
        self.on_progress = on_progress
        self.log_lines = log_lines
        self.interval = interval
        self.done = self.errors = 0
        self.cost = 0.0
        self.started = self.last_log = time.monotonic()

    def rate(self) -> float:
        elapsed = time.monotonic() - self.started
        return self.done / elapsed if elapsed > 0 else 0.0

    def summary(self) -> str:
        rate = self.rate()
        eta = (self.total - self.done) / rate if rate > 0 else None
        pct = 100 * self.done / self.total if self.total else 100
        return (f"{self.done}/{self.total} calls ({pct:.1f}%) · {rate:.1f}/s · ETA {_eta(eta)} · "
                f"${self.cost:.4f} billed · {self.errors} error(s)")

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return None

    def advance(self, *, cost: float | None = None, error: bool = False) -> None:
        self.done += 1
        self.total = max(self.total, self.done)  # a total is a bound (a retried simulated user adds calls)
        self.cost += cost or 0.0
        self.errors += error
        if self.on_progress is not None:
            self.on_progress(Progress(self.phase, self.done, self.total, self.cost, self.errors))
        self.tick()

    def tick(self) -> None:
        """Log a line if `interval` has passed (called on progress and by a timer)."""
        if not self.log_lines:
            return
        now = time.monotonic()
        if now - self.last_log >= self.interval:
            self.last_log = now
            log.info("progress: %s", self.summary())
