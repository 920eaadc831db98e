"""What keeps a call's CPU close to a bare litellm loop (issue #30), checked in-process on the real
writer thread and a real SQLite file: the sent rows of one turn of the event loop share one commit,
each still committed before its caller goes on; the heap is frozen for a phase and unfrozen after;
a log record is formatted once, whatever the number of handlers, and still redacted."""

from __future__ import annotations

import asyncio
import gc
import logging
import sqlite3
import time

import helmbench.run.writer as writer_mod
from helmbench.run import engine as engine_mod
from helmbench.run.logs import Redact
from helmbench.run.writer import Writer
from helmbench.store import open_db
from helmbench.store.ledger import Account, sent_row


def _rows(n: int) -> list[dict]:
    return [sent_row(Account("answer", None, f"sha256:{i}"), "test/m", 1, "2026-01-01T00:00:00+00:00", "inv")
            for i in range(n)]


def test_sent_rows_of_one_loop_turn_share_one_commit_and_each_is_on_disk_before_its_caller_goes_on(tmp_path,
                                                                                                     monkeypatch):
    db = tmp_path / "results.db"
    open_db(db).conn.close()
    commits: list[int] = []
    real = writer_mod.write_sent

    def counting(conn, rows):
        rows = list(rows)
        commits.append(len(rows))
        real(conn, rows)

    monkeypatch.setattr(writer_mod, "write_sent", counting)
    writer = Writer(db, interval=60)  # no timed batch in between: only the sent rows wake the thread
    rows = _rows(50)
    seen: list[int] = []

    async def one(row):
        time.sleep(0.002)  # work between two calls' rows in the same turn (it lets the writer thread run)
        await writer.sent(row)
        with sqlite3.connect(db) as conn:  # another connection: committed, not only written
            seen.append(conn.execute("SELECT count(*) FROM calls WHERE uid = ?", [row["uid"]]).fetchone()[0])

    async def main():
        await asyncio.gather(*(one(r) for r in rows))
        await one(_rows(51)[50])  # a later turn: its own wake

    try:
        asyncio.run(main())
    finally:
        writer.close()
    assert commits == [50, 1]
    assert seen == [1] * 51


def test_a_phase_runs_on_a_frozen_heap_and_unfreezes_it_after(monkeypatch):
    during = []

    async def execute(self):
        during.append(gc.get_freeze_count())
        return "completed"

    monkeypatch.setattr(engine_mod.Engine, "execute", execute)
    monkeypatch.setattr(engine_mod.Engine, "__init__", lambda self, kind, **kw: None)
    assert engine_mod.run_phase(object()) == "completed"
    assert during[0] > 1000  # the modules, the plan: everything alive when the phase started
    assert gc.get_freeze_count() == 0


def test_a_record_is_formatted_once_and_redacted_for_every_handler():
    calls = []

    class Arg:
        def __str__(self):
            calls.append(1)
            return "key sk-secret-123 in a message"

    logger = logging.getLogger("helmbench.test.redact")
    logger.propagate = False
    lines: list[str] = []

    class Keep(logging.Handler):
        def emit(self, record):
            lines.append(self.format(record))

    handlers = [Keep(), Keep()]
    for h in handlers:
        h.addFilter(Redact(["sk-secret-123"]))
        logger.addHandler(h)
    try:
        logger.warning("%s", Arg())
    finally:
        for h in handlers:
            logger.removeHandler(h)
    assert calls == [1]
    assert lines == ["key *** in a message"] * 2
