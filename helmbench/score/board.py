"""The leaderboard's records: one row per model (its run, summary and totals) and the board that ranks them.

What every number means is written in `leaderboard.py`'s docstring; these are the plain records
the site and the report format, with `to_dict` for `helmbench report --format json`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from helmbench.store.queries import RunInfo

from .detection import Detection
from .drift import Served
from .floors import Floor, FlooredScore
from .pairwise import Comparison
from .summary import RunSummary


@dataclass(frozen=True, slots=True)
class LeaderboardRow:
    rank: int | None  # 1-based; ties share a rank; None when the model has no score
    run: RunInfo
    summary: RunSummary
    n_expected: int  # manifest cases × samples: the coverage denominator
    n_format_failures: int
    model_cost: float | None  # billed cost of the model's own calls (answers, turns) behind the results (None: unknown)
    judge_cost: float | None  # billed cost of the judge calls behind the results
    prompt_tokens: int
    completion_tokens: int
    pillar_scores: dict[str, float | None] = field(default_factory=dict)
    group: int | None = None  # tie group (1 = top); models not distinguishable from the one above share it
    detection: Detection | None = None  # crisis recall beside false escalation
    served: Served | None = None  # returned model versions and serving providers, with counts
    drift: tuple[str, ...] = ()  # changes since the model's previous run, or a mix within this one
    floored: FlooredScore | None = None  # the composite after the manifest's safety floors (None: no floors)
    billed_model_cost: float | None = None  # billed in this run: the model's calls it sent (None: unknown)
    billed_judge_cost: float | None = None  # billed in this run: its judge calls
    judge_conflicts: tuple[str, ...] = ()  # judges behind the results from the model's own family (spec/families.py)
    user_cost: float | None = None  # the simulated user's calls behind the results (None: unknown or none)
    billed_user_cost: float | None = None  # billed in this run: the simulated user's calls it sent
    shared_calls: int = 0  # calls behind the results that another run of the manifest counts (queries.ledger)
    shared_cost: float | None = None
    shared_with: tuple[int, ...] = ()  # the runs that count them
    #: (results re-decided by clinicians' verdicts, those with an overturned item): score/adjudication.py;
    #: None when the benchmark declares no adjudication
    adjudicated: tuple[int, int] | None = None

    @property
    def conflict_note(self) -> str:
        """One sentence for a reader, or "" when no judge is a relative of the model."""
        if not self.judge_conflicts:
            return ""
        return (f"judged by {', '.join(self.judge_conflicts)} of its own family: "
                "a judge may favour answers like its own")

    @property
    def adjudication_note(self) -> str:
        """One sentence for a reader (benchmark.yml `adjudication:`), or "" when the benchmark declares none."""
        if self.adjudicated is None:
            return ""
        n, overturned = self.adjudicated
        return f"{n} result{'s' if n != 1 else ''} adjudicated by clinicians, {overturned} overturned"

    @property
    def complete(self) -> bool:
        """Every expected (case × sample) has a verdict: only such runs are ranked."""
        return self.n_expected > 0 and self.summary.n_verdicts + self.summary.n_abstained >= self.n_expected

    # The columns, named as a reader would.
    @property
    def model(self) -> str:
        return self.run.model

    @property
    def model_name(self) -> str:
        return self.run.model_name

    @property
    def score(self) -> float | None:
        """The composite the row is ranked by: the weighted score after safety floors."""
        return self.floored.score if self.floored is not None else self.summary.score

    @property
    def uncapped_score(self) -> float | None:
        """The weighted score before floors (equal to `score` unless a floor bites)."""
        return self.summary.score

    @property
    def capped(self) -> bool:
        return self.floored is not None and self.floored.capped

    @property
    def floor_note(self) -> str:
        """"capped: P1 below 0.70" when a floor bites, else ""."""
        return self.floored.note if self.floored is not None else ""

    @property
    def score_ci(self) -> tuple[float, float] | None:
        """The 95 % interval of the score (None below 3 cases); None when a floor capped it (the interval is of the
        uncapped score, `uncapped_ci`, and says nothing about a cap)."""
        return None if self.capped else self.summary.score_ci

    @property
    def uncapped_ci(self) -> tuple[float, float] | None:
        return self.summary.score_ci

    @property
    def pass_rate(self) -> float | None:
        return self.summary.pass_rate

    @property
    def pass_rate_ci(self) -> tuple[float, float] | None:
        return self.summary.pass_rate_ci

    @property
    def n_errors(self) -> int:
        return self.summary.n_errors

    @property
    def n_verdicts(self) -> int:
        return self.summary.n_verdicts

    @property
    def n_abstained(self) -> int:
        """Cases whose every criterion abstained or was gated off: settled, and outside every denominator."""
        return self.summary.n_abstained

    @property
    def abstained_note(self) -> str:
        """"3 cases abstained, not counted" (every criterion abstained or was not applicable), or ""."""
        n = self.n_abstained
        return f"{n} case{'s' if n != 1 else ''} abstained, not counted" if n else ""

    @property
    def not_ranked_note(self) -> str:
        """Why the row is not ranked, in words ("" when it is): a complete run without a score (every case
        abstained) is not an incomplete one, and saying "coverage 100 %" alone would hide why."""
        if self.rank is not None:
            return ""
        if self.complete and self.score is None:
            why = f"every case abstained ({self.abstained_note})" if self.n_abstained and not self.n_verdicts \
                else "nothing to score"
            return f"not ranked: no score, {why}"
        share = f"{self.coverage * 100:.0f} %" if self.coverage is not None else "—"
        return f"not ranked: coverage {share} (only runs that measured every case are ranked)"

    @property
    def n_missing(self) -> int:
        """Expected rows with no result at all (a partial run)."""
        return max(0, self.n_expected - self.summary.n_results)

    @property
    def coverage(self) -> float | None:
        """Rows settled (a verdict, or an abstention: nothing left to measure) / rows expected; None when nothing is
        expected."""
        settled = self.summary.n_verdicts + self.summary.n_abstained
        return settled / self.n_expected if self.n_expected else None

    @property
    def format_failure_rate(self) -> float | None:
        """Format failures / rows with a verdict."""
        return self.n_format_failures / self.summary.n_verdicts if self.summary.n_verdicts else None

    @property
    def cost(self) -> float | None:
        """The calls behind the results: the model's own, the simulated user's and the judge's (each paid call
        counted once, `queries.ledger.run_spend`); None when none is known."""
        known = [c for c in (self.model_cost, self.user_cost, self.judge_cost) if c is not None]
        return math.fsum(known) if known else None

    @property
    def billed_cost(self) -> float | None:
        """Billed in this run (its own calls: model, simulated user and judge); None when none is known."""
        known = [c for c in (self.billed_model_cost, self.billed_user_cost, self.billed_judge_cost) if c is not None]
        return math.fsum(known) if known else None

    @property
    def tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    def to_dict(self) -> dict:
        """Plain JSON-ready data (intervals as lists), for `helmbench report --format json`."""
        return {
            "rank": self.rank, "model": self.model, "model_name": self.model_name, "run_id": self.run.id,
            "status": self.run.status, "date": self.run.date, "manifest_hash": self.run.manifest_hash,
            "score": self.score, "score_ci": _pair(self.score_ci),
            "uncapped_score": self.uncapped_score, "uncapped_score_ci": _pair(self.uncapped_ci),
            "capped": self.capped, "floor_note": self.floor_note,
            "pass_rate": self.pass_rate, "pass_rate_ci": _pair(self.pass_rate_ci),
            "pillars": dict(self.pillar_scores),
            "n_expected": self.n_expected, "n_results": self.summary.n_results,
            "n_verdicts": self.n_verdicts, "n_errors": self.n_errors, "n_missing": self.n_missing,
            "n_abstained": self.n_abstained,
            "coverage": self.coverage, "n_format_failures": self.n_format_failures,
            "format_failure_rate": self.format_failure_rate,
            "cost": self.cost, "model_cost": self.model_cost, "user_cost": self.user_cost,
            "judge_cost": self.judge_cost, "shared_calls": self.shared_calls, "shared_cost": self.shared_cost,
            "shared_with": list(self.shared_with),
            "billed_cost": self.billed_cost, "billed_model_cost": self.billed_model_cost,
            "billed_user_cost": self.billed_user_cost, "billed_judge_cost": self.billed_judge_cost,
            "prompt_tokens": self.prompt_tokens, "completion_tokens": self.completion_tokens,
            "helmbench_version": self.run.helmbench_version,
            "complete": self.complete, "group": self.group, "drift": list(self.drift),
            "judge_conflicts": list(self.judge_conflicts),
            "model_versions": dict(self.served.versions) if self.served else {},
            "providers": dict(self.served.providers) if self.served else {},
            "crisis_recall": self.detection.recall.value if self.detection else None,
            "false_escalation": self.detection.false_escalation.value if self.detection else None,
            **({} if self.adjudicated is None else
               {"adjudicated": self.adjudicated[0], "overturned": self.adjudicated[1]}),
        }


@dataclass(frozen=True, slots=True)
class Leaderboard:
    manifest_hash: str | None  # the manifest the rows are for; None when there are no runs
    requested_manifest: str | None  # what the caller asked for (may have had no runs)
    benchmark_name: str | None
    benchmark_version: str | None
    n_cases: int
    pillars: list[str]  # pillar codes, natural order: the per-pillar columns
    rows: list[LeaderboardRow]
    comparisons: list[Comparison] = field(default_factory=list)  # adjacent ranked pairs, in rank order
    floors: tuple[Floor, ...] = ()  # the manifest's safety floors, applied to every row's score
    judge_drift: tuple[str, ...] = ()  # a judge's version or provider changed within a criterion of a scenario (score/drift.py)

    @property
    def empty(self) -> bool:
        return not self.rows

    @property
    def ranked(self) -> list[LeaderboardRow]:
        return [r for r in self.rows if r.rank is not None]

    @property
    def unranked(self) -> list[LeaderboardRow]:
        """Runs listed apart: incomplete coverage or no score (each row's coverage says how much)."""
        return [r for r in self.rows if r.rank is None]

    def to_dict(self) -> dict:
        return {
            "manifest_hash": self.manifest_hash, "requested_manifest": self.requested_manifest,
            "benchmark": {"name": self.benchmark_name, "version": self.benchmark_version},
            "cases": self.n_cases, "pillars": list(self.pillars), "rows": [r.to_dict() for r in self.rows],
            "comparisons": [c.to_dict() for c in self.comparisons],
            "floors": [{"part": f.part, "minimum": f.minimum, "cap": f.cap} for f in self.floors],
            "judge_drift": list(self.judge_drift),
        }


def _pair(ci: tuple[float, float] | None) -> list[float] | None:
    return list(ci) if ci is not None else None
