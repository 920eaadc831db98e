"""The scoring stage's entry point: every number the site shows for one run/model.

`summarise` checks the rows once, then asks each small module for its part; `RunSummary`
is plain data with `to_dict()` for JSON (string keys, lists for intervals, no NaN).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from dataclasses import dataclass

from .consistency import Consistency, consistency
from .breakdown import (
    BehaviourStats,
    GroupStats,
    by_behaviour,
    by_condition,
    by_perturbation_severity,
    by_pillar,
    by_user_context_severity,
)
from .coverage import coverage
from .inference import score_interval
from .model import ScoredResult, check_consistent
from .simulated_users import SimulatedUsers, simulated_users
from .weighted import behaviour_costs, combine


@dataclass(frozen=True, slots=True)
class RunSummary:
    score: float | None  # weighted run score in [0, 1]
    score_ci: tuple[float, float] | None  # 95 % interval (inference.score_interval); None below 3 cases
    pass_rate: float | None
    pass_rate_ci: tuple[float, float] | None  # Wilson 95 %
    n_results: int
    n_verdicts: int
    n_errors: int
    n_pass: int
    n_weighted: int  # rows the weighted score rests on (verdict and base ≠ 0)
    n_abstained: int  # ABSTAIN rows: every criterion abstained or gated off, outside every denominator
    coverage: float | None  # rows settled (verdict or abstention) / n_results: Coverage.share
    by_pillar: dict[str, GroupStats]
    by_behaviour: dict[str, BehaviourStats]
    by_condition: dict[str, GroupStats]
    by_user_context_severity: dict[int, GroupStats]
    by_perturbation_severity: dict[int, GroupStats]
    consistency: Consistency | None  # None unless some case has ≥ 2 samples with a verdict
    bootstrap: int  # Monte-Carlo resamples of the paired tests (0: no intervals, no tests)
    seed: int
    simulated_users: SimulatedUsers | None = None  # per simulated user and pooled, when several played

    def to_dict(self) -> dict:
        return _plain(self)


def _plain(obj):
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return {f.name: _plain(getattr(obj, f.name)) for f in dataclasses.fields(obj)}
    if isinstance(obj, dict):
        return {str(k): _plain(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_plain(v) for v in obj]
    return obj


def summarise(results: Iterable[ScoredResult], *, bootstrap: int = 1000, seed: int = 0) -> RunSummary:
    """Summarise the result rows of one run/model (ERROR rows included, for coverage).

    `score_ci` is `inference.score_interval` (closed form: no resampling); `bootstrap` = 0 skips it
    (a caller that wants no uncertainty at all). The name is kept from when the interval was a
    bootstrap: the same number still sets the Monte-Carlo resamples of the paired tests.
    """
    rows = check_consistent(results)
    cov = coverage(rows)
    costs = behaviour_costs(rows)
    return RunSummary(
        score=combine(costs),
        score_ci=score_interval(rows) if bootstrap else None,
        pass_rate=cov.pass_rate,
        pass_rate_ci=cov.pass_rate_ci(),
        n_results=cov.n_results,
        n_verdicts=cov.n_verdicts,
        n_errors=cov.n_errors,
        n_pass=cov.n_pass,
        n_weighted=sum(c.n_weighted for c in costs.values()),
        n_abstained=cov.n_abstained,
        coverage=cov.share,
        by_pillar=by_pillar(rows),
        by_behaviour=by_behaviour(rows),
        by_condition=by_condition(rows),
        by_user_context_severity=by_user_context_severity(rows),
        by_perturbation_severity=by_perturbation_severity(rows),
        consistency=consistency(rows),
        bootstrap=bootstrap,
        seed=seed,
        simulated_users=simulated_users(rows, intervals=bool(bootstrap)),
    )
