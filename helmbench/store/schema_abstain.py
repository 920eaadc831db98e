"""Migration 14 "abstentions": a result may be ABSTAIN, a conversation's criterion ABSTAIN or NOT_APPLICABLE.

Why: a judged criterion may abstain (one of its `abstain_values`) or be kept from being asked by its gate
(`applies_when`); it is stored and shown, but leaves the case's score. A case whose every criterion abstained or
was gated off has no verdict: its result is `ABSTAIN` (score NULL), settled (never asked again) and counted
apart from errors, outside every pass rate and weighted score. A conversation's criteria are rows of
`checkpoint_verdicts`, which then hold `ABSTAIN` and `NOT_APPLICABLE` too; a run counts its abstained cases
apart (`runs.n_abstained`, beside `n_pass`, `n_fail`, `n_error`). (A single answer's gated-off
criteria have no judgement and no link: the case page reads them from the manifest and the gate's judgement.)

SQLite cannot change a CHECK constraint, so both tables are rebuilt with their rows, ids and indexes, foreign
keys off, in one transaction (`Migration.check_keys`). A database from before keeps every row as it was.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # annotations only: importing sqlite_utils costs ~0.25 s (it loads pandas)
    import sqlite_utils

DDL = """
CREATE TABLE results_new (
  id INTEGER PRIMARY KEY,
  run_id INTEGER NOT NULL REFERENCES runs(id),
  case_id TEXT NOT NULL,
  case_hash TEXT NOT NULL REFERENCES cases(hash),
  sample INTEGER NOT NULL DEFAULT 0,
  response_id INTEGER REFERENCES responses(id),
  verdict TEXT NOT NULL CHECK (verdict IN ('PASS', 'FAIL', 'ERROR', 'ABSTAIN')),
  score REAL,
  reason TEXT,
  created_at TEXT NOT NULL,
  failure_kind TEXT,
  UNIQUE (run_id, case_hash, sample)
);
INSERT INTO results_new (id, run_id, case_id, case_hash, sample, response_id, verdict, score, reason, created_at,
  failure_kind)
SELECT id, run_id, case_id, case_hash, sample, response_id, verdict, score, reason, created_at, failure_kind
FROM results;
DROP TABLE results;
ALTER TABLE results_new RENAME TO results;
CREATE INDEX idx_results_run_verdict ON results(run_id, verdict);
CREATE INDEX idx_results_case ON results(case_hash);
CREATE INDEX idx_results_response ON results(response_id);
CREATE TABLE checkpoint_verdicts_new (
  result_id INTEGER NOT NULL REFERENCES results(id),
  checkpoint TEXT NOT NULL,
  turn INTEGER,
  title TEXT,
  verdict TEXT NOT NULL CHECK (verdict IN ('PASS', 'FAIL', 'ERROR', 'ABSTAIN', 'NOT_APPLICABLE')),
  score REAL,
  reason TEXT,
  PRIMARY KEY (result_id, checkpoint)
);
INSERT INTO checkpoint_verdicts_new SELECT result_id, checkpoint, turn, title, verdict, score, reason
FROM checkpoint_verdicts;
DROP TABLE checkpoint_verdicts;
ALTER TABLE checkpoint_verdicts_new RENAME TO checkpoint_verdicts;
ALTER TABLE runs ADD COLUMN n_abstained INTEGER NOT NULL DEFAULT 0
"""


def apply(db: sqlite_utils.Database) -> None:
    for statement in DDL.split(";"):
        if statement.strip():
            db.conn.execute(statement)
