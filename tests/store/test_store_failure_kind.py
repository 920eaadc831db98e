"""results.failure_kind: migration 4 on a database made by the previous schema, readers before and
after it, and the writer storing the kind it is given."""

from __future__ import annotations

from pathlib import Path

import pytest

from helmbench.score.leaderboard import build_leaderboard  # noqa: E402
from helmbench.store import MIGRATIONS, open_db, open_readonly, queries  # noqa: E402
from helmbench.store.catalog import register_manifest, upsert_models  # noqa: E402
from helmbench.store.db import connect  # noqa: E402
from helmbench.store.migrations import migrate  # noqa: E402
from helmbench.store.responses import Write, write_batch  # noqa: E402
from helmbench.store.runs import finish_run, start_run  # noqa: E402
from tests.fakes.manifests import EVALUATIONS, make_case, write_manifest  # noqa: E402

NOW = "2026-01-01T00:00:00+00:00"

#: (verdict, reason, the failure kind the backfill must give it): every reason form the evaluators wrote.
ROWS = [
    ("FAIL", "truncated: the output hit the token limit (finish_reason=length)", "format"),
    ("FAIL", "empty response (finish_reason=stop)", "format"),
    ("FAIL", "invalid JSON: Expecting value at line 1 column 1", "format"),
    ("FAIL", "does not match the response schema at tags: 'x' is not of type 'array'", "format"),
    ("FAIL", "the answer is a JSON list, not an object with `category`", "format"),
    ("FAIL", "the answer has no `category` field", "format"),
    ("FAIL", "  tags is not a list: 'SAFETY_CONCERN'", "format"),
    ("FAIL", "category = 'CHIT_CHAT', expected 'REFERRAL'", None),
    ("FAIL", "the response schema cannot be used: bad $ref", None),
    ("FAIL", "tags = ['a'] is missing 'b' because x is not a list: y", None),
    ("PASS", "category = 'REFERRAL'", None),
    ("ERROR", "invalid JSON from the provider", None),
]


def _previous_schema_db(tmp_path: Path) -> tuple[Path, int]:
    """A real results.db at schema version 3 (before failure_kind), with one run holding ROWS."""
    path = tmp_path / "results.db"
    cases = [make_case("P1-B1-S1", 1, p, evaluation=EVALUATIONS[0]) for p in range(1, len(ROWS) + 1)]
    header = write_manifest(tmp_path / "manifest.jsonl", cases)
    db = connect(path)
    db.conn.execute("PRAGMA journal_mode = WAL")
    assert migrate(db, [m for m in MIGRATIONS if m.version <= 3]) == [1, 2, 3]
    assert "failure_kind" not in db["results"].columns_dict
    register_manifest(db, header, cases)
    upsert_models(db, [("m/a", "A")])
    run_id = start_run(db, manifest_hash=header["manifest_hash"], model="m/a", settings={}, settings_hash="sha256:s",
                       samples=1, n_cases=len(cases), version="t")
    with db.conn as conn:
        for case, (verdict, reason, _) in zip(cases, ROWS):
            conn.execute(
                """INSERT INTO results (run_id, case_id, case_hash, sample, verdict, score, reason, created_at)
                   VALUES (?, ?, ?, 0, ?, ?, ?, ?)""",
                [run_id, case["id"], case["hash"], verdict, {"PASS": 1.0, "FAIL": 0.0}.get(verdict), reason, NOW])
    finish_run(db, run_id, "completed")
    db.conn.close()
    return path, run_id


EXPECTED_FORMAT = sum(kind == "format" for _, _, kind in ROWS)


def test_migration_backfills_the_kind_on_a_database_of_the_previous_schema(tmp_path):
    path, run_id = _previous_schema_db(tmp_path)
    db = open_db(path)
    try:
        assert 4 in {r[0] for r in db.execute("SELECT version FROM migrations")}
        stored = [(r[0], r[1]) for r in db.execute("SELECT reason, failure_kind FROM results ORDER BY id")]
    finally:
        db.conn.close()
    assert stored == [(reason, kind) for _, reason, kind in ROWS]
    conn = open_readonly(path)
    try:
        assert queries.format_failure_count(conn, run_id) == EXPECTED_FORMAT
    finally:
        conn.close()
    assert build_leaderboard(path).rows[0].n_format_failures == EXPECTED_FORMAT


def test_a_reader_of_an_unmigrated_database_counts_the_same_without_writing(tmp_path):
    path, run_id = _previous_schema_db(tmp_path)
    before = path.read_bytes()
    assert build_leaderboard(path).rows[0].n_format_failures == EXPECTED_FORMAT
    conn = open_readonly(path)
    try:
        kinds = [r["failure_kind"] for r in queries.result_detail_rows(conn, run_id)]
    finally:
        conn.close()
    assert sorted(map(str, kinds)) == sorted(str(kind) for _, _, kind in ROWS)
    assert path.read_bytes() == before  # read-only: no migration, no column added


def test_the_writer_stores_the_kind_it_is_given_and_the_scorer_reads_only_that(tmp_path):
    path, run_id = _previous_schema_db(tmp_path)
    db = open_db(path)
    try:
        row = db.execute("SELECT case_id, case_hash FROM results WHERE verdict = 'PASS'").fetchone()
        # a FAIL whose reason reads like a format failure but whose evaluator said it is not one
        write_batch(db, [Write(None, {"run_id": run_id, "case_id": row[0], "case_hash": row[1], "sample": 0,
                                      "verdict": "FAIL", "score": 0.0, "reason": "invalid JSON, said the judge",
                                      "failure_kind": None, "created_at": NOW})])
        row = db.execute("SELECT case_id, case_hash FROM results WHERE reason LIKE 'category = %'").fetchone()
        write_batch(db, [Write(None, {"run_id": run_id, "case_id": row[0], "case_hash": row[1], "sample": 0,
                                      "verdict": "FAIL", "score": 0.0, "reason": "unreadable",
                                      "failure_kind": "format", "created_at": NOW})])
    finally:
        db.conn.close()
    assert build_leaderboard(path).rows[0].n_format_failures == EXPECTED_FORMAT + 1


@pytest.mark.parametrize("verdict,reason,kind", ROWS)
def test_legacy_classification(verdict, reason, kind):
    from helmbench.store.schema_failure_kind import legacy_failure_kind

    assert legacy_failure_kind(verdict, reason) == kind
