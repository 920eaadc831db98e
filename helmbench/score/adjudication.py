"""Adjudication: clinicians' verdicts deciding the judged items enough of them reviewed.

A benchmark opts in with `adjudication: {min_reviews: k}` in `benchmark.yml` (carried in the
manifest's catalog). The rule, exactly:

- An item (one criterion applied to one output, `score.review_items.JudgedItem`) counts its
  *current* reviews only: one per clinician (their latest), given to the item as it is now (a
  review of a reworded criterion is stale and counts for nothing).
- With at least k current reviews, the verdict (PASS or FAIL under the criterion's current pass
  values) given by a strict majority of them is the item's verdict: the item is *adjudicated*.
  Its score is the mean of the scores of the reviews in that majority (the criterion's `scores`,
  as a judge's option is scored), the rule `run.judge.judge.combine` applies to an ensemble's judges.
- An even split, or fewer than k current reviews, leaves the judge's verdict (or the check's).
- The item is *overturned* when its adjudicated verdict differs from the judge's (an ensemble's:
  its majority, a tie a FAIL, as the run decided it).

A result with an adjudicated item is re-decided as the run decides a case (`run.judge.judge.aggregate`,
a conversation's `run.conversation.verdict.decide`: PASS when every criterion passes, score the mean
of the criteria's scores) from the verdicts stored for its other criteria (the judges', combined;
a check's recomputed from the output; a conversation's stored checkpoint rows) and the clinicians'
for the adjudicated ones. A result whose stored verdict its criteria do not reproduce (a database
written by an older release) is left as the judge decided it and counted in `unreproduced`.

Nothing is stored: the adjudication is derived from the reviews each time the scores are read, so a
new, changed or imported review, or a reworded criterion, changes it with nothing else to run.
Without the setting (`adjudication_of` gives None) nothing published depends on reviews.
"""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass, field, replace

from helmbench.spec.naming import natural_key
from helmbench.store import Connection, queries

from .model import ERROR, FAIL, PASS, ScoredResult


@dataclass(frozen=True, slots=True)
class ReviewVerdict:
    """One current review of an item, as the case page shows it (the clinician's name and note are not published)."""

    verdict: str  # PASS / FAIL under the criterion's current pass values
    judgment: object  # the option(s) chosen
    created_at: str | None


@dataclass(frozen=True, slots=True)
class ItemHistory:
    """A reviewed item: what the judge said, each current review, and the verdict that stands."""

    hash: str
    case_id: str
    scenario: str
    criterion: str  # the criterion's code (its scenario is `scenario`)
    judge_verdict: str  # the judges' (combined) or the check's PASS/FAIL
    judged_at: str | None
    reviews: tuple[ReviewVerdict, ...]
    verdict: str | None  # the clinicians' verdict when adjudicated, None when the judge's stands
    score: float | None  # the clinicians' score for the criterion when adjudicated
    checked: bool = False  # a check decided it, not a judge

    @property
    def adjudicated(self) -> bool:
        return self.verdict is not None

    @property
    def overturned(self) -> bool:
        return self.verdict is not None and self.verdict != self.judge_verdict

    @property
    def decided_at(self) -> str | None:
        """The date of the latest review, when the clinicians' verdict stands."""
        return max((r.created_at or "" for r in self.reviews), default=None) or None if self.adjudicated else None


@dataclass(frozen=True, slots=True)
class Decision:
    """A result re-decided with its adjudicated items."""

    verdict: str
    score: float | None
    judge_verdict: str  # the result's verdict as the run stored it
    judge_score: float | None
    overturned: bool  # some adjudicated item's verdict differs from the judge's


