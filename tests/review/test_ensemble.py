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
                                     "models:\n  - id: c/model\n", encoding="utf-8")
    found = [(d.code, d.line, d.message) for d in lint_tree(root)[1] if str(d.path).endswith("models.yml")]
    assert found == [("HB605", 4, "judge `a/judge` is listed twice in the `marking_model` ensemble (first at line 2): "
                                  "it would get two votes")]
    (root / "models.yml").write_text("marking_model: [a/judge, b/judge, c/judge]\nmodels:\n  - id: c/model\n")
    assert not [d for d in lint_tree(root)[1] if d.is_error]
