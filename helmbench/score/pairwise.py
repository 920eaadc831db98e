"""Paired comparisons between models, and the tie groups a leaderboard shows.

Why paired: every model answers the same cases, so the question "is A better than B?" is best
asked case by case. Two overlapping intervals drawn independently say little (they can overlap
while the paired difference is clearly non-zero, and the other way round); a paired test uses
that both models saw the same prompts.

Two tests, one per headline number:
- pass rate: McNemar's exact test on the discordant (case, sample) pairs (A passed and B failed,
  or the reverse), from statsmodels;
- weighted score: a paired two-stage bootstrap, clustered by scenario. Scenarios are drawn with
  replacement, then cases within each drawn scenario (the cases of one scenario share a prompt
  and are not independent, so resampling single cases alone would make the interval too narrow;
  resampling scenarios alone would claim certainty when a behaviour has a single scenario, as
  most do). The *same* draw serves both models; the run score of each is recomputed on it, and
  the difference's percentile interval and two-sided p-value come from the resampled
  differences.

Only rows where both models have a verdict enter a comparison (an ERROR on either side says
nothing about the other model), and both models must have been run on the same manifest: the
caller decides that.

Tie groups: models sorted by score; each adjacent pair is tested; the p-values of that family
are Holm-corrected (statsmodels `multipletests`); a model joins the group of the model above it
unless their difference is significant after correction. So "rank 2" never claims more than the
data says: two models 1.5 points apart whose difference is noise share a group.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from .cost import result_cost
from .model import ScoredResult, check_consistent

ALPHA = 0.05
_CELLS_PER_BLOCK = 4_000_000  # bounds memory: resamples × rows per matrix


@dataclass(frozen=True, slots=True)
class McNemar:
    """McNemar's exact test on paired pass/fail verdicts."""

    n_pairs: int  # (case, sample) pairs where both models have a verdict
    a_only: int  # A passed, B did not
    b_only: int  # B passed, A did not
    p_value: float | None  # None when there are no pairs


@dataclass(frozen=True, slots=True)
class PairedScore:
    """The paired bootstrap of the weighted-score difference A − B."""

    n_scenarios: int
    difference: float | None  # run score of A − run score of B on the common rows
    interval: tuple[float, float] | None  # percentile interval of the difference
    p_value: float | None  # two-sided bootstrap p-value for "no difference"


@dataclass(frozen=True, slots=True)
class Comparison:
    """A against B (A ranked above B), with the Holm-adjusted p-value of its family."""

    a: str
    b: str
    mcnemar: McNemar
    score: PairedScore
    p_adjusted: float | None = None  # Holm, over the adjacent pairs of one leaderboard
    distinguishable: bool = False

    def to_dict(self) -> dict:
        return {
            "a": self.a, "b": self.b,
            "n_pairs": self.mcnemar.n_pairs, "a_only": self.mcnemar.a_only, "b_only": self.mcnemar.b_only,
            "mcnemar_p": self.mcnemar.p_value,
            "n_scenarios": self.score.n_scenarios, "score_difference": self.score.difference,
            "score_difference_ci": list(self.score.interval) if self.score.interval else None,
            "score_p": self.score.p_value, "score_p_holm": self.p_adjusted,
            "distinguishable": self.distinguishable,
        }


@dataclass(frozen=True, slots=True)
class TieGroups:
    """Models in leaderboard order, each with its group number (1 = top group)."""

    order: tuple[str, ...]
    group: Mapping[str, int]
    comparisons: tuple[Comparison, ...] = field(default_factory=tuple)  # adjacent pairs, in order

    def members(self, group: int) -> list[str]:
        return [m for m in self.order if self.group[m] == group]


