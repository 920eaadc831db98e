"""Clinicians' reviews: every SQL statement that reads or writes them, and the key they are stored under.

Why the key is a hash of what the judge saw (case request + model output + criterion code, text
and options) rather than a run, result or judgement id: ids differ between databases and runs,
while the same output under the same criterion is the same question to a clinician wherever it
was produced. Editing a criterion's wording changes the key of its items, so the reviews given
to the old wording no longer match any current item (stale: kept, shown, not counted).

A review carries `judgment` (the option, or the list of options, the clinician chose), stored
as JSON in `judgment_json`. Writers pass the `sqlite_utils.Database` from `open_db`; readers a read-only `sqlite3`
connection. Both work: each function takes the underlying connection.
"""

from __future__ import annotations

import json
import sqlite3
from datetime import datetime, timezone
from typing import Iterable

from helmbench.manifest.canonical import hash_of

#: The columns a review has in the database and in an export file, in that order.
REVIEW_COLUMNS = ("item_hash", "reviewer", "case_id", "scenario", "criterion", "criterion_text", "judgment_json",
                  "confidence", "note", "created_at", "source")
CONFIDENCES = ("low", "medium", "high")


def item_hash(messages: list[dict], output: str, criterion: dict) -> str:
    """The key of one judged item: exactly what the judge was shown, minus the judge's own instructions.

    The judge's system prompt and answer format are left out on purpose: rewording the judge's
    instructions does not change what a clinician was asked to decide.
    """
    return hash_of({
        "messages": messages,
        "output": output,
        "criterion": {"code": criterion["code"], "text": criterion["text"], "options": list(criterion["options"]),
                      "response_type": criterion.get("response_type") or "single"},
    })


def _conn(db) -> sqlite3.Connection:
    return getattr(db, "conn", db)


def _dicts(cur: sqlite3.Cursor) -> list[dict]:
    cols = [d[0] for d in cur.description]
    return [dict(zip(cols, row)) for row in cur.fetchall()]


def now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


_JUDGED = """
SELECT c.id AS case_id, c.hash AS case_hash, c.scenario, c.messages_json, c.evaluation_json,
       r.content, ru.model, j.judge_model, j.criterion, j.judgment_json, rj.verdict, j.created_at AS judged_at
FROM runs ru
JOIN results res ON res.run_id = ru.id
JOIN result_judgements rj ON rj.result_id = res.id
JOIN judgements j ON j.id = rj.judgement_id
JOIN responses r ON r.id = res.response_id
JOIN cases c ON c.hash = res.case_hash
WHERE ru.manifest_hash = ? AND j.error_kind IS NULL AND rj.verdict IN ('PASS', 'FAIL') AND r.content IS NOT NULL
ORDER BY c.id, j.criterion, ru.model, j.judge_model
"""


def judged_rows(db, manifest_hash: str) -> list[dict]:
    """Every usable judgement behind a result of the manifest's runs (previews included: the judge saw them).

    One row per (result, criterion, judge): the case's request and criteria as the manifest has
    them, the model's output, the judge's option(s) and the PASS/FAIL it gave under the case's
    current pass values.
    """
    return _dicts(_conn(db).execute(_JUDGED, [manifest_hash]))


def latest_judged_manifest(db) -> str | None:
    """The manifest of the most recently started run that has judgements (the default for review)."""
    row = _conn(db).execute(
        """SELECT ru.manifest_hash FROM runs ru WHERE EXISTS (
             SELECT 1 FROM results res JOIN result_judgements rj ON rj.result_id = res.id WHERE res.run_id = ru.id)
           ORDER BY ru.started_at DESC, ru.id DESC LIMIT 1""").fetchone()
    return row[0] if row else None


def manifest_has_runs(db, manifest_hash: str) -> bool:
    return _conn(db).execute("SELECT 1 FROM runs WHERE manifest_hash = ? LIMIT 1", [manifest_hash]).fetchone() is not None


def declared_calibration(db, manifest_hash: str | None) -> dict | None:
    """benchmark.yml's `calibration:` as the manifest's catalog carries it, or None."""
    from helmbench.store.queries.manifests import manifest_header

    header = manifest_header(_conn(db), manifest_hash) if manifest_hash else None
    return ((header or {}).get("catalog") or {}).get("calibration")


def _has_reviews(conn: sqlite3.Connection) -> bool:
    """False for a database opened read-only before migration 4 (a reader must not migrate it)."""
    return conn.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'reviews'").fetchone() is not None


def all_reviews(db) -> list[dict]:
    """Every review, oldest first (stale ones included: the caller decides what is current)."""
    if not _has_reviews(_conn(db)):
        return []
    return _dicts(_conn(db).execute(f"SELECT {', '.join(REVIEW_COLUMNS)} FROM reviews ORDER BY created_at, id"))


def reviewed_by(db, reviewer: str) -> set[str]:
    """The item hashes `reviewer` has already given a verdict on."""
    return {r[0] for r in _conn(db).execute("SELECT item_hash FROM reviews WHERE reviewer = ?", [reviewer])}


_UPSERT = (f"INSERT INTO reviews ({', '.join(REVIEW_COLUMNS)}) VALUES ({', '.join('?' for _ in REVIEW_COLUMNS)}) "
           "ON CONFLICT (item_hash, reviewer) DO UPDATE SET "
           + ", ".join(f"{c} = excluded.{c}" for c in REVIEW_COLUMNS[2:]))
_NEWER = " WHERE excluded.created_at > reviews.created_at"


def save_review(db, review: dict) -> None:
    """Store one reviewer's verdict on one item; a second verdict by the same reviewer replaces the first."""
    conn = _conn(db)
    row = _encoded({"created_at": now(), "source": "local", **review})
    with conn:
        conn.execute(_UPSERT, [_cell(row.get(c)) for c in REVIEW_COLUMNS])


def import_reviews(db, reviews: Iterable[dict]) -> tuple[int, int]:
    """Add reviews from another machine in one transaction; returns (added, already here: replaced by a newer one or left as it was).

    A review already here for the same item and reviewer is replaced only by a newer one, so
    importing the same file twice, or an older export, changes nothing.
    """
    conn = _conn(db)
    before = conn.execute("SELECT count(*) FROM reviews").fetchone()[0]
    rows = [_encoded(r) for r in reviews]
    with conn:
        conn.executemany(_UPSERT + _NEWER, [[_cell(r.get(c)) for c in REVIEW_COLUMNS] for r in rows])
    after = conn.execute("SELECT count(*) FROM reviews").fetchone()[0]
    return after - before, len(rows) - (after - before)


def _encoded(review: dict) -> dict:
    """`judgment` (an option, or a list of options) as the stored `judgment_json`."""
    if "judgment" in review:
        review = {**review, "judgment_json": json.dumps(review["judgment"], ensure_ascii=False)}
    return review


def _cell(value):
    return json.dumps(value, ensure_ascii=False) if isinstance(value, (list, dict)) else value
