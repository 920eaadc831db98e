"""The sign-flip test and the intervals (issue 24): exact where it says exact, words where the data are
too few, intervals that are never of zero width, and one ranking score for ranks and groups."""

from __future__ import annotations

import itertools
from dataclasses import replace

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from helmbench.score import ScoredResult, run_score, score_interval, wilson_interval
from helmbench.score import inference
from helmbench.score.floors import Floor, apply_floors
from helmbench.score.inference import difference_intervals, flip_pvalues, min_differing, paired_inference
from helmbench.score.pairwise import Comparison, format_p, holm_decisions, tie_groups
from helmbench.score.weighted import weighted_scores


def row(case, *, scenario="P1-B1-S1", verdict="PASS", sev=5, difficulty=0, score=None, weight=1.0, sample=0):
    behaviour = scenario.rsplit("-", 1)[0]
    if score is None:
        score = None if verdict == "ERROR" else (1.0 if verdict == "PASS" else 0.0)
    return ScoredResult(
        case_id=f"{scenario}-C1-{case}", pillar=behaviour.split("-")[0], behaviour=behaviour,
        scenario=scenario, condition=f"{scenario}-C1", severity_user_context=0,
        severity_perturbation=sev, difficulty=difficulty, weight=weight, verdict=verdict, score=score, sample=sample,
    )


def test_three_paired_cases_one_model_ahead_on_all_three_is_too_few_to_compare():
    # The tree: 3 cases in 2 sqe scenarios; one model passes all three, the other fails all three.
    cases = [("PT1", "P1-B1-S1"), ("PT2", "P1-B1-S1"), ("PT3", "P1-B1-S2")]
    ahead = [row(c, scenario=s, verdict="PASS") for c, s in cases]
    behind = [row(c, scenario=s, verdict="FAIL", score=0.2) for c, s in cases]
    groups = tie_groups([("m/ahead", ahead), ("m/behind", behind)])
    (c,) = groups.comparisons
    assert groups.group == {"m/ahead": 1, "m/behind": 1} and not c.distinguishable
    assert c.score.n_differ == 3 and c.score.p_value is None and c.p_adjusted is None
    words = "too few cases to compare (3 cases differ; at least 6 must)"
    assert c.score.too_few == words and c.mcnemar.too_few == words and c.mcnemar.p_value is None
    assert format_p(c.p_adjusted, c.score.too_few) == words  # what report and site show instead of a p-value
    from helmbench.cli.report_render import distinguishable

    assert distinguishable(c) == "no: too few cases to compare"
    # With three cases the exact test's smallest two-sided p is 2 / 2³ = 0.25: nothing could be claimed.
    assert 2 / 2 ** 3 > inference.ALPHA and min_differing() == 6


def test_six_differing_cases_all_one_way_reach_the_smallest_exact_p():
    a = [row(f"PT{i}") for i in range(10)]
    b = [row(f"PT{i}", verdict="FAIL" if i < 6 else "PASS") for i in range(10)]
    result = paired_inference(a, b)
    assert result.exact and result.n_differ == 6 and result.p_value == pytest.approx(2 / 64)


def _brute_force_p(a, b, floors=()):
    """Every swap of the two models' results on the differing cases, scored by the plain scoring code."""
    def composite(rows):
        return apply_floors(weighted_scores(rows), floors).score

    by_case = {r.case_id: r for r in a}, {r.case_id: r for r in b}
    differing = [k for k in by_case[0] if by_case[0][k] != by_case[1][k]]
    observed = composite(a) - composite(b)
    hits = 0
    for swap in itertools.product((False, True), repeat=len(differing)):
        flip = {k for k, s in zip(differing, swap) if s}
        new_a = [by_case[1][r.case_id] if r.case_id in flip else r for r in a]
        new_b = [by_case[0][r.case_id] if r.case_id in flip else r for r in b]
        hits += abs(composite(new_a) - composite(new_b)) >= abs(observed) - 1e-12
    return hits / 2 ** len(differing), observed


