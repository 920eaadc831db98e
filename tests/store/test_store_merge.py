"""store/merge.py on small databases made with the store itself: every table of the schema is handled (a
table a migration adds fails here until merge knows it), the store's own precedence rules (a success
replaces an error, a completed ledger row its `sent` one, a later review an earlier one), conflicts named
with their files, inputs never written, older inputs upgraded in a copy, newer ones refused."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from helmbench.errors import StorageError
from helmbench.manifest.canonical import canonical, hash_of
from helmbench.store import MIGRATIONS, migrate, open_db
from helmbench.store.db import connect
from helmbench.store.catalog_check import EditedInput
from helmbench.store.merge import merge
from helmbench.store.merge_report import MergeConflict
from helmbench.store.merge_tables import DERIVED, TABLES, unhandled_tables
from helmbench.store.schema_shard import union

NOW = "2026-11-27T00:00:00+00:00"
#: A manifest of no cases whose hashes are its own (merge recomputes them: store/catalog_check.py).
HEADER = {"format": "helmbench-manifest/1", "cases": 0, "catalog": {}, "catalog_hash": hash_of({}),
          "manifest_hash": hash_of({"cases": hash_of([]), "catalog": hash_of({})})}
M = HEADER["manifest_hash"]


def _tiny(path: Path, *, content: str | None = "an answer", error: str | None = None, uid: str = "u1",
          state: str = "answered", upto: int | None = None, shard: str | None = None) -> Path:
    """A results database with one manifest, one model, one run, one response and its ledger row."""
    if upto is None:
        db = open_db(path)
    else:
        db = connect(path)
        migrate(db, [m for m in MIGRATIONS if m.version <= upto])
    conn = db.conn
    with conn:
        conn.execute("INSERT INTO manifests (hash, format, cases, catalog_hash, header_json, registered_at) VALUES "
                     "(?, 'helmbench-manifest/1', 0, ?, ?, ?)", [M, HEADER["catalog_hash"], canonical(HEADER), NOW])
        conn.execute("INSERT INTO models (id, name) VALUES ('test/a', NULL)")
        run_cols = "manifest_hash, model, settings_json, settings_hash, started_at, status"
        values = [M, "test/a", "{}", "s1", NOW, "partial"]
        if upto is None or upto >= 11:
            run_cols += ", shard"
            values.append(shard)
        conn.execute(f"INSERT INTO runs ({run_cols}) VALUES ({', '.join('?' * len(values))})", values)
        conn.execute("INSERT INTO responses (request_hash, model, settings_hash, sample, run_id, content, error_kind, "
                     "created_at) VALUES ('r1', 'test/a', 's1', 0, 1, ?, ?, ?)", [content, error, NOW])
        if upto is None or upto >= 9:
            conn.execute("INSERT INTO calls (uid, kind, run_id, model, settings_hash, request_key, sample, state, cost, "
                         "sent_at) VALUES (?, 'answer', 1, 'test/a', 's1', 'r1', 0, ?, 0.5, ?)", [uid, state, NOW])
    conn.close()
    return path


def _one(db: Path, sql: str):
    conn = sqlite3.connect(db)
    try:
        return conn.execute(sql).fetchall()
    finally:
        conn.close()


def edit(db: Path, *statements: str) -> Path:
    """`db` with `statements` run on it (as a hostile hand would), in one transaction."""
    conn = sqlite3.connect(db)
    with conn:
        for sql in statements:
            conn.execute(sql)
    conn.close()
    return db


def dump(db: Path) -> list[str]:
    """Every row and schema statement of `db`, in order: two equal dumps are the same database content."""
    conn = sqlite3.connect(db)
    try:
        return list(conn.iterdump())
    finally:
        conn.close()


def test_every_table_of_a_new_database_is_merged_or_declared_derived(tmp_path):
    db = open_db(tmp_path / "fresh.db")
    names = [r[0] for r in db.conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
    db.conn.close()
    assert unhandled_tables(names) == []
    assert unhandled_tables([*names, "a_new_table"]) == ["a_new_table"]  # the check can fail
    assert set(DERIVED) & {t.name for t in TABLES} == set()


def test_every_column_merge_names_exists_in_the_schema(tmp_path):
    db = open_db(tmp_path / "fresh.db")
    try:
        for table in TABLES:
            columns = {r[1] for r in db.conn.execute(f"PRAGMA table_info({table.name})")}
            named = set(table.key) | set(table.compare) | set(table.refs) | ({table.local_id} - {None})
            assert named <= columns, (table.name, named - columns)
    finally:
        db.conn.close()


def test_a_table_merge_does_not_know_is_refused_by_name_and_nothing_is_written(tmp_path):
    src = _tiny(tmp_path / "in.db")
    conn = sqlite3.connect(src)
    conn.execute("CREATE TABLE surprise (x)")
    conn.commit()
    conn.close()
    with pytest.raises(StorageError, match="surprise"):
        merge(tmp_path / "out.db", [src])
    assert not (tmp_path / "out.db").exists()


def test_identical_rows_are_kept_once(tmp_path):
    a = _tiny(tmp_path / "a.db")
    b = _tiny(tmp_path / "b.db")
    out = tmp_path / "out.db"
    merge(out, [a, b])
    assert _one(out, "SELECT count(*) FROM responses") == [(1,)]
    assert _one(out, "SELECT count(*) FROM calls") == [(1,)]  # one uid: one ledger row
    assert _one(out, "SELECT count(*) FROM runs") == [(1,)]


def test_a_success_replaces_an_error_and_a_completed_call_its_sent_row_in_either_order(tmp_path):
    failed = _tiny(tmp_path / "failed.db", content=None, error="timeout", state="sent")
    answered = _tiny(tmp_path / "answered.db")
    for order in ([failed, answered], [answered, failed]):
        out = tmp_path / f"out-{order[0].stem}.db"
        merge(out, order)
        assert _one(out, "SELECT content, error_kind FROM responses") == [("an answer", None)]
        assert _one(out, "SELECT state FROM calls") == [("answered",)]


def test_different_answers_under_one_key_are_refused_naming_both_files_and_out_is_untouched(tmp_path):
    a = _tiny(tmp_path / "a.db")
    b = _tiny(tmp_path / "b.db", content="another answer", uid="u2")
    out = tmp_path / "out.db"
    merge(out, [a])
    before = dump(out)
    with pytest.raises(MergeConflict) as caught:
        merge(out, [b])
    text = str(caught.value)
    assert "responses (request_hash=r1, model=test/a, settings_hash=s1, sample=0)" in text
    assert f"{out} and {b} differ in content" in text
    assert dump(out) == before
    with pytest.raises(MergeConflict) as caught:  # between two inputs: both named
        merge(tmp_path / "new.db", [a, b])
    assert f"{a} and {b} differ in content" in str(caught.value)
    assert not (tmp_path / "new.db").exists()


def test_an_older_input_is_upgraded_in_a_copy_and_left_as_it_was(tmp_path):
    old = _tiny(tmp_path / "old.db", upto=10)
    before = dump(old)
    result = merge(tmp_path / "out.db", [old])
    assert result.migrated == [old]
    assert dump(old) == before
    assert _one(tmp_path / "out.db", "SELECT content FROM responses") == [("an answer",)]
    assert _one(tmp_path / "out.db", "SELECT max(version) FROM migrations") == [(max(m.version for m in MIGRATIONS),)]


def test_an_input_from_a_newer_release_is_refused(tmp_path):
    new = _tiny(tmp_path / "new.db")
    conn = sqlite3.connect(new)
    conn.execute("INSERT INTO migrations VALUES (999, 'the future', ?)", [NOW])
    conn.commit()
    conn.close()
    with pytest.raises(StorageError, match="newer HELMBench"):
        merge(tmp_path / "out.db", [new])


def test_the_parts_of_one_run_make_it_whole():
    assert union(["1/3", "2/3", "3/3"]) is None
    assert union(["1/3", "3/3"]) == "1,3/3"
    assert union(["1,2/3", "3/3"]) is None
    assert union(["1/3", None]) is None
    assert union(["1/2", "2/3"]) == "1/2"  # parts of different N do not add up


def test_shards_of_one_run_merge_into_one_run_with_the_ledger_of_both(tmp_path):
    one = _tiny(tmp_path / "one.db", shard="1/2")
    two = _tiny(tmp_path / "two.db", shard="2/2", uid="u2")
    out = tmp_path / "out.db"
    merge(out, [one, two])
    assert _one(out, "SELECT shard FROM runs") == [(None,)]
    # manifest_cases is empty here, so the whole run has all of its (zero) cases: completed
    assert _one(out, "SELECT status FROM runs") == [("completed",)]
    assert _one(out, "SELECT count(*), sum(cost) FROM calls WHERE run_id = 1") == [(2, 1.0)]


def test_the_command_refuses_a_missing_input_or_a_folder_as_out_before_writing(tmp_path):
    from typer.testing import CliRunner

    from helmbench.cli import app

    a = _tiny(tmp_path / "a.db")
    result = CliRunner().invoke(app, ["merge", str(tmp_path / "out.db"), str(a), str(tmp_path / "missing.db")])
    assert result.exit_code == 2 and result.stderr.startswith("error: IN:") and "missing.db" in result.stderr
    (tmp_path / "folder").mkdir()
    result = CliRunner().invoke(app, ["merge", str(tmp_path / "folder"), str(a)])
    assert result.exit_code == 2 and "folder" in result.stderr and "Traceback" not in result.output
    assert not (tmp_path / "out.db").exists()
    result = CliRunner().invoke(app, ["merge", str(tmp_path / "out.db"), str(a)])
    assert result.exit_code == 0 and "added" in result.stdout and "run 1: test/a" in result.stdout


def _review(db: Path, judgment: str, at: str, item: str = "sha256:" + "1" * 64) -> Path:
    conn = sqlite3.connect(db)
    with conn:
        conn.execute("INSERT INTO reviews (item_hash, reviewer, case_id, criterion, criterion_text, judgment_json, "
                     "created_at) VALUES (?, 'ana', 'P1-B1-S1-C1', 'CR1', 'Refers to help', ?, ?)",
                     [item, judgment, at])
    conn.close()
    return db


def test_reviews_of_no_judged_output_are_refused_said_and_counted_not_merged(tmp_path):
    # `review import`'s rule, applied by merge too: a key that matches no judged output in OUT is refused
    a = _review(_tiny(tmp_path / "a.db"), '"PASS"', "2026-11-01T00:00:00+00:00")
    _review(a, '"FAIL"', "2026-11-01T00:00:00+00:00", item="item1")
    out = tmp_path / "out.db"
    result = merge(out, [a])
    assert len(result.refused) == 2 and "reviews" not in result.added
    assert all(line.startswith(f"{a}: reviews row ") for line in result.refused)
    assert "matches no judged output" in result.refused[0] and "is not a sha256" in result.refused[1]
    assert _one(out, "SELECT count(*) FROM reviews") == [(0,)]
    from typer.testing import CliRunner

    from helmbench.cli import app

    shown = CliRunner().invoke(app, ["merge", str(tmp_path / "out2.db"), str(a)])
    assert shown.exit_code == 0 and "2 review(s) refused by the rules `review import` applies" in shown.stdout


def test_an_input_dated_in_the_future_is_refused_naming_it_and_out_is_untouched(tmp_path):
    out = tmp_path / "out.db"
    merge(out, [_tiny(tmp_path / "a.db")])
    before = out.read_bytes()
    # "latest" decides which run the leaderboard shows: a run from 2099 would win it forever
    later = edit(_tiny(tmp_path / "later.db", uid="u2"), "UPDATE runs SET started_at = '2099-01-01T00:00:00+00:00'")
    with pytest.raises(EditedInput, match=rf"{later}: refused: dated in the future .*runs.started_at of 1 row"):
        merge(out, [later])
    assert out.read_bytes() == before


@pytest.mark.parametrize("value", ["CAST('2099-01-01T00:00:00+00:00' AS BLOB)", "'zzzz'", "20990101"])
def test_an_input_dated_with_something_else_than_an_iso_date_is_refused(tmp_path, value):
    """A BLOB sorts above every text in SQLite, so a BLOB date won "latest" (the leaderboard's run) and then broke
    `report --format json`; a date of another shape or type is refused like a future one."""
    out = tmp_path / "out.db"
    merge(out, [_tiny(tmp_path / "a.db")])
    before = out.read_bytes()
    odd = edit(_tiny(tmp_path / "odd.db", uid="u2"), f"UPDATE runs SET started_at = {value}")
    with pytest.raises(EditedInput, match=r"not an ISO date: runs.started_at of 1 row"):
        merge(out, [odd])
    assert out.read_bytes() == before


def test_registration_dates_are_outs_own_never_an_inputs(tmp_path):
    src = edit(_tiny(tmp_path / "a.db"), "UPDATE manifests SET registered_at = '2001-01-01T00:00:00+00:00'")
    out = tmp_path / "out.db"
    merge(out, [src])
    ((when,),) = _one(out, "SELECT registered_at FROM manifests")
    assert when > NOW  # this merge's clock, not the input's date


def _judged(db: Path, raw: str, uid: str) -> Path:
    """One judgement of the answer (as a shard that judged the same judge request would hold)."""
    conn = sqlite3.connect(db)
    with conn:
        conn.execute("INSERT INTO judgements (judge_request_hash, judge_model, judge_settings_hash, output, response_id, "
                     "run_id, criterion, verdict, raw, created_at) VALUES ('jr1', 'test/judge', 'js', 'answer', 1, 1, "
                     "'CR1', 'PASS', ?, ?)", [raw, NOW])
        conn.execute("INSERT INTO calls (uid, kind, run_id, model, settings_hash, request_key, state, cost, sent_at) "
                     "VALUES (?, 'judge', 1, 'test/judge', 'js', 'jr1', 'answered', 0.25, ?)", [uid, NOW])
    conn.close()
    return db


def test_one_judge_request_answered_in_two_databases_keeps_the_first_answer_and_both_calls(tmp_path):
    a = _judged(_tiny(tmp_path / "a.db"), '{"judgment": "PASS", "justification": "first"}', "j1")
    b = _judged(_tiny(tmp_path / "b.db"), '{"judgment": "PASS", "justification": "second"}', "j2")
    out = tmp_path / "out.db"
    result = merge(out, [a, b])
    assert result.twice == {"judgements": 1}
    assert _one(out, "SELECT raw FROM judgements") == [('{"judgment": "PASS", "justification": "first"}',)]
    assert _one(out, "SELECT count(*), sum(cost) FROM calls WHERE kind = 'judge'") == [(2, 0.5)]  # both were billed
    before = dump(out)
    assert merge(out, [a, b]).changed is False and dump(out) == before


def test_parts_of_one_run_made_with_different_families_are_a_conflict(tmp_path):
    # models.yml's `families:` decides which judge is a model's kin: two shards that disagree cannot be one run
    a, b = _tiny(tmp_path / "a.db", shard="1/2"), _tiny(tmp_path / "b.db", shard="2/2")
    conn = sqlite3.connect(b)
    with conn:
        conn.execute("""UPDATE runs SET families_json = '{"test/a": "test/kin"}'""")
    conn.close()
    with pytest.raises(MergeConflict, match=rf"runs \(manifest_hash={M[:21]}…, model=test/a, settings_hash=s1\)"):
        merge(tmp_path / "out.db", [a, b])
    merge(tmp_path / "same.db", [a, _tiny(tmp_path / "c.db", shard="2/2")])  # the same (none): one run
    assert _one(tmp_path / "same.db", "SELECT count(*), shard FROM runs") == [(1, None)]


def test_a_manifest_whose_hash_does_not_cover_its_catalog_is_refused_where_out_does_not_hold_it(tmp_path):
    # the hash of releases before the catalog counted (the case hashes alone): nothing vouches for its catalog
    old = edit(_tiny(tmp_path / "old.db"), f"UPDATE manifests SET hash = '{hash_of([])}', header_json = "
               f"json_set(header_json, '$.manifest_hash', '{hash_of([])}')",
               f"UPDATE runs SET manifest_hash = '{hash_of([])}'")
    with pytest.raises(EditedInput, match="compiled before a manifest's hash covered its catalog"):
        merge(tmp_path / "out.db", [old])
    wrong = edit(_tiny(tmp_path / "wrong.db"), "UPDATE manifests SET cases = 1")
    with pytest.raises(EditedInput, match=rf"{wrong}: refused: 1 part"):
        merge(tmp_path / "out.db", [wrong])
    assert not (tmp_path / "out.db").exists()
