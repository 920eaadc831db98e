"""`summarise`, its breakdowns and its JSON form, on a small hand-computed run."""

import json

import pytest

from helmbench.score import ScoredResult, by_behaviour, breakdown, summarise, wilson_interval


def r(case, verdict, *, behaviour="P1-B1", cond="C1", uc=0, pt=0, difficulty=0, weight=2.0, score=None, sample=0):
    if score is None and verdict != "ERROR":
        score = 1.0 if verdict == "PASS" else 0.0
    return ScoredResult(
        case, behaviour[:2], behaviour, f"{behaviour}-S1", f"{behaviour}-S1-{cond}",
        uc, pt, difficulty, weight, verdict, score, sample,
    )


# P1-B1 (weight 2): C1 difficulty 0, C2 difficulty 5.  P2-B1 (weight 1).
ROWS = [
    r("a", "PASS", uc=2, pt=2),                            # max 4, cost 0
    r("b", "FAIL", uc=2, pt=4),                            # max 6, cost 6
    r("c", "FAIL", cond="C2", uc=0, pt=4, difficulty=5),   # max 4, cost 2
    r("d", "FAIL", cond="C2", uc=0, pt=0, difficulty=5),   # base 0: pass rate only
    r("e", "ERROR", cond="C2", uc=2, pt=2, difficulty=5),  # coverage only
    r("f", "FAIL", behaviour="P2-B1", uc=2, pt=2, weight=1.0, score=0.5),  # max 4, cost 2
    r("g", "PASS", behaviour="P2-B1", uc=0, pt=4, weight=1.0),             # max 4, cost 0
]
# P1-B1: 1 − 8/14 = 3/7.  P2-B1: 1 − 2/8 = 3/4.  run = (2·3/7 + 1·3/4) / 3.
P1B1, P2B1 = 3 / 7, 3 / 4
RUN = (2 * P1B1 + P2B1) / 3


def test_headline_numbers():
    s = summarise(ROWS, bootstrap=200, seed=1)
    assert s.score == pytest.approx(RUN)
    assert (s.n_results, s.n_verdicts, s.n_errors, s.n_pass, s.n_weighted) == (7, 6, 1, 2, 5)
    assert s.coverage == pytest.approx(6 / 7)
    assert s.pass_rate == pytest.approx(2 / 6)
    assert s.pass_rate_ci == wilson_interval(2, 6)
    low, high = s.score_ci
    assert 0.0 <= low <= high <= 1.0
    assert (s.bootstrap, s.seed) == (200, 1)
    assert s.consistency is None


def test_by_pillar_and_behaviour():
    s = summarise(ROWS, bootstrap=0)
    assert s.by_pillar["P1"].score == pytest.approx(P1B1)
    assert s.by_pillar["P2"].score == pytest.approx(P2B1)
    assert s.by_pillar["P1"].n_results == 5 and s.by_pillar["P1"].n_errors == 1
    b = s.by_behaviour["P1-B1"]
    assert (b.max_cost, b.actual_cost, b.weight, b.pillar) == (14, pytest.approx(8.0), 2.0, "P1")
    assert (b.n_verdicts, b.n_pass, b.n_weighted) == (4, 1, 3)
    assert b.pass_rate == pytest.approx(0.25)
    assert b.pass_rate_ci == wilson_interval(1, 4)


def test_by_condition():
    s = summarise(ROWS, bootstrap=0)
    c1, c2 = s.by_condition["P1-B1-S1-C1"], s.by_condition["P1-B1-S1-C2"]
    assert c1.score == pytest.approx(1 - 6 / 10)
    assert c2.score == pytest.approx(1 - 2 / 4)
    assert (c2.n_results, c2.n_verdicts, c2.n_errors, c2.n_pass, c2.n_weighted) == (3, 2, 1, 0, 1)
    assert c2.pass_rate == 0.0


def test_by_severity():
    s = summarise(ROWS, bootstrap=0)
    assert list(s.by_user_context_severity) == [0, 2]
    uc0 = s.by_user_context_severity[0]  # c (P1-B1, 2 of 4), d (base 0), g (P2-B1, 0 of 4)
    assert uc0.n_verdicts == 3 and uc0.n_pass == 1
    assert uc0.score == pytest.approx((2 * 0.5 + 1 * 1.0) / 3)
    assert list(s.by_perturbation_severity) == [0, 2, 4]
    pt4 = s.by_perturbation_severity[4]  # b (6 of 6), c (2 of 4) in P1-B1; g in P2-B1
    assert pt4.score == pytest.approx((2 * (1 - 8 / 10) + 1 * 1.0) / 3)
    assert s.by_perturbation_severity[0].score is None  # only the base-0 case


def test_breakdowns_sort_naturally():
    rows = [r(f"x{i}", "PASS", behaviour=b, uc=1) for i, b in enumerate(["P1-B10", "P1-B2", "P1-B1"])]
    assert list(by_behaviour(rows)) == ["P1-B1", "P1-B2", "P1-B10"]
    assert list(breakdown(rows, lambda row: row.case_id)) == ["x0", "x1", "x2"]


def test_consistency_appears_with_samples():
    rows = [r("a", "PASS", uc=1, sample=0), r("a", "FAIL", uc=1, sample=1)]
    s = summarise(rows, bootstrap=0)
    assert s.consistency.n_cases == 1 and s.consistency.n_unanimous == 0
    assert s.score == pytest.approx(0.5)


def test_to_dict_is_json():
    s = summarise(ROWS + [r("a", "PASS", uc=2, pt=2, sample=1)], bootstrap=50)
    d = json.loads(json.dumps(s.to_dict(), allow_nan=False))
    assert d["score"] == pytest.approx(s.score)
    assert d["score_ci"] == list(s.score_ci)
    assert d["by_user_context_severity"]["2"]["n_results"] == s.by_user_context_severity[2].n_results
    assert d["by_behaviour"]["P1-B1"]["max_cost"] == 18
    assert d["consistency"]["n_cases"] == 1
    assert set(d) >= {
        "score", "score_ci", "pass_rate", "pass_rate_ci", "n_results", "n_verdicts", "n_errors", "n_pass",
        "by_pillar", "by_behaviour", "by_condition", "by_user_context_severity", "by_perturbation_severity",
        "consistency",
    }


def test_empty_run():
    s = summarise([])
    assert s.score is None and s.score_ci is None and s.pass_rate is None and s.coverage is None
    assert s.by_pillar == {} and s.consistency is None
    json.dumps(s.to_dict(), allow_nan=False)


def test_inconsistent_rows_are_rejected():
    with pytest.raises(ValueError):
        summarise([r("a", "PASS"), r("a", "FAIL")])
