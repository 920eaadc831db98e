"""The engine: stream jobs from the plan, call the model with bounded adaptive concurrency,
evaluate each answer as it arrives and hand it to the single writer.

Each model runs in its own lane (pool.py) with its own adaptive limiter, sized by its
`concurrency` in models.yml or else `--concurrency`: OpenRouter sends each model to a different
upstream provider, so one model's 429s slow that model only. (`HELMBENCH_SHARED_LIMITER=1`
restores one limiter and one lane for every model; only benchmarks/mixed_run.py uses it, to
show the difference.)

Stopping is cooperative and safe at any moment: Ctrl-C (or SIGTERM) stops scheduling and
waits for the calls in flight (a second Ctrl-C cancels them, see pool.py); whatever completed
is flushed before returning, and whatever was cancelled was never stored, so the next run asks
for it again and nothing else. A failed write (disk full) stops scheduling the same way, and
the run ends with the writer's error.
Identical requests inside one invocation (two cases that differ only in their evaluation)
are sent once: later ones wait for the first and share its response.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import random
from typing import Any

from helmbench.run.budget import Budget
from helmbench.run.calls import Completion, ProviderError
from helmbench.run.config import RetryPolicy
from helmbench.run.evaluate import Outcome, is_deferred, outcome_for
from helmbench.run.limiter import AdaptiveLimiter, report
from helmbench.run.pool import run_workers
from helmbench.run.plan import Job, ModelPlan, Plan, iter_jobs
from helmbench.run.progress import Progress
from helmbench.run.retry import call_with_retries
from helmbench.run.writer import Writer
from helmbench.store.responses import Write, stored_response
from helmbench.store.runs import now

log = logging.getLogger("helmbench.run.executor")


def response_row(job: Job, result: Completion | ProviderError, attempts: int) -> dict[str, Any]:
    row: dict[str, Any] = {
        "request_hash": job.case["request_hash"], "model": job.model.id, "settings_hash": job.model.settings_hash,
        "sample": job.sample, "run_id": job.model.run_id, "attempts": attempts, "created_at": now(),
    }
    if isinstance(result, ProviderError):
        row.update(error_kind=result.kind, error_message=result.message, cost=result.cost)
    else:
        row.update(
            content=result.content, reasoning=result.reasoning, finish_reason=result.finish_reason,
            latency_ms=result.latency_ms, prompt_tokens=result.prompt_tokens, completion_tokens=result.completion_tokens,
            cost=result.cost, provider=result.provider, model_version=result.model_version,
            generation_id=result.generation_id,
        )
    return row


def result_row(job: Job, outcome: Outcome, response_id: int | None = None) -> dict[str, Any]:
    return {
        "run_id": job.model.run_id, "case_id": job.case["id"], "case_hash": job.case["hash"], "sample": job.sample,
        "response_id": response_id, "verdict": outcome.verdict, "score": outcome.score, "reason": outcome.reason,
        "failure_kind": outcome.failure_kind, "created_at": now(),
    }


def clear_error(job: Job) -> dict[str, Any]:
    """The writer's instruction to drop a stale ERROR result of a case that now awaits its judge."""
    return {"run_id": job.model.run_id, "case_hash": job.case["hash"], "sample": job.sample, "verdict": None}


