"""results.db: migrations, pragmas, upsert semantics and full-text search."""

from __future__ import annotations

import sqlite3

import pytest

from helmbench.store import MIGRATIONS, open_db
from helmbench.store.migrations import Migration, migrate
from helmbench.store.responses import Write, done_keys, write_batch

CONTRACT = {
    "manifests", "pillars", "behaviours", "scenarios", "conditions", "user_contexts", "perturbations", "cases",
    "manifest_cases", "models", "runs", "responses", "results", "judgements", "result_judgements", "migrations",
}


def _response(**kw):
    row = {"request_hash": "sha256:r1", "model": "m/a", "settings_hash": "sha256:s", "sample": 0, "content": "hello",
           "finish_reason": "stop", "attempts": 1, "created_at": "2026-01-01T00:00:00+00:00"}
    row.update(kw)
    return row


@pytest.fixture
def db(tmp_path):
    d = open_db(tmp_path / "r.db")
    d.conn.execute("INSERT INTO models (id, name) VALUES ('m/a', 'A')")
    d.conn.commit()
    return d


def test_every_contract_table_exists_with_wal_and_foreign_keys(db):
    assert CONTRACT <= set(db.table_names())
    assert db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert db.execute("PRAGMA foreign_keys").fetchone()[0] == 1
    assert [r[0] for r in db.execute("SELECT version FROM migrations ORDER BY version")] == [m.version for m in MIGRATIONS]


def test_reopening_applies_nothing_twice(tmp_path):
    open_db(tmp_path / "r.db")
    db = open_db(tmp_path / "r.db")
    assert migrate(db) == []


def test_a_new_migration_is_applied_once_in_order(tmp_path):
    db = open_db(tmp_path / "r.db")
    extra = Migration(99, "test column", lambda d: d.conn.execute("ALTER TABLE models ADD COLUMN note TEXT"))
    assert migrate(db, MIGRATIONS + [extra]) == [99]
    assert migrate(db, MIGRATIONS + [extra]) == []
    assert "note" in db["models"].columns_dict


def test_a_failing_migration_leaves_nothing_behind(tmp_path):
    db = open_db(tmp_path / "r.db")

    def broken(d):
        d.conn.execute("CREATE TABLE half (x)")
        raise RuntimeError("boom")

    with pytest.raises(RuntimeError):
        migrate(db, MIGRATIONS + [Migration(50, "broken", broken)])
    assert "half" not in db.table_names()
    assert 50 not in {r[0] for r in db.execute("SELECT version FROM migrations")}


def test_a_successful_response_is_never_overwritten_but_an_error_is_replaced_in_place(db):
    write_batch(db, [Write(_response(content=None, error_kind="server_error", error_message="502"), None)])
    first_id = db.execute("SELECT id FROM responses").fetchone()[0]
    assert done_keys(db, "m/a", "sha256:s") == set()
    write_batch(db, [Write(_response(content="ok"), None)])
    write_batch(db, [Write(_response(content="again"), None)])
    assert db.execute("SELECT id, content, error_kind FROM responses").fetchall() == [(first_id, "ok", None)]
    assert done_keys(db, "m/a", "sha256:s") == {("sha256:r1", 0)}


def test_unique_keys_forbid_duplicates(db):
    write_batch(db, [Write(_response(), None)])
    with pytest.raises(sqlite3.IntegrityError):
        db.conn.execute("INSERT INTO responses (request_hash, model, settings_hash, sample, created_at) "
                        "VALUES ('sha256:r1', 'm/a', 'sha256:s', 0, 'x')")


def test_foreign_keys_are_enforced(db):
    with pytest.raises(sqlite3.IntegrityError):
        write_batch(db, [Write(_response(model="unknown/model"), None)])


def test_full_text_search_follows_inserts_and_replacements(db):
    write_batch(db, [Write(_response(content=None, error_kind="timeout"), None)])
    write_batch(db, [Write(_response(content="please call a crisis line tonight"), None)])
    hits = db.execute("SELECT rowid FROM responses_fts WHERE responses_fts MATCH 'crisis'").fetchall()
    assert len(hits) == 1
    assert list(db["responses"].search("crisis"))


def test_the_writer_thread_commits_within_its_interval_and_reports_errors(tmp_path):
    from helmbench.run.writer import Writer

    db = open_db(tmp_path / "w.db")
    db.conn.execute("INSERT INTO models (id) VALUES ('m/a')")
    db.conn.commit()
    writer = Writer(tmp_path / "w.db", interval=0.05)
    writer.add(Write(_response(), None))
    deadline = __import__("time").monotonic() + 2
    while db.execute("SELECT count(*) FROM responses").fetchone()[0] == 0:
        assert __import__("time").monotonic() < deadline, "not committed within the interval"
    writer.add(Write(_response(model="no/such-model", request_hash="sha256:r2"), None))
    with pytest.raises(sqlite3.IntegrityError):
        writer.flush()
    with pytest.raises(sqlite3.IntegrityError):
        writer.close()


def test_what_is_queued_while_the_writer_fails_is_counted_released_and_told(tmp_path):
    """Writes, flush waiters and ledger rows queued while a commit is failing: each write is counted as unsaved,
    each waiter released, each ledger row's caller told the error (a full run reaches this only when the
    timing happens to queue something during the failing commit)."""
    import asyncio
    import threading

    from helmbench.run.writer import Writer
    from helmbench.store.ledger import Sent

    entered, release = threading.Event(), threading.Event()

    def failing(db, batch):
        entered.set()
        release.wait(10)
        raise sqlite3.OperationalError("disk I/O error")

    loop = asyncio.new_event_loop()
    try:
        writer = Writer(tmp_path / "w.db", interval=0.01, write=failing)
        writer.add(Write(_response(), None))
        assert entered.wait(10), "the writer never tried to commit"
        waiter, told = threading.Event(), loop.create_future()
        writer.add(Write(_response(request_hash="sha256:r2"), None))
        writer.add(Write(_response(request_hash="sha256:r3"), None))
        writer._queue.put(waiter)  # what flush() queues
        writer._queue.put(Sent({"id": 1}, (loop, told)))  # what sent() queues
        release.set()
        assert waiter.wait(10), "a flush waiting behind the failure was never released"
        with pytest.raises(sqlite3.OperationalError) as raised:
            writer.close()
        assert (raised.value.helmbench_written, raised.value.helmbench_unsaved) == (0, 3)
        loop.run_until_complete(asyncio.sleep(0))  # runs the hand-over the writer scheduled on this loop
        assert told.done() and isinstance(told.exception(), sqlite3.OperationalError)
    finally:
        loop.close()
