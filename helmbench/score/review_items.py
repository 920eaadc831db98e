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

from helmbench.store.queries.reviews import (all_reviews, checked_transcript_rows, judged_manifests, judged_rows,
                                             latest_judged_manifest, result_transcripts, transcript_judged_rows)
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
    transcript: list[dict] | None = None  # a conversation's turns after the opening: turn, role, by, content, checkpoint

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
        from helmbench.run.judge.judge import decide  # here: importing the judge costs ~0.1 s, unneeded to unpickle

        return decide(self.criterion, judgment)[0]


#: Who wrote a turn, as the reviewer is told (`turns.source`).
BY = {"opening": "user", "script": "user (scripted)", "user_model": "user (simulated)", "model": "assistant"}
CHECK_OPTIONS = ["PASS", "FAIL"]
CHECKER = "check"  # the "judge" of a checked criterion's item, in `JudgedItem.judges`


def _check_criterion(check: dict) -> dict:
    """A checked criterion as an item's criterion: its rule in plain words, PASS or FAIL."""
    kind = str((check.get("evaluation") or {}).get("type") or "check")
    text = check.get("text") or f"Checked by the {kind} check, not judged: does the output meet the criterion's rule?"
    return {"code": check["code"], "title": check.get("title"), "text": text, "options": list(CHECK_OPTIONS),
            "pass_values": ["PASS"], "response_type": "single", "scores": {"PASS": 1, "FAIL": 0}, "check": kind}


class _Cases:
    """Each case's criteria, checks and checkpoints, parsed once."""

    def __init__(self):
        self.seen: dict[str, tuple[dict, dict]] = {}

    def of(self, row) -> tuple[dict, dict]:
        """(evaluation, criteria by code: judged ones as written, checked ones as `_check_criterion`)."""
        got = self.seen.get(row["case_hash"])
        if got is None:
            evaluation = json.loads(row["evaluation_json"])
            criteria = {c["code"]: c for c in evaluation.get("criteria") or []}
            criteria.update({c["code"]: _check_criterion(c) for c in evaluation.get("checks") or []})
            got = self.seen[row["case_hash"]] = (evaluation, criteria)
        return got


def _transcript(turns: list[dict], evaluation: dict) -> tuple[list[dict], str]:
    """(the turns after the opening as shown, the last reply): who wrote each, checkpoints beside their turn."""
    checkpoint = {cp["turn"]: cp.get("title") or f"turn {cp['turn']}" for cp in evaluation.get("checkpoints") or []}
    shown = [{"turn": t["turn"], "role": t["role"], "by": BY.get(t["source"], t["source"]), "content": t["content"] or "",
              "checkpoint": checkpoint.get(t["turn"]) if t["role"] == "assistant" else None}
             for t in turns if t["source"] != "opening"]
    last = next((t["content"] for t in reversed(shown) if t["role"] == "assistant"), "")
    return shown, last or ""


def _add(items: dict[str, JudgedItem], row, criterion: dict, output: str, transcript: list[dict] | None,
         judge: str, verdict: tuple[object, str]) -> None:
    messages = json.loads(row["messages_json"])
    h = item_hash(messages, output, criterion, transcript)
    item = items.get(h)
    if item is None:
        legacy = legacy_item_hash(messages, output, criterion) if transcript is None and not criterion.get("check") \
            else None
        item = items[h] = JudgedItem(h, row["case_id"], row["scenario"], messages, output, criterion,
                                     judged_at=row["judged_at"], legacy=legacy, transcript=transcript)
    item.judges.setdefault(judge, verdict)
    item.models.add(row["model"])
    if row["judged_at"] and (item.judged_at is None or row["judged_at"] > item.judged_at):
        item.judged_at = row["judged_at"]


def _checked(items: dict[str, JudgedItem], row, evaluation: dict, criteria: dict, output: str,
             transcript: list[dict] | None, replies: list[str]) -> None:
    """The items of the case's checked criteria on one output, each with the check's verdict recomputed."""
    from helmbench.run.judge.judge import check_verdicts  # here: importing the judge costs ~0.1 s

    case = {"evaluation": evaluation, "request": {"response_format": json.loads(row["response_format_json"] or "null")}}
    for v in check_verdicts(case, *replies):
        if v.verdict in ("PASS", "FAIL") and v.criterion in criteria:
            _add(items, row, criteria[v.criterion], output, transcript, CHECKER, (v.verdict, v.verdict))


def judged_items(db, manifest_hash: str | None = None) -> tuple[str | None, dict[str, JudgedItem]]:
    """(manifest hash, items by hash) for the manifest (default: the latest one with judgements)."""
    from helmbench.run.judge.judge_prompt import response_field

    manifest_hash = manifest_hash or latest_judged_manifest(db)
    if manifest_hash is None:
        return None, {}
    items: dict[str, JudgedItem] = {}
    cases = _Cases()

    def judgment_of(row, criterion):
        stored = json.loads(row["judgment_json"]) if row["judgment_json"] else {}
        return stored.get(response_field(criterion)) if isinstance(stored, dict) else None

    checked: set[tuple[str, str]] = set()
    for row in judged_rows(db, manifest_hash):
        evaluation, criteria = cases.of(row)
        criterion = criteria.get(row["criterion"])
        if criterion is None or criterion.get("check"):
            continue
        _add(items, row, criterion, row["content"], None, row["judge_model"],
             (judgment_of(row, criterion), row["verdict"]))
        if evaluation.get("checks") and (row["case_hash"], row["content"]) not in checked:
            checked.add((row["case_hash"], row["content"]))
            _checked(items, row, evaluation, criteria, row["content"], None, [row["content"]])
    judged = transcript_judged_rows(db, manifest_hash)
    with_checks = checked_transcript_rows(db, manifest_hash)
    turns = result_transcripts(db, {r["result_id"] for r in [*judged, *with_checks]})
    for row in judged:
        evaluation, criteria = cases.of(row)
        criterion = criteria.get(row["criterion"])
        if criterion is None or criterion.get("check") or row["result_id"] not in turns:
            continue
        transcript, last = _transcript(turns[row["result_id"]], evaluation)
        _add(items, row, criterion, last, transcript, row["judge_model"], (judgment_of(row, criterion), row["verdict"]))
    for row in with_checks:
        evaluation, criteria = cases.of(row)
        if row["result_id"] not in turns:
            continue
        transcript, last = _transcript(turns[row["result_id"]], evaluation)
        replies = [t["content"] for t in transcript if t["role"] == "assistant"]
        _checked(items, row, evaluation, criteria, last, transcript, replies)
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
