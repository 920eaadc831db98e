"""Generation as a job kind on the run stage's phase engine.

A job is one generation `Request`. The engine does what it does for answers and judgements:
per-model limiter, retries with backoff, de-duplication of identical requests in flight, the
money limit and the Ctrl-C drain. This kind says what to send and keeps every answer: it hands
each paid answer to the writer (one row of `generations`, committed within a quarter second)
and remembers it for the caller, which writes the spec files once the phase is over.
"""

from __future__ import annotations

import logging
from typing import Iterator

from helmbench.generate.prompts import Request
from helmbench.run.calls import Completion, ProviderError
from helmbench.run.limiter import AdaptiveLimiter
from helmbench.run.writer import Writer
from helmbench.store.ledger import Account

log = logging.getLogger("helmbench.generate")


class Generations:
    """The job kind: ask the generator model each request not answered before."""

    what = "generation calls"

    def __init__(self, generator, requests: list[Request], writer: Writer, *, concurrency: int):
        self.gen, self.requests, self.writer = generator, requests, writer
        self.concurrency = max(1, concurrency)
        self.answers: dict[str, str | None] = {}  # prompt hash → content, stored or new
        self.failed: dict[str, str] = {}  # prompt hash → why the call failed
        self.not_sent: list[Request] = []

    def lanes(self) -> dict:
        entry = self.gen.entry
        return {entry.id: AdaptiveLimiter(entry.concurrency or self.concurrency, name=entry.id)}

    def jobs(self, lane) -> Iterator[Request | None]:
        for request in self.requests:
            if (row := self.gen.stored(request)) is not None:
                self.answers[self.gen.hash_of(request)] = row["content"]
                self.gen.cached += 1
                yield None
            else:
                yield request

    def key(self, job: Request) -> str:
        return self.gen.hash_of(job)

    def request(self, job: Request) -> tuple[str, dict, dict]:
        return self.gen.entry.id, self.gen.settings, job.body()

    def label(self, job: Request) -> str:
        return job.label

    def account(self, job: Request) -> Account:
        return Account("generation", None, self.key(job))

    def finish(self, jobs: list[Request], result: Completion | ProviderError, attempts: int) -> bool:
        key = self.key(jobs[0])
        self.gen.spent += result.cost or 0.0
        if isinstance(result, ProviderError):
            log.warning("generation failed for %s: %s", jobs[0].label, result.message)
            self.failed[key] = result.message
            return True
        self.gen.calls += 1
        self.answers[key] = result.content
        self.writer.add(self.gen.row(jobs[0], result))
        return False

    def dropped(self, jobs: list[Request]) -> None:
        self.not_sent += jobs

    def stopped_by_cost(self) -> bool:
        return bool(self.not_sent)
