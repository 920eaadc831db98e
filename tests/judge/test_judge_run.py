"""The judge inside `helmbench run`, on a small synthetic manifest (10 judged cases, criterion CR1):
failed or malformed judging is an ERROR that the next run re-judges alone; the model's own
malformed output is failed without a judge call; no judge means a clear error before any call;
dry-runs count judge calls apart; --max-cost covers judge calls."""

from __future__ import annotations

import json
import sys

import pytest

from helmbench.errors import HelmbenchError
from tests.fakes.openrouter import Rule
from tests.judge.judge_pipeline import JUDGE, MODEL, q, run_once, write_models

SQE = "SELECT res.verdict, res.score, res.reason FROM results res JOIN cases c ON c.hash = res.case_hash " \
      "WHERE c.evaluation_type = 'sqe' ORDER BY res.case_id"


def run(small, **kw):
    return run_once(small["manifest"], small["models"], small["db"], **kw)


@pytest.mark.parametrize("bad", ["!invalid_json", "!not_an_option", "!empty", "!truncated", "500"])
def test_a_failed_or_malformed_judgement_is_an_error_then_only_it_is_rejudged(small, fake, bad):
    if bad == "500":
        fake.rules = [Rule("500", match=JUDGE)]
    else:
        fake.judge_answers = {"CR1": bad}
    report = run(small)
    rows = q(small["db"], SQE)
    assert len(rows) == 10 and all(v == "ERROR" and s is None for v, s, _ in rows)
    assert all(reason.startswith("judge error on CR1") for _, _, reason in rows)
    (r,) = report.runs
    assert r["n_error"] == 10 and r["n_pass"] + r["n_fail"] == 30 and r["n_judge_errors"] == 10
    ids = q(small["db"], "SELECT id FROM judgements ORDER BY id")

    fake.reset_counts()
    fake.rules, fake.judge_answers = [], {"CR1": "PASS"}
    report = run(small)
    assert fake.by_model == {JUDGE: 10}, "only the failed judgements are asked again, never the model"
    assert q(small["db"], SQE) == [("PASS", 1.0, "judge: CR1 = PASS")] * 10
    assert q(small["db"], "SELECT id FROM judgements ORDER BY id") == ids, "replaced in place"
    assert report.runs[0]["n_error"] == 0 and report.runs[0]["n_judge_errors"] == 0


def test_the_models_malformed_output_fails_without_a_judge_call(small, fake):
    fake.rules = [Rule("invalid_json", match=MODEL)]
    run(small)
    rows = q(small["db"], SQE)
    assert len(rows) == 10 and all(v == "FAIL" and s == 0 and "invalid JSON" in why for v, s, why in rows)
    assert fake.by_model == {MODEL: 40}


def test_a_model_api_error_is_an_error_without_judging(small, fake):
    fake.rules = [Rule("403", match=MODEL)]
    run(small)
    assert all(v == "ERROR" for v, _, _ in q(small["db"], SQE))
    assert JUDGE not in fake.by_model


def test_no_marking_model_with_judged_cases_is_a_clear_error_before_any_call(small, fake):
    write_models(small["models"], [MODEL], judge=None)
    for dry in (False, True):
        with pytest.raises(HelmbenchError, match="marking_model"):
            run(small, dry_run=dry)
    assert fake.total == 0
    run(small, scenarios=("P1-B1-S1",))  # a selection without judged cases needs no judge
    assert fake.total == 10


def test_dry_run_counts_judge_calls_apart(small, fake):
    est = run(small, dry_run=True).judge
    assert (est.model, est.calls, est.unanswered, est.upto_new) == (JUDGE, 0, 10, 10)
    run(small)
    import sqlite3

    with sqlite3.connect(small["db"]) as conn:  # forget half the judgements: they would be asked again
        conn.execute("DELETE FROM result_judgements WHERE judgement_id IN (SELECT id FROM judgements WHERE id % 2 = 0)")
        conn.execute("DELETE FROM judgements WHERE id % 2 = 0")
    fake.reset_counts()
    est = run(small, dry_run=True).judge
    assert (est.calls, est.cached, est.unanswered, est.upto_new) == (5, 5, 0, 0)
    assert fake.total == 0


def test_max_cost_includes_judge_calls(small, fake):
    fake.cost = 0.001
    report = run(small, max_cost=0.045, concurrency=1)
    assert report.status == "stopped_cost"
    assert fake.by_model[MODEL] == 40 and 5 <= fake.by_model[JUDGE] <= 6
    assert report.spent == pytest.approx(0.001 * fake.total)
    assert report.runs[0]["n_awaiting_judge"] == 10 - fake.by_model[JUDGE]
    judged = fake.by_model[JUDGE]
    fake.reset_counts()
    report = run(small)
    assert fake.by_model == {JUDGE: 10 - judged}, "the next run judges the rest and asks the model nothing"
    assert report.runs[0]["n_awaiting_judge"] == 0
    assert report.runs[0]["judge_calls"] == 10


def test_cli_run_prints_judge_calls_apart(small, fake, monkeypatch, capsys):
    from helmbench.cli import main

    def cli(*args):
        monkeypatch.setattr(sys, "argv", ["helmbench", "run", "--manifest", str(small["manifest"]), "--models-file",
                                          str(small["models"]), "--db", str(small["db"]), *args])
        try:
            main()
        except SystemExit as exc:
            assert not exc.code
        return capsys.readouterr().out

    assert "Judge (test/judge-1), counted apart" in cli("--dry-run")
    out = cli()
    assert "Judge test/judge-1: 10 call(s) now" in out and "10 criterion evaluation(s) behind 10 judged case(s)" in out


