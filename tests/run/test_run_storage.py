"""Storage failures during a run: a full database, a damaged file. Real SQLite errors (the size
limit is SQLite's own `max_page_count`), reached through the CLI; never a traceback, never
"completed", and what was stored survives."""

from __future__ import annotations

import sqlite3

import pytest

import helmbench.run.writer as writer_module
from run_helpers import rows, run_inprocess
from test_run_cli import _cli as run_cli, _keys
from tests.fakes.manifests import synthetic_cases, write_manifest


def _cli(monkeypatch, capsys, small, *extra) -> tuple[int, str, str]:
    capsys.readouterr()  # only what this command prints
    return run_cli(monkeypatch, capsys, "run", "--manifest", str(small["manifest"]), "--models-file",
                   str(small["models"]), "--db", str(small["db"]), *extra)


@pytest.mark.slow
def test_a_full_database_stops_with_a_message_and_keeps_what_was_stored(env, fake, small, monkeypatch, capsys):
    run_inprocess(small)  # 40 cases stored
    stored_before = rows(small["db"], "SELECT request_hash FROM responses WHERE error_kind IS NULL")
    write_manifest(small["manifest"], synthetic_cases(400))
    fake.latency = 0.02
    real_connect = writer_module.connect

    def full_soon(path):  # the writer's connection may grow the file by a few pages only
        db = real_connect(path)
        pages = db.conn.execute("PRAGMA page_count").fetchone()[0]
        db.conn.execute(f"PRAGMA max_page_count = {pages + 30}")
        return db

    monkeypatch.setattr(writer_module, "connect", full_soon)
    # Two calls in flight: the writer commits what arrived each quarter of a second, so the first batch stays a
    # few answers, which fit; at the default concurrency a fast machine's first batch was already too big for
    # the 30 pages, nothing of this run was saved, and the check that some was failed now and then.
    code, out, err = _cli(monkeypatch, capsys, small, "--concurrency", "2")
    assert code == 1, err
    assert "Traceback" not in out + err
    assert f"the disk is full while writing {small['db']}" in err
    assert "result(s) from this run were saved" in err and "Resume with" not in err
    # what was received but not saved is counted, never silently dropped
    assert "could not be saved and will be asked again" in err or "nothing received was lost" in err
    assert "hint: free disk space, then resume with: helmbench run --manifest" in err
    assert rows(small["db"], "SELECT status FROM runs ORDER BY id") == [("completed",), ("failed",)]
    saved = {h for (h,) in rows(small["db"], "SELECT request_hash FROM responses WHERE error_kind IS NULL")}
    assert {h for (h,) in stored_before} <= saved and len(saved) > len(stored_before)
    assert fake.total < 400 + 40, "the run went on calling after the database was full"

    monkeypatch.setattr(writer_module, "connect", real_connect)  # space freed: resume
    before = dict(fake.by_key)
    report = run_inprocess(small)
    assert report.status == "completed"
    keys = _keys(small["manifest"])
    assert all(fake.by_key[keys[h]] == before[keys[h]] for h in saved), "a stored answer was paid for again"


def _damage(db, table: str) -> None:
    """Overwrite the root page of `table` with garbage, in the file itself (checkpointed first)."""
    import gc

    gc.collect()  # close the connections an in-process run left behind
    conn = sqlite3.connect(db)
    busy, _, _ = conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
    conn.close()
    assert busy == 0
    page_size = rows(db, "PRAGMA page_size")[0][0]
    root = rows(db, "SELECT rootpage FROM sqlite_master WHERE name = ?", [table])[0][0]
    with open(db, "r+b") as f:
        f.seek((root - 1) * page_size)
        f.write(b"\xde\xad\xbe\xef" * (page_size // 4))


def test_a_damaged_table_the_run_reads_stops_it_with_a_message(env, fake, small, monkeypatch, capsys):
    run_inprocess(small)
    write_manifest(small["manifest"], synthetic_cases(80))
    _damage(small["db"], "responses")
    code, out, err = _cli(monkeypatch, capsys, small)
    assert code != 0 and "Traceback" not in out + err
    assert str(small["db"]) in err and "not a usable SQLite database" in err
    assert "completed" not in out + err


def test_damage_the_run_never_touches_still_never_reports_completed(env, fake, small, monkeypatch, capsys):
    run_inprocess(small)
    conn = sqlite3.connect(small["db"])
    with conn:
        conn.execute("CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT)")
        conn.executemany("INSERT INTO notes (body) VALUES (?)", [("x" * 500,)] * 200)
    conn.close()
    _damage(small["db"], "notes")
    write_manifest(small["manifest"], synthetic_cases(80))
    code, out, err = _cli(monkeypatch, capsys, small)
    assert code != 0 and "Traceback" not in out + err
    assert str(small["db"]) in err and "not a usable SQLite database" in err
    assert "completed" not in out + err
    # The damaged file is refused when it is opened (quick_check), before a run row is written.
    assert rows(small["db"], "SELECT status FROM runs ORDER BY id") == [("completed",)]
