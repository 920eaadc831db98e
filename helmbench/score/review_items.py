"""Judged items: what a clinician reviews, and which stored reviews still apply to one.

An item is one criterion applied to one model output for one case: the thing the judge
decided. Items are built from the manifest's judged results and keyed by `store.reviews.item_hash`
(the same output from two models or two samples is one item). The judges' verdicts ride along
for the agreement; the review page never shows them.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

from helmbench.store.queries.reviews import all_reviews, judged_manifests, judged_rows, latest_judged_manifest
from helmbench.store.reviews import item_hash, legacy_item_hash, reviewer_key


@dataclass
class JudgedItem:
    hash: str
    case_id: str
    scenario: str
    messages: list[dict]
    output: str
    criterion: dict  # as the manifest has it now: code, text, options, pass_values, …
    judges: dict[str, tuple[object, str]] = field(default_factory=dict)  # judge model → (option(s), PASS/FAIL)
    models: set[str] = field(default_factory=set)  # models whose output this is (never shown to a reviewer)
    judged_at: str | None = None
    legacy: str | None = None  # the key before the title was hashed (`store.reviews.legacy_item_hash`), single replies only

    @property
    def options(self) -> list[str]:
        return list(self.criterion["options"])

    @property
    def multi(self) -> bool:
        return self.criterion.get("response_type") == "multi"

    def verdict_of(self, judgment) -> str:
        """PASS or FAIL for an option (or list of options) under the criterion's current pass values."""
        from helmbench.run.judge.judge import decide  # here: importing the judge costs ~0.1 s, unneeded to unpickle

        return decide(self.criterion, judgment)[0]


def _criteria(evaluation_json: str) -> dict[str, dict]:
    evaluation = json.loads(evaluation_json)
    return {c["code"]: c for c in evaluation.get("criteria") or []}


def judged_items(db, manifest_hash: str | None = None) -> tuple[str | None, dict[str, JudgedItem]]:
    """(manifest hash, items by hash) for the manifest (default: the latest one with judgements)."""
    from helmbench.run.judge.judge_prompt import response_field

    manifest_hash = manifest_hash or latest_judged_manifest(db)
    if manifest_hash is None:
        return None, {}
    items: dict[str, JudgedItem] = {}
    criteria_of: dict[str, dict[str, dict]] = {}
    for row in judged_rows(db, manifest_hash):
        criteria = criteria_of.get(row["case_hash"])
        if criteria is None:
            criteria = criteria_of[row["case_hash"]] = _criteria(row["evaluation_json"])
        criterion = criteria.get(row["criterion"])
        if criterion is None:
            continue
        messages = json.loads(row["messages_json"])
        h = item_hash(messages, row["content"], criterion)
        item = items.get(h)
        if item is None:
            item = items[h] = JudgedItem(h, row["case_id"], row["scenario"], messages, row["content"], criterion,
                                         judged_at=row["judged_at"],
                                         legacy=legacy_item_hash(messages, row["content"], criterion))
        stored = json.loads(row["judgment_json"]) if row["judgment_json"] else {}
        judgment = stored.get(response_field(criterion)) if isinstance(stored, dict) else None
        item.judges.setdefault(row["judge_model"], (judgment, row["verdict"]))
        item.models.add(row["model"])
        if row["judged_at"] and (item.judged_at is None or row["judged_at"] > item.judged_at):
            item.judged_at = row["judged_at"]
    return manifest_hash, items


def every_judged_item(db) -> dict[str, JudgedItem]:
    """The judged items of every manifest with judgements (the latest manifest's first): what a
    review may be of, stale ones (an earlier wording of a criterion) included, so a review
    exported from this database can always be imported again."""
    items: dict[str, JudgedItem] = {}
    for manifest_hash in judged_manifests(db):
        for h, item in judged_items(db, manifest_hash)[1].items():
            items.setdefault(h, item)
    return items


@dataclass
class Reviews:
    """Stored reviews split by whether they still match a current item."""

    current: dict[str, list[dict]]  # item hash → its reviews (one per reviewer)
    stale: list[dict]  # reviews of items that no longer exist as reviewed (the criterion changed)


def migrated(items: dict[str, JudgedItem]) -> dict[str, str]:
    """A key reviews were stored under before the title was hashed → the item's key now.

    Reviews are migrated on read, not rewritten: a stored review under an item's legacy key
    (same reply, criterion code, text, options and response type) counts for that item, here,
    in a packet's "already done" and on the review page. Nothing new is stored under a legacy
    key: the page and packets write the current key, and an import of a legacy key is accepted
    only where that review is already stored (`review import`'s known keys)."""
    return {i.legacy: h for h, i in items.items() if i.legacy and i.legacy != h}


def current_keys(hashes: set[str], items: dict[str, JudgedItem]) -> set[str]:
    """`hashes` (of stored reviews) with each legacy key read as the item's current one."""
    old = migrated(items)
    return {old.get(h, h) for h in hashes}


def split_reviews(db, items: dict[str, JudgedItem]) -> Reviews:
    current: dict[str, list[dict]] = {}
    stale: list[dict] = []
    old = migrated(items)
    for review in all_reviews(db):
        review = {**review, "judgment": json.loads(review["judgment_json"])}
        if review["item_hash"] in old:
            review["item_hash"] = old[review["item_hash"]]
        if review["item_hash"] in items:
            current.setdefault(review["item_hash"], []).append(review)
        else:
            stale.append(review)
    if old:  # a reviewer with a legacy review and a new one of the same item: the newer is theirs
        for h, rs in current.items():
            newest: dict[str, dict] = {}
            for r in rs:  # oldest first
                newest[reviewer_key(r["reviewer"])] = r
            current[h] = list(newest.values())
    return Reviews(current, stale)
