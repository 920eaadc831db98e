"""Judging a criterion: the job kind of the run's second phase (the engine in engine.py does the calling).

What needs judging is read back from the store (judge_plan.iter_work: stored sqe answers without a
verdict in the run), so a crash between an answer and its judgement costs nothing: the next run
finds the answer stored and judges it without asking the model again. A job is one criterion of
one case; a case is decided (its result and the links to its judgements written) once its last
criterion is in. Judgements are cached by their request, so a criterion's edit re-judges only
that criterion, and an unchanged re-run makes no call; identical judge requests within one
invocation are sent once (the engine shares one in flight, `called` remembers the finished ones).
The judge is one lane with its own limiter: it is a different model with its own rate limits.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass
from typing import Any, Iterator

from helmbench.run.answer_kind import result_row
from helmbench.run.calls import Completion, ProviderError
from helmbench.run.judge.judge import CriterionVerdict, aggregate, decide, error, parse_judgement
from helmbench.run.judge.judge_plan import CaseWork, JudgeModel, iter_work
from helmbench.run.judge.judge_prompt import response_field
from helmbench.run.limiter import AdaptiveLimiter
from helmbench.run.writer import Writer
from helmbench.store.judgements import JudgedCase
from helmbench.store.runs import now

log = logging.getLogger("helmbench.run.judge")


def judgement_row(judge: JudgeModel, work: CaseWork, criterion: dict, item_hash: str,
                  result: Completion | ProviderError, attempts: int) -> dict[str, Any]:
    """The judgements row of one call; its verdict/score are as decided for the criterion that asked."""
    if isinstance(result, ProviderError):
        v = error(criterion, result.kind, result.message)
        usage: dict[str, Any] = {"cost": result.cost}  # a billed failure (no choices) is recorded
    else:
        v = parse_judgement(criterion, result.content, result.finish_reason)
        usage = {"raw": result.content, "cost": result.cost, "latency_ms": result.latency_ms,
                 "prompt_tokens": result.prompt_tokens, "completion_tokens": result.completion_tokens}
    return {
        "judge_request_hash": item_hash, "judge_model": judge.id, "judge_settings_hash": judge.settings_hash,
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


@dataclass
class Pending:
    """A case whose criteria are being judged: the links gathered so far, in criterion order."""

    work: CaseWork
    links: list
    left: int  # criteria still to come back
    complete: bool = True  # False once one of them was not sent (a stop or the money limit)


@dataclass
class CriterionJob:
    case: Pending
    index: int  # of the criterion in the case

    @property
    def item(self):
        return self.case.work.items[self.index]


class Judgements:
    """The job kind: one judge call per criterion not judged yet; a case's verdict once all are in."""

    what = "judge calls"

    def __init__(self, plan, db, judge: JudgeModel, writer: Writer, *, settled: dict[str, set], concurrency: int):
        self.plan, self.db, self.judge, self.writer = plan, db, judge, writer
        self.settled = settled  # per model id: (case_hash, sample) with a PASS/FAIL in the run
        self.concurrency = max(1, judge.concurrency or concurrency)
        self.called: dict[str, dict] = {}  # judge request hash → the row of its call in this invocation
        self.calls = 0
        self.judge_spent = 0.0
        self.skipped = 0  # cases left unjudged (money limit or interruption)

    def lanes(self) -> dict:
        return {None: AdaptiveLimiter(self.concurrency, name=f"judge {self.judge.id}")}

    def jobs(self, lane) -> Iterator[CriterionJob | None]:
        for work in iter_work(self.plan, self.db, self.judge, self.settled):
            if work.outcome is not None:
                self.settle(work, [])
                yield None
                continue
            case = Pending(work, [None] * len(work.items), 0)
            to_call = []
            for i, item in enumerate(work.items):
                if item.cached:
                    case.links[i] = (item.stored["id"], verdict_of(item.criterion, item.stored))
                elif item.hash in self.called:  # asked earlier in this invocation (maybe not committed yet)
                    row = self.called[item.hash]
                    case.links[i] = (row, verdict_of(item.criterion, row))
                else:
                    to_call.append(i)
            if not to_call:
                self.settle(work, case.links)
                yield None
                continue
            case.left = len(to_call)
            for i in to_call:
                yield CriterionJob(case, i)

    def key(self, job: CriterionJob) -> str:
        return job.item.hash

    def request(self, job: CriterionJob) -> tuple[str, dict, dict]:
        return self.judge.id, self.judge.settings, job.item.request

    def label(self, job: CriterionJob) -> str:
        work = job.case.work
        return f"judge {self.judge.id} {work.job.case['id']}#{work.job.sample} {job.item.criterion['code']}"

    def stopped_by_cost(self) -> bool:
        return self.skipped > 0

    def finish(self, jobs: list[CriterionJob], result: Completion | ProviderError, attempts: int) -> bool:
        first = jobs[0]
        row = judgement_row(self.judge, first.case.work, first.item.criterion, first.item.hash, result, attempts)
        # saved at once: money spent is never lost to a stop or crash before the case completes
        self.writer.add(JudgedCase([(row, None, None)], None))
        self.called[first.item.hash] = row
        self.judge_spent += result.cost or 0.0  # already counted by the budget
        self.calls += 1
        if row["error_kind"]:
            log.warning("%s: %s: %s", self.label(first), row["error_kind"], (row["error_message"] or "")[:300],
                        extra={"run_id": first.case.work.job.model.run_id})
        for job in jobs:
            job.case.links[job.index] = (row, verdict_of(job.item.criterion, row))
            self._back(job.case)
        return bool(row["error_kind"])

    def dropped(self, jobs: list[CriterionJob]) -> None:
        for job in jobs:
            job.case.complete = False
            self._back(job.case)

    def _back(self, case: Pending) -> None:
        """One criterion of the case is back (judged or not sent); the last one decides the case."""
        case.left -= 1
        if case.left == 0:
            if case.complete:
                self.settle(case.work, case.links)
            else:
                self.skipped += 1

    def settle(self, work: CaseWork, links: list[tuple[dict | int, CriterionVerdict]]) -> None:
        outcome = work.outcome or aggregate([v for _, v in links])
        result = result_row(work.job, outcome, work.response["id"])
        self.writer.add(JudgedCase([(ref, v.verdict, v.score) for ref, v in links], result))
        mp = work.job.model
        self.settled.setdefault(mp.id, set()).add((work.job.case["hash"], work.job.sample))
        mp.verdicts[outcome.verdict] += 1
        log.debug("%s %s#%d: %s (%s)", mp.id, work.job.case["id"], work.job.sample, outcome.verdict, outcome.reason,
                  extra={"run_id": mp.run_id})
