"""The judge's part of one `helmbench run` invocation, called by the session after the model calls.

Why after rather than interleaved: judging reads answers back from the store, so the same code
path serves a fresh answer, an answer stored by an earlier (crashed) run, and a re-judge after
a criterion edit; and the number of judge calls is known exactly before the first one is made
(the progress bar's total, and the dry-run's estimate for answers already stored).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

from helmbench.run.engine import run_phase
from helmbench.run.judge.judge_kind import Judgements
from helmbench.run.judge.judge_plan import estimate
from helmbench.run.writer import Writer
from helmbench.store.judgements import write_judged
from helmbench.store.responses import settled_results

log = logging.getLogger("helmbench.run.judge")


@dataclass
class JudgeOutcome:
    """What the judge did in this invocation (kept apart from the model calls)."""

    model: str
    status: str
    calls: int  # judge calls made now (the session sets it from the ledger: transcripts' included)
    planned: int  # calls that were needed for stored answers
    reused: int  # criterion judgements taken from the store
    cost: float  # billed now (from the ledger, like `calls`)
    skipped: int  # cases left unjudged (money limit or interruption)


def run_judge(ctx) -> tuple[str, JudgeOutcome]:
    """Judge every pending sqe answer; returns (status, outcome). `ctx` is the invocation's
    `phases.Context`: its budget covers model and judge calls together (`--max-cost`)."""
    plan, db, judge = ctx.plan, ctx.db, ctx.judge
    # read now that the model phase has committed: the cases that already have a verdict
    settled = {mp.id: settled_results(db, mp.run_id) for mp in plan.models}
    transcripts: dict = {}  # each stored transcript rebuilt once for the estimate and every judge's lane
    est = estimate(plan, db, judge, settled, transcripts)
    if est.calls:
        log.info("judging with %s: %d call(s) to make, %d criterion judgement(s) reused", judge.id, est.calls,
                 est.cached)
    writer = Writer(ctx.opts.db, write=write_judged)
    kind = Judgements(plan, db, judge, writer, settled=settled, concurrency=ctx.opts.concurrency,
                      transcripts=transcripts)
    with ctx.progress(est.calls, kind.what) as bar:
        status = run_phase(kind, **ctx.engine(writer, bar))
    outcome = JudgeOutcome(judge.id, status, kind.calls, est.calls, est.cached, kind.judge_spent, kind.skipped)
    if kind.calls or kind.skipped:
        left = f", {kind.skipped} case(s) left unjudged by the money limit" if kind.skipped else ""
        log.info("judge %s: %d call(s), $%.4f billed%s", judge.id, kind.calls, kind.judge_spent, left)
    return status, outcome
