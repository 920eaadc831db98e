"""Which judged items a reviewer sees, and in what order (the sample and the plan are `score.review_plan`'s).

Without a plan every reviewer gets the whole sample, in their own random order; with a plan
(or a packet) a reviewer gets the items planned for them, in the order the plan gave.
"""

from __future__ import annotations

from dataclasses import dataclass

from helmbench.score.review_plan import reviewer_order


@dataclass
class Queue:
    """One reviewer's items in their own random order; `done` are the items they have reviewed."""

    reviewer: str
    order: list[str]

    @classmethod
    def for_reviewer(cls, sample: list[str], reviewer: str, seed: int = 0) -> "Queue":
        return cls(reviewer, reviewer_order(sample, reviewer, seed))

    def next(self, done: set[str]) -> str | None:
        return next((h for h in self.order if h not in done), None)

    def progress(self, done: set[str]) -> tuple[int, int]:
        return sum(1 for h in self.order if h in done), len(self.order)
