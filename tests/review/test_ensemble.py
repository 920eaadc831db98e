"""Judge ensembles: models.yml may list several marking models; their verdicts combine by majority, ties fail."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from helmbench.run.judge.judge import CriterionVerdict, aggregate, combine
from helmbench.spec.models import ModelsFile

CRIT = {"code": "CR1", "options": ["PASS", "PARTIAL", "FAIL"], "pass_values": ["PASS"],
        "scores": {"PASS": 1, "PARTIAL": 0.5, "FAIL": 0}}


def _v(verdict, score, judgment):
    return CriterionVerdict("CR1", verdict, score, judgment, f"because {judgment}")


def test_three_judges_with_one_disagreeing_give_the_majority():
    assert combine(CRIT, [_v("PASS", 1.0, "PASS"), _v("FAIL", 0.5, "PARTIAL"), _v("PASS", 1.0, "PASS")]).verdict == "PASS"
    out = combine(CRIT, [_v("FAIL", 0.0, "FAIL"), _v("PASS", 1.0, "PASS"), _v("FAIL", 0.5, "PARTIAL")])
    assert (out.verdict, out.score, out.judgment) == ("FAIL", 0.25, ["FAIL", "PASS", "PARTIAL"])
    assert aggregate([out]).reason == "judge: CR1 = [FAIL, PASS, PARTIAL]"


def test_a_tie_is_the_stricter_verdict_and_an_error_is_an_error():
    assert combine(CRIT, [_v("PASS", 1.0, "PASS"), _v("FAIL", 0.0, "FAIL")]).verdict == "FAIL"
    err = CriterionVerdict("CR1", "ERROR", None, error_kind="judge_empty", error_message="empty")
    assert combine(CRIT, [_v("PASS", 1.0, "PASS"), err, _v("PASS", 1.0, "PASS")]).verdict == "ERROR"
    one = _v("PASS", 1.0, "PASS")
    assert combine(CRIT, [one]) is one


def test_models_yml_accepts_one_judge_or_a_list():
    assert [j.id for j in ModelsFile.model_validate({"marking_model": "a/judge"}).judges] == ["a/judge"]
    many = ModelsFile.model_validate({"marking_model": ["a/one", {"id": "b/two", "temperature": 0}, "c/three"]})
    assert [j.id for j in many.judges] == ["a/one", "b/two", "c/three"]
    assert ModelsFile.model_validate({}).judges == []
    with pytest.raises(ValidationError):
        ModelsFile.model_validate({"marking_model": []})


def test_lint_names_a_judge_listed_twice_in_the_ensemble(tmp_path):
    import shutil

    from helmbench.lint import lint_tree
    from tests.review.review_pipeline import REPO

    root = tmp_path / "bench"
    shutil.copytree(REPO / "benchmark", root)
    (root / "models.yml").write_text("marking_model:\n  - a/judge\n  - {id: b/judge, temperature: 0}\n  - a/judge\n"
                                     "user_model: d/user\nmodels:\n  - id: c/model\n", encoding="utf-8")
    found = [(d.code, d.line, d.message) for d in lint_tree(root)[1] if str(d.path).endswith("models.yml")]
    assert found == [("HB605", 4, "judge `a/judge` is listed twice in the `marking_model` ensemble (first at line 2): "
                                  "it would get two votes")]
    (root / "models.yml").write_text("marking_model: [a/judge, b/judge, c/judge]\nuser_model: d/user\n"
                                     "models:\n  - id: c/model\n")
    assert not [d for d in lint_tree(root)[1] if d.is_error]


# --- the ensemble in a real run (fake OpenRouter, three judges) --------------------------------

JUDGES = ["test/judge-1", "test/judge-2", "test/judge-3"]


def _models_yml(path, judges):
    path.write_text("marking_model:\n" + "".join(f"  - {{id: {j}, max_tokens: 400}}\n" for j in judges)
                    + "models:\n  - {id: test/model-a, temperature: 0.7, max_tokens: 300}\n", encoding="utf-8")
    return path


def test_three_judges_with_one_disagreeing_yield_the_majority_in_a_run(tmp_path, env):
    from helmbench.score.calibration import load_calibration
    from tests.fakes.manifests import write_manifest
    from tests.judge.judge_pipeline import run_once
    from tests.review.review_pipeline import cases, rows

    manifest = tmp_path / "manifest.jsonl"
    write_manifest(manifest, cases())
    db = tmp_path / "results.db"
    env.judge_answers = {"CR1": "PASS"}
    env.judge_by_model = {"test/judge-3": "FAIL"}  # one judge disagrees on every criterion
    try:
        run_once(manifest, _models_yml(tmp_path / "models.yml", JUDGES), db)
    finally:
        env.judge_by_model = {}
        env.judge_answers = {}
    judged = rows(db, "SELECT res.verdict, res.reason FROM results res JOIN cases c ON c.hash = res.case_hash "
                      "WHERE c.evaluation_type = 'sqe'")
    assert len(judged) == 12 and {v for v, _ in judged} == {"PASS"}
    assert {r for _, r in judged} == {"judge: CR1 = [PASS, PASS, FAIL]"}
    links = rows(db, "SELECT j.judge_model, rj.verdict, count(*) FROM result_judgements rj "
                     "JOIN judgements j ON j.id = rj.judgement_id GROUP BY 1, 2 ORDER BY 1")
    assert links == [(JUDGES[0], "PASS", 12), (JUDGES[1], "PASS", 12), (JUDGES[2], "FAIL", 12)]
    overall = load_calibration(open_db_ro(db)).overall
    assert overall.judges == 3 and overall.n_items == 12

    # two judges split evenly: the stricter verdict
    db2 = tmp_path / "two.db"
    env.judge_answers = {"CR1": "PASS"}
    env.judge_by_model = {"test/judge-2": "FAIL"}
    try:
        run_once(manifest, _models_yml(tmp_path / "models2.yml", JUDGES[:2]), db2)
    finally:
        env.judge_by_model = {}
        env.judge_answers = {}
    assert {v for v, in rows(db2, "SELECT res.verdict FROM results res JOIN cases c ON c.hash = res.case_hash "
                                  "WHERE c.evaluation_type = 'sqe'")} == {"FAIL"}


def open_db_ro(path):
    import sqlite3

    return sqlite3.connect(path)


def test_a_dry_run_counts_every_judges_calls(tmp_path, env):
    from tests.fakes.manifests import write_manifest
    from tests.judge.judge_pipeline import run_once
    from tests.review.review_pipeline import cases

    manifest = tmp_path / "manifest.jsonl"
    write_manifest(manifest, cases())
    before = env.total
    report = run_once(manifest, _models_yml(tmp_path / "models.yml", JUDGES), tmp_path / "results.db", dry_run=True)
    assert report.judge.model == " + ".join(JUDGES)
    assert report.judge.unanswered == 12 and report.judge.upto_new == 12 * 3, "one call per criterion per judge"
    assert env.total == before, "a dry run sends nothing"
