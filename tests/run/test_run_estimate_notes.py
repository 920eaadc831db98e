"""The dry run's closing note claims no more than it counts: model calls, never the judge's."""

from __future__ import annotations

from helmbench.run.estimate import Estimate, ModelEstimate, notes


def test_nothing_left_to_answer_does_not_claim_every_call_is_stored():
    # the judge may still have outputs to judge (or a re-judge sample to draw): they are not estimated
    est = Estimate(models=[ModelEstimate(entry=None, price=None, calls=0)])
    last = notes(est)[-1]
    assert "$0" in last and "judge calls are not included" in last and "every call" not in last
