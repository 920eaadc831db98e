"""Rank sensitivity to the judge: would the leaderboard change with another judge of the ensemble?

Why: every judged number rests on the marking model. With an ensemble (models.yml `marking_model`
as a list) the store already holds what each judge said of each result (`result_judgements`), so
the leaderboard each judge alone would have given can be recomputed without a single call:

- a judge's own leaderboard: every judged result re-decided from that judge's verdicts only, by the
  judge step's own functions (`run/judge/judge.py`: `combine` per criterion, `aggregate` per case:
  all criteria PASS → PASS, score = the criteria's mean score, an error on any criterion → ERROR);
  results no judge looked at keep their verdict. Deterministic
  checks beside judged criteria (`criteria:` results) are not re-applied: their verdicts are not
  stored per criterion, so such a result counts the judge's criteria only;
- Kendall's τ-b between that board's scores and the ensemble's, over the models ranked on both
  (τ-b because tied scores are common with few cases);
- the models whose tie group (score.pairwise, the same test) differs between the two boards;
- per criterion, Fleiss' κ between the judges over the items every judge gave a verdict on
  (score.consistency's κ; PASS/FAIL categories, partial credit counts as its link verdict).

`top_depends` says whether the top tie group (its members) would differ under some judge.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

from helmbench.run.judge.judge import CriterionVerdict, aggregate, combine
from helmbench.store import Connection
from helmbench.store import queries

from .board import Leaderboard
from .consistency import fleiss_kappa
from .leaderboard import FINISHED_STATUSES, build_leaderboard
from .model import ERROR, FAIL, PASS, ScoredResult
from .scored import to_scored


@dataclass(frozen=True, slots=True)
class JudgeView:
    """The leaderboard as one judge alone would have scored it, against the ensemble's."""

    judge: str
    board: Leaderboard
    tau_b: float | None  # Kendall's τ-b with the ensemble's scores (None: fewer than 2 models, or constant)
    changed: tuple[str, ...]  # models whose tie group differs from the ensemble's

    def to_dict(self) -> dict:
        return {"judge": self.judge, "tau_b": self.tau_b, "changed_groups": list(self.changed),
                "rows": [{"model": r.model, "rank": r.rank, "group": r.group, "score": r.score}
                         for r in self.board.rows]}


@dataclass(frozen=True, slots=True)
class JudgeSensitivity:
    judges: tuple[str, ...]
    views: tuple[JudgeView, ...]
    kappa: dict[str, float | None]  # criterion → Fleiss' κ between the judges
    n_items: dict[str, int]  # criterion → items every judge gave a verdict on
    top_depends: bool  # the top tie group's members differ under some judge

    def to_dict(self) -> dict:
        return {"judges": list(self.judges), "views": [v.to_dict() for v in self.views],
                "kappa": {c: {"kappa": k, "n_items": self.n_items[c]} for c, k in self.kappa.items()},
                "top_depends_on_judge": self.top_depends}


def kendall_tau_b(x: list[float], y: list[float]) -> float | None:
    """Kendall's τ-b of two paired score lists (scipy's), None when undefined."""
    if len(x) < 2:
        return None
    from scipy.stats import kendalltau

    tau = kendalltau(x, y, variant="b").statistic
    return None if tau is None or math.isnan(tau) else float(tau)


def criterion_verdict(row) -> CriterionVerdict:
    """A stored link (its verdict and score for the result) as the judge step's `CriterionVerdict`: an error,
    or a verdict other than PASS/FAIL, is an ERROR; a missing score is the verdict's 1 or 0."""
    if row["error_kind"] or row["verdict"] not in (PASS, FAIL):
        return CriterionVerdict(row["criterion"], ERROR, None, error_kind=row["error_kind"] or "no_verdict",
                                error_message=row["error_message"] or "")
    score = row["score"]
    return CriterionVerdict(row["criterion"], row["verdict"],
                            float(score) if score is not None else (1.0 if row["verdict"] == PASS else 0.0))


