"""The worker pool under the phase engine: producers, workers, signals, first fatal error.

Every kind of call stops the same way, so that behaviour lives here once:
- the first Ctrl-C (or SIGTERM) stops starting calls and waits, up to a bounded and printed
  time, for the calls in flight: they are paid for already, and saving them means the resumed
  run does not pay for them again;
- a second Ctrl-C (or the end of that wait) cancels what is still in flight at once;
- the first fatal error (a 401) stops every worker.

Work runs in lanes, one per model: each lane has its own queue, producer and workers, so a
model slowed by its own rate limits (its workers waiting for its limiter) never holds up the
jobs of another model, as one shared queue would.
"""

from __future__ import annotations

import asyncio
import logging
import signal

from helmbench.run.config import drain_seconds

log = logging.getLogger("helmbench.run")


async def run_workers(owner, lanes: dict, *, what: str = "calls") -> tuple[bool, BaseException | None]:
    """Per lane (key → n workers): run `owner.produce(queue, n, lane)` and n × `owner.work(queue, lane)` to the end.

    Returns (interrupted, fatal error or None); sets `owner.stopping` whenever it stops early.
    `owner.in_flight` tells how many calls a drain waits for.
    """
    tasks = []
    for lane, n_workers in lanes.items():
        queue: asyncio.Queue = asyncio.Queue(maxsize=n_workers)
        tasks += [asyncio.create_task(owner.work(queue, lane)) for _ in range(n_workers)]
        tasks.append(asyncio.create_task(owner.produce(queue, n_workers, lane)))
    interrupted = False
    loop = asyncio.get_running_loop()
    drain = drain_seconds()
    timer: asyncio.TimerHandle | None = None

    def cancel_all(why: str) -> None:
        left = owner.in_flight
        if left:
            log.warning("%s: cancelling %d %s still in flight (the next run asks them again)", why, left, what)
        for t in tasks:
            t.cancel()

    def on_signal() -> None:
        nonlocal interrupted, timer
        if interrupted:
            cancel_all("interrupted again")
            return
        interrupted = owner.stopping = True
        waiting = owner.in_flight
        if waiting:
            log.warning("interrupted: starting no new %s; waiting up to %.0f s for the %d in flight (already paid "
                        "for) to be saved. Press Ctrl-C again to stop at once.", what, drain, waiting)
            timer = loop.call_later(drain, cancel_all, f"still waiting after {drain:.0f} s")
        else:
            log.warning("interrupted: starting no new %s", what)

    installed = []
    for sig in (signal.SIGINT, signal.SIGTERM):
        try:
            loop.add_signal_handler(sig, on_signal)
            installed.append(sig)
        except (NotImplementedError, RuntimeError, ValueError):
            pass
    try:
        done, pending = await asyncio.wait(tasks, return_when=asyncio.FIRST_EXCEPTION)
        fatal = next((t.exception() for t in done if not t.cancelled() and t.exception()), None)
        if pending:
            owner.stopping = True
            for t in pending:
                t.cancel()
            await asyncio.wait(pending)
    finally:
        if timer is not None:
            timer.cancel()
        for sig in installed:
            loop.remove_signal_handler(sig)
    return interrupted, fatal
