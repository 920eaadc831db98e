"""Judge stability: does the judge give the same verdict when it is asked the same thing again?

Why: a judge at temperature 0 is still not deterministic (batching, serving changes), and every judged
number rests on it. `helmbench run --rejudge-sample N` asks the judge again, in a cache lane of its own
(store.judgements' `lane_settings_hash`), on a seeded sample of N judged outputs; this module compares,
per criterion (scenario and code: every scenario's `CR1` apart), the first verdict (the one the results
use) with the re-judged one:

- n: (first, re-judge) pairs, one per judgement asked again (with an ensemble each judge is compared
  with itself, and the pairs of every judge are pooled); a pair with an ERROR on either side is left out;
- the share of pairs that agree;
- Cohen's κ between the two (score.calibration's `cohen_kappa`: statsmodels, its asymptotic 95 %
  interval, None where that variance is not positive, e.g. perfect agreement). Below `MIN_PAIRS`
  pairs no κ is claimed: the criterion says "not enough items" with its n.

The re-judged verdicts never decide a result: the scores are the first lane's.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

from helmbench.store import Connection, queries

from .calibration import Kappa, cohen_kappa
from .model import FAIL, PASS, criterion_key, criterion_order

#: Fewer (first, re-judge) pairs than this for a criterion: κ is not shown ("not enough items"). With 20
#: pairs the asymptotic interval of a κ near 0.6 is already about ±0.35 wide.
MIN_PAIRS = 20


@dataclass(frozen=True, slots=True)
class Stability:
    """The judge's run-to-run agreement on one criterion (of one scenario)."""

    scenario: str
    criterion: str
    n: int  # (first, re-judge) pairs with a PASS or FAIL on both sides
    agree: int  # pairs whose two verdicts are the same
    kappa: Kappa | None  # None: fewer than MIN_PAIRS pairs, or undefined (every verdict in one class)

    @property
    def key(self) -> str:
        return criterion_key(self.scenario, self.criterion)

    @property
    def enough(self) -> bool:
        return self.n >= MIN_PAIRS

    def to_dict(self) -> dict:
        k = self.kappa
        return {"key": self.key, "scenario": self.scenario, "criterion": self.criterion, "n_pairs": self.n, "agree": self.agree,
                "kappa": k.value if k else None, "kappa_ci": list(k.ci) if k and k.ci else None,
                "enough_items": self.enough, "min_pairs": MIN_PAIRS}

    def describe(self) -> str:
        """One line for the report: n, agreement, κ with its interval, or why there is none."""
        head = f"{self.key}: {self.agree}/{self.n} re-judged verdicts the same"
        if not self.enough:
            return f"{head}; not enough items for a κ (n = {self.n}, at least {MIN_PAIRS} pairs)"
        if self.kappa is None:
            return f"{head}; κ undefined (every verdict in one class)"
        ci = (f" [{self.kappa.ci[0]:.2f}, {self.kappa.ci[1]:.2f}] (asymptotic 95 %)" if self.kappa.ci
              else " (no asymptotic interval: its variance is zero)")
        return f"{head}; Cohen's κ {self.kappa.value:.2f}{ci}, n = {self.n}"


def judge_stability(conn: Connection, run_ids: Sequence[int]) -> tuple[Stability, ...]:
    """Per criterion (scenario, code; natural order), the first and re-judged verdicts of the runs' results
    compared; () when nothing behind them was re-judged."""
    pairs: dict[tuple[str, str], list[tuple[str, str]]] = defaultdict(list)
    for _judge, scenario, criterion, first, again in queries.rejudge_pairs(conn, list(run_ids)):
        if first in (PASS, FAIL) and again in (PASS, FAIL):
            pairs[(scenario, criterion)].append((first, again))
    out = []
    for key in sorted(pairs, key=criterion_order):
        ps = pairs[key]
        kappa = cohen_kappa(ps) if len(ps) >= MIN_PAIRS else None
        out.append(Stability(*key, len(ps), sum(a == b for a, b in ps), kappa))
    return tuple(out)
