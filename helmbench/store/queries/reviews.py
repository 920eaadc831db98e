"""Reads for clinician review and calibration: judged items, stored reviews, the declared threshold.

The writes (a verdict, an import) and the key reviews are stored under are in `store.reviews`.
Each function takes a connection (read-only or not) or a `sqlite_utils.Database`.
"""

from __future__ import annotations

import sqlite3

from helmbench.store.reviews import REVIEW_COLUMNS, connection_of as _conn, item_hash, reviewer_key


def _dicts(cur: sqlite3.Cursor) -> list[dict]:
    cols = [d[0] for d in cur.description]
    return [dict(zip(cols, row)) for row in cur.fetchall()]


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
    try:
        return _dicts(_conn(db).execute(_JUDGED, [manifest_hash]))
    except sqlite3.OperationalError as exc:  # a database from before the judge stage (read-only: not migrated)
        if "no such" in str(exc):
            return []
        raise


def judged_item_rows(db, manifest_hash: str):
    """(item hash, judged row, its criterion, the case's messages) for every row of `judged_rows`: the one place
    a judged output's item key is computed (score's judged items, the keys `review import` and `merge` accept).
    A row whose case holds no such criterion, or whose stored JSON does not parse, is no item."""
    import json

    criteria_of: dict[str, dict[str, dict]] = {}
    for row in judged_rows(db, manifest_hash):
        try:
            criteria = criteria_of.get(row["case_hash"])
            if criteria is None:
                evaluation = json.loads(row["evaluation_json"])
                criteria = criteria_of[row["case_hash"]] = {c["code"]: c for c in evaluation.get("criteria") or []}
            criterion = criteria.get(row["criterion"])
            if criterion is None:
                continue
            messages = json.loads(row["messages_json"])
            key = item_hash(messages, row["content"], criterion)
        except (ValueError, TypeError, KeyError, AttributeError):
            continue
        yield key, row, criterion, messages


def judged_item_options(db) -> dict[str, list[str]]:
    """Item hash → its criterion's options, over every manifest with judged answers (the latest first)."""
    options: dict[str, list[str]] = {}
    for manifest_hash in judged_manifests(db):
        for key, _, criterion, _ in judged_item_rows(db, manifest_hash):
            options.setdefault(key, list(criterion["options"]))
    return options


_TRANSCRIPT_JUDGED = """
SELECT DISTINCT c.scenario, c.evaluation_json FROM manifest_cases mc JOIN cases c ON c.hash = mc.case_hash
WHERE mc.manifest_hash = ? AND EXISTS (
  SELECT 1 FROM results res JOIN result_turns rt ON rt.result_id = res.id WHERE res.case_hash = c.hash)
"""


def transcript_judged_criteria(db, manifest_hash: str) -> list[tuple[str, str]]:
    """(scenario, criterion code) of the manifest's conversations judged on their transcript.

    Why apart from `judged_rows`: a transcript verdict is not an item a clinician can review (the
    review queue shows single replies), so such a criterion can never be calibrated.
    """
    import json

    try:
        found = _conn(db).execute(_TRANSCRIPT_JUDGED, [manifest_hash]).fetchall()
    except sqlite3.OperationalError as exc:  # a database from before conversations (read-only: not migrated)
        if "no such" in str(exc):
            return []
        raise
    return sorted({(scenario, c["code"]) for scenario, evaluation in found
                   for c in json.loads(evaluation).get("criteria") or []})


def latest_judged_manifest(db) -> str | None:
    """The manifest of the most recently started run that has judgements of single answers (the default for
    review: a transcript's judgements are not items a clinician reviews, see `transcript_judged_criteria`)."""
    row = _conn(db).execute(
        """SELECT ru.manifest_hash FROM runs ru WHERE EXISTS (
             SELECT 1 FROM results res JOIN result_judgements rj ON rj.result_id = res.id WHERE res.run_id = ru.id
             AND res.response_id IS NOT NULL)
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
    """Every manifest whose runs have judgements of single answers, most recent first: whose items a review
    may be of."""
    return [r[0] for r in _conn(db).execute(
        """SELECT ru.manifest_hash FROM runs ru WHERE EXISTS (
             SELECT 1 FROM results res JOIN result_judgements rj ON rj.result_id = res.id WHERE res.run_id = ru.id
             AND res.response_id IS NOT NULL)
           GROUP BY ru.manifest_hash ORDER BY max(ru.started_at) DESC""")]


def reviewed_items(db) -> set[str]:
    """The item hashes that have a stored review (current or stale)."""
    if not _has_reviews(_conn(db)):
        return set()
    return {r[0] for r in _conn(db).execute("SELECT DISTINCT item_hash FROM reviews")}