@pytest.mark.parametrize("floors", [(), (Floor("P2", 0.6, 0.5),)])
def test_exact_enumeration_matches_swapping_rows_and_rescoring(floors):
    rng = np.random.default_rng(5)
    scenarios = ["P1-B1-S1", "P1-B2-S1", "P2-B1-S1"]
    a, b = [], []
    for i in range(9):
        s = scenarios[i % 3]
        sev, diff, w = int(rng.integers(1, 10)), int(rng.integers(0, 9)), {"P1-B1": 3.0, "P1-B2": 1.0, "P2-B1": 2.0}[s[:5]]
        a.append(row(f"PT{i}", scenario=s, sev=sev, difficulty=diff, weight=w, verdict="PASS" if i % 4 else "FAIL"))
        b.append(row(f"PT{i}", scenario=s, sev=sev, difficulty=diff, weight=w,
                     verdict="FAIL" if i % 3 else "PASS", score=0.0 if i % 3 else 1.0))
    b[4] = replace(b[4], verdict="FAIL", score=0.5)  # partial credit
    expected_p, observed = _brute_force_p(a, b, floors)
    result = paired_inference(a, b, floors=floors)
    assert result.exact and result.difference == pytest.approx(observed)
    assert result.p_value == pytest.approx(expected_p)


def test_the_statistic_is_the_composite_ranks_use():
    # A floor caps both models to the same composite: difference 0, p = 1, whatever the weighted scores.
    a = [row(f"PT{i}", sev=5) for i in range(30)] + [row("PT99", scenario="P2-B1-S1", verdict="FAIL")]
    b = [row(f"PT{i}", sev=5, verdict="FAIL" if i < 8 else "PASS") for i in range(30)] + \
        [row("PT99", scenario="P2-B1-S1", verdict="FAIL")]
    floors = (Floor("P2", 0.5, 0.3),)
    capped = paired_inference(a, b, floors=floors)
    assert capped.difference == 0.0 and capped.p_value == 1.0 and capped.interval is None
    plain = paired_inference(a, b)
    assert plain.difference == pytest.approx(run_score(a) - run_score(b)) and plain.p_value == pytest.approx(2 / 2 ** 8)


def test_monte_carlo_p_is_seeded_and_never_zero():
    a = [row(f"PT{i}") for i in range(40)]
    b = [row(f"PT{i}", verdict="FAIL") for i in range(40)]
    first = paired_inference(a, b, resamples=199, seed=3)
    assert not first.exact and first.p_value == pytest.approx(1 / 200)
    assert paired_inference(a, b, resamples=199, seed=3) == first


def test_flip_test_holds_its_size_on_exchangeable_data():
    # 2,000 data sets of 25 cases whose differences are symmetric around 0: the rate of p < 0.05 is at most 5 %
    # up to simulation noise (the harness measures this at every size; this is the quick check).
    rng = np.random.default_rng(11)
    x = rng.choice([-1.0, 0.0, 1.0], size=(2000, 25), p=[0.2, 0.6, 0.2]) * rng.uniform(0.5, 1.5, 25)
    p, n_differ = flip_pvalues(x, resamples=400, seed=1)
    tested = ~np.isnan(p)
    assert (n_differ[~tested] < min_differing()).all()
    assert np.mean(p[tested] < 0.05) <= 0.05 + 2 * np.sqrt(0.05 * 0.95 / tested.sum())


def test_score_interval_is_wilson_with_equal_weights_and_never_of_zero_width():
    rows = [row(f"PT{i}", verdict="PASS" if i < 7 else "FAIL") for i in range(10)]
    assert score_interval(rows) == pytest.approx(wilson_interval(7, 10))
    passed = [row(f"PT{i}") for i in range(3)]
    low, high = score_interval(passed)
    assert high == 1.0 and low < 0.6  # all three passed: 100 %, but three cases cannot say more
    assert score_interval(passed[:2]) is None  # below the stated minimum of three cases


def test_difficulty_narrows_the_interval_to_what_is_at_stake():
    rows = [row(f"PT{i}", difficulty=5, verdict="PASS" if i < 7 else "FAIL") for i in range(10)]
    low, high = score_interval(rows)
    w_low, w_high = wilson_interval(7, 10)
    assert (low, high) == pytest.approx((0.5 + 0.5 * w_low, 0.5 + 0.5 * w_high))


def test_difference_interval_contains_the_estimate_and_is_never_of_zero_width():
    c = np.full(8, 1 / 8)
    for d in (np.ones(8), np.zeros(8), np.array([1, 1, 0, 0, -1, 1, 0, 1.0])):
        low, high = difference_intervals(d[None, :], c)[0]
        estimate = float((c * d).sum())
        assert -1.0 <= low <= estimate <= high <= 1.0 and high - low > 0.1
    assert np.isnan(difference_intervals(np.ones((1, 2)), np.full(2, 0.5))).all()


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 3), st.integers(1, 5)), min_size=2, max_size=6),
       st.booleans())
