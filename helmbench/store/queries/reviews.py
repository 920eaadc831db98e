"""Reads for clinician review and calibration: judged items, stored reviews, the declared threshold.

The writes (a verdict, an import) and the key reviews are stored under are in `store.reviews`.
Each function takes a connection (read-only or not) or a `sqlite_utils.Database`.
"""

from __future__ import annotations

import sqlite3

from helmbench.store.reviews import REVIEW_COLUMNS, connection_of as _conn, reviewer_key


def _dicts(cur: sqlite3.Cursor) -> list[dict]:
    cols = [d[0] for d in cur.description]
    return [dict(zip(cols, row)) for row in cur.fetchall()]


_JUDGED = """
SELECT c.id AS case_id, c.hash AS case_hash, c.scenario, c.messages_json, c.evaluation_json, c.response_format_json,
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
    return _rows_or_none(db, _JUDGED, [manifest_hash])


_TRANSCRIPT_JUDGED = """
SELECT c.id AS case_id, c.hash AS case_hash, c.scenario, c.messages_json, c.evaluation_json, c.response_format_json,
       res.id AS result_id, ru.model, j.judge_model, j.criterion, j.judgment_json,
       coalesce(rj.verdict, cv.verdict) AS verdict, j.created_at AS judged_at
FROM runs ru
JOIN results res ON res.run_id = ru.id
JOIN result_judgements rj ON rj.result_id = res.id
JOIN judgements j ON j.id = rj.judgement_id AND j.output = 'transcript'
JOIN cases c ON c.hash = res.case_hash
LEFT JOIN checkpoint_verdicts cv ON cv.result_id = res.id AND cv.checkpoint = j.criterion
WHERE ru.manifest_hash = ? AND j.error_kind IS NULL AND coalesce(rj.verdict, cv.verdict) IN ('PASS', 'FAIL')
ORDER BY c.id, j.criterion, ru.model, j.judge_model
"""

_CHECKED_TRANSCRIPTS = """
SELECT DISTINCT c.id AS case_id, c.hash AS case_hash, c.scenario, c.messages_json, c.evaluation_json,
       c.response_format_json, res.id AS result_id, ru.model, res.created_at AS judged_at
FROM runs ru
JOIN results res ON res.run_id = ru.id
JOIN cases c ON c.hash = res.case_hash
WHERE ru.manifest_hash = ? AND res.verdict IN ('PASS', 'FAIL') AND c.evaluation_json LIKE '%"checks":%'
  AND EXISTS (SELECT 1 FROM result_turns rt WHERE rt.result_id = res.id)
ORDER BY c.id, ru.model
"""


def transcript_judged_rows(db, manifest_hash: str) -> list[dict]:
    """Every usable judgement of a conversation's transcript behind a result of the manifest's runs: one row
    per (result, criterion, judge), as `judged_rows` gives for single answers, with the result's id for its
    turns (`result_transcripts`) instead of a reply. The verdict is the link's, or (links moved by migration
    10 hold none) the criterion's checkpoint row."""
    return _rows_or_none(db, _TRANSCRIPT_JUDGED, [manifest_hash])


def checked_transcript_rows(db, manifest_hash: str) -> list[dict]:
    """The decided conversation results of the manifest whose case has checked criteria (`evaluation.checks`):
    a check's verdict is recomputed from the transcript, so these rows carry no verdict."""
    return _rows_or_none(db, _CHECKED_TRANSCRIPTS, [manifest_hash])


def result_transcripts(db, result_ids: set[int]) -> dict[int, list[dict]]:
    """{result id: its turns in order (the user before the assistant within a turn)}: turn, role, source, content."""
    out: dict[int, list[dict]] = {}
    ids = sorted(result_ids)
    for i in range(0, len(ids), 500):
        chunk = ids[i:i + 500]
        for row in _rows_or_none(db, f"""SELECT rt.result_id, t.turn, t.role, t.source, t.content
            FROM result_turns rt JOIN turns t ON t.id = rt.turn_id WHERE rt.result_id IN ({",".join("?" * len(chunk))})
            ORDER BY rt.result_id, t.turn, t.role = 'assistant'""", chunk):
            out.setdefault(row.pop("result_id"), []).append(row)
    return out


def _rows_or_none(db, sql: str, params: list) -> list[dict]:
    try:
        return _dicts(_conn(db).execute(sql, params))
    except sqlite3.OperationalError as exc:  # a database from before conversations or the judge stage (read-only)
        if "no such" in str(exc):
            return []
        raise


def latest_judged_manifest(db) -> str | None:
    """The manifest of the most recently started run that has judgements (of single answers or transcripts:
    both are items a clinician reviews), the default for review."""
    row = _conn(db).execute(
        """SELECT ru.manifest_hash FROM runs ru WHERE EXISTS (
             SELECT 1 FROM results res JOIN result_judgements rj ON rj.result_id = res.id WHERE res.run_id = ru.id)
           ORDER BY ru.started_at DESC, ru.id DESC LIMIT 1""").fetchone()
    return row[0] if row else None


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
    """The item hashes `reviewer` (any spelling of the name: `store.reviews.reviewer_key`) has given a verdict on."""
    key = reviewer_key(reviewer)
    return {h for h, name in _conn(db).execute("SELECT item_hash, reviewer FROM reviews") if reviewer_key(name) == key}


def judged_manifests(db) -> list[str]:
    """Every manifest whose runs have judgements (of single answers or transcripts), most recent first: whose
    items a review may be of."""
    return [r[0] for r in _conn(db).execute(
        """SELECT ru.manifest_hash FROM runs ru WHERE EXISTS (
             SELECT 1 FROM results res JOIN result_judgements rj ON rj.result_id = res.id WHERE res.run_id = ru.id)
           GROUP BY ru.manifest_hash ORDER BY max(ru.started_at) DESC""")]


def reviewed_items(db) -> set[str]:
    """The item hashes that have a stored review (current or stale)."""
    if not _has_reviews(_conn(db)):
        return set()
    return {r[0] for r in _conn(db).execute("SELECT DISTINCT item_hash FROM reviews")}
