"""A conversation turn as a job kind: each job is the next call one conversation needs.

A conversation is a small state machine (`Conversation`): `advance` walks it through what is
already stored (or costs nothing: the opening, a scripted message) until it needs a call (the
model's reply, the simulated user's message, or a judgement of the transcript), and `finish`
takes that call's outcome and walks on. The run is a series of rounds; each round is one phase
on the engine with one job per conversation still going, so conversations progress in parallel
across cases (each call on its model's lane and limiter, the retry policy and the budget), and
a round ends with everything it paid for committed, before any turn that depends on it is asked.
A kill -9 loses at most the calls whose answers were not yet committed; the next run asks
exactly the turns that are not stored.

A failed call (after retries) is stored as an error turn and the conversation ends there as an
ERROR (asked again by the next run). A simulated user's reply that is unusable (empty, out of
character, too long) is asked again in the next round, up to `USER_ATTEMPTS` calls, then stored
as an ERROR turn: never counted as the model's failure.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass, field
from typing import Any, Hashable, Iterator

from helmbench.manifest.conversation import turn_keys
from helmbench.run.calls import Completion, ProviderError
from helmbench.run.conversation import turns as T
from helmbench.run.conversation import verdict as V
from helmbench.run.evaluate import outcome_for
from helmbench.run.judge.judge import combine, error as criterion_error, parse_judgement, precheck
from helmbench.run.judge.judge_prompt import judge_request_hash
from helmbench.run.neutralise import neutralise, tags_in
from helmbench.run.limiter import AdaptiveLimiter
from helmbench.run.writer import Writer
from helmbench.store.ledger import Account
from helmbench.store.runs import now
from helmbench.store.turns import TurnWrite, VerdictWrite, stored_judgement, stored_turns, write_conversation_batch

log = logging.getLogger("helmbench.run.conversation")
USER_ATTEMPTS = 3
_JUDGEMENT_COLUMNS = ("content", "finish_reason", "cost", "latency_ms", "prompt_tokens", "completion_tokens",
                      "attempts", "error_kind", "error_message")


def conversation_writer(db_path) -> Writer:
    """The single writer, committing turns, transcript judgements and conversation verdicts."""
    return Writer(db_path, write=write_conversation_batch)


def call_columns(result: Completion | ProviderError, attempts: int) -> dict[str, Any]:
    """The columns a turn or judgement row takes from one call's outcome."""
    if isinstance(result, ProviderError):
        return {"error_kind": result.kind, "error_message": result.message[:1000], "cost": result.cost,
                "attempts": attempts}
    return {"content": result.content, "reasoning": result.reasoning, "finish_reason": result.finish_reason,
            "latency_ms": result.latency_ms, "prompt_tokens": result.prompt_tokens,
            "completion_tokens": result.completion_tokens, "cost": result.cost, "provider": result.provider,
            "model_version": result.model_version, "generation_id": result.generation_id, "attempts": attempts}


@dataclass(eq=False)
class Conversation:
    """One (case, model, sample) and how far it has got."""

    case: dict
    mp: Any  # plan.ModelPlan
    sample: int
    keys: list[str]
    stored: dict  # (turn_key, role) → row
    turn: int = 1
    step: str = "user"  # user → model → (next turn) … → judge → done
    pending: str | None = None  # the call it waits for: "user", "model" or "judge"
    transcript: list[dict] = field(default_factory=list)  # after the opening
    used: list[tuple[str, str]] = field(default_factory=list)
    replies: dict[int, dict] = field(default_factory=dict)
    user_attempts: int = 0
    user_cost: float | None = None
    rows: list[dict] = field(default_factory=list)  # checkpoint and criterion verdicts so far
    # (criterion, judge request, judge) still to judge: one entry per judge of an ensemble
    criteria: list[tuple[dict, dict, Any]] = field(default_factory=list)
    votes: dict[str, list] = field(default_factory=dict)  # criterion code → each judge's CriterionVerdict so far
    judgements: list[tuple[str, str, str]] = field(default_factory=list)  # the transcript judgements used (keys)

    @property
    def conv(self) -> dict:
        return self.case["request"]["conversation"]

    @property
    def label(self) -> str:
        return f"{self.mp.id} {self.case['id']}#{self.sample} turn {self.turn}"

    def row(self, role: str, **values) -> dict:
        return {"turn_key": self.keys[self.turn - 1], "role": role, "turn": self.turn, "model": self.mp.id,
                "settings_hash": self.mp.settings_hash, "sample": self.sample, "case_id": self.case["id"],
                "request_hash": self.case["request_hash"], "run_id": self.mp.run_id, "created_at": now(), **values}


