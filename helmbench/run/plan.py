"""Plan an invocation: per model, how many calls are new and how many are already stored.

Planning streams the manifest (nothing is held per case but a few counters), so a 10,000-case
manifest plans in the same memory as a 100-case one. The same pass powers `--dry-run`: it
needs no network and no litellm, only the manifest and, if it exists, the database.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass, field
from typing import Iterator

from helmbench.errors import UsageError
from helmbench.manifest.conversation import is_conversation, opens, played, turn_keys
from helmbench.manifest.conversation import samples_of as result_samples
from helmbench.run.config import settings_hash
from helmbench.run.http_target import stateful
from helmbench.run.selection import Shard
from helmbench.spec.models import ModelEntry
from helmbench.store.responses import done_keys


@dataclass
class ModelPlan:
    entry: ModelEntry
    settings: dict
    settings_hash: str
    done: set[tuple[str, int]] = field(default_factory=set)
    run_id: int | None = None
    settled: set[tuple[str, int]] = field(default_factory=set)  # (case_hash, sample) with a verdict in this run
    new: int = 0
    stored: int = 0
    input_chars: int = 0
    conversation_turns: int = 0  # model turns of conversations not stored yet
    user_turns: int = 0  # simulated-user turns of conversations not stored yet
    reasked_turns: int = 0  # of `conversation_turns`, those stored before the simulated user saw only the reply text
    turns_to_ask: dict[str, int] = field(default_factory=dict)  # conversation case id → its model turns not stored
    user_turns_to_ask: dict[tuple[str, str], int] = field(default_factory=dict)  # (case id, simulated user) → its turns not stored
    user_turns_by: dict[str, int] = field(default_factory=dict)  # simulated user's id → its turns not stored

    @property
    def id(self) -> str:
        return self.entry.id

    @property
    def where(self) -> str:
        """Where its calls go (the dry run says it): a litellm route and base URL, or a chatbot's URL."""
        from helmbench.run.provider import openrouter_base, where_to

        return where_to(self.id, self.settings, openrouter_base())

    @property
    def est_input_tokens(self) -> int:
        return self.input_chars // 4

    @property
    def new_calls(self) -> int:
        """Every call this invocation would send for the model: answers and conversation turns (the simulated
        user's turns are the user model's calls, counted on its own line: `Plan.user_calls`)."""
        return self.new + self.conversation_turns


@dataclass
class Plan:
    manifest: object  # helmbench.manifest.Manifest
    models: list[ModelPlan]
    scenarios: set[str] | None
    case_ids: set[str] | None
    samples: int
    cases: int = 0
    sqe_cases: int = 0
    conversations: list[dict] = field(default_factory=list)  # selected conversation cases (run turn by turn)
    shard: Shard | None = None  # `--shard K/N`: only the (case, model) pairs of this shard
    pairs: int = 0  # selected (case, model) pairs, every shard's
    shard_pairs: int = 0  # of `pairs`, those of this invocation's shard (all of them without --shard)
    user_models: list[ModelEntry] = field(default_factory=list)  # models.yml's simulated users: estimated and priced too

    def user_where(self, um: ModelEntry) -> str:
        """Where a simulated user's calls go (the dry run names it)."""
        from helmbench.run.provider import openrouter_base, where_to

        return where_to(um.id, um.settings(), openrouter_base())

    def user_calls_of(self, user_id: str) -> int:
        """One simulated user's turns not stored yet, across the models' conversations (an upper bound)."""
        return sum(m.user_turns_by.get(user_id, 0) for m in self.models)

    def result_samples(self, case: dict) -> int:
        """The results a case has in this invocation: `--samples`, times its simulated users."""
        return result_samples(case, self.samples)

    @property
    def new_calls(self) -> int:
        """The answer phase's calls (its progress total); `ModelPlan.new_calls` adds conversation turns."""
        return sum(m.new for m in self.models)

    @property
    def user_calls(self) -> int:
        """The simulated user's turns not stored yet, across the models' conversations (an upper bound)."""
        return sum(m.user_turns for m in self.models)

    @property
    def new_turns(self) -> int:
        return sum(m.conversation_turns for m in self.models)

    @property
    def reasked_turns(self) -> int:
        return sum(m.reasked_turns for m in self.models)

    @property
    def conversation_calls(self) -> int:
        """The conversation phase's calls at most (its progress total): model and simulated-user turns
        not stored (fewer when a simulated user stops early). Transcripts are judged in the judge phase."""
        return sum(m.conversation_turns + m.user_turns for m in self.models)

    def selected(self, case: dict) -> bool:
        if self.case_ids is not None and case["id"] not in self.case_ids:
            return False
        return self.scenarios is None or case["scenario"] in self.scenarios

    def takes(self, case: dict, mp: "ModelPlan") -> bool:
        """Whether this invocation asks `mp` the (selected) `case`: always, unless a shard says otherwise.
        Every phase (answers, conversations, the judge, the dry run's estimate) asks this, so a shard's
        conversations and judge calls follow its answers. An imported conversation (`run/imported.py`) is the
        output of one model label only."""
        owner = case.get("imported")
        if owner is not None:
            return owner["model"] == mp.id
        return self.shard is None or self.shard.takes(case, mp.id)


def _chars(request: dict) -> int:
    return sum(len(m.get("content") or "") if isinstance(m.get("content"), str) else 0 for m in request["messages"])