def redecide(per: dict[str, list], judges: Sequence[str]) -> tuple[str, float | None]:
    """A result's (verdict, score) from the verdicts of `judges` only (`per`: judge → its link rows), decided
    by the judge step's own rules: per criterion the judges' `combine` (one judge: its verdict), then the
    case's `aggregate` (no criterion → ERROR)."""
    by_criterion: dict[str, list[CriterionVerdict]] = defaultdict(list)
    for judge in judges:
        for row in per.get(judge, []):
            by_criterion[row["criterion"]].append(criterion_verdict(row))
    outcome = aggregate([combine({"code": c}, verdicts) for c, verdicts in by_criterion.items()])
    return outcome.verdict, outcome.score


def judge_sensitivity(conn: Connection, board: Leaderboard, *, bootstrap: int = 1000, seed: int = 0,
                      statuses: Sequence[str] = FINISHED_STATUSES) -> JudgeSensitivity | None:
    """Each judge's own leaderboard beside `board` (the ensemble's, built with the same `statuses`),
    or None with fewer than 2 judges."""

    run_ids = [r.run.id for r in board.rows]
    by_result: dict[int, dict[str, list]] = defaultdict(lambda: defaultdict(list))
    for row in queries.judgement_rows(conn, run_ids):
        by_result[row["result_id"]][row["judge_model"]].append(row)
    judges = tuple(sorted({j for per in by_result.values() for j in per}))
    if len(judges) < 2 or board.manifest_hash is None:
        return None

    def loader(judge: str):
        def load(c: Connection, run) -> list[ScoredResult]:
            out = []
            for row in queries.result_case_rows(c, run.id):
                per = by_result.get(row["result_id"])
                if per is None:
                    out.append(to_scored(row))
                    continue
                verdict, score = redecide(per, [judge])
                out.append(to_scored({**dict(row), "verdict": verdict, "score": score}))
            return out
        return load

    ensemble = {r.model: r for r in board.ranked}
    top = {m for m, r in ensemble.items() if r.group == 1}
    views = []
    for judge in judges:
        alone = build_leaderboard(conn, board.manifest_hash, bootstrap=bootstrap, seed=seed,
                                  statuses=statuses, load_results=loader(judge))
        mine = {r.model: r for r in alone.ranked}
        both = [m for m in ensemble if m in mine]
        tau = kendall_tau_b([ensemble[m].score for m in both], [mine[m].score for m in both])
        changed = tuple(m for m in both if ensemble[m].group != mine[m].group)
        views.append(JudgeView(judge, alone, tau, changed))
    top_depends = any({r.model for r in v.board.ranked if r.group == 1} != top for v in views)

    tables: dict[str, list[list[int]]] = defaultdict(list)
    for per in by_result.values():
        items: dict[str, list[str]] = defaultdict(list)
        for judge in judges:
            for j in per.get(judge, []):
                items[j["criterion"]].append(criterion_verdict(j).verdict)
        for criterion, verdicts in items.items():
            if len(verdicts) == len(judges) and ERROR not in verdicts:
                tables[criterion].append([verdicts.count(PASS), verdicts.count(FAIL)])
    kappa = {c: fleiss_kappa(t) for c, t in sorted(tables.items())}
    return JudgeSensitivity(judges, tuple(views), kappa, {c: len(t) for c, t in sorted(tables.items())}, top_depends)


def judge_drift(conn: Connection, run_ids: Sequence[int]) -> tuple[str, ...]:
    """One note per (judge, criterion) whose judgements behind the runs came from more than one returned
    model version or serving provider (the ledger's per-call record): the judge changed under one
    criterion, as drift.py says of models under test. Empty when every judge stayed one."""
    seen: dict[tuple[str, str], tuple[dict[str, int], dict[str, int]]] = {}
    for judge, criterion, version, provider, n in queries.judge_served(conn, run_ids):
        versions, providers = seen.setdefault((judge, criterion), ({}, {}))
        if version:
            versions[version] = versions.get(version, 0) + n
        if provider:
            providers[provider] = providers.get(provider, 0) + n
    notes = []
    for (judge, criterion), (versions, providers) in seen.items():
        for what, counts in (("model versions", versions), ("providers", providers)):
            if len(counts) > 1:
                shown = ", ".join(f"{k} ×{v}" for k, v in sorted(counts.items()))
                notes.append(f"judge {judge} on {criterion}: {what} changed ({shown})")
    return tuple(notes)