def test_the_judge_sees_the_exact_prompt_and_the_full_output_at_temperature_0(small, fake):
    fake.keep_bodies = True
    run(small)
    judged = [b for b in fake.bodies if b["model"].removeprefix("openrouter/") == JUDGE]
    assert len(judged) == 10
    outputs = dict(q(small["db"], "SELECT c.messages_json, r.content FROM cases c JOIN responses r "
                                  "ON r.request_hash = c.request_hash WHERE c.evaluation_type = 'sqe'"))
    for body in judged:
        assert body["temperature"] == 0 and body["response_format"]["json_schema"]["name"] == "judgement"
        text = body["messages"][-1]["content"]
        (prompt, output), = [(m, o) for m, o in outputs.items() if json.loads(m)[0]["content"] in text]
        assert f"<model_response>\n{output}\n</model_response>" in text


def test_run_single_shows_each_criterions_judgement(small, fake, monkeypatch, capsys):
    from helmbench.cli import main

    fake.judge_answers = {"CR1": "FAIL"}
    monkeypatch.setattr(sys, "argv", ["helmbench", "run-single", "P1-B1-S4-C1-PT1", "--manifest", str(small["manifest"]),
                                      "--models-file", str(small["models"]), "--db", str(small["db"])])
    try:
        main()
    except SystemExit as exc:
        assert not exc.code
    out = capsys.readouterr().out
    assert "verdict: FAIL — judge: CR1 = FAIL" in out
    assert f"CR1 ({JUDGE}): FAIL — programmed answer: FAIL" in out
    assert fake.by_model == {MODEL: 1, JUDGE: 1}


def test_a_rejected_key_at_the_judge_stops_the_run_with_a_clear_message(small, fake):
    fake.rules = [Rule("401", match=JUDGE)]
    with pytest.raises(HelmbenchError, match="OPENROUTER_API_KEY"):
        run(small, concurrency=2)
    assert fake.by_model[JUDGE] <= 4
    assert q(small["db"], "SELECT status FROM runs") == [("failed",)]
    assert q(small["db"], "SELECT count(*) FROM results") == [(30,)]  # the model phase was saved


def test_judgements_paid_before_a_stop_are_kept_even_if_their_case_is_incomplete(small, fake, tmp_path):
    from tests.fakes.manifests import make_case, write_manifest

    two = {"type": "sqe", "criteria": [
        {"code": f"CR{i}", "title": None, "text": f"criterion {i}", "options": ["PASS", "FAIL"], "pass_values": ["PASS"],
         "response_field": "judgment", "response_type": "single", "scores": {"PASS": 1, "FAIL": 0}} for i in (1, 2)]}
    write_manifest(small["manifest"], [make_case("P1-B1-S1", 1, p, evaluation=two) for p in (1, 2)])
    fake.cost = 0.001
    run(small, max_cost=0.003, concurrency=1)  # 2 answers + 1 judge call, then the money limit
    assert fake.by_model == {MODEL: 2, JUDGE: 1}
    assert q(small["db"], "SELECT count(*) FROM judgements") == [(1,)], "the paid judgement is stored"
    assert q(small["db"], "SELECT count(*) FROM results") == [(0,)]
    fake.reset_counts()
    run(small)
    assert fake.by_model == {JUDGE: 3} and q(small["db"], "SELECT count(*) FROM result_judgements") == [(4,)]


def test_identical_judge_requests_of_two_cases_are_sent_once_and_decide_both(small, fake):
    """Two cases that differ only in a criterion's scores (not part of what the judge is asked):
    one model call, one judge call, two verdicts scored each by its own criterion."""
    import copy

    from tests.fakes.manifests import EVALUATIONS, SCHEMA, make_case, write_manifest

    rf = {"type": "json_schema", "json_schema": {"name": "shared", "strict": True, "schema": SCHEMA}}
    sqe = EVALUATIONS[3]
    half = copy.deepcopy(sqe)
    half["criteria"][0]["scores"] = {"PASS": 0.5, "FAIL": 0}
    a = make_case("P1-B1-S1", 1, 1, evaluation=sqe, text="the same words", response_format=rf)
    b = make_case("P1-B1-S2", 1, 1, evaluation=half, text="the same words", response_format=rf)
    assert a["request_hash"] == b["request_hash"] and a["hash"] != b["hash"]
    write_manifest(small["manifest"], [a, b])
    fake.judge_answers = {"CR1": "PASS"}
    report = run(small, concurrency=4)
    assert report.status == "completed" and report.judge.calls == 1
    assert fake.judge_calls["CR1"] == 1 and fake.total == 2  # one answer, one judgement
    assert q(small["db"], SQE) == [("PASS", 1.0, "judge: CR1 = PASS"), ("PASS", 0.5, "judge: CR1 = PASS")]
    assert q(small["db"], "SELECT count(*) FROM judgements") == [(1,)]
    assert q(small["db"], "SELECT count(DISTINCT judgement_id), count(*) FROM result_judgements") == [(1, 2)]