@dataclass(frozen=True)
class Adjudication:
    min_reviews: int
    items: dict[str, ItemHistory] = field(default_factory=dict)  # every item with a current review
    decisions: dict[tuple[int, str, int], Decision] = field(default_factory=dict)  # (run, case, sample) → decision
    by_result: dict[tuple[int, str, int], tuple[str, ...]] = field(default_factory=dict)  # → its reviewed items
    unreproduced: int = 0  # results with an adjudicated item left as the judge decided (see the module docstring)

    def apply(self, run_id: int, rows: list[ScoredResult]) -> list[ScoredResult]:
        """The run's rows with each adjudicated result's verdict and score; `rows` itself when none changes
        (so applying twice is applying once, and rows without adjudication stay the same object)."""
        out, changed = [], False
        for r in rows:
            d = self.decisions.get((run_id, r.case_id, r.sample))
            if d is not None and r.verdict != ERROR and (r.verdict, r.score) != (d.verdict, d.score):
                r, changed = replace(r, verdict=d.verdict, score=d.score), True
            out.append(r)
        return out if changed else rows

    def counts(self, run_id: int) -> tuple[int, int]:
        """(results adjudicated, results with an overturned item) of a run."""
        mine = [d for (run, _, _), d in self.decisions.items() if run == run_id]
        return len(mine), sum(d.overturned for d in mine)

    def history(self, run_id: int, case_id: str, sample: int) -> list[ItemHistory]:
        """The reviewed items of one result, for its case page."""
        return [self.items[h] for h in self.by_result.get((run_id, case_id, sample), ())]


def rule_of(conn: Connection, manifest_hash: str | None) -> int | None:
    """benchmark.yml's `adjudication: {min_reviews: k}` as the manifest's catalog carries it: k, or None."""
    header = queries.manifest_header(conn, manifest_hash) if manifest_hash else None
    declared = ((header or {}).get("catalog") or {}).get("adjudication")
    if not isinstance(declared, dict):
        return None
    k = declared.get("min_reviews", 2)
    return k if isinstance(k, int) and not isinstance(k, bool) and k >= 1 else None


def consensus(verdicts: list[tuple[str, float]], k: int) -> tuple[str, float] | None:
    """(verdict, score) of a strict majority of at least `k` reviews' (verdict, score), or None (too few, or split)."""
    if len(verdicts) < k:
        return None
    for verdict in (PASS, FAIL):
        agreeing = [s for v, s in verdicts if v == verdict]
        if 2 * len(agreeing) > len(verdicts):
            return verdict, math.fsum(agreeing) / len(agreeing)
    return None


def adjudication_of(conn: Connection, manifest_hash: str | None) -> Adjudication | None:
    """The manifest's adjudication derived from the stored reviews now, or None when benchmark.yml declares none."""
    k = rule_of(conn, manifest_hash)
    if k is None:
        return None
    from helmbench.run.judge.judge import decide, majority

    from .review_items import CHECKER, judged_items, split_reviews

    _, items = judged_items(conn, manifest_hash)
    current = split_reviews(conn, items).current
    histories: dict[str, ItemHistory] = {}
    by_result: dict[tuple[int, str, int], list[str]] = defaultdict(list)
    adjudicated: dict[int, dict[str, tuple[str, float, bool]]] = defaultdict(dict)  # result id → code → clinicians'
    result_key: dict[int, tuple[int, str, int]] = {}
    for h, item in items.items():
        reviews = current.get(h)
        if not reviews:
            continue
        given = [decide(item.criterion, r["judgment"]) for r in reviews]
        shown = [ReviewVerdict(v, r["judgment"], r.get("created_at")) for (v, _), r in zip(given, reviews)]
        checked = CHECKER in item.judges
        judge = item.judges[CHECKER][1] if checked else majority([v for _, v in item.judges.values()])
        decided = consensus(given, k)
        histories[h] = ItemHistory(h, item.case_id, item.scenario, item.criterion["code"], judge, item.judged_at,
                                   tuple(sorted(shown, key=lambda r: r.created_at or "")),
                                   decided[0] if decided else None, decided[1] if decided else None, checked)
        for result_id, run_id, sample in item.results:
            key = result_key[result_id] = (run_id, item.case_id, sample)
            by_result[key].append(h)
            if decided:
                adjudicated[result_id][item.criterion["code"]] = (*decided, decided[0] != judge)
    decisions, unreproduced = _redecide(conn, items, adjudicated, result_key)
    for key in by_result:
        by_result[key].sort(key=lambda h: (natural_key(histories[h].criterion), h))
    return Adjudication(k, histories, decisions, {k_: tuple(v) for k_, v in by_result.items()}, unreproduced)


