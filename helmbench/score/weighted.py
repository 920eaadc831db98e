"""Severity-weighted scores: behaviour, pillar and run.

    behaviour score = 1 − actual cost / maximum cost          (None when the maximum is 0)
    pillar score    = Σ weight_b × score_b / Σ weight_b        over the pillar's scored behaviours
    run score       = Σ weight_b × score_b / Σ weight_b        over all scored behaviours

The run score is taken over behaviours directly, not over pillar scores, so a pillar with
many behaviours weighs what its behaviours weigh.

Samples: every (case × sample) row counts as one observation. With the same number of
samples per case this equals averaging each case's samples first; when some samples
errored, the case counts with the samples that have a verdict.

Sums use `math.fsum` (correctly rounded), which also keeps every score inside [0, 1] and
makes a better verdict never lower a score, even in floating point.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from .cost import result_cost
from .model import ScoredResult


@dataclass(frozen=True, slots=True)
class BehaviourCost:
    """The cost totals of one behaviour; `score` derives from them."""

    pillar: str
    weight: float
    max_cost: int = 0
    actual_cost: float = 0.0
    n_weighted: int = 0  # rows with a verdict and base ≠ 0

    @property
    def score(self) -> float | None:
        return behaviour_score(self.max_cost, self.actual_cost)


def behaviour_score(max_cost: float, actual_cost: float) -> float | None:
    """1 − actual/maximum, or None when nothing was at stake (maximum 0)."""
    if max_cost <= 0:
        return None
    return 1.0 - actual_cost / max_cost


def weighted_mean(pairs: Iterable[tuple[float, float | None]]) -> float | None:
    """Σ w·s / Σ w over (weight, score) pairs whose score is not None; None if Σ w is 0."""
    kept = [(w, s) for w, s in pairs if s is not None]
    total = math.fsum(w for w, _ in kept)
    if total <= 0:
        return None
    return math.fsum(w * s for w, s in kept) / total


def behaviour_costs(results: Iterable[ScoredResult]) -> dict[str, BehaviourCost]:
    """Cost totals per behaviour, sorted by behaviour code.

    Every behaviour seen in the rows is present, even one whose rows all errored or all had
    base 0 (its score is then None), so callers can report it as unscored rather than lose it.
    """
    meta: dict[str, tuple[str, float]] = {}
    maxima: dict[str, int] = {}
    actuals: dict[str, list[float]] = {}
    for r in results:
        known = meta.setdefault(r.behaviour, (r.pillar, r.weight))
        if known != (r.pillar, r.weight):
            raise ValueError(f"behaviour {r.behaviour!r} has pillar/weight {known} and {(r.pillar, r.weight)}")
        cost = result_cost(r)
        if cost is None:
            continue
        maxima[r.behaviour] = maxima.get(r.behaviour, 0) + cost[0]
        actuals.setdefault(r.behaviour, []).append(cost[1])
    return {
        b: BehaviourCost(
            pillar=pillar,
            weight=weight,
            max_cost=maxima.get(b, 0),
            actual_cost=math.fsum(actuals.get(b, ())),
            n_weighted=len(actuals.get(b, ())),
        )
        for b, (pillar, weight) in sorted(meta.items())
    }


def combine(costs: Mapping[str, BehaviourCost]) -> float | None:
    """The weighted mean of the behaviours' scores: a run score, or a pillar score when
    given one pillar's behaviours."""
    return weighted_mean((c.weight, c.score) for c in costs.values())


@dataclass(frozen=True, slots=True)
class WeightedScores:
    run: float | None
    by_pillar: dict[str, float | None] = field(default_factory=dict)
    by_behaviour: dict[str, float | None] = field(default_factory=dict)


def weighted_scores(results: Iterable[ScoredResult]) -> WeightedScores:
    """Behaviour, pillar and run scores of a set of rows."""
    costs = behaviour_costs(results)
    pillars: dict[str, dict[str, BehaviourCost]] = {}
    for b, c in costs.items():
        pillars.setdefault(c.pillar, {})[b] = c
    return WeightedScores(
        run=combine(costs),
        by_pillar={p: combine(pillars[p]) for p in sorted(pillars)},
        by_behaviour={b: c.score for b, c in costs.items()},
    )


def run_score(results: Iterable[ScoredResult]) -> float | None:
    """The weighted run score alone."""
    return combine(behaviour_costs(results))
