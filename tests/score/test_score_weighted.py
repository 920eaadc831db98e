"""Severity-weighted scores against hand-computed expectations (DESIGN.md §5)."""

from itertools import count

import pytest

from helmbench.score import ScoredResult, behaviour_costs, result_cost, run_score, summarise, weighted_scores

_ids = count()


def r(behaviour="P1-B1", *, sev=0, uc=0, difficulty=0, verdict="FAIL", score=None, weight=1.0, case=None, sample=0):
    """One row; `sev` is the perturbation severity, `uc` the user-context severity."""
    if score is None and verdict != "ERROR":
        score = 1.0 if verdict == "PASS" else 0.0
    pillar = behaviour.split("-")[0]
    return ScoredResult(
        case_id=case or f"{behaviour}-S1-C1-U1-PT{next(_ids)}",
        pillar=pillar,
        behaviour=behaviour,
        scenario=f"{behaviour}-S1",
        condition=f"{behaviour}-S1-C1",
        severity_user_context=uc,
        severity_perturbation=sev,
        difficulty=difficulty,
        weight=weight,
        verdict=verdict,
        score=score,
        sample=sample,
    )


SEVERITIES = [1, 3, 5, 7, 8, 9, 10]


def authors_example(failed):
    return [r(sev=s, verdict="FAIL" if s in failed else "PASS") for s in SEVERITIES]


def test_worked_example_maximum_is_43():
    costs = behaviour_costs(authors_example(failed=set()))
    assert costs["P1-B1"].max_cost == 43
    assert costs["P1-B1"].actual_cost == 0
    assert run_score(authors_example(failed=set())) == 1.0


def test_worked_example_missing_the_mild_ones_scores_79_1():
    score = run_score(authors_example(failed={1, 3, 5}))
    assert score == pytest.approx(1 - 9 / 43)
    assert round(score * 100, 1) == 79.1


def test_worked_example_missing_the_severe_ones_scores_20_9():
    score = run_score(authors_example(failed={7, 8, 9, 10}))
    assert score == pytest.approx(1 - 34 / 43)
    assert round(score * 100, 1) == 20.9


def test_base_is_the_sum_of_both_severities():
    split = [r(sev=s - 1, uc=1, verdict="FAIL" if s >= 7 else "PASS") for s in SEVERITIES]
    assert run_score(split) == pytest.approx(1 - 34 / 43)


def test_negative_severity_costs_its_absolute_value():
    # A false flag of severity −3 missed, next to a passed case of severity 5: 1 − 3/8.
    rows = [r(uc=-3, verdict="FAIL"), r(sev=5, verdict="PASS")]
    assert result_cost(rows[0]) == (3, 3.0)
    assert run_score(rows) == pytest.approx(0.625)


def test_severities_that_cancel_out_give_base_zero():
    assert result_cost(r(uc=-2, sev=2, verdict="FAIL")) is None


def test_difficulty_five_halves_the_penalty():
    rows = [r(sev=4, difficulty=5, verdict="FAIL"), r(sev=4, verdict="PASS")]
    assert result_cost(rows[0]) == (4, 2.0)
    assert run_score(rows) == pytest.approx(1 - 2 / 8)


def test_difficulty_ten_forgives_the_miss_but_still_counts_in_the_maximum():
    rows = [r(sev=4, difficulty=10, verdict="FAIL"), r(sev=4, verdict="FAIL")]
    assert behaviour_costs(rows)["P1-B1"].max_cost == 8
    assert run_score(rows) == pytest.approx(1 - 4 / 8)


def test_partial_credit_costs_the_missing_part():
    assert run_score([r(sev=6, verdict="FAIL", score=0.5)]) == pytest.approx(0.5)
    # with difficulty 5 as well: 6 × 0.5 × 0.5 = 1.5 of 6
    assert run_score([r(sev=6, difficulty=5, verdict="FAIL", score=0.5)]) == pytest.approx(0.75)


def test_pass_adds_no_cost():
    assert result_cost(r(sev=9, difficulty=3, verdict="PASS")) == (9, 0.0)


def test_base_zero_counts_in_pass_rate_but_not_in_weighted_score():
    rows = [r(verdict="FAIL"), r(sev=2, verdict="PASS")]
    summary = summarise(rows, bootstrap=0)
    assert summary.score == 1.0
    assert summary.pass_rate == 0.5
    assert summary.n_weighted == 1


def test_only_base_zero_rows_have_no_weighted_score():
    summary = summarise([r(verdict="FAIL"), r(verdict="PASS")], bootstrap=0)
    assert summary.score is None
    assert summary.by_behaviour["P1-B1"].score is None
    assert summary.pass_rate == 0.5


def test_errors_are_excluded_from_scores_but_counted_in_coverage():
    rows = [r(sev=4, verdict="PASS"), r(sev=4, verdict="FAIL"), r(sev=10, verdict="ERROR"), r(verdict="ERROR")]
    summary = summarise(rows, bootstrap=0)
    assert summary.score == pytest.approx(0.5)
    assert summary.pass_rate == 0.5
    assert (summary.n_results, summary.n_verdicts, summary.n_errors, summary.n_pass) == (4, 2, 2, 1)
    assert summary.coverage == 0.5
    assert behaviour_costs(rows)["P1-B1"].max_cost == 8


def test_behaviour_weights_combine_into_the_run_score():
    # P1-B1 scores 0 (weight 1), P1-B2 scores 1 (weight 1), P2-B1 scores 1 (weight 6)
    rows = [
        r("P1-B1", sev=2, verdict="FAIL", weight=1),
        r("P1-B2", sev=2, verdict="PASS", weight=1),
        r("P2-B1", sev=2, verdict="PASS", weight=6),
    ]
    scores = weighted_scores(rows)
    assert scores.by_behaviour == {"P1-B1": 0.0, "P1-B2": 1.0, "P2-B1": 1.0}
    assert scores.by_pillar == {"P1": 0.5, "P2": 1.0}
    # over behaviours (7/8), not the mean of the pillar scores (3/4)
    assert scores.run == pytest.approx(7 / 8)


def test_pillar_score_is_weighted_by_behaviour_weight():
    rows = [r("P1-B1", sev=2, verdict="FAIL", weight=3), r("P1-B2", sev=2, verdict="PASS", weight=1)]
    assert weighted_scores(rows).by_pillar["P1"] == pytest.approx(0.25)


def test_behaviour_without_a_score_is_left_out_of_the_run_score():
    rows = [r("P1-B1", sev=2, verdict="FAIL", weight=1), r("P1-B2", verdict="PASS", weight=5)]
    assert weighted_scores(rows).by_behaviour["P1-B2"] is None
    assert run_score(rows) == 0.0


def test_zero_weight_behaviour_does_not_move_the_run_score():
    rows = [r("P1-B1", sev=2, verdict="PASS", weight=2), r("P1-B2", sev=2, verdict="FAIL", weight=0)]
    assert run_score(rows) == 1.0
    assert run_score([r("P1-B1", sev=2, verdict="PASS", weight=0)]) is None


def test_every_sample_row_counts():
    rows = [r(sev=4, verdict="PASS", case="c", sample=0), r(sev=4, verdict="FAIL", case="c", sample=1)]
    assert behaviour_costs(rows)["P1-B1"].max_cost == 8
    assert run_score(rows) == pytest.approx(0.5)


def test_a_behaviour_with_two_weights_is_rejected():
    with pytest.raises(ValueError, match="P1-B1"):
        run_score([r(sev=1, weight=1), r(sev=1, weight=2)])
