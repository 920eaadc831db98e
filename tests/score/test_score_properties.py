"""Properties over generated runs: scores stay in [0, 1], and a better verdict never hurts."""

import dataclasses
import random

from hypothesis import given, settings
from hypothesis import strategies as st

from helmbench.score import (
    ScoredResult,
    score_interval,
    coverage,
    summarise,
    weighted_scores,
)

BEHAVIOURS = [("P1", "P1-B1"), ("P1", "P1-B2"), ("P2", "P2-B1"), ("P3", "P3-B1")]
scores_for_fail = st.sampled_from([0.0, 0.5]) | st.floats(0.0, 1.0, allow_nan=False)


@st.composite
def runs(draw, max_cases=25):
    weights = {b: draw(st.sampled_from([0.0, 0.5, 1.0, 5.0, 12.0])) for _, b in BEHAVIOURS}
    rows = []
    for i in range(draw(st.integers(0, max_cases))):
        pillar, behaviour = draw(st.sampled_from(BEHAVIOURS))
        condition = f"{behaviour}-S1-C{draw(st.integers(1, 2))}"
        uc, pt = draw(st.integers(-5, 10)), draw(st.integers(-5, 10))
        difficulty = draw(st.integers(0, 10))
        for sample in range(draw(st.integers(1, 3))):
            verdict = draw(st.sampled_from(["PASS", "FAIL", "FAIL", "ERROR"]))
            score = {"PASS": 1.0, "ERROR": None}.get(verdict)
            if verdict == "FAIL":
                score = draw(scores_for_fail)
            rows.append(
                ScoredResult(
                    f"{condition}-U1-PT{i}", pillar, behaviour, f"{behaviour}-S1", condition,
                    uc, pt, difficulty, weights[behaviour], verdict, score, sample,
                )
            )
    return rows


def in_unit(x):
    return x is None or 0.0 <= x <= 1.0


def all_group_scores(summary):
    for groups in (
        summary.by_pillar, summary.by_behaviour, summary.by_condition,
        summary.by_user_context_severity, summary.by_perturbation_severity,
    ):
        yield from groups.values()


@settings(max_examples=150, deadline=None)
@given(runs())
def test_every_score_and_interval_lies_in_unit_interval(rows):
    s = summarise(rows, bootstrap=25, seed=0)
    assert in_unit(s.score) and in_unit(s.pass_rate) and in_unit(s.coverage)
    for ci in [s.score_ci, s.pass_rate_ci] + [g.pass_rate_ci for g in all_group_scores(s)]:
        assert ci is None or 0.0 <= ci[0] <= ci[1] <= 1.0
    for g in all_group_scores(s):
        assert in_unit(g.score) and in_unit(g.pass_rate)
    if s.pass_rate is not None:
        assert s.pass_rate_ci[0] <= s.pass_rate <= s.pass_rate_ci[1]
    # No score, no interval; fewer than three cases with something at stake, no interval either.
    assert s.score is not None or s.score_ci is None
    if s.score_ci is not None:
        assert s.score_ci[0] - 1e-12 <= s.score <= s.score_ci[1] + 1e-12
    if s.consistency and s.consistency.fleiss_kappa is not None:
        assert -1.0 <= s.consistency.fleiss_kappa <= 1.0


@settings(max_examples=150, deadline=None)
@given(runs(), st.randoms(use_true_random=False))
def test_turning_a_fail_into_a_pass_never_lowers_a_score(rows, rnd):
    fails = [i for i, row in enumerate(rows) if row.verdict == "FAIL"]
    if not fails:
        return
    i = rnd.choice(fails)
    better = rows[:]
    better[i] = dataclasses.replace(rows[i], verdict="PASS", score=1.0)
    before, after = weighted_scores(rows), weighted_scores(better)

    def not_lower(old, new):
        assert (old is None) == (new is None)  # what is at stake does not depend on the verdict
        assert old is None or new >= old

    not_lower(before.run, after.run)
    for key in before.by_pillar:
        not_lower(before.by_pillar[key], after.by_pillar[key])
    for key in before.by_behaviour:
        not_lower(before.by_behaviour[key], after.by_behaviour[key])
    assert coverage(better).pass_rate > coverage(rows).pass_rate
    s_before, s_after = summarise(rows, bootstrap=0), summarise(better, bootstrap=0)
    for old, new in zip(all_group_scores(s_before), all_group_scores(s_after)):
        not_lower(old.score, new.score)
        not_lower(old.pass_rate, new.pass_rate)


@settings(max_examples=100, deadline=None)
@given(runs(), st.randoms(use_true_random=False))
def test_row_order_does_not_matter(rows, rnd):
    shuffled = rows[:]
    rnd.shuffle(shuffled)
    assert weighted_scores(shuffled) == weighted_scores(rows)
    assert score_interval(shuffled) == score_interval(rows)


@settings(max_examples=60, deadline=None)
@given(runs(max_cases=15))
def test_error_rows_change_nothing_but_coverage(rows):
    errors = [
        dataclasses.replace(row, verdict="ERROR", score=None, sample=row.sample + 10)
        for row in random.Random(0).sample(rows, k=len(rows) // 2)
    ]
    plain, padded = summarise(rows, bootstrap=20), summarise(rows + errors, bootstrap=20)
    assert padded.score == plain.score and padded.score_ci == plain.score_ci
    assert padded.pass_rate == plain.pass_rate
    assert padded.n_errors == plain.n_errors + len(errors)
