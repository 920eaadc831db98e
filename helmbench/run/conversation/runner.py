"""Drive conversations: each turn one call, committed before the next turn is asked.

Each model has a lane (pool.run_workers) whose workers each carry one conversation at a time,
so conversations progress in parallel across cases while every call still waits for its
model's limiter, the retry policy and the invocation's budget, like a single answer. The
simulated user and the judge have limiters of their own.

Nothing is paid twice: a turn is looked up by its key before it is asked, and every paid turn
(the model's reply, the simulated user's message, a judgement) is committed before the
conversation moves on, so kill -9 in the middle of turn 3 loses at most the call in flight and
the next run asks exactly the missing turns. A failed call (after retries) is stored as an
error turn and the conversation stops there with an ERROR result; the next run asks that turn
again and continues. A simulated user whose reply is unusable (empty, out of character) is asked
again up to `USER_ATTEMPTS` times, then recorded as an ERROR: never as the model's failure.
"""

from __future__ import annotations

import asyncio
import json
import logging
import random
from typing import Any

from helmbench.manifest.conversation import turn_keys
from helmbench.run.budget import Budget
from helmbench.run.calls import Completion, ProviderError
from helmbench.run.conversation import turns as T
from helmbench.run.conversation import verdict as V
from helmbench.run.evaluate import outcome_for
from helmbench.run.judge import error as criterion_error, parse_judgement, precheck
from helmbench.run.judge_prompt import judge_request_hash
from helmbench.run.limiter import AdaptiveLimiter
from helmbench.run.pool import run_workers
from helmbench.run.retry import call_with_retries
from helmbench.run.writer import Writer
from helmbench.store.runs import now
from helmbench.store.turns import (
    TurnWrite,
    VerdictWrite,
    stored_judgement,
    stored_turns,
    write_conversation_batch,
)

log = logging.getLogger("helmbench.run.conversation")
USER_ATTEMPTS = 3


class ConversationWriter(Writer):
    """The single writer, committing turns, transcript judgements and conversation verdicts."""

    def write(self, db, batch: list) -> int:
        return write_conversation_batch(db, batch)


def call_columns(result: Completion | ProviderError, attempts: int) -> dict[str, Any]:
    """The columns a turn or judgement row takes from one call's outcome."""
    if isinstance(result, ProviderError):
        return {"error_kind": result.kind, "error_message": result.message[:1000], "cost": result.cost,
                "attempts": attempts}
    return {"content": result.content, "reasoning": result.reasoning, "finish_reason": result.finish_reason,
            "latency_ms": result.latency_ms, "prompt_tokens": result.prompt_tokens,
            "completion_tokens": result.completion_tokens, "cost": result.cost, "provider": result.provider,
            "model_version": result.model_version, "generation_id": result.generation_id, "attempts": attempts}


