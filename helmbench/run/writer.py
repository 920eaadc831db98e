"""The single writer: a thread with its own connection that commits at least every `interval` s.

Why a thread: a commit (and SQLite's periodic WAL checkpoint) can take tens of milliseconds,
and on the event loop that stalls every in-flight call. Why one writer that batches: SQLite
allows one writer at a time and a commit per response would dominate at high concurrency.
Committing every quarter second bounds what a `kill -9` can lose to well under a second of
work, and because every write is an upsert on a natural key, replaying lost work never
duplicates rows. A write error (disk full, constraint) is re-raised in the caller's thread.
"""

from __future__ import annotations

import logging
import queue
import threading
from pathlib import Path

from helmbench.store.db import connect
from helmbench.store.responses import Write, write_batch

log = logging.getLogger("helmbench.run.writer")
_STOP = object()


class Writer:
    def __init__(self, db_path: Path | str, *, interval: float = 0.25):
        self.db_path = db_path
        self.interval = interval
        self.written = 0
        self.error: BaseException | None = None
        self._queue: queue.SimpleQueue = queue.SimpleQueue()
        self._wake = threading.Event()
        self._thread = threading.Thread(target=self._run, name="helmbench-writer", daemon=True)
        self._thread.start()

    def add(self, write: Write) -> None:
        """Queue a write; it is committed within `interval` seconds. Never blocks the event loop."""
        self._check()
        self._queue.put(write)

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
        self._check()

    def _check(self) -> None:
        if self.error is not None:
            raise self.error

    def write(self, db, batch: list) -> int:
        """Commit one batch on the writer's connection (the judge's writer commits judged cases)."""
        return write_batch(db, batch)

    def _run(self) -> None:
        # The thread sleeps between batches instead of waking per item: waking per item would
        # take the GIL from the event loop once per response.
        db = connect(self.db_path)
        waiters: list[threading.Event] = []
        try:
            stop = False
            while not stop:
                self._wake.wait(self.interval)
                self._wake.clear()
                pending: list[Write] = []
                while True:
                    try:
                        item = self._queue.get_nowait()
                    except queue.Empty:
                        break
                    if item is _STOP:
                        stop = True
                    elif isinstance(item, threading.Event):
                        waiters.append(item)
                    else:
                        pending.append(item)
                if pending:
                    self.written += self.write(db, pending)
                    log.debug("committed %d write(s)", len(pending))
                for w in waiters:
                    w.set()
                waiters = []
        except BaseException as exc:  # surfaced to the event loop by _check
            self.error = exc
            log.error("writing results failed: %s", exc)
        finally:
            for w in waiters:
                w.set()
            db.conn.close()
