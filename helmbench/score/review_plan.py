"""Who reviews what: the stratified sample, a planned overlap of k reviewers per item, and how far along it is.

Why a plan: Krippendorff's α between clinicians needs items seen by two or more of them, and a
judge–clinician κ needs a consensus per item. Left to chance (everyone reviews what they like),
overlap is thin and uneven; planned, every sampled item gets exactly k reviewers (benchmark.yml
`calibration: {reviewers_per_item: k}`, default 2) and each reviewer a fair share of every
stratum (criterion: scenario and code, × judge or check verdict), so nobody reviews only passes of one scenario.

Why no table: the plan is a pure function of the judged items, the sample size, the reviewers
and the seed, so it is recorded as a file (`store.review_packets`) and can be recomputed and
compared at any time: the same seed and reviewers give the same plan, and the same packets.

The sample is stratified by scenario and by the judge's verdict: items are dealt round-robin
from each (scenario, criterion, verdict) stratum, so even a small sample holds passes and failures of
every judged scenario (a sample of passes only could not measure the judge on failures, the
class that matters). Each reviewer sees their items in their own random order, so the strata
leave no pattern and no two reviewers share the same order effects.
"""

from __future__ import annotations

import random
from collections import Counter
from dataclasses import dataclass, field

from helmbench.score.calibration import judge_verdict
from helmbench.score.model import criterion_key, criterion_order
from helmbench.score.review_items import JudgedItem, Reviews
from helmbench.store.review_packets import PLAN_FORMAT
from helmbench.store.reviews import reviewer_key, shown_questions  # one rule for who a name stands for (import, page, plan)

DEFAULT_PER_ITEM = 2



def stratum(item: JudgedItem) -> tuple[str, str, str]:
    """What a sample and an assignment balance over: the criterion (scenario and code: a transcript's or a
    check's criterion is its own, so conversations and checks get their own strata) and the judge's (or the
    check's) verdict."""
    return item.scenario, item.criterion["code"], judge_verdict(item) or "?"


def stratified_sample(items: dict[str, JudgedItem], size: int | None = None, seed: int = 0) -> list[str]:
    """Item hashes of the sample (all items when `size` is None), strata dealt in turn."""
    rng = random.Random(f"sample:{seed}")
    strata: dict[tuple[str, str, str], list[str]] = {}
    for h in sorted(items):
        strata.setdefault(stratum(items[h]), []).append(h)
    for key in sorted(strata):
        rng.shuffle(strata[key])
    order = [strata[k] for k in sorted(strata)]
    rng.shuffle(order)
    out: list[str] = []
    limit = len(items) if size is None else min(size, len(items))
    i = 0
    while len(out) < limit:
        for s in order:
            if i < len(s) and len(out) < limit:
                out.append(s[i])
        i += 1
    return out


def reviewer_order(hashes: list[str], reviewer: str, seed: int = 0) -> list[str]:
    """`hashes` in `reviewer`'s own random order (the same on every machine for the same seed)."""
    order = list(hashes)
    random.Random(f"order:{seed}:{reviewer}").shuffle(order)
    return order


def per_item_of(declared: dict | None) -> int:
    """k, the reviewers each sampled item gets: benchmark.yml `calibration: {reviewers_per_item}` or 2."""
    return int((declared or {}).get("reviewers_per_item") or DEFAULT_PER_ITEM)


def assign(items: dict[str, JudgedItem], sample: list[str], reviewers: list[str], per_item: int,
           seed: int = 0) -> dict[str, list[str]]:
    """Reviewer → the sampled items they review: every item gets `per_item` distinct reviewers.

    Greedy, stratum by stratum (the largest first), item by item in sample order: the reviewers
    chosen for an item are those with the fewest items of its stratum so far, then the fewest
    items overall, then the fewest items already shared with the reviewers chosen for it (so
    that pairs vary), then a seeded draw. Choosing the k lowest stratum loads keeps every
    stratum's loads within one of each other (if fewer than k reviewers are at the lowest load,
    all of them are chosen and the rest come from the next level, which leaves the loads at two
    adjacent levels again). Taking whole strata in turn lets each stratum's remainder go to the
    reviewers with the fewest items overall, which in practice keeps the totals within one too
    (300 random plans in the tests; not a proof).
    """
    if per_item > len(reviewers):
        raise ValueError(f"{per_item} reviewers per item needs at least {per_item} reviewers, got {len(reviewers)}")
    rng = random.Random(f"assign:{seed}")
    drawn = {r: i for i, r in enumerate(rng.sample(sorted(reviewers), len(reviewers)))}
    in_stratum: dict[tuple[str, str, str], Counter] = {}
    load: Counter = Counter()
    shared: Counter = Counter()
    out: dict[str, list[str]] = {r: [] for r in reviewers}
    groups: dict[tuple[str, str, str], list[str]] = {}
    for h in sample:
        groups.setdefault(stratum(items[h]), []).append(h)
    for h in [h for key in sorted(groups, key=lambda s: (-len(groups[s]), s)) for h in groups[key]]:
        loads = in_stratum.setdefault(stratum(items[h]), Counter())
        chosen: list[str] = []
        for _ in range(per_item):
            best = min((r for r in reviewers if r not in chosen),
                       key=lambda r: (loads[r], load[r], sum(shared[frozenset((r, c))] for c in chosen), drawn[r]))
            chosen.append(best)
        for i, r in enumerate(chosen):
            loads[r] += 1
            load[r] += 1
            out[r].append(h)
            for c in chosen[:i]:
                shared[frozenset((r, c))] += 1
    return out


