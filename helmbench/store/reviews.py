"""Clinicians' reviews: how they are written (a verdict, an import), and the key they are stored under.

Why the key is a hash of what the judge saw (case request + model output + criterion code, text
and options) rather than a run, result or judgement id: ids differ between databases and runs,
while the same output under the same criterion is the same question to a clinician wherever it
was produced. Editing a criterion's wording changes the key of its items, so the reviews given
to the old wording no longer match any current item (stale: kept, shown, not counted).

A review carries `judgment` (the option, or the list of options, the clinician chose), stored
as JSON in `judgment_json`. The reads (judged items, stored reviews) are named queries in `store.queries.reviews`. Writers
pass the `sqlite_utils.Database` from `open_db` or a plain connection.
"""

from __future__ import annotations

import json
import sqlite3
import unicodedata
from datetime import datetime, timezone
from typing import Iterable

from helmbench.manifest.canonical import hash_of

#: The columns a review has in the database and in an export file, in that order.
REVIEW_COLUMNS = ("item_hash", "reviewer", "case_id", "scenario", "criterion", "criterion_text", "judgment_json",
                  "confidence", "note", "created_at", "source")
CONFIDENCES = ("low", "medium", "high")


def item_hash(messages: list[dict], output: str, criterion: dict, transcript: list[dict] | None = None) -> str:
    """The key of one judged item: everything a reviewer is shown of it, and so exactly what the judge (or the
    check) decided, minus the judge's own instructions.

    The criterion's title is inside (a packet whose title was edited to "options are reversed"
    must not open, nor its verdict import, under the genuine item), and so is a conversation's
    transcript (`transcript`: its turns in order, each with who wrote it, and the turn checkpoints
    shown beside them), absent for a single reply so the key of a reply stays what the reply
    alone decides. The judge's system prompt and answer format are left out on purpose:
    rewording the judge's instructions does not change what a clinician was asked to decide.
    """
    shown = {"messages": messages, "output": output, "criterion": _shown_criterion(criterion)}
    shown["criterion"]["title"] = criterion.get("title")
    if transcript is not None:
        shown["transcript"] = transcript
    return hash_of(shown)


def legacy_item_hash(messages: list[dict], output: str, criterion: dict) -> str:
    """The key reviews were stored under before the title was hashed (migration 7's `item_hash`).

    Why kept: reviews given before the change are migrated on read (`score.review_items.split_reviews`
    counts them for the item whose reply, code, text, options and response type they were given on);
    nothing new is written under it."""
    return hash_of({"messages": messages, "output": output, "criterion": _shown_criterion(criterion)})


def _shown_criterion(criterion: dict) -> dict:
    shown = {"code": criterion["code"], "text": criterion["text"], "options": list(criterion["options"]),
             "response_type": criterion.get("response_type") or "single"}
    if criterion.get("questions"):  # its named questions are shown with it (absent: the key stays as it was)
        shown["questions"] = shown_questions(criterion["questions"])
    return shown


def shown_questions(questions: list[dict]) -> list[dict]:
    """A criterion's named questions as a reviewer is shown them (and hashed): id, text and options, in order.
    Never the judge's answers: the review is blind, and the answers decide the judge's verdict."""
    return [{"id": q["id"], "text": q["text"], "options": list(q["options"])} for q in questions]


def connection_of(db) -> sqlite3.Connection:
    """The sqlite3 connection under a `sqlite_utils.Database`, or the connection itself."""
    return getattr(db, "conn", db)


def reviewer_name(name: str) -> str:
    """A reviewer's name as written: runs of whitespace as one space, trimmed."""
    return " ".join(str(name).split())


def reviewer_key(name: str) -> str:
    """Who a name stands for: "ana ", "ANA", "Ana" and fullwidth "ａｎａ" are one reviewer (whitespace, case and
    Unicode compatibility forms ignored: NFKC, then case-folded, then NFKC again as Unicode recommends)."""
    return unicodedata.normalize("NFKC", unicodedata.normalize("NFKC", reviewer_name(name)).casefold())


def known_reviewers(db) -> dict[str, str]:
    """reviewer_key → the spelling stored first, so every later spelling of a name joins its reviews."""
    conn = connection_of(db)
    out: dict[str, str] = {}
    for (name,) in conn.execute("SELECT reviewer FROM reviews GROUP BY reviewer ORDER BY min(created_at), reviewer"):
        out.setdefault(reviewer_key(name), name)
    return out


def _one_spelling(db, reviews: list[dict]) -> list[dict]:
    """Reviews with each reviewer named by the spelling already stored (or first met), the one place
    names are normalised, so the page, an import and the calibration count a person once."""
    names = known_reviewers(db)
    out = []
    for r in reviews:
        name = names.setdefault(reviewer_key(r["reviewer"]), reviewer_name(r["reviewer"]))
        out.append({**r, "reviewer": name})
    return out


def now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


_UPSERT = (f"INSERT INTO reviews ({', '.join(REVIEW_COLUMNS)}) VALUES ({', '.join('?' for _ in REVIEW_COLUMNS)}) "
           "ON CONFLICT (item_hash, reviewer) DO UPDATE SET "
           + ", ".join(f"{c} = excluded.{c}" for c in REVIEW_COLUMNS[2:]))
_NEWER = " WHERE excluded.created_at > reviews.created_at"


def save_review(db, review: dict) -> None:
    """Store one reviewer's verdict on one item; a second verdict by the same reviewer replaces the first."""
    conn = connection_of(db)
    (review,) = _one_spelling(db, [review])
    row = _encoded({"created_at": now(), "source": "local", **review})
    with conn:
        conn.execute(_UPSERT, [_cell(row.get(c)) for c in REVIEW_COLUMNS])


def import_reviews(db, reviews: Iterable[dict]) -> tuple[int, int]:
    """Add reviews from another machine in one transaction; returns (added, already here: replaced by a newer one or left as it was).

    A review already here for the same item and reviewer is replaced only by a newer one, so
    importing the same file twice, or an older export, changes nothing.
    """
    reviews = list(reviews)
    with connection_of(db):
        added, _ = write_imported(db, reviews)
    return added, len(reviews) - added


def write_imported(db, reviews: Iterable[dict]) -> tuple[int, int]:
    """Reviews checked by `store.review_files.accepted` written in the caller's transaction, as `review import`
    and `helmbench merge` write them (names joined to their stored spelling, a stored verdict replaced only
    by a newer one); returns (added, replaced)."""
    conn = connection_of(db)
    before = conn.execute("SELECT count(*) FROM reviews").fetchone()[0]
    changes = conn.total_changes
    rows = [_encoded(r) for r in _one_spelling(db, list(reviews))]
    conn.executemany(_UPSERT + _NEWER, [[_cell(r.get(c)) for c in REVIEW_COLUMNS] for r in rows])
    added = conn.execute("SELECT count(*) FROM reviews").fetchone()[0] - before
    return added, conn.total_changes - changes - added


def _encoded(review: dict) -> dict:
    """`judgment` (an option, or a list of options) as the stored `judgment_json`."""
    if "judgment" in review:
        review = {**review, "judgment_json": json.dumps(review["judgment"], ensure_ascii=False)}
    return review


def _cell(value):
    return json.dumps(value, ensure_ascii=False) if isinstance(value, (list, dict)) else value
