"""Paired comparisons between models, and the tie groups a leaderboard shows.

Why paired: every model answers the same cases, so the question "is A better than B?" is best
asked case by case. Two overlapping intervals drawn independently say little (they can overlap
while the paired difference is clearly non-zero, and the other way round); a paired test uses
that both models saw the same prompts.

Two tests, one per headline number:
- pass rate: McNemar's exact test on the discordant (case, sample) pairs (A passed and B failed,
  or the reverse), from statsmodels;
- composite score (the score after safety floors, the number ranks are decided on): a paired
  sign-flip test with the case as the unit (`inference.paired_inference`, where the design and
  its simulation evidence are written down), exact when few cases differ.
When no outcome of the data could reach α (five or fewer discordant / differing cases at 0.05),
neither test gives a p-value: the comparison says "too few cases to compare".

Only rows where both models have a verdict enter a comparison (an ERROR on either side says
nothing about the other model), and both models must have been run on the same manifest: the
caller decides that.

Tie groups: models in rank order (by composite); each adjacent pair is tested; the p-values of the
pairs that can be tested at all are Holm-corrected (a pair with too
few differing cases can never be rejected and is left out of the family, as in Tarone's procedure
for discrete tests — the harness measures the family-wise rate with it); a model joins the group
of the model above it unless their difference is significant after correction. Ranks and groups
rest on the same composite, so a boundary always falls between two different ranks.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from . import inference
from .inference import ALPHA, PairedInference, min_differing, too_few_words
from .model import ScoredResult, check_consistent


@dataclass(frozen=True, slots=True)
class McNemar:
    """McNemar's exact test on paired pass/fail verdicts."""

    n_pairs: int  # (case, sample) pairs where both models have a verdict
    a_only: int  # A passed, B did not
    b_only: int  # B passed, A did not
    p_value: float | None  # None when there are no pairs, or too few discordant ones
    too_few: str | None = None  # the words shown instead of a p-value


