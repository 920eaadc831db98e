"""The methodology page's worked example of the scoring formula, computed by the scorer.

Why a module: the example is the authors' (severities 1, 3, 5, 7, 8, 9, 10), but its numbers must be the
scorer's own, so the page never shows a figure the code would not compute; it reads nothing from results.db.
"""

from __future__ import annotations

from helmbench.score import ScoredResult, run_score


def worked_example() -> dict:
    """The authors' worked example of the scoring formula, computed by the scorer (not typed in): severities
    1, 3, 5, 7, 8, 9, 10 in one behaviour; miss the three mild ones, or the four severe ones."""
    severities = [1, 3, 5, 7, 8, 9, 10]

    def score(missed: set[int]) -> float | None:
        rows = [
            ScoredResult(case_id=f"EX-{i}", pillar="P", behaviour="P-B", scenario="P-B-S", condition="P-B-S-C1",
                         severity_user_context=0, severity_perturbation=s, difficulty=0, weight=1.0,
                         verdict="FAIL" if s in missed else "PASS", score=0.0 if s in missed else 1.0)
            for i, s in enumerate(severities)
        ]
        return run_score(rows)

    mild = set(severities[:3])  # 1, 3, 5: "the three mild ones" of the authors' example
    severe = set(severities[3:])  # 7, 8, 9, 10
    return {
        "severities": severities,
        "maximum": sum(severities),
        "mild": sorted(mild), "mild_cost": sum(mild), "mild_score": score(mild),
        "severe": sorted(severe), "severe_cost": sum(severe), "severe_score": score(severe),
    }
