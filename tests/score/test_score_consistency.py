"""Per-case means and the consistency of samples (Fleiss κ between them), against hand-computed tables."""

import pytest

from helmbench.score import ScoredResult, case_means, consistency, fleiss_kappa


def r(case, sample, verdict, score=None):
    if score is None and verdict != "ERROR":
        score = 1.0 if verdict == "PASS" else 0.0
    return ScoredResult(case, "P1", "P1-B1", "P1-B1-S1", "P1-B1-S1-C1", 0, 2, 0, 1.0, verdict, score, sample)


def test_fleiss_kappa_hand_computed():
    # P_i = 1, 1, 1/3 → P̄ = 7/9; p = (5/9, 4/9) → P_e = 41/81; κ = (63 − 41)/(81 − 41) = 0.55
    assert fleiss_kappa([[3, 0], [0, 3], [2, 1]]) == pytest.approx(0.55)


def test_fleiss_kappa_with_unequal_numbers_of_raters():
    # P_i = 1, 1/3, 1/3 → P̄ = 5/9; p = (5/9, 4/9) → P_e = 41/81; κ = 4/40 = 0.1
    assert fleiss_kappa([[2, 0], [1, 2], [2, 2]]) == pytest.approx(0.1)


def test_fleiss_kappa_perfect_chance_and_undefined():
    assert fleiss_kappa([[2, 0], [0, 2]]) == pytest.approx(1.0)
    # every case split 1–1: observed 0 < expected 1/2 → κ = −1
    assert fleiss_kappa([[1, 1], [1, 1]]) == pytest.approx(-1.0)
    assert fleiss_kappa([[3, 0], [2, 0]]) is None  # all in one category
    assert fleiss_kappa([]) is None
    assert fleiss_kappa([[1, 0], [0, 1]]) is None  # no case with 2 ratings
    with pytest.raises(ValueError):
        fleiss_kappa([[2, -1]])


def test_consistency_over_samples():
    rows = [
        r("a", 0, "PASS"), r("a", 1, "PASS"), r("a", 2, "PASS"),
        r("b", 0, "FAIL"), r("b", 1, "FAIL"), r("b", 2, "FAIL", 0.5),  # partial credit is a FAIL
        r("c", 0, "PASS"), r("c", 1, "PASS"), r("c", 2, "FAIL"),
        r("d", 0, "PASS"), r("d", 1, "ERROR"), r("d", 2, "ERROR"),  # one valid sample: skipped
    ]
    result = consistency(rows)
    assert result.n_cases == 3
    assert result.n_unanimous == 2
    assert result.unanimous_share == pytest.approx(2 / 3)
    assert result.fleiss_kappa == pytest.approx(0.55)
    assert (result.min_samples, result.max_samples) == (3, 3)


def test_errors_leave_unequal_sample_counts():
    rows = [
        r("a", 0, "PASS"), r("a", 1, "PASS"), r("a", 2, "ERROR"),
        r("b", 0, "PASS"), r("b", 1, "FAIL"), r("b", 2, "FAIL"),
        r("c", 0, "PASS"), r("c", 1, "PASS"), r("c", 2, "FAIL"), r("c", 3, "FAIL"),
    ]
    result = consistency(rows)
    assert result.fleiss_kappa == pytest.approx(0.1)
    assert (result.min_samples, result.max_samples) == (2, 4)


def test_single_sample_runs_have_no_consistency():
    assert consistency([r("a", 0, "PASS"), r("b", 0, "FAIL")]) is None
    assert consistency([]) is None


def test_case_means():
    rows = [
        r("c2", 0, "PASS"), r("c2", 1, "FAIL", 0.5), r("c2", 2, "ERROR"),
        r("c10", 0, "ERROR"),
        r("c1", 0, "FAIL"),
    ]
    means = case_means(rows)
    assert list(means) == ["c1", "c2", "c10"]  # natural order
    assert means["c2"].mean_score == pytest.approx(0.75)
    assert (means["c2"].n_samples, means["c2"].n_errors, means["c2"].n_pass) == (2, 1, 1)
    assert means["c10"].mean_score is None and means["c10"].n_errors == 1
    assert means["c1"].mean_score == 0.0
