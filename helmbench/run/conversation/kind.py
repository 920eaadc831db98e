"""A conversation turn as a job kind: each job is the next call one conversation needs.

A conversation is a small state machine (`transcript.Conversation`): `advance` walks it through
what is already stored (or costs nothing: the opening, a scripted message) until it needs a call
(the model's reply or the simulated user's message), and `finish` takes that call's outcome and
walks on. A conversation ends with its transcript stored: decided here when nothing is left to the
judge (checkpoints, checks), else judged in the judge phase like a stored answer (one judged
output, one judge job kind: `run/judge/`). The run is a series of rounds; each round is one phase
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
import uuid
from typing import Any, Hashable, Iterator

from helmbench.manifest.conversation import simulators
from helmbench.run.calls import Completion, ProviderError
from helmbench.run.conversation import turns as T
from helmbench.run.conversation import verdict as V
from helmbench.run.conversation.transcript import Conversation, conversation_of, ending, walk
from helmbench.run.evaluate import outcome_for
from helmbench.run.limiter import AdaptiveLimiter
from helmbench.run.writer import Writer
from helmbench.run.http_target import stateful
from helmbench.store.ledger import Account
from helmbench.store.runs import now
from helmbench.store.turns import SessionRestart, TurnWrite, VerdictWrite, write_conversation_batch

log = logging.getLogger("helmbench.run.conversation")
USER_ATTEMPTS = 3


def conversation_writer(db_path) -> Writer:
    """The single writer, committing turns and the verdicts of conversations nothing is left to judge in."""
    return Writer(db_path, write=write_conversation_batch)


def call_columns(result: Completion | ProviderError, attempts: int) -> dict[str, Any]:
    """The columns a turn row takes from one call's outcome."""
    if isinstance(result, ProviderError):
        return {"error_kind": result.kind, "error_message": result.message[:1000], "cost": result.cost,
                "attempts": attempts}
    return {"content": result.content, "reasoning": result.reasoning, "finish_reason": result.finish_reason,
            "latency_ms": result.latency_ms, "prompt_tokens": result.prompt_tokens,
            "completion_tokens": result.completion_tokens, "cost": result.cost, "provider": result.provider,
            "model_version": result.model_version, "generation_id": result.generation_id, "attempts": attempts}