class Executor:
    def __init__(self, plan: Plan, db, provider, writer: Writer, progress: Progress, *, concurrency: int,
                 policy: RetryPolicy, max_cost: float | None = None):
        self.plan = plan
        self.db = db
        self.provider = provider
        self.writer = writer
        self.progress = progress
        self.policy = policy
        self.max_cost = max_cost
        self.concurrency = max(1, concurrency)
        self.limiters: dict[str, AdaptiveLimiter] = {}
        if os.environ.get("HELMBENCH_SHARED_LIMITER") == "1":
            shared = AdaptiveLimiter(self.concurrency, name="all models")
            self.limiters = {mp.id: shared for mp in plan.models}
            self.lanes: dict = {None: self.concurrency * 2}
        else:
            for mp in plan.models:
                self.limiters[mp.id] = AdaptiveLimiter(mp.entry.concurrency or self.concurrency, name=mp.id)
            self.lanes = {mp.id: self.limiters[mp.id].maximum * 2 for mp in plan.models}
        self.rng = random.Random()
        self.budget = Budget(max_cost)
        self.stopping = False
        self.inflight: dict[tuple, list[Job]] = {}
        self.warned_unpriced = False

    # --- policy ------------------------------------------------------------------------

    @property
    def spent(self) -> float:
        return self.budget.spent

    def cost_reached(self) -> bool:
        return self.budget.reached()

    def may_start(self) -> bool:
        return not self.stopping and not self.cost_reached() and self.writer.error is None

    @property
    def in_flight(self) -> int:
        return sum(limiter.in_flight for limiter in set(self.limiters.values()))

    def lane_models(self, lane: str | None) -> list[ModelPlan]:
        return self.plan.models if lane is None else [mp for mp in self.plan.models if mp.id == lane]

    # --- jobs ------------------------------------------------------------------------------

    def settle_stored(self, job: Job) -> None:
        """A response is stored already: evaluate it for this run if the run has no verdict yet."""
        mp = job.model
        if (job.case["hash"], job.sample) in mp.settled:
            return
        if is_deferred(job.case):
            self.writer.add(Write(None, clear_error(job)))
            mp.settled.add((job.case["hash"], job.sample))
            return
        args = (job.case["request_hash"], mp.id, mp.settings_hash, job.sample)
        stored = stored_response(self.db, *args)
        if stored is None:  # answered earlier in this invocation, not yet committed
            self.writer.flush()
            stored = stored_response(self.db, *args)
        if stored is None:
            return
        outcome = outcome_for(job.case, stored)
        if outcome is not None:
            self.writer.add(Write(None, result_row(job, outcome, stored["id"])))
            mp.verdicts[outcome.verdict] += 1
        mp.settled.add((job.case["hash"], job.sample))

    async def produce(self, queue: asyncio.Queue, n_workers: int, lane: str | None = None) -> None:
        for i, job in enumerate(iter_jobs(self.plan, self.lane_models(lane))):
            if self.stopping:
                break
            if job.key in job.model.done:
                self.settle_stored(job)
                if i % 256 == 0:
                    await asyncio.sleep(0)
                continue
            if self.cost_reached():  # no new calls, but stored answers are still evaluated
                continue
            ikey = (job.model.id, *job.key)
            if ikey in self.inflight:
                self.inflight[ikey].append(job)
                continue
            self.inflight[ikey] = []
            await queue.put(job)
        for _ in range(n_workers):
            await queue.put(None)

    async def work(self, queue: asyncio.Queue) -> None:
        while True:
            job = await queue.get()
            if job is None:
                return
            if not self.may_start():
                self.inflight.pop((job.model.id, *job.key), None)
                continue
            mp = job.model
            result, attempts = await call_with_retries(
                lambda: self.provider.complete(mp.id, mp.settings, job.case["request"]),
                policy=self.policy, limiter=self.limiters[mp.id], may_start=self.may_start, rng=self.rng,
                label=f"{mp.id} {job.case['id']}#{job.sample}", budget=self.budget,
            )
            if result is None:  # stopped before it was sent
                self.inflight.pop((mp.id, *job.key), None)
                continue
            self.complete(job, result, attempts)

    def complete(self, job: Job, result: Completion | ProviderError, attempts: int) -> None:
        mp = job.model
        jobs = [job, *self.inflight.pop((mp.id, *job.key), [])]
        response = response_row(job, result, attempts)
        error = isinstance(result, ProviderError)
        mp.cost += result.cost or 0.0  # the budget counted it when the attempt ended
        if not error:
            mp.done.add(job.key)
            if result.cost_note:
                log.warning("%s %s#%d: %s", mp.id, job.case["id"], job.sample, result.cost_note,
                            extra={"run_id": mp.run_id})
            if result.cost is None and self.max_cost is not None and not self.warned_unpriced:
                self.warned_unpriced = True
                log.warning("OpenRouter reported no cost for some calls: --max-cost counts billed costs only")
        mp.called += 1
        outcomes = [outcome_for(j.case, response) for j in jobs]
        parsed = next((o.parsed for o in outcomes if o is not None and o.parsed is not None), None)
        if parsed is not None:
            response["parsed_json"] = json.dumps(parsed, ensure_ascii=False, sort_keys=True)
        for j, outcome in zip(jobs, outcomes):
            mp.verdicts["JUDGE" if outcome is None else outcome.verdict] += 1
            self.writer.add(Write(response, result_row(j, outcome) if outcome is not None else clear_error(j)))
            if outcome is not None:
                mp.settled.add((j.case["hash"], j.sample))
        extra = {"run_id": mp.run_id}
        if error:
            log.warning("%s %s#%d: %s after %d attempt(s): %s", mp.id, job.case["id"], job.sample, result.kind,
                        attempts, result.message[:300], extra=extra)
        else:
            verdict = outcomes[0].verdict if outcomes[0] is not None else "awaiting judge"
            log.debug("%s %s#%d: %s (%d attempt(s), %s ms, cost %s)", mp.id, job.case["id"], job.sample, verdict,
                      attempts, result.latency_ms, result.cost, extra=extra)
        self.progress.advance(cost=result.cost, error=error)

    # --- the loop ------------------------------------------------------------------------

    async def _tick(self) -> None:
        while True:
            await asyncio.sleep(1.0)
            self.progress.tick()

    async def execute(self) -> str:
        """Run every job; returns 'completed', 'interrupted' or 'stopped_cost'. Fatal errors propagate."""
        background = [asyncio.create_task(self._tick())]
        try:
            interrupted, fatal = await run_workers(self, self.lanes, what="model calls")
            report(dict.fromkeys(self.limiters.values()))
        finally:
            for t in background:
                t.cancel()
            await asyncio.gather(*background, return_exceptions=True)
            self.writer.close()
        if fatal is not None:
            raise fatal
        if interrupted:
            return "interrupted"
        if self.cost_reached():
            return "stopped_cost"
        return "completed"
