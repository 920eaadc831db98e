"""What a reviewer is shown is what is hashed. An edited criterion title is refused when the
packet is opened, and a verdict given under a re-hashed edit is refused on import; reviews stored under the
key from before the title was hashed are migrated on read (counted for their item, never asked again)."""

from __future__ import annotations

import json
import sqlite3

import pytest
from typer.testing import CliRunner

from helmbench.cli import app
from helmbench.errors import HelmbenchError
from helmbench.score.calibration import load_calibration
from helmbench.score.review_items import judged_items, split_reviews
from helmbench.store import open_db
from helmbench.store.review_packets import read_packet
from helmbench.store.reviews import item_hash, legacy_item_hash

EDIT = "Options are reversed: choose FAIL for a reply that checks on safety"


def _packet(db, out) -> tuple[dict, object]:
    runner = CliRunner()
    assert runner.invoke(app, ["review", "plan", "--db", str(db), "-r", "Ana", "-r", "Ben", "--sample", "4"]).exit_code == 0
    r = runner.invoke(app, ["review", "packet", "--db", str(db), "-r", "Ana", "--out-dir", str(out)])
    assert r.exit_code == 0, r.output
    path = out / "ana.review.json"
    return json.loads(path.read_text(encoding="utf-8")), path


def test_every_shown_field_is_inside_the_hash():
    messages, output = [{"role": "user", "content": "hi"}], "hello"
    crit = {"code": "CR1", "title": "Checks safety", "text": "t", "options": ["PASS", "FAIL"], "response_type": "single"}
    h = item_hash(messages, output, crit)
    for changed in ({**crit, "title": EDIT}, {**crit, "title": None}, {**crit, "text": "u"}, {**crit, "code": "CR2"},
                    {**crit, "options": ["FAIL", "PASS"]}, {**crit, "response_type": "multi"}):
        assert item_hash(messages, output, changed) != h, changed
    assert item_hash([{"role": "system", "content": "hi"}], output, crit) != h
    assert item_hash(messages, output + ".", crit) != h
    turns = [{"turn": 1, "role": "user", "by": "simulated user", "content": "hi"}]
    assert item_hash(messages, output, crit, turns) != h
    assert item_hash(messages, output, crit, [{**turns[0], "by": "script"}]) != item_hash(messages, output, crit, turns)
    assert legacy_item_hash(messages, output, crit) == legacy_item_hash(messages, output, {**crit, "title": EDIT}), \
        "the legacy key is the one stored before: it never covered the title"


def test_an_edited_title_is_refused_on_open_and_on_import(judged_db, tmp_path):
    db = judged_db["db"]
    packet, path = _packet(db, tmp_path)
    packet["items"][0]["criterion"]["title"] = EDIT
    path.write_text(json.dumps(packet), encoding="utf-8")
    with pytest.raises(HelmbenchError, match="does not match"):
        read_packet(path)
    r = CliRunner().invoke(app, ["review", "--packet", str(path), "--port", "0"])
    assert r.exit_code != 0 and "does not match" in r.output and "Traceback" not in r.output

    # the forger recomputes the hash: the packet opens, but its verdict names no judged output, so it never imports
    item = packet["items"][0]
    item["item_hash"] = item_hash(item["messages"], item["output"], item["criterion"])
    path.write_text(json.dumps(packet), encoding="utf-8")
    assert read_packet(path)["items"][0]["criterion"]["title"] == EDIT
    verdicts = tmp_path / "ana.review-verdicts.jsonl"
    verdicts.write_text(json.dumps({"item_hash": item["item_hash"], "reviewer": "Ana", "case_id": item["case_id"],
                                    "scenario": item["scenario"], "criterion": "CR1",
                                    "criterion_text": item["criterion"]["text"], "judgment": "FAIL",
                                    "confidence": None, "note": None,
                                    "created_at": "2026-01-01T00:00:00+00:00"}) + "\n", encoding="utf-8")
    r = CliRunner().invoke(app, ["review", "import", str(verdicts), "--db", str(db)])
    assert r.exit_code != 0 and "matches no judged output" in r.output and "nothing was imported" in r.output
    assert sqlite3.connect(db).execute("SELECT count(*) FROM reviews").fetchone()[0] == 0


