"""Registering manifests and runs: content-addressed cases, run reuse, summaries."""

from __future__ import annotations

from pathlib import Path

from helmbench.manifest import read_manifest  # noqa: E402
from helmbench.store import open_db  # noqa: E402
from helmbench.store.catalog import is_registered, register_manifest, upsert_models  # noqa: E402
from helmbench.store.responses import Write, write_batch  # noqa: E402
from helmbench.store.ledger import Account, done_values, sent_row, write_done, write_sent  # noqa: E402
from helmbench.store.queries.ledger import run_costs as costs  # noqa: E402
from helmbench.store.runs import finish_run, start_run  # noqa: E402
from tests.fakes.manifests import make_case, synthetic_cases, write_manifest  # noqa: E402


def _manifest(tmp_path, cases, name="m.jsonl"):
    write_manifest(tmp_path / name, cases)
    return read_manifest(tmp_path / name)


def test_register_is_content_addressed_and_idempotent(tmp_path):
    db = open_db(tmp_path / "r.db")
    cases = list(synthetic_cases(20))
    m1 = _manifest(tmp_path, cases)
    assert register_manifest(db, m1.header, iter(m1)) == 20
    assert is_registered(db, m1.hash)
    last = cases[-1]
    changed = cases[:19] + [make_case(last["scenario"], 1, 5, evaluation=last["evaluation"], text="new text")]
    m2 = _manifest(tmp_path, changed, "m2.jsonl")
    register_manifest(db, m2.header, iter(m2))
    register_manifest(db, m2.header, iter(m2))
    assert db["cases"].count == 21  # one new case; shared ones stored once
    assert db["manifest_cases"].count == 40
    assert db.execute("SELECT count(*) FROM manifests").fetchone()[0] == 2
    assert db.execute("PRAGMA foreign_key_check").fetchall() == []


def test_a_run_is_reused_for_the_same_manifest_model_and_settings(tmp_path):
    db = open_db(tmp_path / "r.db")
    m = _manifest(tmp_path, list(synthetic_cases(8, scenarios=2)))
    register_manifest(db, m.header, iter(m))
    upsert_models(db, [("m/a", "A")])
    kw = dict(manifest_hash=m.hash, model="m/a", settings={"temperature": 0}, settings_hash="sha256:s", samples=1,
              n_cases=8, version="t")
    run_id = start_run(db, **kw)
    assert start_run(db, **kw) == run_id
    assert start_run(db, **{**kw, "settings_hash": "sha256:other"}) != run_id
    case = next(iter(m))
    sent = sent_row(Account("answer", run_id, case["request_hash"], "sha256:s", 0), "m/a", 1, "t", "inv")
    with db.conn:  # the call as the engine records it: sent before it leaves, completed once stored
        write_sent(db.conn, [sent])
    (c,) = [r for r in costs(db) if r["run_id"] == run_id]
    assert (c["calls"], c["unknown"], c["paid"]) == (1, 1, None)  # cut here, it would stay visible
    write_batch(db, [Write(
        {"request_hash": case["request_hash"], "model": "m/a", "settings_hash": "sha256:s", "sample": 0, "run_id": run_id,
         "content": "{}", "cost": 0.25, "prompt_tokens": 10, "completion_tokens": 5, "attempts": 2, "created_at": "t"},
        {"run_id": run_id, "case_id": case["id"], "case_hash": case["hash"], "sample": 0, "verdict": "FAIL",
         "score": 0.0, "reason": "r", "created_at": "t"})])
    usage = type("Usage", (), dict(prompt_tokens=10, completion_tokens=5, cost=0.25, latency_ms=3, model_version="v",
                                   provider="p", generation_id="g"))
    with db.conn:
        write_done(db.conn, [done_values(sent["uid"], usage, "t")])
    row = finish_run(db, run_id, "partial")
    assert (row["status"], row["n_fail"], row["cost"], row["prompt_tokens"]) == ("partial", 1, 0.25, 10)
    (c,) = [r for r in costs(db) if r["run_id"] == run_id]
    assert (c["calls"], c["unknown"], c["paid"], c["behind_results"]) == (1, 0, 0.25, 0.25)
