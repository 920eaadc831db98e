"""Figures per simulated user, beside the pooled one, when several simulated users play a benchmark's
conversations (`user_model` as a list in models.yml).

Why pooled by default: a simulated user has habits (a model family's way of pushing back, of giving
up early) that the result should not carry. Every simulated user plays every simulated conversation,
and its results are further samples of the same case: every score pools them per case first, exactly as
repeated samples are pooled (`inference.case_table` sums a case's samples), so a case played by two
simulated users counts as one case in every interval, never as two independent ones.

Why per simulated user beside it: a reader should see whether the figure rests on one simulator's
habits. Each simulated user's figure is the same weighted score and interval over the conversations it
played; the pooled row beside them is over the same conversations (the model's headline score covers
every case, single answers included). The interval method is unchanged: `inference.score_interval`,
over cases.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from .inference import score_interval
from .model import ScoredResult
from .weighted import behaviour_costs, combine


@dataclass(frozen=True, slots=True)
class UserFigure:
    """One simulated user's figure (or the pooled one) over the simulated conversations it played."""

    user: str  # the simulated user's model id ("pooled": every one of them, pooled per case)
    n_cases: int  # conversation cases with a verdict: what the interval rests on
    n_results: int  # results with a verdict (cases × samples, × simulated users when pooled)
    score: float | None  # weighted score of those conversations
    score_ci: tuple[float, float] | None  # 95 %, over cases (None below the interval's minimum of cases)
    n_abstained: int = 0  # results whose every criterion abstained or was gated off: no verdict, counted nowhere


@dataclass(frozen=True, slots=True)
class SimulatedUsers:
    pooled: UserFigure
    users: tuple[UserFigure, ...]  # models.yml's order: the user at position p plays result samples p, p + U, …


def _figure(user: str, rows: list[ScoredResult], intervals: bool) -> UserFigure:
    judged = [r for r in rows if r.has_verdict]
    return UserFigure(user, len({r.case_id for r in judged}), len(judged), combine(behaviour_costs(rows)),
                      score_interval(rows) if intervals else None, sum(r.abstained for r in rows))


def simulated_users(results: Iterable[ScoredResult], *, intervals: bool = True) -> SimulatedUsers | None:
    """The pooled and per-user figures of a run's simulated conversations; None unless at least two
    simulated users played them (one simulated user's figure is the conversations' own)."""
    by: dict[str, list[ScoredResult]] = {}
    # by sample, not write order (a user added later, or whose conversations were asked while the others' were
    # stored, is written last): each user first appears at its own position in models.yml's list
    for r in sorted(results, key=lambda r: r.sample):
        if r.simulator is not None:
            by.setdefault(r.simulator, []).append(r)
    if len(by) < 2:
        return None
    pooled = [r for rows in by.values() for r in rows]
    return SimulatedUsers(_figure("pooled", pooled, intervals),
                          tuple(_figure(u, rows, intervals) for u, rows in by.items()))
