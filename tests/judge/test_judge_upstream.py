"""End to end on the upstream sample (real HTTP through litellm to the fake OpenRouter, whose
judge answers come from the judge's own response schema): the multi-criteria scenario P1-B5-S1
(48 cases, CR1 + CR2) gets exactly two judgements per case; editing CR2 re-judges CR2 only and
asks the model nothing; an unchanged re-run makes no call; a crash between answer and judgement
re-judges without asking the model."""

from __future__ import annotations

from collections import Counter
from types import SimpleNamespace

import pytest

from tests.judge.judge_pipeline import (
    JUDGE, MODEL, UPSTREAM, compile_to, copy_db, q, run_once, sqe_links, upstream_tree, write_models,
)

pytestmark = pytest.mark.skipif(not UPSTREAM.is_dir(), reason="the upstream sample is not available")

MULTI = "P1-B5-S1"  # 48 cases, CR1 + CR2
SINGLE = "P3-B1-S1"  # 4 cases, criteria.md


@pytest.fixture(scope="module")
def upstream(tmp_path_factory, fake_server):
    root = tmp_path_factory.mktemp("upstream")
    tree = upstream_tree(root / "tree")
    manifest = compile_to(tree, root / "build")
    models = write_models(root / "models.yml", [MODEL])
    db = root / "build" / "results.db"
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("OPENROUTER_API_BASE", fake_server.api_base)
        mp.setenv("OPENROUTER_API_KEY", "sk-or-v1-judge-tests")
        fake_server.restore()
        report = run_once(manifest, models, db, concurrency=16)
        calls = SimpleNamespace(by_model=Counter(fake_server.by_model), by_criterion=Counter(fake_server.judge_calls))
    return SimpleNamespace(root=root, tree=tree, manifest=manifest, models=models, db=db, report=report, calls=calls)


def test_two_judgements_per_multi_criteria_case_and_consistent_totals(upstream):
    db, (run,) = upstream.db, upstream.report.runs
    assert upstream.report.status == "completed"
    assert upstream.calls.by_model == {MODEL: 112, JUDGE: 2 * 48 + 4}
    assert upstream.calls.by_criterion == {"CR1": 48, "CR2": 48, "criteria": 4}
    links = sqe_links(db, run["id"], MULTI)
    assert len(links) == 48 and all([c for c, *_ in v] == ["CR1", "CR2"] for v in links.values())
    assert len(sqe_links(db, run["id"], SINGLE)) == 4
    # case verdicts follow from their criteria: PASS only if both pass, score = mean
    results = {cid: (v, s) for cid, v, s in q(db, "SELECT case_id, verdict, score FROM results WHERE run_id = ?",
                                               (run["id"],))}
    for case_id, crit in links.items():
        verdict, score = results[case_id]
        assert verdict == ("PASS" if all(v == "PASS" for _, v, _, _ in crit) else "FAIL")
        assert score == pytest.approx(sum(s for _, _, s, _ in crit) / 2)
    verdicts = Counter(v for v, _ in results.values())
    assert {"PASS", "FAIL"} <= set(verdicts)  # the fake's judge answers vary
    # counts of cases and of evaluations are kept apart
    assert run["n_pass"] + run["n_fail"] + run["n_error"] == len(results) == 112
    assert run["n_pass"] <= 112 and run["n_error"] == 0 and run["n_awaiting_judge"] == 0
    assert run["n_judgements"] == 2 * 48 + 4 == run["judge_calls"]
    assert run["n_judged_cases"] == 52 and run["n_judge_errors"] == 0
    assert run["judge_cost"] == pytest.approx(100 * 0.0001)
    assert q(db, "SELECT count(*) FROM judgements WHERE error_kind IS NULL AND raw IS NOT NULL "
                 "AND justification != '' AND prompt_tokens > 0 AND cost > 0 AND latency_ms >= 0") == [(100,)]


def test_an_unchanged_second_run_makes_no_call(upstream, fake):
    before = q(upstream.db, "SELECT id, verdict, score FROM results ORDER BY id")
    report = run_once(upstream.manifest, upstream.models, upstream.db)
    assert fake.total == 0
    assert q(upstream.db, "SELECT id, verdict, score FROM results ORDER BY id") == before
    assert report.runs[0]["n_judgements"] == 100


def test_editing_cr2_rejudges_only_cr2_and_never_asks_the_model(upstream, fake, tmp_path):
    tree = upstream_tree(tmp_path / "tree")
    db = copy_db(upstream.db, tmp_path / "build" / "results.db")
    cr2 = next(tree.rglob("CR2.md"))
    cr2.write_text(cr2.read_text(encoding="utf-8") + "\nA response that ignores the secondary risk entirely may "
                   "still PASS.\n", encoding="utf-8")
    manifest = compile_to(tree, tmp_path / "build")
    report = run_once(manifest, upstream.models, db, concurrency=16)
    assert fake.by_model == {JUDGE: 48}, "the model under test must not be asked again"
    assert fake.judge_calls == {"CR2": 48}
    (run,) = report.runs
    old_run = upstream.report.runs[0]["id"]
    assert run["id"] != old_run and run["n_pass"] + run["n_fail"] == 112 and run["n_error"] == 0
    new, old = sqe_links(db, run["id"], MULTI), sqe_links(db, old_run, MULTI)
    assert len(new) == 48
    for case_id, crit in new.items():
        assert crit[0][3] == old[case_id][0][3], "CR1's judgement is reused"
        assert crit[1][3] != old[case_id][1][3], "CR2 is judged anew"
    assert run["judge_calls"] == 48 and run["n_judgements"] == 100


def test_a_crash_between_answer_and_judgement_rejudges_without_asking_the_model(upstream, fake, tmp_path):
    db = copy_db(upstream.db, tmp_path / "build" / "results.db")
    sqe = "SELECT res.id FROM results res JOIN cases c ON c.hash = res.case_hash WHERE c.evaluation_type = 'sqe'"
    with __import__("sqlite3").connect(db) as conn:  # as if killed after the answers were stored
        conn.execute(f"DELETE FROM result_judgements WHERE result_id IN ({sqe})")
        conn.execute("DELETE FROM judgements")
        conn.execute(f"DELETE FROM results WHERE id IN ({sqe})")
    report = run_once(upstream.manifest, upstream.models, db, concurrency=16)
    assert fake.by_model == {JUDGE: 100}
    assert report.runs[0]["n_pass"] + report.runs[0]["n_fail"] == 112
    assert len(sqe_links(db, report.runs[0]["id"], MULTI)) == 48
