"""Result rows read from the store, as the `ScoredResult`s every score is computed from."""

from __future__ import annotations

from helmbench.store import Connection, Row
from helmbench.store.queries import result_case_rows

from .model import ERROR, PASS, ScoredResult


def to_scored(row: Row) -> ScoredResult:
    """A result row with its case (store.queries.results) as a `ScoredResult` (a verdict stored
    without a score gets 1 or 0)."""
    verdict = row["verdict"]
    score = row["score"]
    if verdict == ERROR:
        score = None
    elif score is None:
        score = 1.0 if verdict == PASS else 0.0
    scenario = row["scenario"]
    parts = scenario.split("-")
    return ScoredResult(
        case_id=row["case_id"],
        pillar=row["pillar"] or parts[0],
        behaviour=row["behaviour"] or "-".join(parts[:2]),
        scenario=scenario,
        condition=row["condition"] or scenario,
        severity_user_context=int(row["severity_user_context"] or 0),
        severity_perturbation=int(row["severity_perturbation"] or 0),
        difficulty=int(row["difficulty"] or 0),
        weight=float(row["weight"]),
        verdict=verdict,
        score=score,
        sample=int(row["sample"] or 0),
    )


def scored_results(conn: Connection, run_id: int) -> list[ScoredResult]:
    """Every result row of a run (ERROR included), ready for `summarise`."""
    return [to_scored(r) for r in result_case_rows(conn, run_id)]
