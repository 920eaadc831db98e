"""The phase engine: every kind of model call of a run goes through it, so each policy lives once.

A phase is one `JobKind` (answering cases, judging criteria, a round of conversation turns,
generating) run to the end by `run_phase`. The kind says what its jobs are: how to build a job's request, which
model and lane serve it, and how a finished call becomes stored rows. The engine does the rest,
the same way for every kind:

- lanes: each lane (a model, or the judge) has its own queue, workers and adaptive limiter
  (limiter.py): OpenRouter routes each model to a different upstream with its own rate limits,
  so one model's 429s slow that model only;
- retries with jittered backoff drawn from one random generator (retry.py);
- the money limit: every attempt is admitted by the invocation's `Budget`, which reserves what
  the calls in flight will likely cost, so `--max-cost` is overshot by about one call at most;
- de-duplication of identical requests in flight, one way for every kind: while a call is in
  flight, later jobs with the same key wait beside it (they take no worker and no limiter slot)
  and the kind turns the one finished call into rows for all of them;
- the call ledger: each attempt's row is committed in state `sent` before its request leaves
  and completed after the kind has handed over what it returned (store/ledger.py), so every
  number about calls is read from one table and a crash leaves a cut call visible;
- stopping: Ctrl-C drains, a second one cancels, a failed write stops scheduling (pool.py);
  the writer is closed (flushed) however the phase ends;
- the phase's status: 'completed', 'interrupted' or 'stopped_cost'.

Adding a kind of call means one module with a class that has the attributes and methods of
`JobKind`; nothing here changes.
"""

from __future__ import annotations

import asyncio
import gc
import random
from typing import Any, Callable, Hashable, Iterator, Protocol

from helmbench.run.budget import Budget
from helmbench.run.calls import Completion, ProviderError
from helmbench.run.config import RetryPolicy
from helmbench.run.limiter import AdaptiveLimiter, report
from helmbench.run.pool import run_workers
from helmbench.run.progress import PhaseCounter
from helmbench.run.retry import call_with_retries
from helmbench.run.writer import Writer
from helmbench.store.ledger import Account, Done, done_values, new_uid, sent_row
from helmbench.store.runs import now


class JobKind(Protocol):
    """What a kind of call tells the engine. A job is anything the kind likes; the engine only
    passes it back."""

    what: str  # names its calls in messages: "model calls", "judge calls"

    def lanes(self) -> dict[Hashable, AdaptiveLimiter]:
        """Lane key → its limiter (several keys may share one limiter); workers per lane: 2 × its maximum."""

    def jobs(self, lane: Hashable) -> Iterator[Any]:
        """The lane's jobs in order. Yield None for work settled without a call (a stored answer): it
        lets the event loop breathe during a long stretch of stored work."""

    def key(self, job) -> Hashable:
        """Jobs with equal keys in flight together share one call."""

    def request(self, job) -> tuple[str, dict, dict]:
        """(model id, settings, request) of the call."""

    def label(self, job) -> str:
        """The job in a log line."""

    def account(self, job) -> Account:
        """The call's entry in the ledger: its kind, run, request key, settings hash and sample."""

    def finish(self, jobs: list, result: Completion | ProviderError, attempts: int) -> bool:
        """Hand the rows of a finished call, for every job that shared it, to the writer; True if it failed."""

    def dropped(self, jobs: list) -> None:
        """These jobs were never sent (a stop, or the money limit)."""

    def stopped_by_cost(self) -> bool:
        """Once the money limit is reached: did it leave work undone (the phase is then 'stopped_cost')?"""


