"""Judged items: what a clinician reviews, and which stored reviews still apply to one.

An item is one criterion applied to one model output for one case: the thing the judge
decided. Items are built from the manifest's judged results and keyed by `store.reviews.item_hash`
(the same output from two models or two samples is one item). The judges' verdicts ride along
for the agreement; the review page never shows them.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

from helmbench.store.queries.reviews import all_reviews, judged_item_rows, latest_judged_manifest


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

    @property
    def options(self) -> list[str]:
        return list(self.criterion["options"])

    @property
    def multi(self) -> bool:
        return self.criterion.get("response_type") == "multi"

    def verdict_of(self, judgment) -> str:
        """PASS or FAIL for an option (or list of options) under the criterion's current pass values."""
        from helmbench.run.judge.judge import decide  # here: importing the judge costs ~0.1 s, unneeded to decode

        return decide(self.criterion, judgment)[0]


def judged_items(db, manifest_hash: str | None = None) -> tuple[str | None, dict[str, JudgedItem]]:
    """(manifest hash, items by hash) for the manifest (default: the latest one with judgements)."""
    from helmbench.run.judge.judge_prompt import response_field

    manifest_hash = manifest_hash or latest_judged_manifest(db)
    if manifest_hash is None:
        return None, {}
    items: dict[str, JudgedItem] = {}
    for h, row, criterion, messages in judged_item_rows(db, manifest_hash):
        item = items.get(h)
        if item is None:
            item = items[h] = JudgedItem(h, row["case_id"], row["scenario"], messages, row["content"], criterion,
                                         judged_at=row["judged_at"])
        stored = json.loads(row["judgment_json"]) if row["judgment_json"] else {}
        judgment = stored.get(response_field(criterion)) if isinstance(stored, dict) else None
        item.judges.setdefault(row["judge_model"], (judgment, row["verdict"]))
        item.models.add(row["model"])
        if row["judged_at"] and (item.judged_at is None or row["judged_at"] > item.judged_at):
            item.judged_at = row["judged_at"]
    return manifest_hash, items


@dataclass
class Reviews:
    """Stored reviews split by whether they still match a current item."""

    current: dict[str, list[dict]]  # item hash → its reviews (one per reviewer)
    stale: list[dict]  # reviews of items that no longer exist as reviewed (the criterion changed)


def split_reviews(db, items: dict[str, JudgedItem]) -> Reviews:
    current: dict[str, list[dict]] = {}
    stale: list[dict] = []
    for review in all_reviews(db):
        review = {**review, "judgment": json.loads(review["judgment_json"])}
        if review["item_hash"] in items:
            current.setdefault(review["item_hash"], []).append(review)
        else:
            stale.append(review)
    return Reviews(current, stale)