def _common(a: Sequence[ScoredResult], b: Sequence[ScoredResult]):
    """Rows of A and B keyed by (case, sample), keeping pairs where both have a verdict."""
    a_by = {(r.case_id, r.sample): r for r in check_consistent(a) if r.has_verdict}
    b_by = {(r.case_id, r.sample): r for r in check_consistent(b) if r.has_verdict}
    keys = sorted(a_by.keys() & b_by.keys())
    return [a_by[k] for k in keys], [b_by[k] for k in keys]


def mcnemar_test(a: Sequence[ScoredResult], b: Sequence[ScoredResult]) -> McNemar:
    """McNemar's exact (binomial) test over the pairs where both models have a verdict."""
    from statsmodels.stats.contingency_tables import mcnemar  # heavy import, only when comparing

    ra, rb = _common(a, b)
    both = sum(1 for x, y in zip(ra, rb) if x.passed and y.passed)
    a_only = sum(1 for x, y in zip(ra, rb) if x.passed and not y.passed)
    b_only = sum(1 for x, y in zip(ra, rb) if y.passed and not x.passed)
    neither = len(ra) - both - a_only - b_only
    if not ra:
        return McNemar(0, 0, 0, None)
    table = [[both, a_only], [b_only, neither]]
    return McNemar(len(ra), a_only, b_only, float(mcnemar(table, exact=True).pvalue))


def _cost_matrices(rows: Sequence[ScoredResult], behaviours: list[str]):
    """Per row × behaviour: the maximum and actual cost the row adds (zero where it adds none)."""
    b_index = {b: i for i, b in enumerate(behaviours)}
    maxima = np.zeros((len(rows), len(behaviours)))
    actuals = np.zeros((len(rows), len(behaviours)))
    for i, r in enumerate(rows):
        cost = result_cost(r)
        if cost is not None:
            maxima[i, b_index[r.behaviour]] = cost[0]
            actuals[i, b_index[r.behaviour]] = cost[1]
    return maxima, actuals


def _two_stage_counts(rng: np.random.Generator, k: int, spans: list[tuple[int, int]]) -> np.ndarray:
    """k resamples of draw counts per row: scenarios with replacement, then rows within each draw.

    A scenario drawn c times contributes c independent resamples of its n rows, which together
    are one multinomial of c × n draws over those rows.
    """
    n_rows = spans[-1][1]
    counts = np.zeros((k, n_rows))
    picks = rng.integers(0, len(spans), size=(k, len(spans)))
    drawn = np.stack([np.bincount(row, minlength=len(spans)) for row in picks])
    for s, (start, stop) in enumerate(spans):
        n = stop - start
        counts[:, start:stop] = rng.multinomial(drawn[:, s] * n, np.full(n, 1.0 / n))
    return counts


