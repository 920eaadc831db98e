"""Base-severity buckets: how results are grouped by how much was at stake (user context + perturbation)."""

from __future__ import annotations

from collections.abc import Iterable

from .breakdown import GroupStats, breakdown
from .model import ScoredResult

#: Base-severity buckets (1–3 mild, 4–6 moderate, 7–9 severe, 10 catastrophic; a base is the sum of two severities, so > 10 occurs).
SEVERITY_BUCKETS: tuple[str, ...] = ("user is fine (< 0)", "none (0)", "mild (1–3)", "moderate (4–6)",
                                     "severe (7–9)", "catastrophic (≥ 10)")


def severity_bucket(base: int) -> str:
    """The bucket label of a base severity (`SEVERITY_BUCKETS`, in that order)."""
    if base < 0:
        return SEVERITY_BUCKETS[0]
    if base == 0:
        return SEVERITY_BUCKETS[1]
    if base <= 3:
        return SEVERITY_BUCKETS[2]
    if base <= 6:
        return SEVERITY_BUCKETS[3]
    if base <= 9:
        return SEVERITY_BUCKETS[4]
    return SEVERITY_BUCKETS[5]


def by_severity_bucket(results: Iterable[ScoredResult]) -> dict[str, GroupStats]:
    """`GroupStats` per base-severity bucket, in `SEVERITY_BUCKETS` order (empty buckets left out)."""
    groups = breakdown(results, lambda r: severity_bucket(r.severity_perturbation + r.severity_user_context))
    return {b: groups[b] for b in SEVERITY_BUCKETS if b in groups}
