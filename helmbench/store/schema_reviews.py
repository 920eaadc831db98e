"""Migration "reviews": clinicians' verdicts on judged items, kept apart from everything a run writes.

Why a table of its own, keyed by `item_hash` and not by a judgement or result id: a review is
about what the judge saw (the case's request, the model's output, the criterion's text and
options), not about a run. The same output judged in a later run, or in another database that
holds the same responses, is the same item, so reviews outlive runs and pool across machines.
A criterion whose text changes gives new item hashes: its earlier reviews stay here (stale,
shown as such) and simply stop matching a current item.
"""

DDL = """
CREATE TABLE reviews (
  id INTEGER PRIMARY KEY,
  item_hash TEXT NOT NULL,
  reviewer TEXT NOT NULL CHECK (length(trim(reviewer)) > 0),
  case_id TEXT NOT NULL,
  scenario TEXT,
  criterion TEXT NOT NULL,
  criterion_text TEXT NOT NULL,
  judgment_json TEXT NOT NULL,
  confidence TEXT CHECK (confidence IS NULL OR confidence IN ('low', 'medium', 'high')),
  note TEXT,
  created_at TEXT NOT NULL,
  source TEXT NOT NULL DEFAULT 'local',
  UNIQUE (item_hash, reviewer)
);
CREATE INDEX idx_reviews_item ON reviews(item_hash);
CREATE INDEX idx_reviews_criterion ON reviews(scenario, criterion)
"""


def apply(db) -> None:
    for statement in DDL.split(";"):
        if statement.strip():
            db.conn.execute(statement)
