"""The one input of the scoring stage: a judged result row, and the checks that keep it honest.

Scoring is pure arithmetic over these rows, so every invariant the arithmetic relies on
(scores in [0, 1], difficulty in 0..10, one weight per behaviour, ...) is checked here, once,
with a message that names the offending row. A wrong number on a public leaderboard is worse
than a crash.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass

PASS = "PASS"
FAIL = "FAIL"
ERROR = "ERROR"
#: A case whose every criterion abstained or was kept from being asked by its gate: no verdict, stored and shown,
#: counted apart from errors and outside every pass rate, weighted score and interval.
ABSTAIN = "ABSTAIN"
VERDICTS = frozenset({PASS, FAIL, ERROR, ABSTAIN})


def criterion_key(scenario: str | None, code: str | None) -> str:
    """A criterion's one printable key, `P1-B1-S1/CR1`: the scenario's full code and the criterion's code.
    Why: a code alone (`CR1`) names a criterion in every scenario that has one (the shipped benchmark has
    `CR1` in three), so every per-criterion number is grouped and shown by this full key."""
    return f"{scenario}/{code}"


def criterion_order(key: tuple[str | None, str | None]):
    """(scenario, criterion code) in natural order: P1-B1-S2 before P1-B1-S10, CR2 before CR10."""
    from helmbench.spec.naming import natural_key

    return natural_key(key[0] or ""), natural_key(key[1] or "")


def _is_int(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


@dataclass(frozen=True, slots=True)
class ScoredResult:
    """One result row (case × sample) for one run/model.

    `score` is 1.0 for a pass, 0.0 for a fail, partial credit in between, and None for an
    ERROR (an API or judge failure says nothing about the model, so it carries no score).
    """

    case_id: str  # "P1-B1-S1-C1-U2-PT3"
    pillar: str  # "P1"
    behaviour: str  # "P1-B1"
    scenario: str  # "P1-B1-S1"
    condition: str  # "P1-B1-S1-C1"
    severity_user_context: int  # 0 when the case has no user context
    severity_perturbation: int
    difficulty: int  # condition difficulty 0..10
    weight: float  # behaviour weight
    verdict: str  # PASS | FAIL | ERROR | ABSTAIN
    score: float | None
    sample: int = 0
    simulator: str | None = None  # the simulated user who played a conversation's result (score/simulated_users.py)

    def __post_init__(self) -> None:
        where = f"result {self.case_id!r} sample {self.sample!r}"
        for name in ("case_id", "pillar", "behaviour", "scenario", "condition"):
            if not isinstance(getattr(self, name), str) or not getattr(self, name):
                raise ValueError(f"{where}: {name} must be a non-empty string")
        for name in ("severity_user_context", "severity_perturbation", "difficulty", "sample"):
            if not _is_int(getattr(self, name)):
                raise ValueError(f"{where}: {name} must be an int, got {getattr(self, name)!r}")
        if not 0 <= self.difficulty <= 10:
            raise ValueError(f"{where}: difficulty must be in 0..10, got {self.difficulty}")
        if self.sample < 0:
            raise ValueError(f"{where}: sample must be >= 0, got {self.sample}")
        if (
            not isinstance(self.weight, (int, float))
            or isinstance(self.weight, bool)
            or not math.isfinite(self.weight)
            or self.weight < 0
        ):
            raise ValueError(f"{where}: weight must be a finite number >= 0, got {self.weight!r}")
        object.__setattr__(self, "weight", float(self.weight))
        if self.verdict not in VERDICTS:
            raise ValueError(f"{where}: verdict must be one of {sorted(VERDICTS)}, got {self.verdict!r}")
        if self.verdict in (ERROR, ABSTAIN):
            if self.score is not None:
                raise ValueError(f"{where}: an {self.verdict} carries no score, got {self.score!r}")
            return
        if (
            not isinstance(self.score, (int, float))
            or isinstance(self.score, bool)
            or not 0.0 <= self.score <= 1.0  # also rejects NaN
        ):
            raise ValueError(f"{where}: a {self.verdict} needs a score in [0, 1], got {self.score!r}")
        object.__setattr__(self, "score", float(self.score))

    @property
    def has_verdict(self) -> bool:
        """True for PASS and FAIL: the rows that count in pass rates and scores (not ERROR nor ABSTAIN)."""
        return self.verdict in (PASS, FAIL)

    @property
    def abstained(self) -> bool:
        """Every criterion of the case abstained or was gated off: no verdict, and not an error either."""
        return self.verdict == ABSTAIN

    @property
    def passed(self) -> bool:
        """Pass for the pass rate: the verdict PASS (partial credit under FAIL is not a pass)."""
        return self.verdict == PASS


def check_consistent(results: Iterable[ScoredResult]) -> list[ScoredResult]:
    """Return the rows as a list after checking what holds across rows.

    - each behaviour has one weight and belongs to one pillar (the weighted mean needs both);
    - every sample of a case describes the same case (a case's samples are one unit of the paired test and the interval);
    - no (case, sample) appears twice (a duplicate would silently count twice).
    """
    rows = list(results)
    behaviours: dict[str, tuple[str, float]] = {}
    cases: dict[str, tuple] = {}
    seen: set[tuple[str, int]] = set()
    for r in rows:
        if not isinstance(r, ScoredResult):
            raise TypeError(f"expected ScoredResult, got {type(r).__name__}")
        key = (r.pillar, r.weight)
        known = behaviours.setdefault(r.behaviour, key)
        if known != key:
            raise ValueError(
                f"behaviour {r.behaviour!r} has pillar/weight {known} and {key} (result {r.case_id!r})"
            )
        shape = (
            r.pillar, r.behaviour, r.scenario, r.condition,
            r.severity_user_context, r.severity_perturbation, r.difficulty,
        )
        if cases.setdefault(r.case_id, shape) != shape:
            raise ValueError(f"samples of case {r.case_id!r} disagree on what the case is")
        if (r.case_id, r.sample) in seen:
            raise ValueError(f"duplicate result for case {r.case_id!r} sample {r.sample}")
        seen.add((r.case_id, r.sample))
    return rows
