"""The judgement store: the judge migration upgrades a database in place; a successful judgement
is never overwritten, an ERROR one is replaced in place; a result's links are replaced whole."""

from __future__ import annotations

import sqlite3

from helmbench.store import MIGRATIONS, open_db
from helmbench.store.judgements import JudgedCase, find_judgement, judge_totals, judgements_of_result, write_judged
from helmbench.store.responses import Write, write_batch

KEY = ("sha256:req", "test/judge-1", "sha256:settings")


def _db(tmp_path):
    db = open_db(tmp_path / "results.db")
    conn = db.conn
    with conn:
        conn.execute("INSERT INTO manifests (hash, format, cases, header_json) VALUES ('m', 'f', 1, '{}')")
        conn.execute("INSERT INTO pillars (code) VALUES ('P1')")
        conn.execute("INSERT INTO behaviours (code, pillar) VALUES ('P1-B1', 'P1')")
        conn.execute("INSERT INTO scenarios (code, behaviour) VALUES ('P1-B1-S1', 'P1-B1')")
        conn.execute("INSERT INTO cases (hash, id, request_hash, scenario, messages_json, evaluation_json) "
                     "VALUES ('c', 'P1-B1-S1-C1-PT1', 'r', 'P1-B1-S1', '[]', '{}')")
        conn.execute("INSERT INTO models (id) VALUES ('test/model-a')")
        conn.execute("INSERT INTO runs (manifest_hash, model, settings_json, settings_hash, started_at) "
                     "VALUES ('m', 'test/model-a', '{}', 's', 'now')")
    write_batch(db, [Write({"request_hash": "r", "model": "test/model-a", "settings_hash": "s", "sample": 0,
                            "run_id": 1, "content": "hi", "attempts": 1, "created_at": "now"}, None)])
    return db


def judgement(**kw):
    row = dict(zip(("judge_request_hash", "judge_model", "judge_settings_hash"), KEY), response_id=1, run_id=1,
               criterion="CR1", verdict="PASS", score=1.0, judgment_json='{"judgment": "PASS"}', justification="ok",
               raw="{}", cost=0.001, prompt_tokens=10, completion_tokens=5, attempts=1, created_at="now")
    row.update(kw)
    return row


def result(verdict="PASS", score=1.0):
    return {"run_id": 1, "case_id": "P1-B1-S1-C1-PT1", "case_hash": "c", "sample": 0, "response_id": 1,
            "verdict": verdict, "score": score, "reason": "judge", "created_at": "now"}


def test_the_judge_migration_is_registered_and_upgrades_in_place(tmp_path):
    db = _db(tmp_path)
    names = {m.name for m in MIGRATIONS}
    assert any("judge" in n for n in names)
    cols = {r[1] for r in db.execute("PRAGMA table_info(runs)")}
    assert {"n_judgements", "n_judge_errors", "judge_calls", "judge_cost"} <= cols
    assert {"verdict", "score"} <= {r[1] for r in db.execute("PRAGMA table_info(result_judgements)")}
    db.conn.close()
    assert open_db(tmp_path / "results.db").execute("SELECT count(*) FROM migrations").fetchone()[0] == len(MIGRATIONS)


def test_error_judgements_are_replaced_in_place_and_successes_kept(tmp_path):
    db = _db(tmp_path)
    err = judgement(verdict="ERROR", score=None, judgment_json=None, error_kind="judge_invalid_json", error_message="x")
    write_judged(db, [JudgedCase([(err, "ERROR", None)], result("ERROR", None))])
    first = find_judgement(db, *KEY)
    assert first["error_kind"] == "judge_invalid_json"
    write_judged(db, [JudgedCase([(judgement(), "PASS", 1.0)], result())])
    second = find_judgement(db, *KEY)
    assert second["id"] == first["id"] and second["error_kind"] is None and second["verdict"] == "PASS"
    write_judged(db, [JudgedCase([(judgement(verdict="FAIL", justification="changed"), "FAIL", 0.0)], result())])
    assert find_judgement(db, *KEY)["justification"] == "ok", "a successful judgement is never overwritten"
    assert db.execute("SELECT count(*) FROM judgements").fetchone()[0] == 1


def test_a_results_links_are_replaced_whole_and_totals_count_evaluations(tmp_path):
    db = _db(tmp_path)
    a, b = judgement(), judgement(judge_request_hash="sha256:req2", criterion="CR2", verdict="FAIL", score=0.5)
    write_judged(db, [JudgedCase([(a, "PASS", 1.0), (b, "FAIL", 0.5)], result("FAIL", 0.75))])
    (res_id,) = db.execute("SELECT id FROM results").fetchone()
    assert [(j["criterion"], j["link_verdict"]) for j in judgements_of_result(db, res_id)] == [("CR1", "PASS"),
                                                                                               ("CR2", "FAIL")]
    from types import SimpleNamespace

    from helmbench.store.ledger import Account, done_values, sent_row, write_done, write_sent

    # the two calls as the engine records them in the ledger (judge_calls and judge_cost are read there)
    sent = [sent_row(Account("judge", 1, j["judge_request_hash"], j["judge_settings_hash"]), j["judge_model"], 1,
                     "t", "i") for j in (a, b)]
    answer = SimpleNamespace(prompt_tokens=10, completion_tokens=5, cost=0.001, latency_ms=1, model_version=None,
                             provider=None, generation_id=None)
    with db.conn:
        write_sent(db.conn, sent)
        write_done(db.conn, [done_values(row["uid"], answer, "t") for row in sent])
    totals = judge_totals(db, 1)
    assert (totals["n_judgements"], totals["judge_calls"], totals["n_judged_cases"]) == (2, 2, 1)
    assert totals["judge_cost"] == 0.002
    stored = find_judgement(db, *KEY)["id"]
    write_judged(db, [JudgedCase([(stored, "PASS", 1.0)], result())])  # a re-judge with one criterion
    assert [j["criterion"] for j in judgements_of_result(db, res_id)] == ["CR1"]
    assert db.execute("SELECT id FROM results").fetchone()[0] == res_id
    assert judge_totals(db, 1)["n_judgements"] == 1
    conn = sqlite3.connect(tmp_path / "results.db")
    assert conn.execute("PRAGMA foreign_key_check").fetchall() == []