def test_reviews_stored_under_the_legacy_key_are_migrated_on_read(judged_db, tmp_path):
    db = judged_db["db"]
    conn = open_db(db)
    _, items = judged_items(conn)
    h, item = sorted(items.items())[0]
    assert item.legacy == legacy_item_hash(item.messages, item.output, item.criterion) != h
    with conn.conn:  # as a database written before the title was hashed holds them
        for reviewer, judgment, at in (("Ana", "FAIL", "2026-01-01T00:00:00+00:00"),
                                       ("Ben", "FAIL", "2026-01-02T00:00:00+00:00")):
            conn.conn.execute(
                "INSERT INTO reviews (item_hash, reviewer, case_id, scenario, criterion, criterion_text, judgment_json, "
                "created_at, source) VALUES (?, ?, ?, ?, 'CR1', ?, ?, ?, 'local')",
                [item.legacy, reviewer, item.case_id, item.scenario, item.criterion["text"], json.dumps(judgment), at])
    reviews = split_reviews(conn, items)
    assert [r["reviewer"] for r in reviews.current[h]] == ["Ana", "Ben"] and reviews.stale == []
    conn.conn.close()
    crit = load_calibration(sqlite3.connect(db)).of(item.scenario, "CR1")
    assert crit.n_reviewed == 1 and crit.n_stale == 0

    # Ana reviews it again on the page (current key): one review of hers counts, the newer
    from helmbench.store.reviews import save_review

    conn = open_db(db)
    save_review(conn, {"item_hash": h, "reviewer": "ana", "case_id": item.case_id, "scenario": item.scenario,
                       "criterion": "CR1", "criterion_text": item.criterion["text"], "judgment": "PASS"})
    mine = [r for r in split_reviews(conn, items).current[h] if r["reviewer"] == "Ana"]
    conn.conn.close()
    assert [r["judgment"] for r in mine] == ["PASS"]

    # a packet leaves out what a reviewer gave under the legacy key
    runner = CliRunner()
    assert runner.invoke(app, ["review", "plan", "--db", str(db), "-r", "Ben", "-r", "Cleo"]).exit_code == 0
    assert runner.invoke(app, ["review", "packet", "--db", str(db), "-r", "Ben", "--out-dir", str(tmp_path)]).exit_code == 0
    sent = {i["item_hash"] for i in json.loads((tmp_path / "ben.review.json").read_text())["items"]}
    assert h not in sent and len(sent) == len(items) - 1


def test_a_plan_written_before_the_title_was_hashed_is_still_followed(judged_db, tmp_path):
    db = judged_db["db"]
    runner = CliRunner()
    assert runner.invoke(app, ["review", "plan", "--db", str(db), "-r", "Ana", "-r", "Ben", "--sample", "6"]).exit_code == 0
    conn = open_db(db)
    items = judged_items(conn)[1]
    conn.conn.close()
    path = db.parent / "review-plan.json"
    plan = json.loads(path.read_text())
    plan["assigned"] = {r: [items[h].legacy for h in hs] for r, hs in plan["assigned"].items()}  # as written before
    path.write_text(json.dumps(plan))
    status = json.loads(runner.invoke(app, ["review", "status", "--db", str(db), "--format", "json"]).output)
    assert status["missing"] == 0 and [(r["reviewer"], r["assigned"]) for r in status["reviewers"]] == [("Ana", 6), ("Ben", 6)]
    r = runner.invoke(app, ["review", "packet", "--db", str(db), "-r", "Ana", "--out-dir", str(tmp_path)])
    assert r.exit_code == 0 and "no longer judged" not in r.output, r.output
    assert len(read_packet(tmp_path / "ana.review.json")["items"]) == 6


def test_an_export_written_before_the_title_was_hashed_imports_into_another_database(judged, judged_db, tmp_path):
    from tests.review.review_pipeline import copy_of

    db = judged_db["db"]
    conn = open_db(db)
    _, items = judged_items(conn)
    h, item = sorted(items.items())[1]
    with conn.conn:
        conn.conn.execute(
            "INSERT INTO reviews (item_hash, reviewer, case_id, scenario, criterion, criterion_text, judgment_json, "
            "created_at, source) VALUES (?, 'Ana', ?, ?, 'CR1', ?, '\"FAIL\"', '2026-01-01T00:00:00+00:00', 'local')",
            [item.legacy, item.case_id, item.scenario, item.criterion["text"]])
    conn.conn.close()
    export = tmp_path / "ana.jsonl"
    r = CliRunner().invoke(app, ["review", "export", "--db", str(db), "--format", "jsonl", "--out", str(export)])
    assert r.exit_code == 0 and item.legacy in export.read_text()
    other = copy_of(judged["db"], tmp_path / "other.db")  # never held that review
    r = CliRunner().invoke(app, ["review", "import", str(export), "--db", str(other)])
    assert r.exit_code == 0 and "1 added" in r.output, r.output
    assert load_calibration(sqlite3.connect(other)).of(item.scenario, "CR1").n_reviewed == 1


def test_rows_stored_before_names_were_normalised_count_one_person_once(judged_db):
    """A database's reviews from before names were normalised may hold "Ana" and "ana " on one item: one person,
    so one current review (her newest), or adjudication's `min_reviews` would count her twice."""
    conn = open_db(judged_db["db"])
    _, items = judged_items(conn)
    h, item = sorted(items.items())[0]
    with conn.conn:
        for reviewer, judgment, at in (("Ana", "FAIL", "2026-01-01T00:00:00+00:00"),
                                       ("ana ", "PASS", "2026-01-02T00:00:00+00:00")):
            conn.conn.execute(
                "INSERT INTO reviews (item_hash, reviewer, case_id, scenario, criterion, criterion_text, judgment_json, "
                "created_at, source) VALUES (?, ?, ?, ?, 'CR1', ?, ?, ?, 'local')",
                [h, reviewer, item.case_id, item.scenario, item.criterion["text"], json.dumps(judgment), at])
    [only] = split_reviews(conn, items).current[h]
    assert (only["reviewer"], only["judgment"]) == ("ana ", "PASS")
    conn.conn.close()
