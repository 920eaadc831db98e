"""Coverage and pass rate: how many rows had a verdict, and how many of those passed.

Kept apart from the weighted score because it answers a different question ("how often did
the model get it right?" and "how much of the benchmark did we actually measure?") and it
includes base-0 cases, which the weighted score ignores. An ERROR counts in `n_results` and
`n_errors` only: an API or judge failure is neither a pass nor a fail. An ABSTAIN (every criterion of the
case abstained or was gated off) counts in `n_results` and `n_abstained` only: it left the denominators.

Pass rate: a PASS verdict is a pass; anything under FAIL, partial credit included, is not.
With several samples per case each sample row counts; the Wilson interval then treats the
samples as independent, which understates the uncertainty when samples of a case agree.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from .model import ScoredResult
from .wilson import Z95, wilson_interval


@dataclass(frozen=True, slots=True)
class Coverage:
    n_results: int  # every row, ERROR included
    n_verdicts: int  # PASS + FAIL
    n_errors: int
    n_pass: int
    n_abstained: int = 0  # ABSTAIN: no verdict, not an error

    @property
    def share(self) -> float | None:
        """Share of rows settled: a verdict, or an abstention (nothing is left to measure in it); None when there
        are no rows. The leaderboard row's coverage (`LeaderboardRow.coverage`) counts the same rows over the
        rows expected: a summary and its row never disagree about a run whose cases all abstained."""
        return (self.n_verdicts + self.n_abstained) / self.n_results if self.n_results else None

    @property
    def pass_rate(self) -> float | None:
        return self.n_pass / self.n_verdicts if self.n_verdicts else None

    def pass_rate_ci(self, z: float = Z95) -> tuple[float, float] | None:
        return wilson_interval(self.n_pass, self.n_verdicts, z)


def coverage(results: Iterable[ScoredResult]) -> Coverage:
    n_results = n_errors = n_pass = n_abstained = 0
    for r in results:
        n_results += 1
        if r.abstained:
            n_abstained += 1
        elif not r.has_verdict:
            n_errors += 1
        elif r.passed:
            n_pass += 1
    return Coverage(n_results=n_results, n_verdicts=n_results - n_errors - n_abstained, n_errors=n_errors,
                    n_pass=n_pass, n_abstained=n_abstained)


def pass_rate(results: Iterable[ScoredResult], z: float = Z95) -> tuple[float | None, tuple[float, float] | None]:
    """(pass rate, Wilson interval) over the rows with a verdict; (None, None) when there are none."""
    c = coverage(results)
    return c.pass_rate, c.pass_rate_ci(z)