class Engine:
    """One phase: the owner `pool.run_workers` drives (producers, workers, stop flag, calls in flight)."""

    def __init__(self, kind: JobKind, *, provider: Callable[[], Any], writer: Writer, progress: PhaseCounter,
                 policy: RetryPolicy, budget: Budget, invocation: str | None = None):
        self.kind = kind
        self.provider_factory = provider
        self.provider = None  # made at the first call: a phase with nothing to send never loads litellm
        self.writer = writer
        self.progress = progress
        self.policy = policy
        self.budget = budget
        self.invocation = invocation or new_uid()  # names the calls of this invocation in the ledger
        self.limiters = kind.lanes()
        self.rng = random.Random()
        self.stopping = False
        self.inflight: dict[Hashable, list] = {}  # key → [the job being sent, jobs waiting for its answer]

    def may_start(self) -> bool:
        return not self.stopping and not self.budget.reached() and self.writer.error is None

    @property
    def in_flight(self) -> int:
        return sum(limiter.in_flight for limiter in set(self.limiters.values()))

    async def produce(self, queue: asyncio.Queue, n_workers: int, lane: Hashable) -> None:
        kind, inflight = self.kind, self.inflight
        for i, job in enumerate(kind.jobs(lane)):
            if self.stopping:
                break
            if job is None:  # settled without a call
                if i % 256 == 0:
                    await asyncio.sleep(0)
                continue
            if self.budget.reached():  # no new calls; stored work is still settled above
                kind.dropped([job])
                continue
            key = kind.key(job)
            waiting = inflight.get(key)
            if waiting is not None:
                waiting.append(job)
                continue
            inflight[key] = [job]
            await queue.put(job)
        for _ in range(n_workers):
            await queue.put(None)

    async def work(self, queue: asyncio.Queue, lane: Hashable) -> None:
        kind, limiter = self.kind, self.limiters[lane]
        while True:
            job = await queue.get()
            if job is None:
                return
            key = kind.key(job)
            if not self.may_start():
                kind.dropped(self.inflight.pop(key))
                continue
            if self.provider is None:
                self.provider = self.provider_factory()
            provider, writer = self.provider, self.writer
            model, settings, request = kind.request(job)
            if model in provider.stalled:  # never answers in time: its calls are not sent (provider.py)
                kind.dropped(self.inflight.pop(key))
                continue
            account = kind.account(job)
            answered: list[tuple] = []  # the completion of the attempt that answered, once stored
            tries = [0]

            async def attempt():
                tries[0] += 1
                row = sent_row(account, model, tries[0], now(), self.invocation)
                await writer.sent(row)  # on disk before the request leaves
                try:
                    result = await provider.complete(model, settings, request)
                except ProviderError as err:
                    writer.add(Done(done_values(row["uid"], err, now())))
                    raise
                answered.append(done_values(row["uid"], result, now()))  # its own cost, before retries add
                return result

            result, attempts = await call_with_retries(
                attempt, policy=self.policy, limiter=limiter,
                may_start=lambda: self.may_start() and model not in provider.stalled, rng=self.rng,
                label=kind.label(job), budget=self.budget,
            )
            jobs = self.inflight.pop(key)
            if result is None:  # stopped before it was sent
                kind.dropped(jobs)
                continue
            failed = kind.finish(jobs, result, attempts)
            if answered:  # after the kind's rows: a completed ledger row means the answer is stored
                writer.add(Done(answered[-1]))
            self.progress.advance(cost=result.cost, error=failed)

    async def _tick(self) -> None:
        while True:
            await asyncio.sleep(1.0)
            self.progress.tick()

    async def execute(self) -> str:
        """Run every job; 'completed', 'interrupted' or 'stopped_cost'. Fatal errors propagate."""
        ticker = asyncio.create_task(self._tick())
        try:
            lanes = {lane: limiter.maximum * 2 for lane, limiter in self.limiters.items()}
            interrupted, fatal = await run_workers(self, lanes, what=self.kind.what)
            report(dict.fromkeys(self.limiters.values()))
        finally:
            ticker.cancel()
            await asyncio.gather(ticker, return_exceptions=True)
            self.writer.close()
        if fatal is not None:
            raise fatal
        if interrupted:
            return "interrupted"
        if self.budget.reached() and self.kind.stopped_by_cost():
            return "stopped_cost"
        return "completed"


def run_phase(kind: JobKind, **engine) -> str:
    """Run one phase to its end in its own event loop (see `Engine` for the keyword arguments).

    What is alive when the phase starts (modules, the plan, the stored keys: hundreds of thousands
    of objects) lives through it, yet every full garbage collection that litellm's allocations set
    off would walk it again: frozen, it is skipped (measured: about half the collector's time at
    2,000 calls). It is unfrozen afterwards, so a long-lived caller of the API can still collect it."""
    gc.freeze()
    try:
        return asyncio.run(Engine(kind, **engine).execute())
    finally:
        gc.unfreeze()
