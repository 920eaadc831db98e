"""The worker pool both phases of a run share: producers, workers, signals, first fatal error.

Model calls and judge calls stop the same way — Ctrl-C or SIGTERM cancels what is in
flight so the writer can flush what completed, and the first fatal error (a 401) stops
every worker — so that behaviour lives here once.
"""

from __future__ import annotations

import asyncio
import logging
import signal

log = logging.getLogger("helmbench.run")


async def run_workers(owner, n_workers: int, *, interrupted_message: str) -> tuple[bool, BaseException | None]:
    """Run `owner.produce(queue, n)` and n × `owner.work(queue)` to the end.

    Returns (interrupted, fatal error or None); sets `owner.stopping` whenever it stops early.
    """
    queue: asyncio.Queue = asyncio.Queue(maxsize=n_workers)
    tasks = [asyncio.create_task(owner.work(queue)) for _ in range(n_workers)]
    tasks.append(asyncio.create_task(owner.produce(queue, n_workers)))
    interrupted = False
    loop = asyncio.get_running_loop()

    def on_signal() -> None:
        nonlocal interrupted
        if not interrupted:
            interrupted = owner.stopping = True
            log.warning(interrupted_message)
            for t in tasks:
                t.cancel()

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
        for sig in installed:
            loop.remove_signal_handler(sig)
    return interrupted, fatal