@dataclass(frozen=True, slots=True)
class Comparison:
    """A against B (A ranked above B), with the Holm-adjusted p-value of its family."""

    a: str
    b: str
    mcnemar: McNemar
    score: PairedInference
    p_adjusted: float | None = None  # Holm, over the testable adjacent pairs of one leaderboard
    distinguishable: bool = False

    def to_dict(self) -> dict:
        return {
            "a": self.a, "b": self.b,
            "n_pairs": self.mcnemar.n_pairs, "a_only": self.mcnemar.a_only, "b_only": self.mcnemar.b_only,
            "mcnemar_p": self.mcnemar.p_value, "mcnemar_too_few": self.mcnemar.too_few,
            "n_cases": self.score.n_cases, "n_differ": self.score.n_differ,
            "score_difference": self.score.difference,
            "score_difference_ci": list(self.score.interval) if self.score.interval else None,
            "score_p": self.score.p_value, "score_p_exact": self.score.exact, "score_too_few": self.score.too_few,
            "score_p_holm": self.p_adjusted, "distinguishable": self.distinguishable,
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


def mcnemar_test(a: Sequence[ScoredResult], b: Sequence[ScoredResult], alpha: float = ALPHA) -> McNemar:
    """McNemar's exact (binomial) test over the pairs where both models have a verdict.

    Its smallest attainable two-sided p is 2^(1 − discordant pairs): with too few of them, words.
    """
    from statsmodels.stats.contingency_tables import mcnemar  # heavy import, only when comparing

    ra, rb = _common(a, b)
    both = sum(1 for x, y in zip(ra, rb) if x.passed and y.passed)
    a_only = sum(1 for x, y in zip(ra, rb) if x.passed and not y.passed)
    b_only = sum(1 for x, y in zip(ra, rb) if y.passed and not x.passed)
    neither = len(ra) - both - a_only - b_only
    if not ra:
        return McNemar(0, 0, 0, None, too_few_words(None, alpha))
    if a_only + b_only < min_differing(alpha):
        return McNemar(len(ra), a_only, b_only, None, too_few_words(a_only + b_only, alpha))
    table = [[both, a_only], [b_only, neither]]
    return McNemar(len(ra), a_only, b_only, float(mcnemar(table, exact=True).pvalue))


def format_p(value: float | None, too_few: str | None = None) -> str:
    """A p-value as a reader wants it, in every report and page: three decimals, or "< 0.001";
    the words for too little data instead, when the test could not have reached α."""
    if too_few:
        return too_few
    if value is None:
        return "—"
    return "< 0.001" if value < 0.001 else f"{value:.3f}"


def holm(p_values: Sequence[float]) -> list[float]:
    """Holm's step-down adjustment, for a family of p-values."""
    if not len(p_values):
        return []
    return [float(p) for p in holm_adjust(np.array([p_values], dtype=float))[0]]


def holm_adjust(p: np.ndarray) -> np.ndarray:
    """Holm-adjusted p-values of each row of `p` (R families at once; NaN: not in the family).

    Sorted ascending, the i-th of k p-values (0-based) is multiplied by k − i, capped at 1, and made
    non-decreasing. Written on arrays (rather than statsmodels' one family per call) because the
    harness adjusts thousands of families.
    """
    p = np.atleast_2d(np.asarray(p, dtype=float))
    k = (~np.isnan(p)).sum(axis=1, keepdims=True)
    order = np.argsort(np.where(np.isnan(p), np.inf, p), axis=1, kind="stable")
    ranked = np.take_along_axis(p, order, axis=1)
    scaled = np.minimum(1.0, (k - np.arange(p.shape[1])[None, :]) * ranked)
    scaled = np.fmax.accumulate(np.where(np.isnan(scaled), -np.inf, scaled), axis=1)
    out = np.empty_like(p)
    np.put_along_axis(out, order, scaled, axis=1)
    return np.where(np.isnan(p), np.nan, out)


def holm_decisions(p_values, differences, *, alpha: float = ALPHA) -> tuple[np.ndarray, np.ndarray]:
    """Holm-adjusted p-values of adjacent pairs (NaN where untestable) and which pairs are boundaries.

    Rows are families (one leaderboard each; the harness passes thousands at once); a p-value of
    NaN or None (too few differing cases, nothing in common) is left out of its family. A pair is a
    boundary when its adjusted p is below `alpha` and the model above is ahead.
    """
    p = np.atleast_2d(np.array(p_values, dtype=float))
    d = np.atleast_2d(np.array([[0.0 if v is None else v for v in row] for row in np.atleast_2d(
        np.array(differences, dtype=object))], dtype=float))
    adjusted = holm_adjust(p)
    return adjusted, (adjusted < alpha) & (d > 0)


def tie_groups(
    ranked: Sequence[tuple[str, Sequence[ScoredResult]]], *,
    alpha: float = ALPHA, resamples: int = 1000, seed: int = 0, floors: Sequence = (),
) -> TieGroups:
    """Tie groups of models given in leaderboard order (best first) with their result rows.

    A model opens a new group only when its composite difference to the model directly above
    is significant after Holm's correction over the testable adjacent pairs; a pair whose
    difference cannot be tested (no common cases, too few differing) is not distinguishable.
    `floors`: the manifest's safety floors, so that the test is on the composite ranks use.
    """
    names = [name for name, _ in ranked]
    comps = [
        Comparison(a=names[i], b=names[i + 1],
                   mcnemar=mcnemar_test(ranked[i][1], ranked[i + 1][1], alpha),
                   score=inference.paired_inference(ranked[i][1], ranked[i + 1][1], floors=floors,
                                                    resamples=resamples, seed=seed, alpha=alpha))
        for i in range(len(ranked) - 1)
    ]
    adjusted, distinct = holm_decisions([c.score.p_value for c in comps], [c.score.difference for c in comps],
                                        alpha=alpha) if comps else (np.zeros((1, 0)), np.zeros((1, 0), dtype=bool))
    final: list[Comparison] = []
    group: dict[str, int] = {}
    current = 1
    if names:
        group[names[0]] = current
    for c, p, boundary in zip(comps, adjusted[0], distinct[0]):
        p = None if np.isnan(p) else float(p)
        boundary = bool(boundary)
        final.append(Comparison(c.a, c.b, c.mcnemar, c.score, p, boundary))
        if boundary:
            current += 1
        group[c.b] = current
    return TieGroups(tuple(names), group, tuple(final))