class ConversationRunner:
    def __init__(self, plan, db, provider, writer: ConversationWriter, progress, *, concurrency: int, policy,
                 budget: Budget, judge=None):
        self.plan = plan
        self.db = db
        self.provider = provider
        self.writer = writer
        self.progress = progress
        self.policy = policy
        self.budget = budget
        self.judge = judge
        self.concurrency = max(1, concurrency)
        self.limiters = {mp.id: AdaptiveLimiter(mp.entry.concurrency or self.concurrency, name=mp.id)
                         for mp in plan.models}
        self.extra: dict[str, AdaptiveLimiter] = {}  # the user models' and the judge's
        self.lanes = {mp.id: self.limiters[mp.id].maximum for mp in plan.models}
        self.rng = random.Random()
        self.stopping = False
        self.paid = 0  # calls made by this invocation

    # --- the pool's interface --------------------------------------------------------------

    @property
    def in_flight(self) -> int:
        return sum(lim.in_flight for lim in [*self.limiters.values(), *self.extra.values()])

    def may_start(self) -> bool:
        return not self.stopping and not self.budget.reached() and self.writer.error is None

    async def produce(self, queue: asyncio.Queue, n_workers: int, lane: str | None = None) -> None:
        for mp in [m for m in self.plan.models if m.id == lane]:
            for case in self.plan.conversations:
                for sample in range(self.plan.samples):
                    if self.stopping:
                        break
                    if (case["hash"], sample) not in mp.settled:
                        await queue.put((case, mp, sample))
        for _ in range(n_workers):
            await queue.put(None)

    async def work(self, queue: asyncio.Queue) -> None:
        while (item := await queue.get()) is not None:
            if not self.stopping:  # stored turns are still decided after the budget is spent
                await self.converse(*item)

    async def execute(self) -> str:
        try:
            interrupted, fatal = await run_workers(self, self.lanes, what="conversation turns")
        finally:
            self.writer.close()
        if fatal is not None:
            raise fatal
        if interrupted:
            return "interrupted"
        return "stopped_cost" if self.budget.reached() else "completed"

    # --- one call ------------------------------------------------------------------------------

    def limiter(self, model_id: str, concurrency: int | None = None) -> AdaptiveLimiter:
        if model_id not in self.extra:
            self.extra[model_id] = AdaptiveLimiter(concurrency or self.concurrency, name=model_id)
        return self.extra[model_id]

    async def call(self, model_id: str, settings: dict, request: dict, limiter: AdaptiveLimiter, label: str):
        result, attempts = await call_with_retries(
            lambda: self.provider.complete(model_id, settings, request), policy=self.policy, limiter=limiter,
            may_start=self.may_start, rng=self.rng, label=label, budget=self.budget)
        if result is not None:
            self.paid += 1
            self.progress.advance(cost=result.cost, error=isinstance(result, ProviderError))
        return result, attempts

    async def store(self, write) -> None:
        """Commit now: the next turn is asked only once this one is safe on disk."""
        self.writer.add(write)
        await asyncio.to_thread(self.writer.flush)

    # --- one conversation ----------------------------------------------------------------------

    async def converse(self, case: dict, mp, sample: int) -> None:
        keys = turn_keys(case)
        conv = case["request"]["conversation"]
        stored = stored_turns(self.db, keys, mp.id, mp.settings_hash, sample)
        base = {"model": mp.id, "settings_hash": mp.settings_hash, "sample": sample, "case_id": case["id"],
                "request_hash": case["request_hash"], "run_id": mp.run_id}
        label = f"{mp.id} {case['id']}#{sample}"
        transcript: list[dict] = []  # after the opening
        used: list[tuple[str, str]] = []
        replies: dict[int, dict] = {}
        for turn, key in enumerate(keys, start=1):
            row = dict(base, turn_key=key, turn=turn)
            # --- the user's message of this turn
            user = stored.get((key, "user"))
            if turn == 1 or conv["user"] == "scripted":
                text = case["request"]["messages"][-1]["content"] if turn == 1 else conv["turns"][turn - 2]
                if user is None:
                    user = dict(row, role="user", source="opening" if turn == 1 else "script", content=text,
                                created_at=now())
                    self.writer.add(TurnWrite(user))  # costs nothing: committed with the next paid turn
            elif user is None or user.get("error_kind"):
                landmark = "\n\n".join(lm["text"] for lm in conv["landmarks"] if lm["turn"] == turn) or None
                user = await self.simulated_user(case, transcript, turn, dict(row, role="user", landmark=landmark),
                                                 label)
                if user is None:
                    return  # stopped before it was sent
            used.append((key, "user"))
            if user.get("error_kind"):
                return await self.finish(case, mp, sample, used, error=f"simulated user at turn {turn}: "
                                                                        f"{user.get('error_message')}")
            if user.get("stop"):
                break
            if turn > 1:
                transcript.append({"role": "user", "content": user["content"]})
            # --- the model's reply
            reply = stored.get((key, "assistant"))
            if reply is None or reply.get("error_kind"):
                if not self.may_start():
                    return
                result, attempts = await self.call(mp.id, mp.settings, T.model_request(case, transcript),
                                                   self.limiters[mp.id], f"{label} turn {turn}")
                if result is None:
                    return
                reply = dict(row, role="assistant", source="model", caller=mp.id, created_at=now(),
                             **call_columns(result, attempts))
                outcome = outcome_for(case, reply) if case["evaluation"]["type"] != "sqe" else None
                if outcome is not None and outcome.parsed is not None:
                    reply["parsed_json"] = json.dumps(outcome.parsed, ensure_ascii=False, sort_keys=True)
                await self.store(TurnWrite(reply))
            used.append((key, "assistant"))
            if reply.get("error_kind"):
                return await self.finish(case, mp, sample, used,
                                         error=f"turn {turn}: {reply['error_kind']}: {reply.get('error_message') or ''}")
            replies[turn] = reply
            transcript.append({"role": "assistant", "content": reply.get("content") or ""})
        await self.finish(case, mp, sample, used, replies=replies, transcript=transcript)

    async def simulated_user(self, case: dict, transcript: list[dict], turn: int, row: dict, label: str) -> dict | None:
        """Ask the user model for its message at `turn`; store and return the turn row (an error row
        when every attempt was unusable). None when the run is stopping."""
        um = case["request"]["conversation"]["user_model"]
        request = T.user_request(case, transcript, turn)
        spent, problem, attempts = None, None, 0
        for _ in range(USER_ATTEMPTS):
            if not self.may_start():
                return None
            result, n = await self.call(um["id"], um["settings"], request, self.limiter(um["id"]),
                                        f"{label} user turn {turn}")
            if result is None:
                return None
            attempts += n
            spent = result.cost if spent is None else spent + (result.cost or 0.0)
            if isinstance(result, ProviderError):
                user = dict(row, source="user_model", caller=um["id"], created_at=now(), **call_columns(result, attempts))
                break
            reply = T.read_user_reply(result.content, result.finish_reason)
            if reply.problem is None:
                user = dict(row, source="user_model", caller=um["id"], created_at=now(),
                            **call_columns(result, attempts), stop=int(reply.stop))
                break
            problem = reply.problem
            log.info("%s: %s; asking again", label, problem)
        else:
            user = dict(row, source="user_model", caller=um["id"], created_at=now(), attempts=attempts,
                        error_kind="user_model_invalid", error_message=problem)
        user["cost"] = spent
        await self.store(TurnWrite(user))
        return user

    # --- the verdict ---------------------------------------------------------------------------

    async def finish(self, case: dict, mp, sample: int, used: list, *, replies: dict | None = None,
                     transcript: list | None = None, error: str | None = None) -> None:
        if error is not None:
            rows = [{"checkpoint": "conversation", "turn": None, "title": None, "verdict": "ERROR", "score": None,
                     "reason": error[:300]}]
        elif not replies:
            rows = [{"checkpoint": "conversation", "turn": None, "title": None, "verdict": "ERROR", "score": None,
                     "reason": "the simulated user ended the conversation before the model replied"}]
        else:
            rows = V.turn_checkpoints(case, replies)
            judged = await self.judge_transcript(case, mp, replies[max(replies)], transcript)
            if judged is None:
                return  # stopping: judged on the next run, from the stored turns
            rows += judged
        outcome = V.decide(rows)
        result = {"run_id": mp.run_id, "case_id": case["id"], "case_hash": case["hash"], "sample": sample,
                  "response_id": None, "verdict": outcome.verdict, "score": outcome.score, "reason": outcome.reason,
                  "created_at": now()}
        self.writer.add(VerdictWrite(result, rows, used, mp.id, mp.settings_hash))
        mp.verdicts[outcome.verdict] += 1
        if outcome.verdict != "ERROR":
            mp.settled.add((case["hash"], sample))

    async def judge_transcript(self, case: dict, mp, last: dict, transcript: list) -> list[dict] | None:
        messages = [*case["request"]["messages"], *transcript]
        pairs = V.criterion_requests(case, messages)
        if not pairs:
            return []
        early = precheck(case, last)
        if early is not None:
            return [{"checkpoint": cr["code"], "turn": None, "title": cr.get("title"), "verdict": early.verdict,
                     "score": early.score, "reason": early.reason} for cr, _ in pairs]
        judge = self.judge
        rows = []
        for criterion, request in pairs:
            h = judge_request_hash(request)
            stored = stored_judgement(self.db, h, judge.id, judge.settings_hash)
            if stored is None or stored.get("error_kind"):
                if not self.may_start():
                    return None
                result, attempts = await self.call(judge.id, judge.settings, request,
                                                   self.limiter(judge.id, judge.concurrency),
                                                   f"judge {case['id']} {criterion['code']}")
                if result is None:
                    return None
                stored = {"judge_request_hash": h, "judge_model": judge.id, "judge_settings_hash": judge.settings_hash,
                          "run_id": mp.run_id, "criterion": criterion["code"], "created_at": now(),
                          **{k: v for k, v in call_columns(result, attempts).items()
                             if k in ("content", "finish_reason", "cost", "latency_ms", "prompt_tokens",
                                      "completion_tokens", "attempts", "error_kind", "error_message")}}
                await self.store(TurnWrite(judgement=stored))
            if stored.get("error_kind"):
                verdict = criterion_error(criterion, stored["error_kind"], stored.get("error_message") or "")
            else:
                verdict = parse_judgement(criterion, stored.get("content"), stored.get("finish_reason"))
            rows.append(V.criterion_row(verdict, criterion.get("title")))
        return rows


def run_conversations(plan, db, opts, console, live: bool, judge, *, spent: float) -> tuple[str, float]:
    """The conversation phase of `helmbench run`: (how it ended, money spent so far)."""
    from helmbench.run.progress import Progress
    from helmbench.run.provider import Provider

    provider = Provider(opts.api_key or "", opts.api_base)
    budget = Budget(opts.max_cost, spent=spent)
    total = sum(mp.conversation_turns for mp in plan.models)
    with Progress(total, console, live=live) as progress:
        runner = ConversationRunner(plan, db, provider, ConversationWriter(opts.db), progress,
                                    concurrency=opts.concurrency, policy=opts.retry, budget=budget, judge=judge)
        status = asyncio.run(runner.execute())
    return status, budget.spent
