"""Wilson intervals and pass rates."""

import math
from itertools import count

import pytest

from helmbench.score import Z95, ScoredResult, coverage, pass_rate, wilson_interval

_ids = count()


def r(verdict, score=None):
    if score is None and verdict != "ERROR":
        score = 1.0 if verdict == "PASS" else 0.0
    return ScoredResult(f"c{next(_ids)}", "P1", "P1-B1", "P1-B1-S1", "P1-B1-S1-C1", 0, 1, 0, 1.0, verdict, score)


def test_eight_out_of_ten():
    low, high = wilson_interval(8, 10)
    assert low == pytest.approx(0.4902, abs=5e-4)
    assert high == pytest.approx(0.9433, abs=5e-4)


def test_all_or_nothing_have_closed_form_bounds():
    # for k = 0 the upper bound is z²/(n + z²); for k = n the lower bound is n/(n + z²)
    n = 10
    assert wilson_interval(0, n) == (0.0, pytest.approx(Z95**2 / (n + Z95**2)))
    assert wilson_interval(n, n) == (pytest.approx(n / (n + Z95**2)), 1.0)


def test_interval_is_symmetric_under_swapping_successes_and_failures():
    low, high = wilson_interval(3, 17)
    low2, high2 = wilson_interval(14, 17)
    assert low == pytest.approx(1 - high2)
    assert high == pytest.approx(1 - low2)


def test_interval_matches_the_formula_and_contains_p():
    k, n, z = 37, 120, Z95
    p = k / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z / (1 + z * z / n) * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    low, high = wilson_interval(k, n)
    assert (low, high) == (pytest.approx(centre - half), pytest.approx(centre + half))
    assert low < p < high


def test_no_trials_no_interval_and_bad_input_rejected():
    assert wilson_interval(0, 0) is None
    with pytest.raises(ValueError):
        wilson_interval(3, 2)
    with pytest.raises(ValueError):
        wilson_interval(-1, 2)


def test_pass_rate_counts_pass_verdicts_only():
    rows = [r("PASS"), r("FAIL", 0.9), r("FAIL"), r("PASS"), r("ERROR")]
    rate, ci = pass_rate(rows)
    assert rate == 0.5  # partial credit 0.9 is not a pass; the ERROR is not in the denominator
    assert ci == wilson_interval(2, 4)


def test_coverage_counts():
    cov = coverage([r("PASS"), r("ERROR"), r("FAIL"), r("ERROR")])
    assert (cov.n_results, cov.n_verdicts, cov.n_errors, cov.n_pass) == (4, 2, 2, 1)
    assert cov.share == 0.5
    empty = coverage([])
    assert empty.share is None and empty.pass_rate is None and empty.pass_rate_ci() is None
    assert pass_rate([r("ERROR")]) == (None, None)