class ConversationTurns:
    """The job kind: the next call of every conversation still going (one round)."""

    what = "conversation turns"

    def __init__(self, plan, db, *, concurrency: int):
        self.plan, self.db = plan, db
        self.concurrency = max(1, concurrency)
        self.writer: Writer | None = None  # one per round: the engine closes (commits) it when the round ends
        self.states: list[Conversation] = []
        self.restarted: list[str] = []  # stateful conversations started again (`new_session`)
        self._round: dict[Hashable, list[Conversation]] = {}
        self._lanes = {mp.id: AdaptiveLimiter(mp.entry.concurrency or self.concurrency, name=mp.id)
                       for mp in plan.models}
        for case in plan.conversations:
            for um in simulators(case["request"]["conversation"]):  # each simulated user on a lane of its own
                if ("user", um["id"]) not in self._lanes:
                    self._lanes[("user", um["id"])] = AdaptiveLimiter(self.concurrency,
                                                                      name=f"{um['id']} (simulated user)")

    # --- rounds --------------------------------------------------------------------------------

    def start(self, writer: Writer) -> None:
        """Every conversation of the plan without a verdict in its run, walked as far as the store allows."""
        self.writer = writer
        for mp in self.plan.models:
            for case in self.plan.conversations:
                for sample in range(self.plan.result_samples(case)) if self.plan.takes(case, mp) else ():
                    if (case["hash"], sample) in mp.settled:
                        continue
                    state = conversation_of(case, mp, sample, self.db)
                    if stateful(mp.settings):
                        self.new_session(state)
                    self.states.append(state)
                    self.advance(state)

    def new_session(self, s: Conversation) -> None:
        """A stateful service keeps the conversation itself, under a session id made here for this walk. A
        conversation with it that was cut mid-way (a run stopped, a turn failed) cannot be continued: the
        service's session is gone, so it starts again from its first turn, and the run says so."""
        s.session = uuid.uuid4().hex
        if not any(role == "assistant" for _, role in s.stored):
            return
        probe = conversation_of(s.case, s.mp, s.sample, self.db)
        walk(probe, None)
        if probe.pending is None:  # every turn stored: nothing to continue
            return
        self.writer.add(SessionRestart(s.keys, s.mp.id, s.mp.settings_hash, s.turn_sample))
        asked = sum(role == "assistant" and not row.get("error_kind") for (_, role), row in s.stored.items())
        s.stored = {}
        self.restarted.append(f"{s.mp.id} {s.case['id']}#{s.sample}")
        log.warning("%s %s#%d: a conversation with a stateful service was cut mid-way; its session cannot be "
                    "resumed, so it starts again from turn 1 (%d stored repl%s asked again)", s.mp.id, s.case["id"],
                    s.sample, asked, "y" if asked == 1 else "ies", extra={"run_id": s.mp.run_id})

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
        return state.mp.id

    def jobs(self, lane: Hashable) -> Iterator[Conversation | None]:
        yield from self._round.get(lane, [])

    def key(self, state: Conversation) -> Hashable:
        """Two simulated users of one case share the model's reply to an authored opening (the same request,
        stored once under the same key and sample): their walks wait on one call. Every other call is its
        walk's own (a stateful service's session included)."""
        if state.pending == "model" and not stateful(state.mp.settings):
            return ("model", state.mp.id, state.keys[state.turn - 1], state.turn_sample)
        return id(state)

    def request(self, state: Conversation) -> tuple[str, dict, dict]:
        if state.pending == "user":
            um = state.conv["user_model"]
            return um["id"], um["settings"], T.user_request(state.case, state.transcript, state.turn, state.first)
        request = T.model_request(state.case, state.transcript, state.opening)
        if state.session is not None:  # not part of any key: the service's own handle on the conversation
            request["session"] = state.session
        return state.mp.id, state.mp.settings, request

    def label(self, state: Conversation) -> str:
        return f"{state.label} ({state.pending})"

    def account(self, state: Conversation) -> Account:
        kind = "user" if state.pending == "user" else "turn"
        return Account(kind, state.mp.run_id, state.keys[state.turn - 1], state.mp.settings_hash, state.turn_sample)

    def stopped_by_cost(self) -> bool:
        return True

    def dropped(self, jobs: list[Conversation]) -> None:
        pass  # nothing was stored: the next round (or run) asks again

    def finish(self, jobs: list[Conversation], result: Completion | ProviderError, attempts: int) -> bool:
        state = jobs[0]
        failed = isinstance(result, ProviderError)
        if state.pending == "model":
            self.model_answered(state, result, attempts)
            for other in jobs[1:]:  # walks that waited on the same reply (`key`) take it as stored
                other.stored[(state.keys[state.turn - 1], "assistant")] = state.stored.get(
                    (state.keys[state.turn - 1], "assistant"))
                if isinstance(result, ProviderError):
                    other.stored.pop((state.keys[state.turn - 1], "assistant"), None)
                    other.used.append((state.keys[state.turn - 1], "assistant"))
                    self.error(other, f"turn {other.turn}: {result.kind}: {result.message}")
        else:
            self.user_answered(state, result, attempts)
        for s in jobs:
            if s.pending is not None:  # it walks on now; its next call waits for the next round
                s.pending = None
                self.advance(s)
        return failed

    # --- walking a conversation -----------------------------------------------------------------

    def advance(self, s: Conversation) -> None:
        """Walk `s` until it needs a call or ends; an ended conversation is decided here when nothing is
        left to the judge, else it is done here (its transcript is stored: the judge phase takes it on)."""
        walk(s, self.writer.add)
        if s.pending is None and s.step == "end":
            if ending(s):
                s.step = "done"
            else:
                self.decide(s)

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
            if reply.stop and s.turn == 1:  # `opening: simulated`: the stop rule is not shown yet, and a conversation
                # ended before it began would be an ERROR no later run could turn into a result
                reply = T.UserReply(None, problem="the simulated user ended the conversation before writing its first message")
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

    # --- deciding ---------------------------------------------------------------------------------

    def error(self, s: Conversation, why: str) -> None:
        s.rows = [{"checkpoint": "conversation", "turn": None, "title": None, "verdict": "ERROR", "score": None,
                   "reason": why[:300]}]
        self.decide(s)
        s.pending = None

    def decide(self, s: Conversation) -> None:
        outcome = V.decide(s.rows)
        result = {"run_id": s.mp.run_id, "case_id": s.case["id"], "case_hash": s.case["hash"], "sample": s.sample,
                  "response_id": None, "verdict": outcome.verdict, "score": outcome.score, "reason": outcome.reason,
                  "created_at": now()}
        self.writer.add(VerdictWrite(result, s.stored_as()))
        if outcome.verdict != "ERROR":
            s.mp.settled.add((s.case["hash"], s.sample))
        s.step, s.pending = "done", None
