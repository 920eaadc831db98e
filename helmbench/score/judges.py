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
  (score.consistency's κ; two categories, PASS and FAIL: a judge's PARTIAL, or any option outside the
  criterion's `pass_values`, is a FAIL, as it is for the result). A criterion is (scenario, code): every
  scenario's `CR1` is its own row, keyed `criterion_key` ("P1-B1-S1/CR1"), never pooled.

- each model judged by its own family (a conflict of interest, `spec.families` with the run's
  `families:`) scored from the other judges of the ensemble only (`without_kin`), re-decided the same way.

`top_depends` says whether the top tie group (its members) would differ under some judge.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from helmbench.store import Connection
from helmbench.store import queries

from .board import Leaderboard
from .consistency import fleiss_kappa
from .leaderboard import FINISHED_STATUSES, build_leaderboard
from .model import ERROR, FAIL, PASS, ScoredResult, criterion_key, criterion_order
from .scored import criterion_verdict, to_scored

if TYPE_CHECKING:
    from helmbench.run.judge.judge import CriterionVerdict


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
class WithoutKin:
    """A model judged by its own family (a conflict of interest), scored by the ensemble's other judges only."""

    model: str
    kin: tuple[str, ...]  # the judges of its family, left out
    others: tuple[str, ...]  # the judges its results are re-decided from
    ensemble_score: float | None
    row: object  # board.LeaderboardRow on the board where every conflicted model lost its kin (None: not ranked)

    def to_dict(self) -> dict:
        r = self.row
        return {"model": self.model, "left_out": list(self.kin), "judges": list(self.others),
                "ensemble_score": self.ensemble_score, "score": getattr(r, "score", None),
                "score_ci": list(r.score_ci) if getattr(r, "score_ci", None) else None,
                "rank": getattr(r, "rank", None), "group": getattr(r, "group", None)}


@dataclass(frozen=True, slots=True)
class JudgeSensitivity:
    judges: tuple[str, ...]
    views: tuple[JudgeView, ...]
    kappa: dict[tuple[str, str], float | None]  # (scenario, criterion code) → Fleiss' κ between the judges
    n_items: dict[tuple[str, str], int]  # (scenario, criterion code) → items every judge gave a verdict on
    top_depends: bool  # the top tie group's members differ under some judge
    without_kin: tuple[WithoutKin, ...] = ()  # each conflicted model without its family's judges

    def to_dict(self) -> dict:
        return {"judges": list(self.judges), "views": [v.to_dict() for v in self.views],
                "kappa": {criterion_key(*c): {"scenario": c[0], "criterion": c[1], "kappa": k,
                                              "n_items": self.n_items[c]} for c, k in self.kappa.items()},
                "top_depends_on_judge": self.top_depends,
                "without_own_family": [w.to_dict() for w in self.without_kin]}


def kendall_tau_b(x: list[float], y: list[float]) -> float | None:
    """Kendall's τ-b of two paired score lists (scipy's), None when undefined."""
    if len(x) < 2:
        return None
    from scipy.stats import kendalltau

    tau = kendalltau(x, y, variant="b").statistic
    return None if tau is None or math.isnan(tau) else float(tau)


def redecide(per: dict[str, list], judges: Sequence[str]) -> tuple[str, float | None]:
    """A result's (verdict, score) from the verdicts of `judges` only (`per`: judge → its link rows), decided
    by the judge step's own rules: per criterion the judges' `combine` (one judge: its verdict), then the
    case's `aggregate` (no criterion → ERROR)."""
    from helmbench.run.judge.judge import aggregate, combine

    by_criterion: dict[str, list[CriterionVerdict]] = defaultdict(list)
    for judge in judges:
        for row in per.get(judge, []):
            by_criterion[row["criterion"]].append(criterion_verdict(row))
    outcome = aggregate([combine({"code": c}, verdicts) for c, verdicts in by_criterion.items()])
    return outcome.verdict, outcome.score


def judge_sensitivity(conn: Connection, board: Leaderboard, *, bootstrap: int = 1000, seed: int = 0,
                      statuses: Sequence[str] = FINISHED_STATUSES,
                      keep: Callable[[int], bool] | None = None) -> JudgeSensitivity | None:
    """Each judge's own leaderboard beside `board` (the ensemble's, built with the same `statuses` and
    `keep`: the result ids it shows, None: every one), or None with fewer than 2 judges."""

    run_ids = [r.run.id for r in board.rows]
    by_result: dict[int, dict[str, list]] = defaultdict(lambda: defaultdict(list))
    for row in queries.judgement_rows(conn, run_ids):
        if keep is None or keep(row["result_id"]):
            by_result[row["result_id"]][row["judge_model"]].append(row)
    judges = tuple(sorted({j for per in by_result.values() for j in per}))
    if len(judges) < 2 or board.manifest_hash is None:
        return None

    def loader(pick):
        """Results re-decided from the judges `pick(run)` names (None: the run keeps its stored verdicts)."""
        def load(c: Connection, run) -> list[ScoredResult]:
            chosen = pick(run)
            out = []
            for row in queries.result_case_rows(c, run.id):
                if keep is not None and not keep(row["result_id"]):
                    continue
                per = by_result.get(row["result_id"])
                if per is None or chosen is None:
                    out.append(to_scored(row))
                    continue
                verdict, score = redecide(per, chosen)
                out.append(to_scored({**dict(row), "verdict": verdict, "score": score}))
            return out
        return load

    ensemble = {r.model: r for r in board.ranked}
    top = {m for m, r in ensemble.items() if r.group == 1}
    views = []
    for judge in judges:
        alone = build_leaderboard(conn, board.manifest_hash, bootstrap=bootstrap, seed=seed,
                                  statuses=statuses, load_results=loader(lambda run, judge=judge: [judge]))
        mine = {r.model: r for r in alone.ranked}
        both = [m for m in ensemble if m in mine]
        tau = kendall_tau_b([ensemble[m].score for m in both], [mine[m].score for m in both])
        changed = tuple(m for m in both if ensemble[m].group != mine[m].group)
        views.append(JudgeView(judge, alone, tau, changed))
    top_depends = any({r.model for r in v.board.ranked if r.group == 1} != top for v in views)

    tables: dict[tuple[str, str], list[list[int]]] = defaultdict(list)
    for per in by_result.values():
        items: dict[tuple[str, str], list[str]] = defaultdict(list)
        for judge in judges:
            for j in per.get(judge, []):
                items[(j["scenario"], j["criterion"])].append(criterion_verdict(j).verdict)
        for criterion, verdicts in items.items():
            if len(verdicts) == len(judges) and ERROR not in verdicts:
                tables[criterion].append([verdicts.count(PASS), verdicts.count(FAIL)])
    order = sorted(tables, key=criterion_order)
    kappa = {c: fleiss_kappa(tables[c]) for c in order}
    without = _without_kin(conn, board, judges, loader, bootstrap=bootstrap, seed=seed, statuses=statuses)
    return JudgeSensitivity(judges, tuple(views), kappa, {c: len(tables[c]) for c in order}, top_depends, without)


def _without_kin(conn: Connection, board: Leaderboard, judges: tuple[str, ...], loader, *, bootstrap: int, seed: int,
                 statuses: Sequence[str]) -> tuple[WithoutKin, ...]:
    """Each model judged by its own family (the row's `judge_conflicts`, with the run's `families:`) scored
    from the ensemble's other judges only, on one board where every such model lost its kin and every
    other model keeps its stored verdicts. Re-decided as the judge step decides (majority per criterion, a
    tie a FAIL: two judges left who split fail the criterion). A model whose every judge is of its family
    has no score without them (`row` None)."""
    kin = {r.model: r.judge_conflicts for r in board.rows if r.judge_conflicts}
    if not kin:
        return ()
    others = {m: tuple(j for j in judges if j not in k) for m, k in kin.items()}
    fair = build_leaderboard(conn, board.manifest_hash, bootstrap=bootstrap, seed=seed, statuses=statuses,
                             load_results=loader(lambda run: others[run.model] if run.model in kin else None))
    rows = {r.model: r for r in fair.rows}
    ensemble = {r.model: r.score for r in board.rows}
    return tuple(WithoutKin(m, tuple(kin[m]), others[m], ensemble.get(m), rows.get(m) if others[m] else None)
                 for m in sorted(kin))


@dataclass(frozen=True, slots=True)
class VersionFilter:
    """`report --judge-version V`: the results whose every judgement came from judge version V, per the
    ledger (results decided without a judge are kept: no judge version is behind them)."""

    version: str
    versions: dict[int, set[str | None]]  # result id → the judge versions behind it (queries.judge_versions)

    def keeps(self, result_id: int) -> bool:
        behind = self.versions.get(result_id)
        return behind is None or behind == {self.version}

    @property
    def left_out(self) -> int:
        """Judged results left out: judged (in part) by another or an unknown version."""
        return sum(not self.keeps(r) for r in self.versions)

    def note(self) -> str:
        return (f"--judge-version {self.version}: only results whose judgements all came from judge version "
                f"{self.version}; {self.left_out} judged result(s) by another or an unknown version left out "
                "(results decided without a judge are kept)")


def version_filter(conn: Connection, run_ids: Sequence[int], version: str) -> VersionFilter:
    """The filter of `report --judge-version`; a UsageError naming the versions known when `version` judged
    nothing behind these runs."""
    from helmbench.errors import UsageError

    versions = queries.judge_versions(conn, run_ids)
    known = sorted({v for vs in versions.values() for v in vs if v})
    if version not in known:
        raise UsageError(f"no judgement behind these results came from judge version `{version}`",
                         hint=("the judge versions the ledger recorded: " + ", ".join(known)) if known else
                         "the ledger records no judge version for these results (a database from before the "
                         "call ledger, or no judged results)")
    return VersionFilter(version, versions)