@dataclass
class Plan:
    """Who reviews which sampled item of one manifest; each reviewer's list in their review order."""

    manifest_hash: str | None
    seed: int
    per_item: int
    size: int | None  # the sample size asked for (None: every judged item)
    reviewers: list[str]
    assigned: dict[str, list[str]]

    @property
    def sample(self) -> set[str]:
        return {h for hs in self.assigned.values() for h in hs}

    def named(self, reviewer: str) -> str | None:
        """The plan's spelling of `reviewer` (however their name is spaced or cased), or None."""
        key = reviewer_key(reviewer)
        return next((r for r in self.assigned if reviewer_key(r) == key), None)

    def of(self, reviewer: str) -> list[str] | None:
        """The items planned for `reviewer`, or None when they are not in the plan."""
        name = self.named(reviewer)
        return None if name is None else self.assigned[name]

    def to_dict(self) -> dict:
        return {"format": PLAN_FORMAT, "version": 1, "manifest_hash": self.manifest_hash, "seed": self.seed,
                "reviewers_per_item": self.per_item, "sample": self.size, "reviewers": self.reviewers,
                "assigned": self.assigned}

    def migrated(self, items: dict[str, JudgedItem]) -> "Plan":
        """The plan with each item planned under its key from before the title was hashed read as the
        item's key now (`review_items.migrated`), so a plan written before that change is still followed."""
        from helmbench.score.review_items import migrated

        old = migrated(items)
        if not old:
            return self
        return Plan(self.manifest_hash, self.seed, self.per_item, self.size, list(self.reviewers),
                    {r: [old.get(h, h) for h in hs] for r, hs in self.assigned.items()})

    @classmethod
    def from_dict(cls, data: dict) -> "Plan":
        return cls(data["manifest_hash"], data["seed"], data["reviewers_per_item"], data["sample"],
                   list(data["reviewers"]), {r: list(hs) for r, hs in data["assigned"].items()})


def make_plan(items: dict[str, JudgedItem], reviewers: list[str], *, per_item: int = DEFAULT_PER_ITEM,
              size: int | None = None, seed: int = 0, manifest_hash: str | None = None) -> Plan:
    """The plan for these reviewers: the stratified sample, k reviewers per item, each list in its reviewer's order.

    Names are taken with their spaces collapsed; two names that differ only by spaces or case are one reviewer (refused).
    """
    names = [" ".join(r.split()) for r in reviewers]
    seen: dict[str, str] = {}
    for name in names:
        if reviewer_key(name) in seen:
            raise ValueError(f"{seen[reviewer_key(name)]!r} and {name!r} name the same reviewer")
        seen[reviewer_key(name)] = name
    sample = stratified_sample(items, size, seed)
    assigned = assign(items, sample, names, per_item, seed)
    return Plan(manifest_hash, seed, per_item, size, names,
                {r: reviewer_order(hs, r, seed) for r, hs in assigned.items()})


def blind_item(item: JudgedItem) -> dict:
    """What a reviewer may see of an item, and the keys that make a verdict on it importable.

    Never the models whose output it is, the judges' verdicts or the criterion's pass values
    (which options pass is the rubric's business, not the reviewer's).
    """
    c = item.criterion
    out = {"item_hash": item.hash, "case_id": item.case_id, "scenario": item.scenario,
           "criterion": {"code": c["code"], "title": c.get("title"), "text": c["text"], "options": list(c["options"]),
                         "response_type": c.get("response_type") or "single",
                         **({"questions": shown_questions(c["questions"])} if c.get("questions") else {})},
           "messages": [{"role": m.get("role"), "content": m.get("content")} for m in item.messages],  # as hashed
           "output": item.output}
    if item.transcript is not None:
        out["transcript"] = [dict(t) for t in item.transcript]
    return out


def packet_items(plan: Plan, reviewer: str, items: dict[str, JudgedItem], done: set[str]) -> tuple[list[dict], int]:
    """(the blinded items `reviewer` still has to review, in their order; planned items no longer judged).

    A planned item missing from `items` was judged under an earlier wording of its criterion (or
    in another manifest): nobody can review it as it stands, so it is counted, not sent."""
    mine = plan.of(reviewer) or []
    gone = sum(1 for h in mine if h not in items)
    return [blind_item(items[h]) for h in mine if h in items and h not in done], gone


