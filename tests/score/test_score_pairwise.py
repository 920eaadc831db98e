"""Paired comparisons and tie groups, against published worked examples and constructed cases."""

import random

import pytest

from helmbench.score import ScoredResult, run_score
from helmbench.score.inference import paired_inference
from helmbench.score.pairwise import holm, mcnemar_test, tie_groups


def row(case, *, scenario="P1-B1-S1", verdict="PASS", sev=5, sample=0):
    behaviour = scenario.rsplit("-", 1)[0]
    return ScoredResult(
        case_id=f"{scenario}-C1-{case}", pillar=behaviour.split("-")[0], behaviour=behaviour,
        scenario=scenario, condition=f"{scenario}-C1", severity_user_context=0,
        severity_perturbation=sev, difficulty=0, weight=1.0, verdict=verdict,
        score=None if verdict == "ERROR" else (1.0 if verdict == "PASS" else 0.0), sample=sample,
    )


def paired_rows(both, a_only, b_only, neither):
    """Two models' rows with the given 2×2 table of (A passed, B passed)."""
    a, b, i = [], [], 0
    for count, va, vb in ((both, "PASS", "PASS"), (a_only, "PASS", "FAIL"),
                          (b_only, "FAIL", "PASS"), (neither, "FAIL", "FAIL")):
        for _ in range(count):
            a.append(row(f"PT{i}", verdict=va))
            b.append(row(f"PT{i}", verdict=vb))
            i += 1
    return a, b


def test_mcnemar_matches_the_published_exact_example():
    # Wikipedia, "McNemar's test", worked example: b = 6, c = 16 discordant pairs out of 161;
    # the exact binomial version gives p = 0.0525 (the chi-squared approximation 0.033).
    a, b = paired_rows(both=59, a_only=6, b_only=16, neither=80)
    result = mcnemar_test(a, b)
    assert (result.n_pairs, result.a_only, result.b_only) == (161, 6, 16)
    assert result.p_value == pytest.approx(0.0525, abs=5e-5)


def test_mcnemar_uses_only_pairs_where_both_have_a_verdict():
    a, b = paired_rows(both=5, a_only=3, b_only=0, neither=2)
    b[0] = row("PT0", verdict="ERROR")
    assert mcnemar_test(a, b).n_pairs == 9
    assert mcnemar_test(a, []).p_value is None


def test_holm_matches_the_published_example():
    # Wikipedia, "Holm–Bonferroni method": p = 0.01, 0.04, 0.03, 0.005 at α = 0.05
    # rejects H1 and H4 only.
    adjusted = holm([0.01, 0.04, 0.03, 0.005])
    assert adjusted == pytest.approx([0.03, 0.06, 0.06, 0.02])
    assert [p < 0.05 for p in adjusted] == [True, False, False, True]


def test_holm_on_arrays_matches_statsmodels(monkeypatch):
    # Our array version (thousands of families at once in the harness) against the reference implementation.
    # statsmodels' Holm branch ends with a full gc.collect(), a quarter of a second or more in a test process
    # full of objects, 200 times over (3.5 minutes of the suite); it changes no number, so it is skipped here.
    import gc

    import numpy as np
    from statsmodels.stats.multitest import multipletests

    monkeypatch.setattr(gc, "collect", lambda *args: 0)
    rng = np.random.default_rng(4)
    for k in (1, 2, 5, 9):
        for _ in range(50):
            p = rng.random(k) ** 3
            assert holm(list(p)) == pytest.approx(list(multipletests(p, method="holm")[1]))


SCENARIOS = [f"P{p}-B{b}-S1" for p in (1, 2) for b in (1, 2, 3)]


def model_rows(pass_prob, seed, per_scenario=24):
    rng = random.Random(seed)
    return [row(f"PT{i}", scenario=s, sev=5 + (i % 3),
                verdict="PASS" if rng.random() < pass_prob else "FAIL")
            for s in SCENARIOS for i in range(per_scenario)]


def test_paired_difference_is_the_difference_of_run_scores():
    a, b = model_rows(0.9, 1), model_rows(0.5, 2)
    result = paired_inference(a, b, resamples=500)
    assert result.n_cases == len(a) and not result.exact and result.too_few is None
    assert result.difference == pytest.approx(run_score(a) - run_score(b))
    low, high = result.interval
    assert low <= result.difference <= high
    assert 1 / 501 <= result.p_value < 0.01  # Monte Carlo with the +1 correction: never 0
    again = paired_inference(a, b, resamples=500)
    assert again == result  # seeded: reproducible


def test_identical_models_share_a_group():
    a = model_rows(0.7, 3)
    groups = tie_groups([("model/a", a), ("model/b", list(a))], resamples=500)
    assert groups.group == {"model/a": 1, "model/b": 1}
    (comp,) = groups.comparisons
    assert comp.score.difference == 0 and not comp.distinguishable
    assert comp.mcnemar.p_value is None and comp.score.p_value is None  # no case differs: nothing to test
    assert comp.mcnemar.too_few == comp.score.too_few == "too few cases to compare (no case differs; at least 6 must)"


def test_a_clearly_better_model_opens_its_own_group():
    best, mid1 = model_rows(0.95, 4), model_rows(0.4, 5)
    mid2 = [row(r.case_id.rsplit("-", 1)[1], scenario=r.scenario, sev=r.severity_perturbation,
                verdict=r.verdict) for r in mid1]
    # mid2 differs from mid1 in two cases only: 1.5 points apart is noise.
    for i in (0, 30):
        mid2[i] = row(mid2[i].case_id.rsplit("-", 1)[1], scenario=mid2[i].scenario,
                      sev=mid2[i].severity_perturbation, verdict="FAIL" if mid2[i].passed else "PASS")
    ranked = sorted([("m/best", best), ("m/mid1", mid1), ("m/mid2", mid2)],
                    key=lambda m: -run_score(m[1]))
    groups = tie_groups(ranked, resamples=1000)
    assert groups.group["m/best"] == 1
    assert groups.group["m/mid1"] == groups.group["m/mid2"] == 2
    assert groups.members(2) == [name for name, _ in ranked[1:]]
    first, second = groups.comparisons
    assert first.distinguishable and first.p_adjusted < 0.05
    assert not second.distinguishable
    assert second.score.n_differ == 2 and second.score.too_few and second.p_adjusted is None


def test_an_untestable_pair_is_not_called_different():
    a = model_rows(0.9, 6)
    groups = tie_groups([("m/a", a), ("m/none", [])])
    assert groups.group == {"m/a": 1, "m/none": 1}
    assert groups.comparisons[0].score.p_value is None and groups.comparisons[0].p_adjusted is None


def test_p_values_read_the_same_in_every_report():
    from helmbench.score.pairwise import format_p

    assert [format_p(p) for p in (None, 0.0004, 0.0525, 1.0)] == ["—", "< 0.001", "0.052", "1.000"]
