"""Migration "transcript judgement links": which transcript judgements a conversation's result used.

Why: a single answer's verdict points at its judgements (`result_judgements`), so a run's judge
cost is summed from what its results use; a conversation's transcript judgements pointed at
nothing, so their cost reached no report. Results decided before this migration stay unlinked
(what a transcript judgement judged cannot be recomputed from the stored rows alone), so their
run's judge cost still leaves those calls out.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # annotations only: importing sqlite_utils costs ~0.25 s (it loads pandas)
    import sqlite_utils

DDL = """
CREATE TABLE result_transcript_judgements (
  result_id INTEGER NOT NULL REFERENCES results(id),
  judgement_id INTEGER NOT NULL REFERENCES transcript_judgements(id),
  PRIMARY KEY (result_id, judgement_id)
);
CREATE INDEX idx_result_transcript_judgements_judgement ON result_transcript_judgements(judgement_id)
"""


def apply(db: sqlite_utils.Database) -> None:
    for statement in DDL.split(";"):
        if statement.strip():
            db.conn.execute(statement)
