"""The turns table: migration 4 on an existing database, one committed row per turn, errors replaced
in place and successes never overwritten."""

from __future__ import annotations

import sqlite3

from helmbench.store import open_db
from helmbench.store.migrations import MIGRATIONS, migrate
from helmbench.store.turns import TurnWrite, stored_turns, write_conversation_batch


def _turn(key, role="assistant", **kw):
    row = {"turn_key": key, "role": role, "model": "m/a", "settings_hash": "sha256:s", "sample": 0, "turn": 1,
           "case_id": "P1-B1-S1-C1-PT1", "request_hash": "sha256:r", "source": "model", "content": "hi",
           "created_at": "2026-01-01T00:00:00+00:00"}
    row.update(kw)
    return row


def test_migration_4_upgrades_a_database_made_before_it(tmp_path):
    path = tmp_path / "old.db"
    import sqlite_utils

    old = sqlite_utils.Database(path)
    migrate(old, [m for m in MIGRATIONS if m.version < 4])
    old.conn.execute("INSERT INTO models VALUES ('m/a', NULL)")
    old.conn.commit()
    old.conn.close()
    db = open_db(path)
    assert {"turns", "result_turns", "checkpoint_verdicts"} <= set(db.table_names())
    assert db.execute("SELECT id FROM models").fetchall() == [("m/a",)]  # nothing lost
    assert 4 in {r[0] for r in db.execute("SELECT version FROM migrations")}


def test_an_error_turn_is_replaced_but_a_stored_one_never_is(tmp_path):
    db = open_db(tmp_path / "r.db")
    write_conversation_batch(db, [TurnWrite(_turn("k1", content=None, error_kind="server_error", error_message="500"))])
    first_id = db.execute("SELECT id FROM turns").fetchone()[0]
    write_conversation_batch(db, [TurnWrite(_turn("k1", content="answer one"))])
    write_conversation_batch(db, [TurnWrite(_turn("k1", content="answer two"))])  # a replay after a crash
    rows = db.execute("SELECT id, content, error_kind FROM turns").fetchall()
    assert rows == [(first_id, "answer one", None)]
    found = stored_turns(db, ["k1", "k2"], "m/a", "sha256:s", 0)
    assert list(found) == [("k1", "assistant")]


def test_a_turn_role_outside_user_and_assistant_is_refused(tmp_path):
    db = open_db(tmp_path / "r.db")
    try:
        write_conversation_batch(db, [TurnWrite(_turn("k1", role="system"))])
    except sqlite3.IntegrityError:
        pass
    else:
        raise AssertionError("a system turn was stored")
    assert db.execute("SELECT count(*) FROM turns").fetchone()[0] == 0
