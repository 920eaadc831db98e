"""Judged items: what a clinician reviews, and which stored reviews still apply to one.

An item is one criterion applied to one model output for one case: the thing the judge (or a
check) decided. Every judged output is one: a single reply under a judged criterion; a
conversation's whole transcript under a criterion judged on it (`transcript`: the turns after the
opening, in order, each marked with who wrote it, the scenario's turn checkpoints beside their
turn); and a reply or a transcript under a checked criterion (`evaluation.checks`: the criterion's
plain-words rule as its text, PASS/FAIL as its options, the check's verdict recomputed from the
output and kept, like a judge's, from the reviewer). Items are built from the manifest's decided
results and keyed by `store.reviews.item_hash` over everything the reviewer is shown (the same
output from two models or two samples is one item). The judges' (or the check's) verdicts ride
along for the agreement; the review page never shows them.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

from helmbench.store.queries.reviews import all_reviews, judged_item_rows, latest_judged_manifest
from helmbench.store.reviews import reviewer_key


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
    transcript: list[dict] | None = None  # a conversation's turns after the opening: turn, role, by, content, checkpoint
    #: (result id, run id, sample) of every result whose output this is: what adjudication re-decides (never shown)
    results: set[tuple[int, int, int]] = field(default_factory=set)

    @property
    def kind(self) -> str:
        """What a plan's strata and `review status` tell apart: a reply or a transcript, judged or checked."""
        return ("transcript" if self.transcript is not None else "reply") + (" (checked)" if self.checked else "")

    @property
    def checked(self) -> bool:
        return bool(self.criterion.get("check"))

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


CHECKER = "check"  # the "judge" of a checked criterion's item, in `JudgedItem.judges`


def judged_items(db, manifest_hash: str | None = None) -> tuple[str | None, dict[str, JudgedItem]]:
    """(manifest hash, items by hash) for the manifest (default: the latest one with judgements).

    The items and their keys are the store's (`judged_item_rows`); what is added here is each
    verdict: the judge's option and PASS/FAIL, or a check's, recomputed from the output."""
    from helmbench.run.judge.judge import check_verdicts  # here: importing the judge costs ~0.1 s, unneeded to unpickle
    from helmbench.run.judge.judge_prompt import response_field

    manifest_hash = manifest_hash or latest_judged_manifest(db)
    if manifest_hash is None:
        return None, {}
    items: dict[str, JudgedItem] = {}
    checked: dict[tuple, dict[str, str]] = {}  # (case, output) → each check's verdict on it
    for it in judged_item_rows(db, manifest_hash):
        row, criterion = it.row, it.criterion
        if it.judge is None:
            replies = [it.output] if it.transcript is None else \
                [t["content"] for t in it.transcript if t["role"] == "assistant"]
            at = (row["case_hash"], row["result_id"] if it.transcript is not None else None, it.output)
            if at not in checked:
                case = {"evaluation": json.loads(row["evaluation_json"]),
                        "request": {"response_format": json.loads(row["response_format_json"] or "null")}}
                checked[at] = {v.criterion: v.verdict for v in check_verdicts(case, *replies)}
            verdict = checked[at].get(criterion["code"])
            if verdict not in ("PASS", "FAIL"):
                continue
            judge, given = CHECKER, (verdict, verdict)
        else:
            stored = json.loads(row["judgment_json"]) if row["judgment_json"] else {}
            judgment = stored.get(response_field(criterion)) if isinstance(stored, dict) else None
            judge, given = it.judge, (judgment, row["verdict"])
        item = items.get(it.key)
        if item is None:
            item = items[it.key] = JudgedItem(it.key, row["case_id"], row["scenario"], it.messages, it.output, criterion,
                                              judged_at=row["judged_at"], legacy=it.legacy, transcript=it.transcript)
        item.judges.setdefault(judge, given)
        item.models.add(row["model"])
        item.results.add((row["result_id"], row["run_id"], int(row["sample"] or 0)))
        if row["judged_at"] and (item.judged_at is None or row["judged_at"] > item.judged_at):
            item.judged_at = row["judged_at"]
    return manifest_hash, items


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
    key by the page or packets (they write the current key); an export written before the change
    still imports (`judged_item_options` knows the legacy keys) and is migrated the same way."""
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
    # one person, one current review of an item: their newest, however their name was spelled (a review under an
    # item's legacy key and a new one; rows stored before names were normalised, "Ana" and "ana ")
    for h, rs in current.items():
        newest: dict[str, dict] = {}
        for r in rs:  # oldest first
            newest[reviewer_key(r["reviewer"])] = r
        current[h] = list(newest.values())
    return Reviews(current, stale)