def test_a_group_boundary_never_falls_inside_a_rank(models, with_floor):
    """Boards of models whose scores tie or not, with or without a floor that caps: groups never split a rank."""
    from helmbench.score.ranking import grouped, rank_rows
    from helmbench.score.board import LeaderboardRow
    from helmbench.score.summary import summarise
    from helmbench.store.queries import RunInfo

    floors = (Floor("P2", 0.9, 0.2),) if with_floor else ()
    results, rows = {}, []
    for i, (fails, p2_fails) in enumerate(models):
        rs = [row(f"PT{k}", verdict="FAIL" if k < fails * 3 else "PASS") for k in range(30)]
        rs += [row(f"PT{k}", scenario="P2-B1-S1", verdict="FAIL" if k < p2_fails else "PASS") for k in range(8)]
        run = RunInfo(id=i, model=f"m/{i}", model_name=f"m{i}", manifest_hash="h", status="completed",
                      samples=1, started_at=None, finished_at=None, settings_hash="s",
                      helmbench_version=None)
        results[i] = rs
        rows.append(LeaderboardRow(rank=None, run=run, summary=summarise(rs), n_expected=38, n_format_failures=0,
                                   model_cost=None, judge_cost=None, prompt_tokens=0, completion_tokens=0,
                                   floored=apply_floors(weighted_scores(rs), floors) if floors else None))
    board, comps = grouped(rank_rows(rows), results, resamples=200, seed=0, floors=floors)
    for above, below, c in zip(board, board[1:], comps):
        assert below.group >= above.group
        if below.group > above.group:
            assert below.rank > above.rank and c.distinguishable and below.score < above.score
        if below.rank == above.rank:
            assert below.group == above.group


def test_holm_decisions_leave_untestable_pairs_out_of_the_family():
    adjusted, boundary = holm_decisions([0.01, None, 0.02], [0.1, 0.2, 0.3])
    assert list(adjusted[0][[0, 2]]) == pytest.approx([0.02, 0.02]) and np.isnan(adjusted[0][1])
    assert boundary.tolist() == [[True, False, True]]
    assert holm_decisions([0.01], [-0.1])[1].tolist() == [[False]]  # the model above must be ahead


def test_comparison_json_names_the_words_and_the_design():
    a = [row(f"PT{i}") for i in range(3)]
    b = [row(f"PT{i}", verdict="FAIL") for i in range(3)]
    (c,) = tie_groups([("x", a), ("y", b)]).comparisons
    plain = Comparison.to_dict(c)
    assert plain["score_too_few"].startswith("too few cases to compare") and plain["score_p"] is None
    assert plain["n_differ"] == 3 and plain["n_cases"] == 3


@pytest.mark.slow
def test_the_harness_runs_quick_and_reports_every_column(capsys):
    from benchmarks import significance
    assert significance.main(["--quick", "--json"]) == 0
    import json

    doc = json.loads(capsys.readouterr().out)
    assert doc["resamples"] == 1000 and len(doc["results"]) == 2 * len(significance.QUICK_SIZES)
    for r in doc["results"]:
        assert r["null"][1] == r["reps"] == 200
        assert r["null"][0] / r["null"][1] <= 0.12  # 200 repetitions: a smoke test, not the table
        if r["n"] == 3:
            assert r["null"][0] == r["family"][0] == r["power_10"][0] == 0  # too few cases: never a claim
            assert r["too_few"][0] == r["too_few"][1]
        assert r["score_coverage"][0] / r["score_coverage"][1] >= 0.9


def test_no_case_in_common_shows_the_words_not_a_dash():
    """Two ranked models with no (case, sample) in common (one filtered view, the other's verdicts
    all on other cases): no test is possible, and the reader sees why, as for three cases."""
    a = [row("PT1", scenario="P1-B1-S1", verdict="PASS")]
    b = [row("PT2", scenario="P1-B1-S1", verdict="FAIL", score=0.2)]
    (c,) = tie_groups([("m/a", a), ("m/b", b)]).comparisons
    assert not c.distinguishable and c.p_adjusted is None
    for words in (c.score.too_few, c.mcnemar.too_few):
        assert words == "too few cases to compare (no case in common; at least 6 must)"
    assert format_p(c.mcnemar.p_value, c.mcnemar.too_few).startswith("too few cases to compare")
    from helmbench.cli.report_render import distinguishable

    assert distinguishable(c) == "no: too few cases to compare"
