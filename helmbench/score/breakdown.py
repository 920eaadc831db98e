"""Breakdowns: the same statistics for each pillar, behaviour, condition or severity level.

Why: a single run score hides *where* a model fails; the site shows, e.g., whether it fails
mostly at high user-context severity, or on one hard condition. Every group gets the same
shape (`GroupStats`), so pages can render any breakdown the same way.

A group's `score` is the weighted score of its rows, computed like the run score: cost
ratios per behaviour inside the group, combined by behaviour weight. For a behaviour or a
condition (one behaviour) that is 1 − actual/maximum; for a pillar it is the pillar score.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable
from dataclasses import dataclass
from operator import attrgetter
from typing import TypeVar

from helmbench.spec.naming import natural_key

from .coverage import coverage
from .model import ScoredResult
from .weighted import behaviour_costs, combine

K = TypeVar("K", bound=Hashable)


@dataclass(frozen=True, slots=True)
class GroupStats:
    n_results: int  # rows, ERROR included
    n_verdicts: int  # PASS + FAIL: the pass-rate denominator
    n_errors: int
    n_pass: int
    n_weighted: int  # rows with a verdict and base ≠ 0: what the score rests on
    pass_rate: float | None
    pass_rate_ci: tuple[float, float] | None  # Wilson 95 %
    score: float | None  # weighted score; None when nothing in the group carries weight
    n_abstained: int = 0  # ABSTAIN rows (every criterion abstained or gated off): outside every denominator


@dataclass(frozen=True, slots=True)
class BehaviourStats(GroupStats):
    """A behaviour's group statistics plus what its score is made of."""

    pillar: str = ""
    weight: float = 0.0
    max_cost: int = 0
    actual_cost: float = 0.0


def group_stats(results: Iterable[ScoredResult]) -> GroupStats:
    rows = list(results)
    cov = coverage(rows)
    costs = behaviour_costs(rows)
    return GroupStats(
        n_results=cov.n_results,
        n_verdicts=cov.n_verdicts,
        n_errors=cov.n_errors,
        n_pass=cov.n_pass,
        n_weighted=sum(c.n_weighted for c in costs.values()),
        pass_rate=cov.pass_rate,
        pass_rate_ci=cov.pass_rate_ci(),
        score=combine(costs),
        n_abstained=cov.n_abstained,
    )


def _groups(results: Iterable[ScoredResult], key: Callable[[ScoredResult], K]) -> dict[K, list[ScoredResult]]:
    groups: dict[K, list[ScoredResult]] = {}
    for r in results:
        groups.setdefault(key(r), []).append(r)
    return {k: groups[k] for k in sorted(groups, key=natural_key)}


def breakdown(results: Iterable[ScoredResult], key: Callable[[ScoredResult], K]) -> dict[K, GroupStats]:
    """`GroupStats` for each value of `key`, in natural order."""
    return {k: group_stats(rows) for k, rows in _groups(results, key).items()}


def by_pillar(results: Iterable[ScoredResult]) -> dict[str, GroupStats]:
    return breakdown(results, attrgetter("pillar"))


def by_condition(results: Iterable[ScoredResult]) -> dict[str, GroupStats]:
    return breakdown(results, attrgetter("condition"))


def by_user_context_severity(results: Iterable[ScoredResult]) -> dict[int, GroupStats]:
    return breakdown(results, attrgetter("severity_user_context"))


def by_perturbation_severity(results: Iterable[ScoredResult]) -> dict[int, GroupStats]:
    return breakdown(results, attrgetter("severity_perturbation"))


def by_behaviour(results: Iterable[ScoredResult]) -> dict[str, BehaviourStats]:
    out: dict[str, BehaviourStats] = {}
    for behaviour, rows in _groups(results, attrgetter("behaviour")).items():
        stats = group_stats(rows)
        cost = behaviour_costs(rows)[behaviour]
        out[behaviour] = BehaviourStats(
            **{name: getattr(stats, name) for name in GroupStats.__dataclass_fields__},
            pillar=cost.pillar,
            weight=cost.weight,
            max_cost=cost.max_cost,
            actual_cost=cost.actual_cost,
        )
    return out
