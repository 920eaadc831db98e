"""Opening results.db: the header and quick_check refuse broken files, readers never write, and a
full database is reported as a full disk with nothing committed lost.

Everything here goes through SQLite itself, so it runs on any machine (no mount needed):
`PRAGMA max_page_count` makes SQLite report SQLITE_FULL exactly as a full disk does.
"""

from __future__ import annotations

import os
import sqlite3
from contextlib import closing
from pathlib import Path

import pytest

from helmbench.errors import StorageError, explain
from helmbench.store import open_db, open_readonly
from helmbench.store.db import _readonly_uri
from helmbench.store.responses import Write, write_batch


def _row(sample: int, content: str = "an answer") -> Write:
    return Write(response={"request_hash": "sha256:r1", "model": "m/a", "settings_hash": "sha256:s", "sample": sample,
                           "content": content, "finish_reason": "stop", "attempts": 1,
                           "created_at": "2026-01-01T00:00:00+00:00"}, result=None)


@pytest.fixture
def db_path(tmp_path) -> Path:
    path = tmp_path / "results.db"
    db = open_db(path)
    db.conn.execute("INSERT INTO models (id, name) VALUES ('m/a', 'A')")
    db.conn.commit()
    db.conn.close()
    return path


def test_a_full_database_is_a_disk_full_error_and_keeps_what_was_committed(db_path):
    db = open_db(db_path)
    write_batch(db, [_row(0)])
    pages = db.execute("PRAGMA page_count").fetchone()[0]
    db.execute(f"PRAGMA max_page_count = {pages + 2}")
    with pytest.raises(sqlite3.OperationalError) as info:
        write_batch(db, [_row(i, "x" * 4000) for i in range(1, 200)])
    err = explain(info.value, db=db_path)
    assert isinstance(err, StorageError)
    assert err.message == f"the disk is full while writing {db_path}"
    assert "run the same command again" in err.hint and "nothing already stored is asked for again" in err.hint
    db.conn.close()
    with closing(sqlite3.connect(db_path)) as conn:  # the batch rolled back whole; the earlier commit is there
        assert conn.execute("PRAGMA quick_check").fetchone()[0] == "ok"
        assert conn.execute("SELECT sample FROM responses").fetchall() == [(0,)]


def test_readers_open_read_only_and_write_nothing(db_path):
    conn = open_readonly(db_path)
    with pytest.raises(sqlite3.OperationalError, match="readonly"):
        conn.execute("INSERT INTO models (id, name) VALUES ('m/b', 'B')")
    conn.close()


def test_read_only_uri_depends_on_the_folder(db_path, tmp_path, monkeypatch):
    """mode=ro where SQLite can create its WAL index; immutable=1 where it cannot (no WAL pending);
    a private copy when the WAL holds commits that immutable would miss."""
    resolved = db_path.resolve()
    assert _readonly_uri(resolved) == f"{resolved.as_uri()}?mode=ro"
    real_access = os.access
    monkeypatch.setattr(os, "access", lambda p, mode: False if Path(p) == resolved.parent else real_access(p, mode))
    assert _readonly_uri(resolved) == f"{resolved.as_uri()}?mode=ro&immutable=1"
    Path(f"{resolved}-wal").write_bytes(b"\0" * 32)
    uri = _readonly_uri(resolved)
    assert "immutable" not in uri and str(resolved.parent) not in uri and uri.endswith("results.db?mode=ro")


@pytest.mark.parametrize("content, exit_code, says", [
    (b"garbage" * 100, 2, "is not a SQLite database"),
    (b"SQLite format 3\x00" + b"\0" * 84, 1, "is truncated"),
])
def test_header_refused_before_sqlite_sees_it(tmp_path, content, exit_code, says):
    path = tmp_path / "bad.db"
    path.write_bytes(content)
    for opener in (open_db, open_readonly):
        with pytest.raises(StorageError) as info:
            opener(path)
        assert says in info.value.message and str(path) in info.value.message
        assert info.value.exit_code == exit_code
    assert path.read_bytes() == content


def test_quick_check_refuses_a_corrupt_page_for_writers_and_readers(db_path):
    with closing(sqlite3.connect(db_path)) as conn:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        root = conn.execute("SELECT rootpage FROM sqlite_master WHERE name = 'responses'").fetchone()[0]
        page = conn.execute("PRAGMA page_size").fetchone()[0]
    with open(db_path, "r+b") as f:
        f.seek((root - 1) * page)
        f.write(b"\xab" * page)
    for opener in (open_db, open_readonly):
        with pytest.raises(StorageError, match="is not a usable SQLite database"):
            opener(db_path)


def test_a_writer_does_not_adopt_someone_elses_database(tmp_path):
    path = tmp_path / "other.db"
    with closing(sqlite3.connect(path)) as conn:
        conn.execute("CREATE TABLE invoices (n)")
        conn.commit()
    with pytest.raises(StorageError, match="not a HELMBench results database"):
        open_db(path)
    with closing(sqlite3.connect(path)) as conn:
        assert [r[0] for r in conn.execute("SELECT name FROM sqlite_master")] == ["invoices"]


def test_an_empty_file_is_a_new_database_to_a_writer_and_nothing_to_a_reader(tmp_path):
    path = tmp_path / "empty.db"
    path.touch()
    with pytest.raises(StorageError, match="is empty"):
        open_readonly(path)
    db = open_db(path)
    assert "runs" in db.table_names()
    db.conn.close()
