"""Result rows read from the store, as the `ScoredResult`s every score is computed from, and a stored criterion link as the judge step's verdict."""

from __future__ import annotations

from typing import TYPE_CHECKING

from helmbench.store import Connection, Row
from helmbench.store.queries import result_case_rows

from .model import ABSTAIN, ERROR, FAIL, PASS, ScoredResult

if TYPE_CHECKING:
    from helmbench.run.judge.judge import CriterionVerdict


def to_scored(row: Row) -> ScoredResult:
    """A result row with its case (store.queries.results) as a `ScoredResult` (a verdict stored
    without a score gets 1 or 0)."""
    verdict = row["verdict"]
    score = row["score"]
    if verdict in (ERROR, ABSTAIN):
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
        simulator=row["simulator"] if "simulator" in row.keys() else None,
    )


def scored_results(conn: Connection, run_id: int) -> list[ScoredResult]:
    """Every result row of a run (ERROR included), ready for `summarise`."""
    return [to_scored(r) for r in result_case_rows(conn, run_id)]


def criterion_verdict(row) -> CriterionVerdict:
    """A stored link (its verdict and score for the result) as the judge step's `CriterionVerdict`: an error,
    or a verdict other than PASS/FAIL/ABSTAIN, is an ERROR; a missing score is the verdict's 1 or 0."""
    # imported here: the site's cached data decodes dataclasses of the score stage, and must not load the judge
    from helmbench.run.judge.judge import CriterionVerdict

    if not row["error_kind"] and row["verdict"] == ABSTAIN:  # an abstain value: stored, no score (judge.LEFT_OUT)
        return CriterionVerdict(row["criterion"], ABSTAIN, None)
    if row["error_kind"] or row["verdict"] not in (PASS, FAIL):
        return CriterionVerdict(row["criterion"], ERROR, None, error_kind=row["error_kind"] or "no_verdict",
                                error_message=row["error_message"] or "")
    score = row["score"]
    return CriterionVerdict(row["criterion"], row["verdict"],
                            float(score) if score is not None else (1.0 if row["verdict"] == PASS else 0.0))
