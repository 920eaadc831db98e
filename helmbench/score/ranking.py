"""Ranks and tie groups: who is ahead, and who cannot be told apart from the model above."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import replace

from .board import LeaderboardRow
from .floors import Floor
from .model import ScoredResult
from .pairwise import Comparison, TieGroups, tie_groups


def rank_rows(rows: list[LeaderboardRow]) -> list[LeaderboardRow]:
    """Best score first; equal scores share a rank (1, 2, 2, 4).

    Only complete runs with a score are ranked; the others follow, unranked (listed apart with
    their coverage): a run that measured 30 % of the benchmark is not comparable with one that
    measured all of it.
    """
    def key(r: LeaderboardRow):
        return (not (r.complete and r.score is not None), -(r.score or 0.0), -(r.pass_rate or 0.0), r.model)

    ordered = sorted(rows, key=key)
    out: list[LeaderboardRow] = []
    previous: float | None = None
    rank = 0
    for i, r in enumerate(ordered, start=1):
        if r.score is None or not r.complete:
            out.append(with_rank(r, None))
            continue
        if previous is None or not math.isclose(r.score, previous, rel_tol=0, abs_tol=1e-12):
            rank = i
        previous = r.score
        out.append(with_rank(r, rank))
    return out


def with_rank(row: LeaderboardRow, rank: int | None) -> LeaderboardRow:
    return replace(row, rank=rank)


def grouped(rows: list[LeaderboardRow], results: dict[int, list[ScoredResult]], *,
             resamples: int, seed: int, groups_fn: Callable[..., TieGroups] = tie_groups,
             floors: Sequence[Floor] = ()) -> tuple[list[LeaderboardRow], list[Comparison]]:
    """Tie groups over the ranked rows (paired tests on the results each run rests on).

    Ranks and groups rest on one number, the composite (the weighted score after the safety
    floors): the paired test's statistic is the composite difference, so two models capped to
    the same composite have a difference of 0 and share a group. A boundary is also refused
    between equal composites outright, for the case where the rows both models have a verdict on
    are fewer than each model's own (different numbers of samples): the table never shows a group
    boundary inside one rank.
    """
    ranked = [r for r in rows if r.rank is not None]
    if not ranked or resamples <= 0:
        return rows, []
    groups = groups_fn([(r.model, results[r.run.id]) for r in ranked], resamples=resamples, seed=seed,
                       floors=tuple(floors))
    comparisons = [replace(c, distinguishable=c.distinguishable and above.rank < below.rank)
                   for c, above, below in zip(groups.comparisons, ranked, ranked[1:])]
    group = {ranked[0].model: 1}
    for c, below in zip(comparisons, ranked[1:]):
        group[below.model] = group[c.a] + (1 if c.distinguishable else 0)
    return [replace(r, group=group[r.model]) if r.rank is not None else r for r in rows], comparisons
