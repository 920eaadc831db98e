"""Migration 10 "one judged output": a transcript's judgements join an answer's in `judgements`.

Why: what criteria are judged on is one concept, a model's output, which is either one answer
(`responses`) or a conversation transcript (`turns`, through the result's `result_turns`). Until
now a transcript's judgements had their own table (`transcript_judgements`, with its own links,
`result_transcript_judgements`) and their own path through the run, so every reader that counted
judgements had to remember both. Now `judgements.output` says which output a judgement is of
(`answer` or `transcript`), `response_id` is the answer first judged (NULL for a transcript), and
every judgement a result used is linked in `result_judgements`.

The table is rebuilt (SQLite cannot drop a NOT NULL) with foreign keys off, in one transaction
(`Migration.foreign_keys_off`). Moved transcript judgements keep their cache key, so nothing is
paid again; they keep the judge's answer verbatim (`raw`, `finish_reason`) and are read against
the criterion when used (`verdict`, `judgment_json` are NULL: deciding them needs the criterion,
which the store does not parse). Their links keep no per-judge verdict (the result's
`checkpoint_verdicts` row holds the criterion's). Their ledger rows (migration 9) are untouched:
a ledger row's `request_key` is the judge request, whichever table held its answer.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # annotations only: importing sqlite_utils costs ~0.25 s (it loads pandas)
    import sqlite_utils

DDL = """
CREATE TABLE judgements_new (
  id INTEGER PRIMARY KEY,
  -- the cache key: the judge request, the judge and its settings
  judge_request_hash TEXT NOT NULL, judge_model TEXT NOT NULL, judge_settings_hash TEXT NOT NULL,
  -- what was judged: an answer (the response first judged) or a transcript (through its results)
  output TEXT NOT NULL DEFAULT 'answer' CHECK (output IN ('answer', 'transcript')),
  response_id INTEGER REFERENCES responses(id), run_id INTEGER REFERENCES runs(id), criterion TEXT NOT NULL,
  -- the judge's answer, and the verdict read from it for the criterion that first asked
  verdict TEXT, score REAL, judgment_json TEXT, justification TEXT, raw TEXT, finish_reason TEXT,
  -- the call
  cost REAL, latency_ms INTEGER, prompt_tokens INTEGER, completion_tokens INTEGER,
  attempts INTEGER NOT NULL DEFAULT 1, error_kind TEXT, error_message TEXT, created_at TEXT NOT NULL,
  UNIQUE (judge_request_hash, judge_model, judge_settings_hash),
  CHECK ((output = 'answer') = (response_id IS NOT NULL))
);
INSERT INTO judgements_new (id, judge_request_hash, judge_model, judge_settings_hash, output, response_id, run_id,
  criterion, verdict, score, judgment_json, justification, raw, cost, latency_ms, prompt_tokens, completion_tokens,
  attempts, error_kind, error_message, created_at)
SELECT id, judge_request_hash, judge_model, judge_settings_hash, 'answer', response_id, run_id, criterion, verdict,
  score, judgment_json, justification, raw, cost, latency_ms, prompt_tokens, completion_tokens, attempts, error_kind,
  error_message, created_at FROM judgements;
INSERT OR IGNORE INTO judgements_new (judge_request_hash, judge_model, judge_settings_hash, output, run_id, criterion,
  raw, finish_reason, cost, latency_ms, prompt_tokens, completion_tokens, attempts, error_kind, error_message,
  created_at)
SELECT judge_request_hash, judge_model, judge_settings_hash, 'transcript', run_id, criterion, content, finish_reason,
  cost, latency_ms, prompt_tokens, completion_tokens, attempts, error_kind, error_message, created_at
FROM transcript_judgements ORDER BY id;
INSERT OR IGNORE INTO result_judgements (result_id, judgement_id)
SELECT rtj.result_id, j.id FROM result_transcript_judgements rtj
JOIN transcript_judgements tj ON tj.id = rtj.judgement_id
JOIN judgements_new j ON j.judge_request_hash = tj.judge_request_hash AND j.judge_model = tj.judge_model
  AND j.judge_settings_hash = tj.judge_settings_hash;
DROP TABLE result_transcript_judgements;
DROP TABLE transcript_judgements;
DROP TABLE judgements;
ALTER TABLE judgements_new RENAME TO judgements;
CREATE INDEX idx_judgements_response ON judgements(response_id);
CREATE INDEX idx_judgements_run ON judgements(run_id)
"""


def apply(db: sqlite_utils.Database) -> None:
    for statement in DDL.split(";"):
        if statement.strip():
            db.conn.execute(statement)
