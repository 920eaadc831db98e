"""Reads for clinician review and calibration: judged items, stored reviews, the declared threshold.

The writes (a verdict, an import) and the key reviews are stored under are in `store.reviews`.
Each function takes a connection (read-only or not) or a `sqlite_utils.Database`.
"""

from __future__ import annotations

import sqlite3
from typing import Iterator, NamedTuple

from helmbench.store.reviews import REVIEW_COLUMNS, connection_of as _conn, item_hash, reviewer_key


def _dicts(cur: sqlite3.Cursor) -> list[dict]:
    cols = [d[0] for d in cur.description]
    return [dict(zip(cols, row)) for row in cur.fetchall()]


_JUDGED = """
SELECT c.id AS case_id, c.hash AS case_hash, c.scenario, c.messages_json, c.evaluation_json, c.response_format_json,
       r.content, ru.model, j.judge_model, j.criterion, j.judgment_json, rj.verdict, j.created_at AS judged_at,
       res.id AS result_id, res.run_id, res.sample
FROM runs ru
JOIN results res ON res.run_id = ru.id
JOIN result_judgements rj ON rj.result_id = res.id
JOIN judgements j ON j.id = rj.judgement_id
JOIN responses r ON r.id = res.response_id
JOIN cases c ON c.hash = res.case_hash
WHERE ru.manifest_hash = ? AND ru.status != 'imported' AND j.error_kind IS NULL AND rj.verdict IN ('PASS', 'FAIL', 'ABSTAIN')
  AND r.content IS NOT NULL
ORDER BY c.id, j.criterion, ru.model, j.judge_model
"""


def judged_rows(db, manifest_hash: str) -> list[dict]:
    """Every usable judgement behind a result of the manifest's runs (previews included: the judge saw them).

    One row per (result, criterion, judge): the case's request and criteria as the manifest has
    them, the model's output, the judge's option(s) and the PASS/FAIL it gave under the case's
    current pass values, or ABSTAIN (an abstain value: clinicians check that call too; it gives no κ pair).
    """
    return _rows_or_none(db, _JUDGED, [manifest_hash])


#: Who wrote a turn, as the reviewer is told (`turns.source`).
BY = {"opening": "user", "script": "user (scripted)", "user_model": "user (simulated)", "model": "assistant"}
CHECK_OPTIONS = ["PASS", "FAIL"]


class ItemRow(NamedTuple):
    """One judged (or checked) output under one criterion, as `judged_item_rows` yields it.

    `judge`: the judge model of `row`, or None for a checked criterion (whose verdict the score stage
    recomputes from the output); `transcript`: a conversation's turns after the opening as shown
    (turn, role, by, content, checkpoint), None for a single reply; `legacy`: the key reviews of a
    single reply under a judged criterion were stored under before the title was hashed."""

    key: str
    row: dict
    criterion: dict
    messages: list
    output: str
    transcript: list | None
    judge: str | None
    legacy: str | None


def check_criterion(check: dict) -> dict:
    """A checked criterion (`evaluation.checks`) as an item's criterion: its rule in plain words, PASS or FAIL."""
    kind = str((check.get("evaluation") or {}).get("type") or "check")
    text = check.get("text") or f"Checked by the {kind} check, not judged: does the output meet the criterion's rule?"
    return {"code": check["code"], "title": check.get("title"), "text": text, "options": list(CHECK_OPTIONS),
            "pass_values": ["PASS"], "response_type": "single", "scores": {"PASS": 1, "FAIL": 0}, "check": kind}


def shown_transcript(turns: list[dict], evaluation: dict) -> tuple[list[dict], str]:
    """(a conversation's turns after the opening as the reviewer sees them, its last reply): who wrote each,
    the scenario's turn checkpoints beside the assistant's reply at their turn."""
    checkpoint = {cp["turn"]: cp.get("title") or f"turn {cp['turn']}" for cp in evaluation.get("checkpoints") or []}
    shown = [{"turn": t["turn"], "role": t["role"], "by": BY.get(t["source"], t["source"]), "content": t["content"] or "",
              "checkpoint": checkpoint.get(t["turn"]) if t["role"] == "assistant" else None}
             for t in turns if t["source"] != "opening"]
    last = next((t["content"] for t in reversed(shown) if t["role"] == "assistant"), "")
    return shown, last or ""


