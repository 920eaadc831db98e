"""Reviews in results.db: keyed by what the judge saw, surviving runs, stale when the rubric changes."""

from __future__ import annotations

import sqlite3

import pytest

from helmbench.score.review_items import judged_items, split_reviews
from helmbench.store import open_db
from helmbench.store.queries.reviews import reviewed_by
from helmbench.store.reviews import item_hash, save_review
from tests.review.review_pipeline import CRITERION, JUDGE, MODELS, SCENARIOS, build, rows


def _review(item, reviewer="ana", judgment="PASS", **kw):
    return {"item_hash": item.hash, "reviewer": reviewer, "case_id": item.case_id, "scenario": item.scenario,
            "criterion": item.criterion["code"], "criterion_text": item.criterion["text"],
            "judgment": judgment, **kw}


def test_the_migration_adds_the_reviews_table_to_an_existing_database(judged_db):
    assert ("reviews",) in rows(judged_db["db"], "SELECT name FROM sqlite_master WHERE type = 'table'")
    assert rows(judged_db["db"], "SELECT max(version) FROM migrations")[0][0] >= 4


def test_items_are_what_the_judge_saw_with_both_verdicts_present(judged):
    db = sqlite3.connect(judged["db"])
    manifest, items = judged_items(db)
    assert manifest == judged["manifest_hash"]
    assert len(items) == 2 * 6 * len(MODELS)  # distinct outputs: 2 scenarios × 6 cases × 2 models
    assert {i.scenario for i in items.values()} == set(SCENARIOS)
    verdicts = {v for i in items.values() for _, v in i.judges.values()}
    assert verdicts == {"PASS", "FAIL"}, "the fake judge gives both, so the sample can be stratified"
    one = next(iter(items.values()))
    assert set(one.judges) == {JUDGE} and one.models <= set(MODELS)
    assert one.hash == item_hash(one.messages, one.output, one.criterion)
    # the key moves with each part of what the judge saw
    assert item_hash(one.messages, one.output + " ", one.criterion) != one.hash
    assert item_hash(one.messages, one.output, {**one.criterion, "text": one.criterion["text"] + "!"}) != one.hash
    assert item_hash(one.messages, one.output, {**one.criterion, "options": ["PASS", "FAIL"]}) != one.hash


def test_a_second_verdict_by_the_same_reviewer_replaces_the_first(judged_db):
    db = open_db(judged_db["db"])
    _, items = judged_items(db)
    item = next(iter(items.values()))
    save_review(db, _review(item, judgment="PASS", confidence="low"))
    save_review(db, _review(item, judgment="FAIL", confidence="high", note="missed the plan"))
    save_review(db, _review(item, reviewer="ben", judgment="PASS"))
    got = rows(judged_db["db"], "SELECT reviewer, judgment_json, confidence, note FROM reviews ORDER BY reviewer")
    assert got == [("ana", '"FAIL"', "high", "missed the plan"), ("ben", '"PASS"', None, None)]
    assert reviewed_by(db, "ana") == {item.hash} and reviewed_by(db, "cleo") == set()
    with pytest.raises(sqlite3.IntegrityError):
        save_review(db, _review(item, reviewer="dan", confidence="certain"))


def test_editing_a_criterion_makes_its_reviews_stale_and_leaves_the_others_current(judged_db, env, tmp_path):
    db = open_db(judged_db["db"])
    _, items = judged_items(db)
    for item in items.values():
        save_review(db, _review(item))
    db.conn.close()
    # the author rewords CR1 of the first scenario; the second scenario's CR1 is unchanged. Recompiled into a
    # folder of this test's: judged_db["root"] is the session's shared artifact, which other workers' tests read
    # at the same time (writing its manifest there once failed test_review_report.py's check of it).
    after = build(tmp_path / "recompiled", criterion_text=CRITERION["text"] + " Include any sign of a plan.",
                  db=judged_db["db"])
    db = open_db(after["db"])
    manifest, items_now = judged_items(db)
    assert manifest == after["manifest_hash"] != judged_db["manifest_hash"]
    reviews = split_reviews(db, items_now)
    assert len(reviews.stale) == 12 and {r["scenario"] for r in reviews.stale} == {SCENARIOS[0]}
    assert sum(len(v) for v in reviews.current.values()) == 12
    assert {items_now[h].scenario for h in reviews.current} == {SCENARIOS[1]}
    assert rows(after["db"], "SELECT count(*) FROM reviews")[0][0] == 24, "stale reviews are kept"
