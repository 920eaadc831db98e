"""The conversation phase of `helmbench run`: rounds of the `ConversationTurns` job kind.

Each round runs one call per conversation still going, in parallel, and commits what it paid
for before the next round asks the turns that depend on it (see kind.py).

`run_phase` is the engine's signature (issue 14's phase engine); until that engine is in this
branch, `_Phase` below drives a kind the same way with the pool, limiter, retry and budget
machinery every call uses.
"""

from __future__ import annotations

import asyncio
import random

from helmbench.run.budget import Budget
from helmbench.run.conversation.kind import ConversationTurns, ConversationWriter
from helmbench.run.pool import run_workers
from helmbench.run.retry import call_with_retries


class _Phase:
    """One phase of a job kind: the owner `pool.run_workers` drives."""

    def __init__(self, kind, *, provider, writer, progress, policy, budget: Budget):
        self.kind, self.provider_factory, self.provider = kind, provider, None
        self.writer, self.progress, self.policy, self.budget = writer, progress, policy, budget
        self.limiters = kind.lanes()
        self.rng = random.Random()
        self.stopping = False

    def may_start(self) -> bool:
        return not self.stopping and not self.budget.reached() and self.writer.error is None

    @property
    def in_flight(self) -> int:
        return sum(limiter.in_flight for limiter in set(self.limiters.values()))

    async def produce(self, queue: asyncio.Queue, n_workers: int, lane) -> None:
        for job in self.kind.jobs(lane):
            if self.stopping:
                break
            await queue.put(job)
        for _ in range(n_workers):
            await queue.put(None)

    async def work(self, queue: asyncio.Queue) -> None:
        while (job := await queue.get()) is not None:
            limiter = self.limiters[self.kind.lane_of(job)]
            if not self.may_start():
                self.kind.dropped([job])
                continue
            if self.provider is None:
                self.provider = self.provider_factory()
            provider = self.provider
            model, settings, request = self.kind.request(job)
            result, attempts = await call_with_retries(
                lambda: provider.complete(model, settings, request), policy=self.policy, limiter=limiter,
                may_start=self.may_start, rng=self.rng, label=self.kind.label(job), budget=self.budget)
            if result is None:
                self.kind.dropped([job])
                continue
            failed = self.kind.finish([job], result, attempts)
            self.progress.advance(cost=result.cost, error=failed)

    async def execute(self) -> str:
        try:
            lanes = {lane: limiter.maximum for lane, limiter in self.limiters.items()}
            interrupted, fatal = await run_workers(self, lanes, what=self.kind.what)
        finally:
            self.writer.close()
        if fatal is not None:
            raise fatal
        if interrupted:
            return "interrupted"
        return "stopped_cost" if self.budget.reached() and self.kind.stopped_by_cost() else "completed"


def run_phase(kind, **engine) -> str:
    return asyncio.run(_Phase(kind, **engine).execute())


def run_conversations(plan, db, opts, console, live: bool, judge, *, spent: float) -> tuple[str, float]:
    """Every conversation of the plan, round by round: (how it ended, money spent so far)."""
    from helmbench.run.progress import Progress
    from helmbench.run.provider import Provider

    kind = ConversationTurns(plan, db, concurrency=opts.concurrency, judge=judge)
    budget = Budget(opts.max_cost, spent=spent)
    writer = ConversationWriter(opts.db)
    status = "completed"
    try:
        kind.start(writer)
        with Progress(plan.new_turns, console, live=live) as bar:
            while kind.going and status == "completed":
                status = run_phase(kind, provider=lambda: Provider(opts.api_key or "", opts.api_base),
                                   writer=writer, progress=bar, policy=opts.retry, budget=budget)
                writer = kind.writer = ConversationWriter(opts.db)
    finally:
        writer.close()
    return status, budget.spent
