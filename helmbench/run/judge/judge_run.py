"""The judge's part of one `helmbench run` invocation, called by the session after the model calls.

Why after rather than interleaved: judging reads answers back from the store, so the same code
path serves a fresh answer, an answer stored by an earlier (crashed) run, and a re-judge after
a criterion edit; and the number of judge calls is known exactly before the first one is made
(the progress bar's total, and the dry-run's estimate for answers already stored).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from rich.console import Console
from rich.text import Text

from helmbench.run.engine import run_phase
from helmbench.run.judge.judge_kind import Judgements
from helmbench.run.judge.judge_plan import JudgeEstimate, Panel, estimate
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
    est = estimate(plan, db, judge, settled)
    if est.calls:
        log.info("judging with %s: %d call(s) to make, %d criterion judgement(s) reused", judge.id, est.calls,
                 est.cached)
    writer = Writer(ctx.opts.db, write=write_judged)
    kind = Judgements(plan, db, judge, writer, settled=settled, concurrency=ctx.opts.concurrency)
    with ctx.progress(est.calls, kind.what) as bar:
        status = run_phase(kind, **ctx.engine(writer, bar))
    outcome = JudgeOutcome(judge.id, status, kind.calls, est.calls, est.cached, kind.judge_spent, kind.skipped)
    if kind.calls or kind.skipped:
        left = f", {kind.skipped} case(s) left unjudged by the money limit" if kind.skipped else ""
        log.info("judge %s: %d call(s), $%.4f billed%s", judge.id, kind.calls, kind.judge_spent, left)
    return status, outcome


# --- what `helmbench run` prints about the judge ---------------------------------------------


def render_dry_run(est: JudgeEstimate | None, out: Console) -> None:
    if est is None or est.model is None:
        return
    lines = [f"Judge ({est.model}), counted apart from the calls above: {est.calls} call(s) for answers already "
             f"stored, {est.cached} judgement(s) reused"]
    if est.unanswered:
        lines.append(f"; up to {est.upto_new} more once {est.unanswered} new answer(s) arrive (one per criterion; "
                     "malformed answers are failed without judging)")
    if est.no_judge:
        lines.append(f"; {est.no_judge} stored answer(s) are decided without the judge")
    out.print(Text("".join(lines) + "."))


def render_summary(outcome: JudgeOutcome | None, runs: list[dict], out: Console) -> None:
    if outcome is None:
        return
    evaluations = sum(r.get("n_judgements") or 0 for r in runs)
    judged = sum(r.get("n_judged_cases") or 0 for r in runs)
    errors = sum(r.get("n_judge_errors") or 0 for r in runs)
    text = (f"Judge {outcome.model}: {outcome.calls} call(s) now (${outcome.cost:.4f}), "
            f"{outcome.reused} reused; {evaluations} criterion evaluation(s) behind {judged} judged case(s)")
    if errors:
        text += f"; {errors} evaluation(s) failed: those cases are ERRORs, re-judged by the next run"
    if outcome.skipped:
        text += f"; {outcome.skipped} case(s) await the judge (run again to continue)"
    out.print(Text(text + "."))
