"""The single writer: a thread with its own connection that commits at least every `interval` s.

Why a thread: a commit (and SQLite's periodic WAL checkpoint) can take tens of milliseconds,
and on the event loop that stalls every in-flight call. Why one writer that batches: SQLite
allows one writer at a time and a commit per response would dominate at high concurrency.
Committing every quarter second bounds what a `kill -9` can lose to well under a second of
work, and because every write is an upsert on a natural key, replaying lost work never
duplicates rows. A write error (disk full, a corrupt page) stops the thread but never silently:
`error` is set at once (the engine stops starting calls when it sees it), what could not be
committed is counted in `unsaved`, and `close()` re-raises the error in the caller's thread.

The call ledger (store/ledger.py) goes through the same thread: `sent()` wakes it at once and
returns once the call's `sent` row is committed (a group commit: every row queued meanwhile
shares it), so a request never leaves without its row on disk; the completion of a call is
committed after what the call returned, in queue order.
"""

from __future__ import annotations

import asyncio
import logging
import queue
import threading
import time
from pathlib import Path
from typing import Callable

from helmbench.store.db import connect
from helmbench.store.ledger import Done, Sent, write_done, write_sent
from helmbench.store.responses import Write, write_batch

log = logging.getLogger("helmbench.run.writer")
_STOP = object()


class Writer:
    def __init__(self, db_path: Path | str, *, interval: float = 0.25, write: Callable[..., int] = write_batch):
        """`write(db, batch) -> n`: how one batch is committed (the judge commits judged cases)."""
        self.db_path = db_path
        self.write = write
        self.interval = interval
        self.written = 0
        self.unsaved = 0  # writes received but not committed because writing failed
        self.error: BaseException | None = None
        self._queue: queue.SimpleQueue = queue.SimpleQueue()
        self._wake = threading.Event()
        self._wake_soon = None  # the event loop on which a wake for queued sent rows is scheduled
        self._thread = threading.Thread(target=self._run, name="helmbench-writer", daemon=True)
        self._thread.start()

    def add(self, write: Write) -> None:
        """Queue a write; it is committed within `interval` seconds. Never blocks the event loop.

        After a failed commit nothing more can be written: the write is counted as unsaved and
        the error is raised by `close()`, once the calls in flight have ended.
        """
        if self.error is not None:
            self.unsaved += 1
            return
        self._queue.put(write)

    async def sent(self, row: dict) -> None:
        """Commit a call's `sent` ledger row now; returns once it is on disk. Raises the writer's
        error if it cannot be written: a call is never sent without its row."""
        if self.error is not None:
            raise self.error
        loop = asyncio.get_running_loop()
        done = loop.create_future()
        self._queue.put(Sent(row, (loop, done)))
        if self._wake_soon is not loop:  # one wake for every row queued in this turn of the loop (_wake_once)
            self._wake_soon = loop
            loop.call_soon(self._wake_once)
        await done

    def _wake_once(self) -> None:
        """Wake the thread for the sent rows queued in one turn of the event loop: the calls a burst
        of answers frees start in the same turn, and one wake means one commit and one hand-over back
        for all of them instead of one per call (each a thread switch both ways). A row waits at most
        the rest of that turn; its request still leaves only once it is committed."""
        self._wake_soon = None
        self._wake.set()

    def flush(self) -> None:
        """Block until everything added so far is committed."""
        done = threading.Event()
        self._queue.put(done)
        self._wake.set()
        while not done.wait(0.1):
            if not self._thread.is_alive():
                break
        self._check()

    def close(self) -> None:
        """Commit what is pending and stop the thread."""
        if self._thread.is_alive():
            self._queue.put(_STOP)
            self._wake.set()
            self._thread.join()
        if self.error is not None:
            self.unsaved += self._drain()  # added while the thread was failing
        self._check()

    def _check(self) -> None:
        """Re-raise the writer's error as it was, carrying how many writes were and were not committed
        (the run's message tells the user what was saved)."""
        if self.error is not None:
            try:
                self.error.helmbench_written, self.error.helmbench_unsaved = self.written, self.unsaved
            except AttributeError:  # an exception type without attributes: the counts are only logged
                log.error("%d write(s) committed, %d not", self.written, self.unsaved)
            raise self.error

    def _run(self) -> None:
        # The thread sleeps between batches instead of waking per item: waking per item would
        # take the GIL from the event loop once per response.
        # A `sent` ledger row wakes it at once, but only the sent rows are committed then: the
        # rest waits for the batch at the end of the interval, as before (one commit per call more
        # would cost the event loop more than the call).
        db = connect(self.db_path)
        waiters: list[threading.Event] = []
        pending: list[Write] = []
        done: list[tuple] = []
        try:
            stop = False
            last = time.monotonic()
            while not stop:
                self._wake.wait(max(0.0, self.interval - (time.monotonic() - last)))
                self._wake.clear()
                sent: list[Sent] = []
                while True:
                    try:
                        item = self._queue.get_nowait()
                    except queue.Empty:
                        break
                    if item is _STOP:
                        stop = True
                    elif isinstance(item, threading.Event):
                        waiters.append(item)
                    elif isinstance(item, Sent):
                        sent.append(item)
                    elif isinstance(item, Done):
                        done.append(item.values)
                    else:
                        pending.append(item)
                if sent:
                    self._commit_sent(db, sent)
                if not (stop or waiters or time.monotonic() - last >= self.interval):
                    continue  # woken for sent rows only: the batch is not due yet
                last = time.monotonic()
                if pending:
                    batch, pending = pending, []
                    try:
                        self.written += self.write(db, batch)
                    except BaseException:
                        self.unsaved += len(batch)  # the transaction rolled back as a whole
                        raise
                    log.debug("committed %d write(s)", len(batch))
                if done:  # after what the calls returned: a completed row means its answer is stored
                    batch, done = done, []
                    with db.conn:
                        write_done(db.conn, batch)
                for w in waiters:
                    w.set()
                waiters = []
        except BaseException as exc:  # surfaced by close()
            self.error = exc
            self.unsaved += len(pending)  # received, waiting for their batch: never committed
            log.error("writing to %s failed: %s", self.db_path, exc)
        finally:
            for w in waiters:
                w.set()
            self.unsaved += self._drain()
            db.conn.close()

    def _commit_sent(self, db, sent: list[Sent]) -> None:
        try:
            with db.conn:
                write_sent(db.conn, [item.row for item in sent])
        except BaseException as exc:
            _notify(sent, exc)
            raise
        _notify(sent, None)

    def _drain(self) -> int:
        """Count (and drop) what is still queued after a failure; wake anyone flushing."""
        n = 0
        while True:
            try:
                item = self._queue.get_nowait()
            except queue.Empty:
                return n
            if isinstance(item, threading.Event):
                item.set()
            elif isinstance(item, Sent):
                _notify([item], self.error or RuntimeError("the writer stopped"))
            elif item is not _STOP:
                n += 1


def _notify(sent: list[Sent], error: BaseException | None) -> None:
    """Wake the calls waiting for these rows: one hand-over per event loop, not one per row."""
    by_loop: dict = {}
    for item in sent:
        loop, future = item.waiter
        by_loop.setdefault(loop, []).append(future)
    for loop, futures in by_loop.items():
        try:
            loop.call_soon_threadsafe(_settle, futures, error)
        except RuntimeError:  # that loop is closed: nobody waits any more
            pass


def _settle(futures: list[asyncio.Future], error: BaseException | None) -> None:
    for future in futures:
        if future.done():  # the waiting call was cancelled meanwhile
            continue
        if error is None:
            future.set_result(None)
        else:
            future.set_exception(error)
