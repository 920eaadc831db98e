"""The judge's part of one `helmbench run` invocation, called by the session after the model calls.

Why after rather than interleaved: judging reads answers back from the store, so the same code
path serves a fresh answer, an answer stored by an earlier (crashed) run, and a re-judge after
a criterion edit; and the number of judge calls is known exactly before the first one is made
(the progress bar's total, and the dry-run's estimate for answers already stored).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, replace

from helmbench.run.engine import run_phase
from helmbench.run.judge.judge_kind import Judgements
from helmbench.run.judge.judge_plan import estimate, rejudge_sample
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
    rejudge: int = 0  # of `calls`, those of the re-judge lane (`--rejudge-sample`; from the ledger too)


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
    kind = Judgements(plan, db, judge, None, settled=settled, concurrency=ctx.opts.concurrency,
                      transcripts=transcripts)
    status = judge_rounds(ctx, kind, est.calls)
    outcome = JudgeOutcome(judge.id, status, kind.calls, est.calls, est.cached, kind.judge_spent, kind.skipped)
    if kind.calls or kind.skipped:
        left = f", {kind.skipped} case(s) left unjudged by the money limit" if kind.skipped else ""
        log.info("judge %s: %d call(s), $%.4f billed%s", judge.id, kind.calls, kind.judge_spent, left)
    return status, outcome


def judge_rounds(ctx, kind: Judgements, calls: int) -> str:
    """The phase's rounds on the engine: one, unless gated criteria (`applies_when`) wait for their gates.

    Why rounds: a gated criterion is asked only after its gate's verdict is in, and a round ends with every
    judgement it made committed (its writer closed). The next round walks the cases again (those decided are
    settled) with their gates known, through the same plan (`iter_work`) and the judgements of this
    invocation (`kind.called`); it stops when no case waits, when a round made no call, or on a stop. A chain
    of gates takes one round per link; an interrupted run resumes where it stopped, the gates stored."""
    status, first = "completed", True
    while True:
        kind.waiting = 0
        before = kind.calls
        kind.writer = Writer(ctx.opts.db, write=write_judged)
        with ctx.progress(calls if first else _gated_calls(ctx, kind), kind.what) as bar:
            status = run_phase(kind, **ctx.engine(kind.writer, bar))
        first = False
        if status != "completed" or not kind.waiting or kind.calls == before:
            return status
        log.info("judging gated criteria: %d case(s) had gates judged in the round before", kind.waiting)


def _gated_calls(ctx, kind: Judgements) -> int:
    """The calls of the next round, for its progress bar (the gates of the round before now known)."""
    return estimate(ctx.plan, ctx.db, kind.judge, kind.settled, None, kind.only, kind.called).calls


#: The re-judge lane `run --rejudge-sample` asks in (lane 0 is the first judgement, the one results use).
REJUDGE_LANE = 1


def rejudge_plan(plan, db, judge, n: int, seed: int):
    """The re-judge lane's panel, its sample of `n` judged outputs (seed `seed`), their transcripts and the
    estimate of its calls: what `run --rejudge-sample` asks, and what its dry run counts (one computation)."""
    lane = judge.lane(REJUDGE_LANE)
    sample = rejudge_sample(plan, db, n, seed)
    transcripts: dict = {}
    return lane, sample, transcripts, estimate(plan, db, lane, {}, transcripts, sample)


def with_rejudge(est, plan, db, judge, n: int, seed: int):
    """The dry run's judge estimate `est` with the re-judge calls `--rejudge-sample n` would make now (the
    sample is drawn from outputs judged already; the run draws after judging, so a store still being
    judged can give it more)."""
    if judge is None or n <= 0:
        return est
    _, sample, _, rest = rejudge_plan(plan, db, judge, n, seed)
    return replace(est, rejudge_wanted=n, rejudge_outputs=len(sample), rejudge_calls=rest.calls)


def run_rejudge(ctx) -> tuple[str, int]:
    """Ask the judge(s) again on a seeded sample of `--rejudge-sample` judged outputs, in the re-judge lane:
    the same job kind, engine, budget and ledger account as the first judgement (ledger kind `judge`, the
    lane's settings hash marked `#rejudge1`), with no result decided. Returns (status, calls planned);
    N outputs × their criteria × the judges the first time, none once they are stored."""
    plan, db, opts = ctx.plan, ctx.db, ctx.opts
    lane, sample, transcripts, est = rejudge_plan(plan, db, ctx.judge, opts.rejudge_sample, opts.rejudge_seed)
    log.info("re-judging %d of the judged output(s) (seed %d%s): %d call(s) to make, %d stored", len(sample),
             opts.rejudge_seed, f"; {opts.rejudge_sample} asked, fewer are judged"
             if len(sample) < opts.rejudge_sample else "", est.calls, est.cached)
    kind = Judgements(plan, db, lane, None, settled={}, concurrency=opts.concurrency, transcripts=transcripts,
                      only=sample, decide=False)
    kind.what = "re-judge calls"
    return judge_rounds(ctx, kind, est.calls), est.calls