def _redecide(conn: Connection, items, adjudicated: dict[int, dict[str, tuple[str, float, bool]]],
              result_key: dict[int, tuple[int, str, int]]) -> tuple[dict, int]:
    """Each result with an adjudicated item re-decided from its criteria (see the module docstring)."""
    if not adjudicated:
        return {}, 0
    from helmbench.store.turns import conversation_details

    from .scored import criterion_verdict
    from .review_items import CHECKER
    from helmbench.run.judge.judge import combine

    run_ids = sorted({result_key[r][0] for r in adjudicated})
    stored = {row["result_id"]: (row["verdict"], row["score"])
              for run in run_ids for row in queries.result_case_rows(conn, run) if row["result_id"] in adjudicated}
    criteria: dict[int, dict[str, tuple[str, float]]] = defaultdict(dict)
    judged: dict[int, dict[str, list]] = defaultdict(lambda: defaultdict(list))
    for row in queries.judgement_rows(conn, run_ids):
        if row["result_id"] in adjudicated:
            judged[row["result_id"]][row["criterion"]].append(criterion_verdict(row))
    for result_id, per in judged.items():
        for code, verdicts in per.items():
            v = combine({"code": code}, verdicts)
            criteria[result_id][code] = (v.verdict, v.score)
    for item in items.values():  # a reply's checks, recomputed from the output (item.judges[CHECKER])
        if CHECKER in item.judges:
            for result_id, _, _ in item.results:
                if result_id in adjudicated:
                    verdict = item.judges[CHECKER][1]
                    criteria[result_id].setdefault(item.criterion["code"], (verdict, 1.0 if verdict == PASS else 0.0))
    for result_id, (_, rows) in conversation_details(conn, run_ids).items():
        if result_id in adjudicated and rows:  # a conversation: its stored checkpoint and criterion rows decided it
            criteria[result_id] = {r["checkpoint"]: (r["verdict"], r["score"]) for r in rows}
    decisions: dict[tuple[int, str, int], Decision] = {}
    unreproduced = 0
    for result_id, overrides in adjudicated.items():
        verdict, score = stored.get(result_id, (None, None))
        mine = criteria.get(result_id, {})
        if verdict not in (PASS, FAIL) or not mine or set(overrides) - set(mine) \
                or _decided(mine) != (verdict, None if score is None else round(float(score), 9)):
            unreproduced += verdict in (PASS, FAIL)
            continue
        new = _decided({**mine, **{c: (v, s) for c, (v, s, _) in overrides.items()}})
        decisions[result_key[result_id]] = Decision(
            new[0], new[1], verdict, score, any(o for _, _, o in overrides.values()))
    return decisions, unreproduced


def _decided(criteria: dict[str, tuple[str, float | None]]) -> tuple[str | None, float | None]:
    """(verdict, score) of a case from its criteria as the run decides one (an abstained or gated-off criterion
    left out): PASS when all pass, the mean score
    (rounded to 9 places: the comparison with a stored score must not hinge on summation order)."""
    counted = {c: vs for c, vs in criteria.items() if vs[0] not in ("ABSTAIN", "NOT_APPLICABLE")}  # left out
    if not counted or any(v not in (PASS, FAIL) or s is None for v, s in counted.values()):
        return None, None
    score = math.fsum(float(s) for _, s in counted.values()) / len(counted)
    return (PASS if all(v == PASS for v, _ in counted.values()) else FAIL), round(score, 9)
