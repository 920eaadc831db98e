"""Judging inside `helmbench run`: after the model calls, every stored sqe answer without a verdict
is judged, one marking-model call per criterion, and its case verdict is written.

It reuses the executor's machinery: `call_with_retries` (backoff with jitter, Retry-After), an
adaptive concurrency limiter of its own (the judge is a different model with its own rate
limits), the same money counter (`--max-cost` covers model and judge calls together) and a
batching single writer. Because what needs judging is read back from the store (answers
without a result in this run), a crash between an answer and its judgement costs nothing: the
next run finds the answer stored and judges it without asking the model again. Judgements are
cached by their request, so a criterion's edit re-judges only that criterion, and an unchanged
re-run makes no call. Identical judge requests within one invocation are sent once.
"""

from __future__ import annotations

import asyncio
import json
import logging
import random
from typing import Any, Callable

from helmbench.run.budget import Budget
from helmbench.run.calls import Completion, ProviderError
from helmbench.run.config import RetryPolicy
from helmbench.run.executor import result_row
from helmbench.run.judge import CriterionVerdict, aggregate, decide, error, parse_judgement
from helmbench.run.judge_plan import CaseWork, Item, JudgeModel, iter_work
from helmbench.run.judge_prompt import response_field
from helmbench.run.limiter import AdaptiveLimiter, report
from helmbench.run.pool import run_workers
from helmbench.run.retry import call_with_retries
from helmbench.run.writer import Writer
from helmbench.store.judgements import JudgedCase, write_judged
from helmbench.store.runs import now

log = logging.getLogger("helmbench.run.judge")


class JudgementWriter(Writer):
    """The executor's writer thread, committing judged cases (judgements, result, links) instead."""

    def write(self, db, batch: list) -> int:
        return write_judged(db, batch)


def judgement_row(judge: JudgeModel, work: CaseWork, item: Item, result: Completion | ProviderError,
                  attempts: int) -> dict[str, Any]:
    """The judgements row of one call; its verdict/score are as decided for the criterion that asked."""
    criterion = item.criterion
    if isinstance(result, ProviderError):
        v = error(criterion, result.kind, result.message)
        usage: dict[str, Any] = {"cost": result.cost}  # a billed failure (no choices) is recorded
    else:
        v = parse_judgement(criterion, result.content, result.finish_reason)
        usage = {"raw": result.content, "cost": result.cost, "latency_ms": result.latency_ms,
                 "prompt_tokens": result.prompt_tokens, "completion_tokens": result.completion_tokens}
    return {
        "judge_request_hash": item.hash, "judge_model": judge.id, "judge_settings_hash": judge.settings_hash,
        "response_id": work.response["id"], "run_id": work.job.model.run_id, "criterion": criterion["code"],
        "verdict": v.verdict, "score": v.score,
        "judgment_json": None if v.judgment is None else json.dumps({response_field(criterion): v.judgment},
                                                                      ensure_ascii=False),
        "justification": v.justification, "attempts": attempts, "error_kind": v.error_kind,
        "error_message": v.error_message, "created_at": now(), **usage,
    }


def verdict_of(criterion: dict, row: dict) -> CriterionVerdict:
    """A stored judgement read against the criterion as it is now (pass_values and scores may have
    changed since: they are not part of what the judge is asked, so the judgement is reused)."""
    if row.get("error_kind"):
        return error(criterion, row["error_kind"], row.get("error_message") or "")
    judgment = json.loads(row["judgment_json"]).get(response_field(criterion))
    verdict, score = decide(criterion, judgment)
    return CriterionVerdict(criterion["code"], verdict, score, judgment, row.get("justification"))