# --- how far along ------------------------------------------------------------------------------------


@dataclass
class ReviewerProgress:
    reviewer: str
    assigned: int = 0  # planned items (0 without a plan)
    done: int = 0  # planned items they have a current review of
    other: int = 0  # current reviews of items not planned for them

    def to_dict(self) -> dict:
        return {"reviewer": self.reviewer, "assigned": self.assigned, "done": self.done,
                "to_do": self.assigned - self.done, "other": self.other}


@dataclass
class CriterionProgress:
    scenario: str
    criterion: str
    items: int = 0  # judged items
    planned: int = 0  # of them in the plan's sample
    assigned: int = 0  # planned reviews (items × k)
    done: int = 0  # planned reviews given
    reviewed: int = 0  # items with at least one current review
    overlap: int = 0  # items with two or more current reviews: what α is computed on

    @property
    def key(self) -> str:
        return criterion_key(self.scenario, self.criterion)

    def to_dict(self) -> dict:
        return {"key": self.key, "scenario": self.scenario, "criterion": self.criterion, "items": self.items,
                "planned": self.planned, "assigned": self.assigned, "done": self.done, "reviewed": self.reviewed,
                "overlap": self.overlap}


@dataclass
class ReviewStatus:
    manifest_hash: str | None
    plan: Plan | None
    reviewers: list[ReviewerProgress] = field(default_factory=list)
    criteria: list[CriterionProgress] = field(default_factory=list)
    missing: int = 0  # planned items no longer judged (a criterion reworded since the plan)

    def to_dict(self) -> dict:
        return {"manifest_hash": self.manifest_hash,
                "plan": None if self.plan is None else {k: v for k, v in self.plan.to_dict().items() if k != "assigned"},
                "missing": self.missing, "reviewers": [r.to_dict() for r in self.reviewers],
                "criteria": [c.to_dict() for c in self.criteria]}


def review_status(items: dict[str, JudgedItem], reviews: Reviews, plan: Plan | None,
                  manifest_hash: str | None = None) -> ReviewStatus:
    """Per reviewer and per criterion: assigned, done, and the items with two or more current reviews.

    Counts current reviews only (stale ones are of a wording that no longer exists); a reviewer's
    names are matched ignoring spaces and case, as `reviewer_key` says."""
    by_key: dict[str, set[str]] = {}  # reviewer key → items they have a current review of
    shown: dict[str, str] = {}
    for h, rs in reviews.current.items():
        for r in rs:
            k = reviewer_key(r["reviewer"])
            by_key.setdefault(k, set()).add(h)
            shown.setdefault(k, r["reviewer"])
    planned_for: dict[str, set[str]] = {}
    if plan is not None:
        for r, hs in plan.assigned.items():
            planned_for[reviewer_key(r)] = set(hs)
            shown[reviewer_key(r)] = r
    status = ReviewStatus(manifest_hash, plan, missing=len((plan.sample if plan else set()) - set(items)))
    order = [reviewer_key(r) for r in plan.reviewers] if plan else []
    order += sorted(set(by_key) - set(order))
    for k in order:
        mine, planned = by_key.get(k, set()), planned_for.get(k, set()) & set(items)
        status.reviewers.append(ReviewerProgress(shown[k], len(planned), len(mine & planned), len(mine - planned)))
    groups: dict[tuple[str, str], CriterionProgress] = {}
    reviewers_of: dict[str, list[set[str]]] = {}
    for k, hs in planned_for.items():
        for h in hs:
            reviewers_of.setdefault(h, []).append(by_key.get(k, set()))
    sample = plan.sample if plan else set()
    for h, item in items.items():
        code = item.criterion["code"]
        g = groups.setdefault((item.scenario, code), CriterionProgress(item.scenario, code))
        g.items += 1
        n = len({reviewer_key(r["reviewer"]) for r in reviews.current.get(h, [])})
        g.reviewed += n >= 1
        g.overlap += n >= 2
        if h in sample:
            g.planned += 1
            g.assigned += len(reviewers_of.get(h, []))
            g.done += sum(1 for done in reviewers_of.get(h, []) if h in done)
    status.criteria = sorted(groups.values(), key=lambda c: criterion_order((c.scenario, c.criterion)))
    return status


def load_plan(path) -> Plan:
    """The plan written at `path` (`helmbench review plan`), checked as an untrusted file."""
    from helmbench.store.review_packets import read_plan

    return Plan.from_dict(read_plan(path))


def load_status(db, plan: Plan | None, manifest_hash: str | None = None) -> ReviewStatus:
    """`review_status` of the plan's manifest (without a plan: `manifest_hash`, else the latest judged one)."""
    from helmbench.score.review_items import judged_items, split_reviews

    manifest_hash, items = judged_items(db, plan.manifest_hash if plan is not None else manifest_hash)
    return review_status(items, split_reviews(db, items), plan.migrated(items) if plan else None, manifest_hash)