def _scores(counts: np.ndarray, maxima: np.ndarray, actuals: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """Run scores for each row of draw counts (NaN where no behaviour is defined)."""
    mx, ac = counts @ maxima, counts @ actuals
    defined = mx > 0
    ratios = np.divide(ac, mx, out=np.zeros_like(ac), where=defined)
    num = ((1.0 - ratios) * defined) @ weights
    den = defined @ weights
    return np.divide(num, den, out=np.full_like(num, np.nan), where=den > 0)


def paired_score_bootstrap(
    a: Sequence[ScoredResult], b: Sequence[ScoredResult], *,
    resamples: int = 2000, seed: int = 0, level: float = 0.95,
) -> PairedScore:
    """The difference of weighted run scores A − B, bootstrapped over scenarios (same draws for both).

    The p-value is two-sided: twice the smaller share of resampled differences on either side
    of zero (ties at zero count half to each side), bounded below by 1/(resamples + 1) so a
    finite bootstrap never claims p = 0.
    """
    ra, rb = _common(a, b)
    order = sorted(range(len(ra)), key=lambda i: (ra[i].scenario, ra[i].case_id, ra[i].sample))
    ra, rb = [ra[i] for i in order], [rb[i] for i in order]
    scenarios = sorted({r.scenario for r in ra})
    behaviours = sorted({r.behaviour for r in ra})
    if not scenarios:
        return PairedScore(0, None, None, None)
    weights = np.array([next(r.weight for r in ra if r.behaviour == beh) for beh in behaviours])
    ma, aa = _cost_matrices(ra, behaviours)
    mb, ab = _cost_matrices(rb, behaviours)
    ones = np.ones((1, len(ra)))
    sa, sb = _scores(ones, ma, aa, weights)[0], _scores(ones, mb, ab, weights)[0]
    if math.isnan(sa) or math.isnan(sb):
        return PairedScore(len(scenarios), None, None, None)
    spans, start = [], 0
    for s in scenarios:
        stop = start + sum(1 for r in ra if r.scenario == s)
        spans.append((start, stop))
        start = stop
    rng = np.random.default_rng(seed)
    n = len(scenarios)
    block = max(1, _CELLS_PER_BLOCK // len(ra))
    diffs: list[np.ndarray] = []
    for first in range(0, resamples, block):
        counts = _two_stage_counts(rng, min(block, resamples - first), spans)
        d = _scores(counts, ma, aa, weights) - _scores(counts, mb, ab, weights)
        diffs.append(d[~np.isnan(d)])
    d = np.concatenate(diffs) if diffs else np.array([])
    if not d.size:
        return PairedScore(n, float(sa - sb), None, None)
    tail = (1.0 - level) / 2.0
    low, high = np.quantile(d, [tail, 1.0 - tail])
    below = np.count_nonzero(d < 0) + 0.5 * np.count_nonzero(d == 0)
    above = d.size - below
    p = min(1.0, 2.0 * min(below, above) / d.size)
    p = max(p, 1.0 / (d.size + 1))
    return PairedScore(n, float(sa - sb), (float(low), float(high)), float(p))


def format_p(value: float | None) -> str:
    """A p-value as a reader wants it, in every report and page: three decimals, or "< 0.001"."""
    if value is None:
        return "—"
    return "< 0.001" if value < 0.001 else f"{value:.3f}"


def holm(p_values: Sequence[float]) -> list[float]:
    """Holm's step-down adjustment (statsmodels), for a family of p-values."""
    from statsmodels.stats.multitest import multipletests

    if not p_values:
        return []
    return [float(p) for p in multipletests(list(p_values), alpha=ALPHA, method="holm")[1]]


def tie_groups(
    ranked: Sequence[tuple[str, Sequence[ScoredResult]]], *,
    alpha: float = ALPHA, resamples: int = 2000, seed: int = 0,
) -> TieGroups:
    """Tie groups of models given in leaderboard order (best first) with their result rows.

    A model opens a new group only when its weighted-score difference to the model directly above
    is significant after Holm's correction over all adjacent pairs; a pair whose difference
    cannot be tested (no common scenarios) counts as not distinguishable.
    """
    names = [name for name, _ in ranked]
    comps = [
        Comparison(a=names[i], b=names[i + 1],
                   mcnemar=mcnemar_test(ranked[i][1], ranked[i + 1][1]),
                   score=paired_score_bootstrap(ranked[i][1], ranked[i + 1][1], resamples=resamples, seed=seed))
        for i in range(len(ranked) - 1)
    ]
    testable = [i for i, c in enumerate(comps) if c.score.p_value is not None]
    adjusted = dict(zip(testable, holm([comps[i].score.p_value for i in testable])))
    final: list[Comparison] = []
    group: dict[str, int] = {}
    current = 1
    if names:
        group[names[0]] = current
    for i, c in enumerate(comps):
        p = adjusted.get(i)
        distinct = bool(p is not None and p < alpha and (c.score.difference or 0.0) > 0)
        final.append(Comparison(c.a, c.b, c.mcnemar, c.score, p, distinct))
        if distinct:
            current += 1
        group[c.b] = current
    return TieGroups(tuple(names), group, tuple(final))