class JudgePhase:
    def __init__(self, plan, db, judge: JudgeModel, provider_factory: Callable[[], Any], writer: Writer, progress,
                 *, settled: dict[str, set], concurrency: int, policy: RetryPolicy, max_cost: float | None = None,
                 spent: float = 0.0):
        self.plan, self.db, self.judge = plan, db, judge
        self.provider_factory = provider_factory
        self.provider = None
        self.writer, self.progress, self.policy = writer, progress, policy
        self.max_cost = max_cost
        self.budget = Budget(max_cost, spent)  # model and judge money of this invocation
        self.judge_spent = 0.0
        self.calls = 0
        self.concurrency = max(1, judge.concurrency or concurrency)
        self.limiter = AdaptiveLimiter(self.concurrency, name=f"judge {judge.id}")
        self.rng = random.Random()
        self.stopping = False
        self.inflight: dict[str, asyncio.Future] = {}
        self.skipped = 0  # cases left unjudged because the money limit was reached
        self.settled = settled  # per model id: (case_hash, sample) with a PASS/FAIL in the run

    @property
    def spent(self) -> float:
        return self.budget.spent

    def cost_reached(self) -> bool:
        return self.budget.reached()

    def may_start(self) -> bool:
        return not self.stopping and not self.cost_reached() and self.writer.error is None

    def settle(self, work: CaseWork, links: list[tuple[dict | int, CriterionVerdict]]) -> None:
        outcome = work.outcome or aggregate([v for _, v in links])
        result = result_row(work.job, outcome, work.response["id"])
        self.writer.add(JudgedCase([(ref, v.verdict, v.score) for ref, v in links], result))
        mp = work.job.model
        self.settled.setdefault(mp.id, set()).add((work.job.case["hash"], work.job.sample))
        mp.verdicts[outcome.verdict] += 1
        log.debug("%s %s#%d: %s (%s)", mp.id, work.job.case["id"], work.job.sample, outcome.verdict, outcome.reason,
                  extra={"run_id": mp.run_id})

    @property
    def in_flight(self) -> int:
        return self.limiter.in_flight

    async def produce(self, queue: asyncio.Queue, n_workers: int, lane=None) -> None:
        for n, work in enumerate(iter_work(self.plan, self.db, self.judge, self.settled)):
            if self.stopping:
                break
            if work.outcome is not None:
                self.settle(work, [])
            elif not work.to_call:
                self.settle(work, [(it.stored["id"], verdict_of(it.criterion, it.stored)) for it in work.items])
            elif self.cost_reached():
                self.skipped += 1
            else:
                await queue.put(work)
            if n % 256 == 0:
                await asyncio.sleep(0)
        for _ in range(n_workers):
            await queue.put(None)

    async def work(self, queue: asyncio.Queue) -> None:
        while True:
            work = await queue.get()
            if work is None:
                return
            links = await asyncio.gather(*(self.judgement(work, item) for item in work.items))
            if any(link is None for link in links):  # stopped before every criterion was asked
                self.skipped += 1
                continue
            self.settle(work, links)

    async def judgement(self, work: CaseWork, item: Item) -> tuple[dict | int, CriterionVerdict] | None:
        if item.cached:
            return item.stored["id"], verdict_of(item.criterion, item.stored)
        future = self.inflight.get(item.hash)
        if future is None:
            future = self.inflight[item.hash] = asyncio.ensure_future(self.call(work, item))
        row = await future
        return None if row is None else (row, verdict_of(item.criterion, row))

    async def call(self, work: CaseWork, item: Item) -> dict | None:
        if self.provider is None:
            self.provider = self.provider_factory()
        label = f"judge {self.judge.id} {work.job.case['id']}#{work.job.sample} {item.criterion['code']}"
        judge = self.judge
        result, attempts = await call_with_retries(
            lambda: self.provider.complete(judge.id, judge.settings, item.request),
            policy=self.policy, limiter=self.limiter, may_start=self.may_start, rng=self.rng, label=label,
            budget=self.budget,
        )
        if result is None:
            return None
        row = judgement_row(self.judge, work, item, result, attempts)
        # saved at once: money spent is never lost to a stop or crash before the case completes
        self.writer.add(JudgedCase([(row, None, None)], None))
        cost = result.cost  # already counted by the budget
        self.judge_spent += cost or 0.0
        self.calls += 1
        if row["error_kind"]:
            log.warning("%s: %s: %s", label, row["error_kind"], (row["error_message"] or "")[:300],
                        extra={"run_id": work.job.model.run_id})
        self.progress.advance(cost=cost, error=bool(row["error_kind"]))
        return row

    async def execute(self) -> str:
        """Judge everything pending; 'completed', 'interrupted' or 'stopped_cost'. Fatal errors propagate."""
        try:
            interrupted, fatal = await run_workers(self, {None: self.concurrency * 2}, what="judge calls")
            report([self.limiter])
            for f in self.inflight.values():  # cancel what is left; mark raised errors as seen (reported above)
                if f.done() and not f.cancelled():
                    f.exception()
                else:
                    f.cancel()
        finally:
            self.writer.close()
        if fatal is not None:
            raise fatal
        if interrupted:
            return "interrupted"
        return "stopped_cost" if self.skipped and self.cost_reached() else "completed"

