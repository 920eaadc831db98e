"""Judging a criterion: the job kind of the run's judge phase (the engine in engine.py does the calling).

What needs judging is read back from the store (judge_plan.iter_work: stored sqe outputs without a
verdict in the run, a single answer or a conversation's transcript alike), so a crash between an
output and its judgement costs nothing: the next run finds the output stored and judges it without
asking the model again. A job is one criterion of
one case; a case is decided (its result and the links to its judgements written) once its last
criterion is in. Judgements are cached by their request, so a criterion's edit re-judges only
that criterion, and an unchanged re-run makes no call; identical judge requests within one
invocation are sent once (the engine shares one in flight, `called` remembers the finished ones).
Each judge is one lane with its own limiter: a different model with its own rate limits. With an
ensemble (several marking models) every judge judges every criterion; a case is decided once
every judge's judgements of every criterion are in, each criterion by the judges' majority
(`judge.combine`), and each judgement is linked to the result with its own verdict.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, replace
from typing import Any, Iterator

from helmbench.run.answer_kind import result_row
from helmbench.run.calls import Completion, ProviderError
from helmbench.run.conversation import verdict as V
from helmbench.run.judge.judge import (CriterionVerdict, aggregate, combine, error, parse_judgement,
                                      stored_judgment, verdict_of)
from helmbench.run.judge.judge_plan import CaseWork, JudgeModel, Panel, iter_work, work_key
from helmbench.run.limiter import AdaptiveLimiter
from helmbench.run.writer import Writer
from helmbench.store.judgements import JudgedCase
from helmbench.store.ledger import Account
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
        usage = {"raw": result.content, "finish_reason": result.finish_reason, "cost": result.cost,
                 "latency_ms": result.latency_ms, "prompt_tokens": result.prompt_tokens,
                 "completion_tokens": result.completion_tokens}
    return {
        "judge_request_hash": item_hash, "judge_model": judge.id, "judge_settings_hash": judge.settings_hash,
        "output": work.output, "response_id": work.response["id"] if work.response else None,
        "run_id": work.job.model.run_id, "criterion": criterion["code"],
        "verdict": v.verdict, "score": v.score,
        "judgment_json": stored_judgment(criterion, v),
        "justification": v.justification, "attempts": attempts, "error_kind": v.error_kind,
        "error_message": v.error_message, "created_at": now(), **usage,
    }


def by_criterion(work: CaseWork, links: list[tuple[dict | int, CriterionVerdict]]) -> list[CriterionVerdict]:
    """One verdict per criterion: the judges' verdicts on it combined (one judge: its own)."""
    grouped: dict[str, tuple[dict, list[CriterionVerdict]]] = {}
    for item, (_, verdict) in zip(work.items, links):
        grouped.setdefault(item.criterion["code"], (item.criterion, []))[1].append(verdict)
    return [combine(criterion, verdicts) for criterion, verdicts in grouped.values()]


def _in_order(work: CaseWork, verdicts: list[CriterionVerdict]) -> list[CriterionVerdict]:
    """The verdicts in the case's criteria order (a gated-off criterion is not among the judged items)."""
    if not work.gated:
        return verdicts
    order = {cr["code"]: i for i, cr in enumerate(work.job.case["evaluation"]["criteria"])}
    return sorted(verdicts, key=lambda v: order.get(v.criterion, len(order)))


