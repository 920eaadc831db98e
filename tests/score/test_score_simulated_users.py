"""Figures per simulated user and pooled: the pooled interval counts a case once however many simulated users
played it, and keeps its coverage; counting each simulated user's result as a case of its own would not."""

from __future__ import annotations

import numpy as np
import pytest

from helmbench.score.inference import score_intervals
from helmbench.score.model import ScoredResult
from helmbench.score.simulated_users import simulated_users


def _row(case: str, sample: int, score: float, user: str | None, severity: int = 4) -> ScoredResult:
    return ScoredResult(case_id=case, pillar="P1", behaviour="P1-B1", scenario="P1-B1-S3", condition="P1-B1-S3-C1",
                        severity_user_context=0, severity_perturbation=severity, difficulty=0, weight=1.0,
                        verdict="PASS" if score == 1 else "FAIL", score=score, sample=sample, simulator=user)


def test_each_simulated_user_and_the_pool_by_hand():
    rows = [_row(f"c{i}", s, score, ["a/one", "b/two"][s])
            for i, pair in enumerate([(1, 0), (1, 1), (0, 0), (1, 0.5)]) for s, score in enumerate(pair)]
    rows.append(_row("single", 0, 1.0, None))  # a single answer: no simulated user, in no figure here
    su = simulated_users(rows)
    assert [f.user for f in su.users] == ["a/one", "b/two"]
    assert [f.score for f in su.users] == [pytest.approx(3 / 4), pytest.approx(1.5 / 4)]
    assert su.pooled.score == pytest.approx(4.5 / 8) and (su.pooled.n_cases, su.pooled.n_results) == (4, 8)
    q = np.array([[0.5, 1.0, 0.0, 0.75]])  # each case's two results averaged first
    assert su.pooled.score_ci == pytest.approx(tuple(score_intervals(q, np.full(4, 0.25))[0]))
    assert simulated_users([r for r in rows if r.simulator != "b/two"]) is None  # one simulated user: no table
    # The store's row order is not models.yml's (a merged database returns another): the users keep theirs.
    assert [f.user for f in simulated_users(rows[::-1]).users] == ["a/one", "b/two"]


def test_the_users_are_in_models_yml_order_whatever_order_their_results_were_written_in():
    """models.yml [b/two, c/three, a/one]: a/one's and b/two's conversations were stored, c/three's asked last and
    written last; the figures still follow the list (position p plays samples p, p + 3, …), as the schema says."""
    order = ["b/two", "c/three", "a/one"]
    rows = [_row(f"c{i}", s, 1.0, order[s]) for s in (0, 2, 1) for i in range(3)]
    assert [f.user for f in simulated_users(rows).users] == order


@pytest.mark.parametrize("n", [5, 100])
def test_pooling_per_case_keeps_the_intervals_coverage_and_counting_results_as_cases_would_not(n):
    """Cases drawn afresh each time, most passed or failed by both simulated users alike (the case matters more
    than who plays the user), the users a little apart: the 95 % interval of the pooled score covers the
    population's score at least 95 % of the time; the same interval over the results as if each were a case
    covers it far less often (about 87 %), which is what counting a case twice would claim."""
    rng = np.random.default_rng(7)
    reps, gap = 2000, 0.1
    p = rng.beta(0.3, 0.15, size=(reps, n))
    pa, pb = np.clip(p + gap, 0, 1), np.clip(p - gap, 0, 1)
    truth = float(((pa + pb) / 2).mean())
    a, b = (rng.random((reps, n)) < pa).astype(float), (rng.random((reps, n)) < pb).astype(float)
    pooled = score_intervals((a + b) / 2, np.full(n, 1 / n))
    apart = score_intervals(np.concatenate([a, b], axis=1), np.full(2 * n, 1 / (2 * n)))

    def coverage(iv):
        return float(np.mean((iv[:, 0] <= truth) & (truth <= iv[:, 1])))

    assert coverage(pooled) >= 0.95
    assert coverage(apart) < 0.93


def test_a_figure_without_an_interval_or_a_score_says_why_on_the_pages_and_in_the_terminal():
    """One conversation (n = 1: no interval) and a simulated user whose every conversation was an ERROR (n = 0:
    no score): neither stands as a bare number or dash; the words say why, on the site and in `report`."""
    from helmbench.cli.report_render import _figure_ci
    from helmbench.publish.render import environment

    rows = [_row("c0", 0, 1.0, "a/one"), _row("c0", 1, 0.0, "b/two")]
    rows[1] = ScoredResult(**{**{f: getattr(rows[1], f) for f in rows[1].__dataclass_fields__},
                              "verdict": "ERROR", "score": None})
    su = simulated_users(rows)
    one, none = su.users
    assert (one.n_cases, one.score_ci, none.n_cases, none.score) == (1, None, 0, None)
    cell = environment().from_string('{% import "_macros.html.j2" as mac %}{{ mac.figure_cell(f) }}')
    assert "no interval: too few conversations" in cell.render(f=one) and "100.0 %" in cell.render(f=one)
    assert "no score: none of its conversations has a verdict" in cell.render(f=none)
    assert _figure_ci(one) == "100.0 % (no interval: too few conversations)"
    assert _figure_ci(none) == "— (no score: none of its conversations has a verdict)"
