"""Which judged items a reviewer sees, and in what order.

The sample is stratified by scenario and by the judge's verdict: items are dealt round-robin
from each (scenario, verdict) stratum, so even a small sample holds passes and failures of
every judged scenario (a sample of passes only could not measure the judge on failures, the
class that matters). The sample depends only on the items and `seed`, so every reviewer (on
any machine with the same results) gets the same items and their verdicts can be compared;
the order each reviewer sees them in is shuffled per reviewer, so the strata leave no pattern
and no two reviewers share the same order effects.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from helmbench.score.calibration import judge_verdict
from helmbench.score.review_items import JudgedItem


def stratified_sample(items: dict[str, JudgedItem], size: int | None = None, seed: int = 0) -> list[str]:
    """Item hashes of the sample (all items when `size` is None), strata dealt in turn."""
    rng = random.Random(f"sample:{seed}")
    strata: dict[tuple[str, str], list[str]] = {}
    for h in sorted(items):
        item = items[h]
        strata.setdefault((item.scenario, judge_verdict(item) or "?"), []).append(h)
    for key in sorted(strata):
        rng.shuffle(strata[key])
    order = [strata[k] for k in sorted(strata)]
    rng.shuffle(order)
    out: list[str] = []
    limit = len(items) if size is None else min(size, len(items))
    i = 0
    while len(out) < limit:
        for stratum in order:
            if i < len(stratum) and len(out) < limit:
                out.append(stratum[i])
        i += 1
    return out


@dataclass
class Queue:
    """One reviewer's sample in their own random order; `done` are the items they have reviewed."""

    reviewer: str
    order: list[str]

    @classmethod
    def for_reviewer(cls, sample: list[str], reviewer: str, seed: int = 0) -> "Queue":
        order = list(sample)
        random.Random(f"order:{seed}:{reviewer}").shuffle(order)
        return cls(reviewer, order)

    def next(self, done: set[str]) -> str | None:
        return next((h for h in self.order if h not in done), None)

    def progress(self, done: set[str]) -> tuple[int, int]:
        return sum(1 for h in self.order if h in done), len(self.order)
