"""Answering a case: the job kind of the run's first phase (the engine in engine.py does the calling).

A job is one (case, model, sample) of the plan. A response already stored is not asked again:
it is evaluated for this run if the run has no verdict for it yet. A new answer is evaluated as
it arrives and handed to the writer with its result; a case judged later (sqe) gets no result
now (a stale ERROR result of it is removed instead). Two cases that differ only in their
evaluation send one request: the engine hands the one answer to both, and each gets its result.

Each model is a lane with its own limiter, sized by its `concurrency` in models.yml or else
`--concurrency`. (`HELMBENCH_SHARED_LIMITER=1` restores one limiter and one lane for every
model; only benchmarks/mixed_run.py uses it, to show the difference.)
"""

from __future__ import annotations

import json
import logging
import os
from typing import Any, Iterator

from helmbench.run.calls import Completion, ProviderError
from helmbench.run.evaluate import Outcome, is_deferred, outcome_for
from helmbench.run.limiter import AdaptiveLimiter
from helmbench.run.plan import Job, ModelPlan, Plan, iter_jobs
from helmbench.run.writer import Writer
from helmbench.store.ledger import Account
from helmbench.store.responses import Write, stored_response
from helmbench.store.runs import now

log = logging.getLogger("helmbench.run.answers")


def response_row(mp: ModelPlan, request_hash: str, sample: int, result: Completion | ProviderError,
                 attempts: int) -> dict[str, Any]:
    """The responses row of one model call (an API failure is a row too: it was attempted, maybe billed)."""
    row: dict[str, Any] = {
        "request_hash": request_hash, "model": mp.id, "settings_hash": mp.settings_hash, "sample": sample,
        "run_id": mp.run_id, "attempts": attempts, "created_at": now(),
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
    """The results row of a decided case (by its evaluator or by the judge)."""
    return {
        "run_id": job.model.run_id, "case_id": job.case["id"], "case_hash": job.case["hash"], "sample": job.sample,
        "response_id": response_id, "verdict": outcome.verdict, "score": outcome.score, "reason": outcome.reason,
        "failure_kind": outcome.failure_kind, "created_at": now(),
    }


def clear_error(job: Job) -> dict[str, Any]:
    """The writer's instruction to drop a stale ERROR result of a case that now awaits its judge."""
    return {"run_id": job.model.run_id, "case_hash": job.case["hash"], "sample": job.sample, "verdict": None}


class Answers:
    """The job kind: ask each model each selected case (× samples), evaluate, store."""

    what = "model calls"

    def __init__(self, plan: Plan, db, writer: Writer, *, concurrency: int, max_cost: float | None = None):
        self.plan, self.db, self.writer = plan, db, writer
        self.concurrency = max(1, concurrency)
        self.max_cost = max_cost
        self.warned_unpriced = False

    def lanes(self) -> dict:
        if os.environ.get("HELMBENCH_SHARED_LIMITER") == "1":
            return {None: AdaptiveLimiter(self.concurrency, name="all models")}
        return {mp.id: AdaptiveLimiter(mp.entry.concurrency or self.concurrency, name=mp.id) for mp in self.plan.models}

    def jobs(self, lane) -> Iterator[Job | None]:
        models = self.plan.models if lane is None else [mp for mp in self.plan.models if mp.id == lane]
        for job in iter_jobs(self.plan, models):
            if job.key in job.model.done:
                self.settle_stored(job)
                yield None
            else:
                yield job

    def key(self, job: Job) -> tuple:
        return (job.model.id, *job.key)

    def request(self, job: Job) -> tuple[str, dict, dict]:
        return job.model.id, job.model.settings, job.case["request"]

    def label(self, job: Job) -> str:
        return f"{job.model.id} {job.case['id']}#{job.sample}"

    def account(self, job: Job) -> Account:
        mp = job.model
        return Account("answer", mp.run_id, job.case["request_hash"], mp.settings_hash, job.sample)

    def stopped_by_cost(self) -> bool:
        return True  # once the limit is reached, any call still to make is left undone

    def dropped(self, jobs: list[Job]) -> None:
        pass  # nothing was stored: the next run asks again

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
        mp.settled.add((job.case["hash"], job.sample))

    def finish(self, jobs: list[Job], result: Completion | ProviderError, attempts: int) -> bool:
        job = jobs[0]
        mp = job.model
        response = response_row(mp, job.case["request_hash"], job.sample, result, attempts)
        error = isinstance(result, ProviderError)
        if not error:
            mp.done.add(job.key)
            if result.cost_note:
                log.warning("%s %s#%d: %s", mp.id, job.case["id"], job.sample, result.cost_note,
                            extra={"run_id": mp.run_id})
            if result.cost is None and self.max_cost is not None and not self.warned_unpriced:
                self.warned_unpriced = True
                log.warning("OpenRouter reported no cost for some calls: --max-cost counts billed costs only")
        outcomes = [outcome_for(j.case, response) for j in jobs]
        parsed = next((o.parsed for o in outcomes if o is not None and o.parsed is not None), None)
        if parsed is not None:
            response["parsed_json"] = json.dumps(parsed, ensure_ascii=False, sort_keys=True)
        for j, outcome in zip(jobs, outcomes):
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
        return error
