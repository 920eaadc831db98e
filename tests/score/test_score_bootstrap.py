"""The bootstrap interval of the weighted run score."""

import dataclasses
import math
import random
import statistics
from collections import Counter

import pytest
from hypothesis import given
from hypothesis import strategies as st

from helmbench.score import (
    ScoredResult,
    bootstrap_run_scores,
    bootstrap_score_ci,
    percentile_interval,
    run_score,
    summarise,
)

WEIGHTS = {"P1-B1": 12, "P1-B2": 10, "P2-B2": 15, "P3-B1": 8, "P4-B1": 5}


def dataset(n, seed=1, samples=1, errors=True):
    """n cases over five behaviours with mixed severities, difficulties and verdicts."""
    rng = random.Random(seed)
    rows = []
    for i in range(n):
        b = rng.choice(sorted(WEIGHTS))
        uc, pt, difficulty = rng.randint(-3, 10), rng.randint(0, 10), rng.randint(0, 9)
        for s in range(samples):
            verdict = rng.choice(["PASS", "PASS", "FAIL"] + (["ERROR"] if errors and i % 40 == 0 else []))
            score = {"PASS": 1.0, "ERROR": None}.get(verdict, rng.choice([0.0, 0.0, 0.5, rng.random()]))
            rows.append(
                ScoredResult(
                    f"{b}-S1-C1-U1-PT{i}", b[:2], b, f"{b}-S1", f"{b}-S1-C1",
                    uc, pt, difficulty, WEIGHTS[b], verdict, score, s,
                )
            )
    return rows


def naive_bootstrap(rows, resamples, seed):
    """The textbook version: draw case ids with random.choices and recompute the score."""
    by_case = {}
    for row in rows:
        by_case.setdefault(row.case_id, []).append(row)
    cases = sorted(c for c, rs in by_case.items() if any(r.has_verdict for r in rs))
    rng = random.Random(seed)
    out = []
    for _ in range(resamples):
        drawn = []
        for k, case in enumerate(rng.choices(cases, k=len(cases))):
            drawn.extend(dataclasses.replace(r, sample=r.sample + 1000 * k) for r in by_case[case])
        score = run_score(drawn)
        if score is not None:
            out.append(score)
    return out


def test_same_seed_same_interval_whatever_the_row_order():
    rows = dataset(300)
    ci = bootstrap_score_ci(rows, resamples=300, seed=7)
    shuffled = rows[:]
    random.Random(3).shuffle(shuffled)
    assert bootstrap_score_ci(shuffled, resamples=300, seed=7) == ci
    assert bootstrap_score_ci(rows, resamples=300, seed=8) != ci


def test_interval_contains_the_point_estimate():
    rows = dataset(400)
    low, high = bootstrap_score_ci(rows, resamples=500, seed=0)
    assert 0.0 <= low < run_score(rows) < high <= 1.0


def test_matches_the_textbook_bootstrap_in_distribution():
    rows = dataset(150, seed=2)
    fast = bootstrap_run_scores(rows, resamples=2000, seed=0)
    slow = naive_bootstrap(rows, resamples=2000, seed=1)
    assert len(fast) == len(slow) == 2000
    assert statistics.fmean(fast) == pytest.approx(statistics.fmean(slow), abs=0.004)
    assert statistics.stdev(fast) == pytest.approx(statistics.stdev(slow), rel=0.08)
    fast_ci, slow_ci = percentile_interval(fast), percentile_interval(slow)
    assert fast_ci[0] == pytest.approx(slow_ci[0], abs=0.012)
    assert fast_ci[1] == pytest.approx(slow_ci[1], abs=0.012)


def test_samples_of_a_case_are_resampled_together():
    # Two identical samples per case double each case's costs: every resampled ratio, and
    # so the interval, is the same as with one sample.
    one = dataset(200, seed=4, errors=False)
    two = one + [dataclasses.replace(r, sample=1) for r in one]
    ci_one = bootstrap_score_ci(one, resamples=200, seed=5)
    ci_two = bootstrap_score_ci(two, resamples=200, seed=5)
    assert ci_two == pytest.approx(ci_one, abs=1e-6)


def test_degenerate_inputs():
    assert bootstrap_score_ci([], resamples=100) is None
    base_zero = [dataclasses.replace(r, severity_user_context=0, severity_perturbation=0) for r in dataset(20)]
    assert bootstrap_score_ci(base_zero, resamples=100) is None
    rows = dataset(30)
    assert bootstrap_score_ci(rows, resamples=0) is None
    assert summarise(rows, bootstrap=0).score_ci is None
    with pytest.raises(ValueError):
        bootstrap_score_ci(rows, resamples=-1)


def test_all_passed_or_all_failed_have_zero_width_intervals():
    rows = dataset(50, errors=False)
    passed = [dataclasses.replace(r, verdict="PASS", score=1.0) for r in rows]
    failed = [dataclasses.replace(r, verdict="FAIL", score=0.0, difficulty=0) for r in rows]
    assert bootstrap_score_ci(passed, resamples=50) == (1.0, 1.0)
    assert bootstrap_score_ci(failed, resamples=50) == (0.0, 0.0)


def test_percentile_interval_interpolates_between_order_statistics():
    values = list(range(101))  # the q-quantile of 0..100 is 100·q
    assert percentile_interval(values) == (pytest.approx(2.5), pytest.approx(97.5))
    assert percentile_interval([0.3]) == (0.3, 0.3)
    assert percentile_interval([]) is None
    with pytest.raises(ValueError):
        percentile_interval(values, level=1.0)