@dataclass
class Pending:
    """A case whose criteria are being judged: the links gathered so far, in criterion order."""

    work: CaseWork
    links: list
    left: int  # criteria still to come back
    complete: bool = True  # False once one of them was not sent (a stop or the money limit)
    to_call: list[int] | None = None  # the items that need a call (each lane yields its judge's)


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

    def __init__(self, plan, db, judge: Panel, writer: Writer, *, settled: dict[str, set], concurrency: int,
                 transcripts: dict | None = None, only: frozenset | None = None, decide: bool = True):
        self.plan, self.db, self.judge, self.writer = plan, db, judge, writer
        # a re-judge lane (`run --rejudge-sample`): only the sampled outputs (`only`), and no result decided
        # (`decide` False): its judgements are stored as they are paid for, the first lane's decide the scores
        self.only, self.decide = only, decide
        self.settled = settled  # per model id: (case_hash, sample) with a PASS/FAIL in the run
        # the phase's rebuilt transcripts (judge_plan.transcript_work), shared by the lanes, dropped once decided
        self.transcripts = {} if transcripts is None else transcripts
        self.concurrency = {m.id: max(1, m.concurrency or concurrency) for m in judge.members}
        self.called: dict[tuple[str, str], dict] = {}  # (judge, request hash) → the row of its call in this invocation
        self.open: dict[tuple, Pending] = {}  # cases met by one lane and not decided yet (shared by the lanes)
        self.calls = 0
        self.judge_spent = 0.0
        self.skipped = 0  # cases left unjudged (money limit or interruption)
        self.waiting = 0  # cases of this round whose gated criteria wait for their gates (asked next round)

    def lanes(self) -> dict:
        return {m.id: AdaptiveLimiter(self.concurrency[m.id], name=f"judge {m.id}") for m in self.judge.members}

    def jobs(self, lane) -> Iterator[CriterionJob | None]:
        """The calls of one judge. The lanes walk the same cases; the first to meet a case opens it
        (settling it at once when nothing needs a call), and each lane yields its own judge's calls."""
        for work in iter_work(self.plan, self.db, self.judge, self.settled, transcripts=self.transcripts,
                              only=self.only, called=self.called):
            key = work_key(work.job)
            case = self.open.get(key)
            if case is None:
                case = self._open(work)
                if case is None:
                    yield None
                    continue
                self.open[key] = case
            mine = [i for i in case.to_call if case.work.items[i].judge.id == lane]
            if not mine:
                yield None
            for i in mine:
                yield CriterionJob(case, i)

    def _open(self, work: CaseWork) -> Pending | None:
        """A case's pending state, or None when it was decided without a call."""
        if work.outcome is not None:
            self.settle(work, [])
            return None
        case = Pending(work, [None] * len(work.items), 0, to_call=[])
        for i, item in enumerate(work.items):
            if item.cached:
                case.links[i] = (item.stored["id"], verdict_of(item.criterion, item.stored))
            elif (item.judge.id, item.hash) in self.called:  # asked earlier in this invocation (maybe not committed)
                row = self.called[(item.judge.id, item.hash)]
                case.links[i] = (row, verdict_of(item.criterion, row))
            else:
                case.to_call.append(i)
        if not case.to_call:
            if work.waiting:  # its gates are asked by another case's call in flight: the next round asks it
                self._wait(work)
            else:
                self.settle(work, case.links)
            return None
        case.left = len(case.to_call)
        return case

    def _wait(self, work: CaseWork) -> None:
        """A case whose gated criteria wait for their gates' judgements: left open for the phase's next round
        (`judge_run.run_judge`), which walks it again with the gates' verdicts known."""
        self.waiting += 1
        self.transcripts.pop(work_key(work.job), None)  # rebuilt with its gates' judgements next round

    def key(self, job: CriterionJob) -> tuple[str, str]:
        return job.item.judge.id, job.item.hash

    def request(self, job: CriterionJob) -> tuple[str, dict, dict]:
        return job.item.judge.id, job.item.judge.settings, job.item.request

    def label(self, job: CriterionJob) -> str:
        work = job.case.work
        return f"judge {job.item.judge.id} {work.job.case['id']}#{work.job.sample} {job.item.criterion['code']}"

    def account(self, job: CriterionJob) -> Account:
        return Account("judge", job.case.work.job.model.run_id, job.item.hash, job.item.judge.settings_hash)

    def stopped_by_cost(self) -> bool:
        return self.skipped > 0

    def finish(self, jobs: list[CriterionJob], result: Completion | ProviderError, attempts: int) -> bool:
        first = jobs[0]
        row = judgement_row(first.item.judge, first.case.work, first.item.criterion, first.item.hash, result, attempts)
        # saved at once: money spent is never lost to a stop or crash before the case completes
        self.writer.add(JudgedCase([(row, None, None)], None))
        self.called[(first.item.judge.id, first.item.hash)] = row
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
            self.open.pop(work_key(case.work.job), None)
            if case.complete and case.work.waiting:
                self._wait(case.work)
            elif case.complete:
                self.settle(case.work, case.links)
            else:
                self.skipped += 1
                self.transcripts.pop(work_key(case.work.job), None)  # a later lane rebuilds it, as before

    def settle(self, work: CaseWork, links: list[tuple[dict | int, CriterionVerdict]]) -> None:
        if not self.decide:  # a re-judge: every judgement is stored already; the other lanes skip the case
            self.transcripts.pop(work_key(work.job), None)
            self.settled.setdefault(work.job.model.id, set()).add((work.job.case["hash"], work.job.sample))
            return
        refs = [(ref, v.verdict, v.score) for ref, v in links]
        if work.transcript is not None:  # a conversation: its checkpoints and criteria decide it together
            # a copy: the rebuilt transcript is shared by the lanes (its cached rows stay the checkpoints')
            titles = {cr["code"]: cr.get("title") for cr in work.job.case["evaluation"]["criteria"]}
            s = replace(work.transcript, rows=[*work.transcript.rows, *(
                V.criterion_row(v, titles.get(v.criterion)) for v in [*by_criterion(work, links), *work.gated])])
            self.transcripts.pop(work_key(work.job), None)
            result = result_row(work.job, V.decide(s.rows))
            self.writer.add(JudgedCase(refs, result, s.stored_as()))
        else:
            outcome = work.outcome or aggregate(_in_order(work, [*by_criterion(work, links), *work.gated]),
                                                work.checks)
            result = result_row(work.job, outcome, work.response["id"])
            self.writer.add(JudgedCase(refs, result))
        mp = work.job.model
        self.settled.setdefault(mp.id, set()).add((work.job.case["hash"], work.job.sample))
        log.debug("%s %s#%d: %s (%s)", mp.id, work.job.case["id"], work.job.sample, result["verdict"],
                  result["reason"], extra={"run_id": mp.run_id})
