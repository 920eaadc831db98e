"""Repeated samples: per-case means and how consistent a model's samples are (Fleiss' κ between them).

Named consistency, not agreement: in HELMBench "agreement" is the judge's with clinicians
(`helmbench agreement`, score/calibration.py).

Why: with temperature > 0 the same prompt can pass once and fail the next time. A mean per
case shows *how often* a case passes; agreement shows whether a model is consistent at all.
Two measures, over the verdict categories PASS/FAIL (partial credit is a FAIL here):

- the share of unanimous cases (every valid sample gave the same verdict): easy to read;
- Fleiss' kappa (Fleiss 1971), treating samples as raters and cases as subjects: agreement
  beyond what the overall pass rate alone would produce (0 = chance, 1 = perfect).

ERROR samples are dropped; cases left with fewer than 2 samples are skipped (one sample
cannot disagree). When ERRORs leave cases with different numbers of samples, each case's
agreement P_i uses its own count (the usual generalisation; identical to Fleiss when equal).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from helmbench.spec.naming import natural_key
from .model import ScoredResult


@dataclass(frozen=True, slots=True)
class CaseMean:
    case_id: str
    n_samples: int  # samples with a verdict
    n_errors: int
    n_pass: int
    mean_score: float | None  # mean score over samples with a verdict


def case_means(results: Iterable[ScoredResult]) -> dict[str, CaseMean]:
    """Per-case mean score over its samples (ERRORs excluded), in natural case order."""
    scores: dict[str, list[float]] = {}
    errors: dict[str, int] = {}
    passes: dict[str, int] = {}
    for r in results:
        scores.setdefault(r.case_id, [])
        errors.setdefault(r.case_id, 0)
        passes.setdefault(r.case_id, 0)
        if not r.has_verdict:
            errors[r.case_id] += 1
            continue
        scores[r.case_id].append(r.score)
        passes[r.case_id] += r.passed
    return {
        c: CaseMean(
            case_id=c,
            n_samples=len(scores[c]),
            n_errors=errors[c],
            n_pass=passes[c],
            mean_score=math.fsum(scores[c]) / len(scores[c]) if scores[c] else None,
        )
        for c in sorted(scores, key=natural_key)
    }


def fleiss_kappa(table: Iterable[Sequence[int]]) -> float | None:
    """Fleiss' kappa of a subjects × categories table of rating counts.

    Rows with fewer than 2 ratings are skipped. None when undefined: no row left, or all
    ratings in one category (expected agreement is 1, so kappa is 0/0).
    """
    rows = [list(row) for row in table]
    if any(v < 0 for row in rows for v in row):
        raise ValueError("counts must be >= 0")
    rows = [row for row in rows if sum(row) >= 2]
    if not rows:
        return None
    total = sum(sum(row) for row in rows)
    n_categories = max(len(row) for row in rows)
    shares = [sum(row[j] for row in rows if j < len(row)) / total for j in range(n_categories)]
    if sum(1 for s in shares if s > 0) < 2:
        return None
    observed = math.fsum(
        (sum(v * v for v in row) - sum(row)) / (sum(row) * (sum(row) - 1)) for row in rows
    ) / len(rows)
    expected = math.fsum(s * s for s in shares)
    return (observed - expected) / (1.0 - expected)


@dataclass(frozen=True, slots=True)
class Consistency:
    n_cases: int  # cases with ≥ 2 samples with a verdict
    n_unanimous: int
    unanimous_share: float
    fleiss_kappa: float | None
    min_samples: int  # valid samples per case, over the cases counted
    max_samples: int


def consistency(results: Iterable[ScoredResult]) -> Consistency | None:
    """Inter-sample agreement, or None when no case has 2 samples with a verdict."""
    counts: dict[str, list[int]] = {}  # case -> [passes, fails]
    for r in results:
        if r.has_verdict:
            counts.setdefault(r.case_id, [0, 0])[0 if r.passed else 1] += 1
    table = [pf for pf in counts.values() if sum(pf) >= 2]
    if not table:
        return None
    unanimous = sum(1 for p, f in table if p == 0 or f == 0)
    sizes = [p + f for p, f in table]
    return Consistency(
        n_cases=len(table),
        n_unanimous=unanimous,
        unanimous_share=unanimous / len(table),
        fleiss_kappa=fleiss_kappa(table),
        min_samples=min(sizes),
        max_samples=max(sizes),
    )