def judged_item_rows(db, manifest_hash: str) -> Iterator[ItemRow]:
    """Every judged output of the manifest's runs under each criterion that decided it: the one place a judged
    output's item key is computed (score's judged items, the keys `review import` and `merge` accept).

    A single reply under each judged criterion (one row per judge) and under each checked one (once); a
    conversation's transcript under each criterion judged on it (one row per judge) and each checked one
    (once). A row whose case holds no such criterion, or whose stored JSON does not parse, is no item.

    An imported run's outputs (`helmbench import transcripts`) are no items: they answered the file's messages,
    not the case's request that an item shows and is keyed by, so neither a review plan nor the judge's
    agreement with reviewers may count them."""
    import json

    from helmbench.store.reviews import legacy_item_hash

    cases: dict[str, tuple[dict, dict]] = {}

    def parsed(row) -> tuple[dict, dict]:
        got = cases.get(row["case_hash"])
        if got is None:
            evaluation = json.loads(row["evaluation_json"])
            criteria = {c["code"]: c for c in evaluation.get("criteria") or []}
            criteria.update({c["code"]: check_criterion(c) for c in evaluation.get("checks") or []})
            got = cases[row["case_hash"]] = (evaluation, criteria)
        return got

    def item(row, criterion, output, transcript, judge) -> ItemRow:
        messages = json.loads(row["messages_json"])
        legacy = legacy_item_hash(messages, output, criterion) if transcript is None and judge else None
        return ItemRow(item_hash(messages, output, criterion, transcript), row, criterion, messages, output,
                       transcript, judge, legacy)

    def checks(row, evaluation, criteria, output, transcript) -> Iterator[ItemRow]:
        for c in evaluation.get("checks") or []:
            yield item(row, criteria[c["code"]], output, transcript, None)

    seen: set[int] = set()
    for row in judged_rows(db, manifest_hash):
        try:
            evaluation, criteria = parsed(row)
            criterion = criteria.get(row["criterion"])
            if criterion is None or criterion.get("check"):
                continue
            yield item(row, criterion, row["content"], None, row["judge_model"])
            if row["result_id"] not in seen:  # a reply's checks once per result (any judge's row), so each
                seen.add(row["result_id"])  # result its output belongs to is known (score.adjudication)
                yield from checks(row, evaluation, criteria, row["content"], None)
        except (ValueError, TypeError, KeyError, AttributeError):
            continue
    judged = transcript_judged_rows(db, manifest_hash)
    with_checks = checked_transcript_rows(db, manifest_hash)
    turns = result_transcripts(db, {r["result_id"] for r in [*judged, *with_checks]})
    for row in [*judged, *with_checks]:
        try:
            evaluation, criteria = parsed(row)
            if row["result_id"] not in turns:
                continue
            transcript, last = shown_transcript(turns[row["result_id"]], evaluation)
            if "judge_model" not in row:
                yield from checks(row, evaluation, criteria, last, transcript)
                continue
            criterion = criteria.get(row["criterion"])
            if criterion is not None and not criterion.get("check"):
                yield item(row, criterion, last, transcript, row["judge_model"])
        except (ValueError, TypeError, KeyError, AttributeError):
            continue


def judged_item_options(db) -> dict[str, list[str]]:
    """Item hash → its criterion's options, over every manifest with judged outputs (the latest first); a
    reply's key from before the title was hashed too, so an export written then still imports (its reviews
    are migrated on read, `score.review_items.migrated`)."""
    options: dict[str, list[str]] = {}
    for manifest_hash in judged_manifests(db):
        for it in judged_item_rows(db, manifest_hash):
            options.setdefault(it.key, list(it.criterion["options"]))
            if it.legacy:
                options.setdefault(it.legacy, list(it.criterion["options"]))
    return options


_TRANSCRIPT_JUDGED = """
SELECT c.id AS case_id, c.hash AS case_hash, c.scenario, c.messages_json, c.evaluation_json, c.response_format_json,
       res.id AS result_id, res.run_id, res.sample, ru.model, j.judge_model, j.criterion, j.judgment_json,
       coalesce(rj.verdict, cv.verdict) AS verdict, j.created_at AS judged_at
FROM runs ru
JOIN results res ON res.run_id = ru.id
JOIN result_judgements rj ON rj.result_id = res.id
JOIN judgements j ON j.id = rj.judgement_id AND j.output = 'transcript'
JOIN cases c ON c.hash = res.case_hash
LEFT JOIN checkpoint_verdicts cv ON cv.result_id = res.id AND cv.checkpoint = j.criterion
WHERE ru.manifest_hash = ? AND ru.status != 'imported' AND j.error_kind IS NULL
  AND coalesce(rj.verdict, cv.verdict) IN ('PASS', 'FAIL')
ORDER BY c.id, j.criterion, ru.model, j.judge_model
"""

_CHECKED_TRANSCRIPTS = """
SELECT DISTINCT c.id AS case_id, c.hash AS case_hash, c.scenario, c.messages_json, c.evaluation_json,
       c.response_format_json, res.id AS result_id, res.run_id, res.sample, ru.model, res.created_at AS judged_at
FROM runs ru
JOIN results res ON res.run_id = ru.id
JOIN cases c ON c.hash = res.case_hash
WHERE ru.manifest_hash = ? AND ru.status != 'imported' AND res.verdict IN ('PASS', 'FAIL')
  AND c.evaluation_json LIKE '%"checks":%'
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
        """SELECT ru.manifest_hash FROM runs ru WHERE ru.status != 'imported' AND EXISTS (
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
        """SELECT ru.manifest_hash FROM runs ru WHERE ru.status != 'imported' AND EXISTS (
             SELECT 1 FROM results res JOIN result_judgements rj ON rj.result_id = res.id WHERE res.run_id = ru.id)
           GROUP BY ru.manifest_hash ORDER BY max(ru.started_at) DESC""")]


def reviewed_items(db) -> set[str]:
    """The item hashes that have a stored review (current or stale)."""
    if not _has_reviews(_conn(db)):
        return set()
    return {r[0] for r in _conn(db).execute("SELECT DISTINCT item_hash FROM reviews")}
