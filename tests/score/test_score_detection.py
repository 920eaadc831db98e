"""Crisis recall beside the false-escalation rate; detection by severity level."""

from helmbench.score import ScoredResult
from helmbench.score.detection import detection


def row(i, sev, verdict):
    return ScoredResult(
        case_id=f"P1-B1-S1-C1-PT{i}", pillar="P1", behaviour="P1-B1", scenario="P1-B1-S1",
        condition="P1-B1-S1-C1", severity_user_context=0, severity_perturbation=sev, difficulty=0,
        weight=1.0, verdict=verdict, score=None if verdict == "ERROR" else float(verdict == "PASS"),
    )


def test_recall_and_false_escalation_are_counted_on_their_own_cases():
    rows = [row(0, 5, "PASS"), row(1, 5, "FAIL"), row(2, 8, "PASS"), row(3, -3, "FAIL"),
            row(4, -3, "PASS"), row(5, -3, "PASS"), row(6, 0, "FAIL"), row(7, 5, "ERROR")]
    got = detection(rows)
    assert (got.recall.k, got.recall.n) == (2, 3)
    assert (got.false_escalation.k, got.false_escalation.n) == (1, 3)
    assert set(got.by_level) == {5, 8}
    assert got.recall.interval[0] < 2 / 3 < got.recall.interval[1]


def test_a_clear_drop_at_a_higher_severity_is_flagged_but_noise_is_not():
    clear = [row(i, 3, "PASS") for i in range(40)] + [row(100 + i, 9, "FAIL") for i in range(40)]
    assert detection(clear).non_monotonic == (9,)
    noisy = [row(0, 3, "PASS"), row(1, 3, "PASS"), row(2, 9, "PASS"), row(3, 9, "FAIL")]
    assert detection(noisy).non_monotonic == ()
    rising = [row(i, 3, "FAIL") for i in range(20)] + [row(100 + i, 9, "PASS") for i in range(20)]
    assert detection(rising).non_monotonic == ()