class ConversationTurns:
    """The job kind: the next call of every conversation still going (one round)."""

    what = "conversation turns"

    def __init__(self, plan, db, *, concurrency: int, judge=None):
        self.plan, self.db = plan, db
        self.judges = list(judge.members) if judge is not None else []  # one marking model, or an ensemble
        self.concurrency = max(1, concurrency)
        self.called: dict[tuple[str, str], dict] = {}  # (judge, request hash) → its judgement paid now
        self.writer: Writer | None = None  # one per round: the engine closes (commits) it when the round ends
        self.states: list[Conversation] = []
        self._round: dict[Hashable, list[Conversation]] = {}
        self._lanes = {mp.id: AdaptiveLimiter(mp.entry.concurrency or self.concurrency, name=mp.id)
                       for mp in plan.models}
        for case in plan.conversations:
            um = case["request"]["conversation"].get("user_model")
            if um and ("user", um["id"]) not in self._lanes:
                self._lanes[("user", um["id"])] = AdaptiveLimiter(self.concurrency, name=f"{um['id']} (simulated user)")
        for j in self.judges:
            self._lanes[("judge", j.id)] = AdaptiveLimiter(j.concurrency or self.concurrency, name=f"{j.id} (judge)")

    # --- rounds --------------------------------------------------------------------------------

    def start(self, writer: Writer) -> None:
        """Every conversation of the plan without a verdict in its run, walked as far as the store allows."""
        self.writer = writer
        for mp in self.plan.models:
            for case in self.plan.conversations:
                for sample in range(self.plan.samples) if self.plan.takes(case, mp) else ():
                    if (case["hash"], sample) in mp.settled:
                        continue
                    keys = turn_keys(case)
                    state = Conversation(case, mp, sample, keys, stored_turns(self.db, keys, mp.id, mp.settings_hash,
                                                                              sample))
                    self.states.append(state)
                    self.advance(state)

    @property
    def going(self) -> int:
        return sum(s.pending is not None for s in self.states)

    def next_round(self, writer: Writer) -> None:
        """Fix this round's jobs before it starts: a call that becomes due during the round (the next
        turn of a conversation whose reply just arrived) waits for the next one, after the commit."""
        self.writer = writer
        self._round: dict[Hashable, list[Conversation]] = {}
        for s in self.states:
            if s.pending is not None:
                self._round.setdefault(self.lane_of(s), []).append(s)

    # --- the engine's interface -----------------------------------------------------------------

    def lanes(self) -> dict[Hashable, AdaptiveLimiter]:
        return self._lanes

    def lane_of(self, state: Conversation) -> Hashable:
        if state.pending == "user":
            return ("user", state.conv["user_model"]["id"])
        if state.pending == "judge":
            return ("judge", state.criteria[0][2].id)
        return state.mp.id

    def jobs(self, lane: Hashable) -> Iterator[Conversation | None]:
        for state in self._round.get(lane, []):
            if state.pending == "judge" and self.judged_now(state):
                yield None  # the same judge request was answered earlier in this invocation
            else:
                yield state

    def key(self, state: Conversation) -> Hashable:
        """A judgement's key is its request: identical transcripts judged at once share one call."""
        if state.pending == "judge":
            _, request, judge = state.criteria[0]
            return ("judge", judge.id, judge_request_hash(request))
        return id(state)

    def request(self, state: Conversation) -> tuple[str, dict, dict]:
        if state.pending == "user":
            um = state.conv["user_model"]
            return um["id"], um["settings"], T.user_request(state.case, state.transcript, state.turn)
        if state.pending == "judge":
            _, request, judge = state.criteria[0]
            return judge.id, judge.settings, request
        return state.mp.id, state.mp.settings, T.model_request(state.case, state.transcript)

    def label(self, state: Conversation) -> str:
        return f"{state.label} ({state.pending})"

    def account(self, state: Conversation) -> Account:
        if state.pending == "judge":
            _, request, judge = state.criteria[0]
            return Account("judge", state.mp.run_id, judge_request_hash(request), judge.settings_hash)
        kind = "user" if state.pending == "user" else "turn"
        return Account(kind, state.mp.run_id, state.keys[state.turn - 1], state.mp.settings_hash, state.sample)

    def stopped_by_cost(self) -> bool:
        return True

    def dropped(self, jobs: list[Conversation]) -> None:
        pass  # nothing was stored: the next round (or run) asks again

    def finish(self, jobs: list[Conversation], result: Completion | ProviderError, attempts: int) -> bool:
        state = jobs[0]
        failed = isinstance(result, ProviderError)
        if state.pending == "model":
            self.model_answered(state, result, attempts)
        elif state.pending == "user":
            self.user_answered(state, result, attempts)
        else:
            row = self.judge_answered(state, result, attempts)
            for other in jobs[1:]:  # identical judge requests that waited for this call
                self.judged(other, row)
        for s in jobs:
            if s.pending is not None:  # it walks on now; its next call waits for the next round
                s.pending = None
                self.advance(s)
        return failed

    # --- walking a conversation -----------------------------------------------------------------

    def advance(self, s: Conversation) -> None:
        """Walk `s` through what is stored or free until it needs a call (sets `pending`) or ends."""
        s.pending = None
        while s.step != "done":
            if s.step == "judge":
                if s.criteria:
                    if self.stored_judgement(s):
                        continue
                    s.pending = "judge"
                    return
                return self.decide(s)
            if s.turn > len(s.keys):
                self.start_judging(s)
                continue
            key = s.keys[s.turn - 1]
            if s.step == "user":
                if s.turn == 1 or s.conv["user"] == "scripted":
                    if (key, "user") not in s.stored:
                        text = s.case["request"]["messages"][-1]["content"] if s.turn == 1 else s.conv["turns"][s.turn - 2]
                        row = s.row("user", source="opening" if s.turn == 1 else "script", content=text)
                        self.writer.add(TurnWrite(row))  # costs nothing: committed with the round
                        s.stored[(key, "user")] = row
                user = s.stored.get((key, "user"))
                if user is None or user.get("error_kind"):
                    s.pending = "user"
                    return
                s.used.append((key, "user"))
                if user.get("stop"):
                    self.start_judging(s)
                    continue
                if s.turn > 1:
                    content = user["content"]
                    if user.get("source") == "user_model":  # a model's text, about to reach the model under test
                        content = neutralise(content, tags_in(s.case["request"]["messages"]))
                    s.transcript.append({"role": "user", "content": content})
                s.step = "model"
                continue
            reply = s.stored.get((key, "assistant"))
            if reply is None or reply.get("error_kind"):
                s.pending = "model"
                return
            s.used.append((key, "assistant"))
            s.replies[s.turn] = reply
            s.transcript.append({"role": "assistant", "content": reply.get("content") or ""})
            s.turn, s.step = s.turn + 1, "user"

    def model_answered(self, s: Conversation, result, attempts: int) -> None:
        reply = s.row("assistant", source="model", caller=s.mp.id, **call_columns(result, attempts))
        if not isinstance(result, ProviderError) and s.case["evaluation"]["type"] != "sqe":
            outcome = outcome_for(s.case, reply)
            if outcome is not None and outcome.parsed is not None:
                reply["parsed_json"] = json.dumps(outcome.parsed, ensure_ascii=False, sort_keys=True)
        self.writer.add(TurnWrite(reply))
        if isinstance(result, ProviderError):
            s.used.append((reply["turn_key"], "assistant"))
            log.warning("%s: %s after %d attempt(s): %s", s.label, result.kind, attempts, result.message[:300])
            self.error(s, f"turn {s.turn}: {result.kind}: {result.message}")
            return
        s.stored[(reply["turn_key"], "assistant")] = reply

    def user_answered(self, s: Conversation, result, attempts: int) -> None:
        um = s.conv["user_model"]
        s.user_attempts += attempts
        s.user_cost = result.cost if s.user_cost is None else s.user_cost + (result.cost or 0.0)
        landmark = "\n\n".join(lm["text"] for lm in s.conv["landmarks"] if lm["turn"] == s.turn) or None
        base = {"source": "user_model", "caller": um["id"], "landmark": landmark}
        if isinstance(result, ProviderError):
            row = s.row("user", **base, **call_columns(result, s.user_attempts))
        else:
            reply = T.read_user_reply(result.content, result.finish_reason)
            if reply.problem is not None and s.user_attempts < USER_ATTEMPTS:
                log.info("%s: %s; asking again", s.label, reply.problem)
                return  # `pending` stays "user": asked again next round
            if reply.problem is not None:
                row = s.row("user", **base, attempts=s.user_attempts, error_kind="user_model_invalid",
                            error_message=reply.problem)
            else:
                row = s.row("user", **base, **call_columns(result, s.user_attempts), stop=int(reply.stop))
        row["cost"] = s.user_cost
        s.user_attempts, s.user_cost = 0, None  # the next turn starts afresh
        self.writer.add(TurnWrite(row))
        s.stored[(row["turn_key"], "user")] = row
        if row.get("error_kind"):
            s.used.append((row["turn_key"], "user"))
            self.error(s, f"simulated user at turn {s.turn}: {row.get('error_message')}")

    # --- judging and deciding ---------------------------------------------------------------------

    def start_judging(self, s: Conversation) -> None:
        s.step = "judge"
        if not s.replies:
            s.rows = [{"checkpoint": "conversation", "turn": None, "title": None, "verdict": "ERROR", "score": None,
                       "reason": "the simulated user ended the conversation before the model replied"}]
            return
        s.rows = V.turn_checkpoints(s.case, s.replies)
        pairs = V.criterion_requests(s.case, [*s.case["request"]["messages"], *s.transcript])
        early = precheck(s.case, s.replies[max(s.replies)]) if pairs else None
        if early is not None:  # the last reply cannot be judged: its own verdict for every criterion
            s.rows += [{"checkpoint": cr["code"], "turn": None, "title": cr.get("title"), "verdict": early.verdict,
                        "score": early.score, "reason": early.reason} for cr, _ in pairs]
            pairs = []
        s.criteria = [(cr, request, j) for cr, request in pairs for j in self.judges]

    def stored_judgement(self, s: Conversation) -> bool:
        """Use a stored judgement of the next criterion, if there is a usable one."""
        criterion, request, judge = s.criteria[0]
        found = stored_judgement(self.db, judge_request_hash(request), judge.id, judge.settings_hash)
        if found is None or found.get("error_kind"):
            return False
        self.judged(s, found)
        return True

    def judged_now(self, s: Conversation) -> bool:
        """Settle the next criterion of `s` with a judgement paid earlier in this invocation, if any
        (not committed yet, so `stored_judgement` cannot see it): identical requests are paid once."""
        _, request, judge = s.criteria[0]
        row = self.called.get((judge.id, judge_request_hash(request)))
        if row is None:
            return False
        self.judged(s, row)
        s.pending = None
        self.advance(s)
        return True

    def judge_answered(self, s: Conversation, result, attempts: int) -> dict:
        criterion, request, judge = s.criteria[0]
        columns = {k: v for k, v in call_columns(result, attempts).items() if k in _JUDGEMENT_COLUMNS}
        row = {"judge_request_hash": judge_request_hash(request), "judge_model": judge.id,
               "judge_settings_hash": judge.settings_hash, "run_id": s.mp.run_id,
               "criterion": criterion["code"], "created_at": now(), **columns}
        self.writer.add(TurnWrite(judgement=row))
        self.called[(judge.id, row["judge_request_hash"])] = row
        self.judged(s, row)
        return row

    def judged(self, s: Conversation, row: dict) -> None:
        criterion, _, _ = s.criteria.pop(0)
        s.judgements.append((row["judge_request_hash"], row["judge_model"], row["judge_settings_hash"]))
        if row.get("error_kind"):
            verdict = criterion_error(criterion, row["error_kind"], row.get("error_message") or "")
        else:
            verdict = parse_judgement(criterion, row.get("content"), row.get("finish_reason"))
        votes = s.votes.setdefault(criterion["code"], [])
        votes.append(verdict)
        if len(votes) == len(self.judges):  # every judge of the ensemble has spoken: their majority
            s.rows.append(V.criterion_row(combine(criterion, votes), criterion.get("title")))

    def error(self, s: Conversation, why: str) -> None:
        s.rows = [{"checkpoint": "conversation", "turn": None, "title": None, "verdict": "ERROR", "score": None,
                   "reason": why[:300]}]
        s.criteria = []
        self.decide(s)
        s.pending = None

    def decide(self, s: Conversation) -> None:
        outcome = V.decide(s.rows)
        result = {"run_id": s.mp.run_id, "case_id": s.case["id"], "case_hash": s.case["hash"], "sample": s.sample,
                  "response_id": None, "verdict": outcome.verdict, "score": outcome.score, "reason": outcome.reason,
                  "created_at": now()}
        self.writer.add(VerdictWrite(result, s.rows, s.used, s.mp.id, s.mp.settings_hash, s.judgements))
        if outcome.verdict != "ERROR":
            s.mp.settled.add((s.case["hash"], s.sample))
        s.step, s.pending = "done", None