def build_plan(manifest, entries: list[ModelEntry], db, *, scenarios: set[str] | None,
               case_ids: set[str] | None, samples: int, preview: bool = False, shard: Shard | None = None,
               user_models: list[ModelEntry] | None = None) -> Plan:
    """`preview`: a stored failed response counts as done too: asking again would replace the
    response row a scored run's ERROR result points to, and so change that run's numbers."""
    models = []
    for entry in entries:
        settings = entry.settings()
        sh = settings_hash(settings)
        done = done_keys(db, entry.id, sh, with_errors=preview) if db is not None else set()
        models.append(ModelPlan(entry, settings, sh, done))
    plan = Plan(manifest, models, scenarios, case_ids, samples, shard=shard, user_models=list(user_models or []))
    seen_ids: list[str] = []
    found: set[str] = set()
    for case in manifest:
        if case_ids is not None:
            seen_ids.append(case["id"])
        if not plan.selected(case):
            continue
        found.add(case["id"])
        plan.cases += 1
        plan.sqe_cases += case["evaluation"]["type"] == "sqe"
        taken = [mp for mp in models if plan.takes(case, mp)]
        plan.pairs += len(models)
        plan.shard_pairs += len(taken)
        if is_conversation(case):
            plan.conversations.append(case)
            count_turns(plan, case, taken, db)
            continue
        chars = _chars(case["request"])
        for mp in taken:
            for sample in range(samples):
                if (case["request_hash"], sample) in mp.done:
                    mp.stored += 1
                else:
                    mp.new += 1
                    mp.input_chars += chars
    for missing in sorted((case_ids or set()) - found):
        close = difflib.get_close_matches(missing, seen_ids, n=3, cutoff=0.6)
        raise UsageError(f"unknown case id {missing!r}: the manifest has no such case",
                         hint=f"did you mean {', '.join(close)}?" if close else "list cases with `helmbench list`")
    return plan


def count_turns(plan: Plan, case: dict, models: list[ModelPlan], db) -> None:
    """Add the conversation's model turns not stored yet (an upper bound: a simulated user may stop early)."""
    from helmbench.store.turns import stored_turns

    for mp in models:
        asked: set[tuple[str, int]] = set()  # (turn key, turn sample): an opening reply two simulated users share
        for result_sample in range(plan.result_samples(case)):
            one, sample = played(case, result_sample)
            keys = turn_keys(one)
            conv = one["request"]["conversation"]
            legacy = turn_keys({**one, "request": {**one["request"], "conversation": {
                k: v for k, v in conv.items() if k != "reply_field"}}}) if "reply_field" in conv else keys
            stored = stored_turns(db, keys, mp.id, mp.settings_hash, sample) if db is not None else {}
            gaps = [k for k in keys if _missing(stored, k, "assistant") and (k, sample) not in asked]
            asked.update((k, sample) for k in gaps)
            missing = len(gaps)
            if missing and missing < len(keys) and stateful(mp.settings) and any(role == "assistant" for _, role in stored):
                missing = len(keys)  # cut mid-way: a stateful service's conversation starts again (kind.new_session)
            if legacy != keys and missing and db is not None:  # asked again on purpose: see turns.py
                before = stored_turns(db, legacy, mp.id, mp.settings_hash, sample)
                mp.reasked_turns += sum(_missing(stored, k, "assistant") and not _missing(before, old, "assistant")
                                        for k, old in zip(keys, legacy))
            if conv.get("user") != "scripted":  # the opening is authored, unless the simulated user writes it
                users = sum(_missing(stored, k, "user") for k in (keys if opens(conv) else keys[1:]))
                mp.user_turns += users
                uid = conv["user_model"]["id"]
                mp.user_turns_to_ask[(case["id"], uid)] = mp.user_turns_to_ask.get((case["id"], uid), 0) + users
                mp.user_turns_by[uid] = mp.user_turns_by.get(uid, 0) + users
            mp.conversation_turns += missing
            mp.turns_to_ask[case["id"]] = mp.turns_to_ask.get(case["id"], 0) + missing
            mp.stored += not missing


def _missing(stored: dict, key: str, role: str) -> bool:
    return (key, role) not in stored or stored[(key, role)]["error_kind"] is not None


@dataclass
class Job:
    case: dict
    model: ModelPlan
    sample: int

    @property
    def key(self) -> tuple[str, int]:
        return (self.case["request_hash"], self.sample)


def iter_jobs(plan: Plan, models: list[ModelPlan] | None = None, *, conversations: bool = False) -> Iterator[Job]:
    """Every (case, model, sample) of the plan (or of `models`), streamed in manifest order, models interleaved:
    the single answers, and with `conversations` the conversations too (what the judge judges: any output)."""
    models = plan.models if models is None else models
    for case in plan.manifest:
        if plan.selected(case) and (conversations or not is_conversation(case)):
            for mp in models:
                if not plan.takes(case, mp):
                    continue
                for sample in samples_of(case, plan.samples):
                    yield Job(case, mp, sample)


def samples_of(case: dict, samples: int) -> range:
    """The samples of a case: every one of the invocation's (times its simulated users), or the one an imported
    conversation was stored as."""
    owner = case.get("imported")
    return range(owner["sample"], owner["sample"] + 1) if owner is not None else range(result_samples(case, samples))
