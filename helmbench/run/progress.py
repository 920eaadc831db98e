"""Progress: a live rich bar on a terminal, a plain log line every ~10 s otherwise (CI logs).

Both show the same numbers: calls done/total, rate, ETA, money billed so far and errors. A caller
without a terminal (the Python API, a notebook) passes `on_progress` and gets each change as a
`ProgressUpdate` instead of parsing log lines.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass
from typing import Callable

from rich.console import Console

log = logging.getLogger("helmbench.run.progress")


def _eta(seconds: float | None) -> str:
    if seconds is None:
        return "?"
    seconds = int(seconds)
    return f"{seconds // 3600}h{seconds % 3600 // 60:02d}m" if seconds >= 3600 else f"{seconds // 60}m{seconds % 60:02d}s"


@dataclass(frozen=True)
class ProgressUpdate:
    """One step of a phase, as `on_progress` receives it."""

    phase: str  # "model calls" or "judge calls"
    done: int
    total: int
    cost: float  # billed in this phase so far
    errors: int


class Progress:
    def __init__(self, total: int, console: Console, *, live: bool, interval: float = 10.0, phase: str = "model calls",
                 on_progress: Callable[[ProgressUpdate], None] | None = None):
        self.total = total
        self.phase = phase
        self.on_progress = on_progress
        self.console = console
        self.live = live and total > 0
        self.interval = interval
        self.done = self.errors = 0
        self.cost = 0.0
        self.started = self.last_log = time.monotonic()
        self._bar = None
        self._task = None

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
        if self.live:
            from rich.progress import BarColumn, MofNCompleteColumn, Progress as Bar, TextColumn, TimeRemainingColumn

            self._bar = Bar(
                TextColumn("calls"), BarColumn(), MofNCompleteColumn(), TextColumn("{task.fields[rate]:.1f}/s"),
                TimeRemainingColumn(), TextColumn("${task.fields[cost]:.4f}"), TextColumn("{task.fields[errors]} errors"),
                console=self.console, transient=False, refresh_per_second=4,
            )
            self._bar.__enter__()
            self._task = self._bar.add_task("calls", total=self.total, rate=0.0, cost=0.0, errors=0)
        return self

    def __exit__(self, *exc):
        if self._bar is not None:
            self._bar.__exit__(*exc)
            self._bar = None

    def advance(self, *, cost: float | None = None, error: bool = False) -> None:
        self.done += 1
        self.total = max(self.total, self.done)  # a total is a bound (a retried simulated user adds calls)
        self.cost += cost or 0.0
        self.errors += error
        if self.on_progress is not None:
            self.on_progress(ProgressUpdate(self.phase, self.done, self.total, self.cost, self.errors))
        if self._bar is not None:
            self._bar.update(self._task, completed=self.done, rate=self.rate(), cost=self.cost, errors=self.errors)
        else:
            self.tick()

    def tick(self) -> None:
        """Log a line if `interval` has passed (called on progress and by a timer)."""
        if self.live:
            return
        now = time.monotonic()
        if now - self.last_log >= self.interval:
            self.last_log = now
            log.info("progress: %s", self.summary())
