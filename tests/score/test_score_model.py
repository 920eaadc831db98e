"""The input row's checks: bad rows fail loudly instead of skewing a published score."""

import pytest

from helmbench.score import ScoredResult, check_consistent

GOOD = dict(
    case_id="P1-B1-S1-C1-U2-PT3",
    pillar="P1",
    behaviour="P1-B1",
    scenario="P1-B1-S1",
    condition="P1-B1-S1-C1",
    severity_user_context=2,
    severity_perturbation=3,
    difficulty=4,
    weight=12,
    verdict="FAIL",
    score=0.25,
)


def make(**changes):
    return ScoredResult(**{**GOOD, **changes})


def test_good_row_is_accepted_and_normalised():
    row = make(score=0, weight=12)
    assert row.score == 0.0 and isinstance(row.score, float)
    assert row.weight == 12.0 and isinstance(row.weight, float)
    assert row.sample == 0
    assert row.has_verdict and not row.passed
    assert make(verdict="PASS", score=1.0).passed


@pytest.mark.parametrize(
    "changes",
    [
        dict(verdict="pass"),
        dict(verdict="ERROR", score=0.0),
        dict(verdict="FAIL", score=None),
        dict(verdict="PASS", score=None),
        dict(score=1.5),
        dict(score=-0.1),
        dict(score=float("nan")),
        dict(score=True),
        dict(difficulty=11),
        dict(difficulty=-1),
        dict(difficulty=2.5),
        dict(weight=-1),
        dict(weight=float("inf")),
        dict(severity_user_context=True),
        dict(severity_perturbation=1.0),
        dict(sample=-1),
        dict(behaviour=""),
    ],
)
def test_bad_rows_are_rejected(changes):
    with pytest.raises(ValueError):
        make(**changes)


def test_error_without_score_is_accepted():
    row = make(verdict="ERROR", score=None)
    assert not row.has_verdict and not row.passed


def test_duplicate_case_sample_is_rejected():
    with pytest.raises(ValueError, match="duplicate"):
        check_consistent([make(), make()])
    assert len(check_consistent([make(), make(sample=1)])) == 2


def test_samples_of_one_case_must_agree_on_the_case():
    with pytest.raises(ValueError, match="disagree"):
        check_consistent([make(), make(sample=1, severity_perturbation=9)])


def test_a_behaviour_belongs_to_one_pillar():
    with pytest.raises(ValueError, match="P1-B1"):
        check_consistent([make(), make(case_id="other", pillar="P2")])


def test_non_results_are_rejected():
    with pytest.raises(TypeError):
        check_consistent([GOOD])
