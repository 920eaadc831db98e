"""The live progress bar of `helmbench run` on a terminal, drawn from the run's `Progress` events.

Why here: the run stage only counts and emits events (run/progress.py); drawing is the CLI's. One
bar task per phase, created at its first event.
"""

from __future__ import annotations

import time

from rich.console import Console


class ProgressBar:
    """`with ProgressBar(console) as bar: api.run(..., on_progress=bar)`."""

    def __init__(self, console: Console):
        self.console = console
        self._bar = None
        self._tasks: dict[str, tuple[int, float]] = {}  # phase → (task id, when it started)

    def __enter__(self):
        from rich.progress import BarColumn, MofNCompleteColumn, Progress as Bar, TextColumn, TimeRemainingColumn

        self._bar = Bar(
            TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TextColumn("{task.fields[rate]:.1f}/s"),
            TimeRemainingColumn(), TextColumn("${task.fields[cost]:.4f}"), TextColumn("{task.fields[errors]} errors"),
            console=self.console, transient=False, refresh_per_second=4,
        )
        self._bar.__enter__()
        return self

    def __exit__(self, *exc):
        if self._bar is not None:
            self._bar.__exit__(*exc)
            self._bar = None

    def __call__(self, step) -> None:
        if self._bar is None:
            return
        if step.phase not in self._tasks:
            self._tasks[step.phase] = (self._bar.add_task(step.phase, total=step.total, rate=0.0, cost=0.0, errors=0),
                                       time.monotonic())
        task, started = self._tasks[step.phase]
        elapsed = time.monotonic() - started
        self._bar.update(task, completed=step.done, total=step.total, rate=step.done / elapsed if elapsed > 0 else 0.0,
                         cost=step.cost, errors=step.errors)
