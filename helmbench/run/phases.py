"""A run as a list of phases under one budget: answers, conversation turns, judging, and what comes next.

Why objects: the session used to sequence three phases by hand, each with its own budget and its
own counters added up afterwards, and every kind of call it forgot to add (a transcript's judge
call) made the run's summary disagree with `costs`. Now a phase says when it runs (`wanted`, from
the status so far), how many calls it expects (`total`, the progress bar's denominator), which
kinds of ledger row its calls are (`kinds`: its summary is a ledger query over them) and runs
itself on the engine (`execute`), and what it would send now (`estimate`: the dry run's
estimate is the sum over the phases). The session walks the list; adding a kind of call adds one
phase here and touches no sequencing code. The money limit is one `Budget` for the invocation;
its price estimate is learnt afresh per phase (a judge's price is not a model's).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Protocol

from helmbench.manifest.conversation import last_turn, simulators
from helmbench.run.budget import Budget
from helmbench.run.config import RunOptions
from helmbench.run.plan import Plan
from helmbench.run.progress import PhaseCounter


@dataclass
class Context:
    """What every phase of one invocation shares."""

    plan: Plan
    db: Any  # the session's connection (reads)
    opts: RunOptions
    judge: Any  # judge_plan.Panel or None
    budget: Budget
    invocation: str  # names this invocation's rows in the ledger
    provider: Callable[[], Any]  # makes the provider at the first call
    progress: Callable[[int, str], PhaseCounter]  # (total, what) → the counter of a phase

    def engine(self, writer, bar: PhaseCounter) -> dict:
        """The engine's keyword arguments for one phase (`run_phase(kind, **ctx.engine(writer, bar))`)."""
        return {"provider": self.provider, "writer": writer, "progress": bar, "policy": self.opts.retry,
                "budget": self.budget, "invocation": self.invocation}


class Phase(Protocol):
    what: str  # names its calls in the progress display: "model calls"
    kinds: tuple[str, ...]  # the ledger kinds of its calls (store/ledger.KINDS)

    def wanted(self, ctx: Context, status: str) -> bool:
        """Whether it runs, given how the phases before it ended."""

    def execute(self, ctx: Context) -> str:
        """Run it on the engine: 'completed', 'interrupted' or 'stopped_cost'."""

    def estimate(self, plan: Plan, est: Any) -> None:
        """Add the calls it would send now to `est` (a `run.estimate.Estimator`): the dry run's estimate."""


def _selected(plan: Plan, conversations: bool):
    """The selected cases that are (or are not) conversations, as the estimate has always told them apart."""
    return (case for case in plan.manifest
            if plan.selected(case) and ("conversation" in case["request"]) == conversations)


class AnswerPhase:
    """The models answer every single-turn case not stored."""

    what = "model calls"
    kinds = ("answer",)

    def wanted(self, ctx: Context, status: str) -> bool:
        return True

    def execute(self, ctx: Context) -> str:
        from helmbench.run.answer_kind import Answers
        from helmbench.run.engine import run_phase
        from helmbench.run.writer import Writer

        writer = Writer(ctx.opts.db)
        kind = Answers(ctx.plan, ctx.db, writer, concurrency=ctx.opts.concurrency, max_cost=ctx.opts.max_cost)
        with ctx.progress(ctx.plan.new_calls, self.what) as bar:
            return run_phase(kind, **ctx.engine(writer, bar))

    def estimate(self, plan: Plan, est: Any) -> None:
        for case in _selected(plan, conversations=False):
            for mp in plan.models:
                if plan.takes(case, mp):
                    est.add(mp.id, case, sum((case["request_hash"], s) not in mp.done for s in range(plan.samples)))


class ConversationPhase:
    """Conversations turn by turn (rounds: each committed before the turns that depend on it)."""

    what = "conversation turns"
    kinds = ("turn", "user")

    def wanted(self, ctx: Context, status: str) -> bool:
        return bool(ctx.plan.conversations) and status == "completed"

    def execute(self, ctx: Context) -> str:
        from helmbench.run.conversation.runner import run_conversations

        return run_conversations(ctx)

    def estimate(self, plan: Plan, est: Any) -> None:
        for case in _selected(plan, conversations=True):
            for mp in plan.models:  # each model turn not stored is a call (a simulated user may stop early)
                if plan.takes(case, mp):
                    est.add(mp.id, case, mp.turns_to_ask.get(case["id"], last_turn(case) * plan.result_samples(case)))
                    for user in simulators(case["request"]["conversation"]):  # each simulated user's own calls
                        est.add_user(case, mp.user_turns_to_ask.get((case["id"], user["id"]), 0), user["id"])


class JudgePhase:
    """The judge judges every stored output that awaits it: single answers and conversation transcripts."""

    what = "judge calls"
    kinds = ("judge",)

    def __init__(self):
        self.outcome = None  # judge_run.JudgeOutcome once executed

    def wanted(self, ctx: Context, status: str) -> bool:
        return ctx.judge is not None and status != "interrupted"

    def execute(self, ctx: Context) -> str:
        from helmbench.run.judge.judge_run import run_judge

        status, self.outcome = run_judge(ctx)
        return status

    def estimate(self, plan: Plan, est: Any) -> None:
        """Nothing yet: which outputs the judge will see is known only once they are stored (the dry run's
        notes say judge calls are not included)."""


class RejudgePhase:
    """`--rejudge-sample N`: the judge asked again on N judged outputs (a seeded sample) in its re-judge lane,
    for the run-to-run agreement `report` shows; it decides no result. After the judge phase, when that
    completed (the sample is drawn from the outputs the judge decided)."""

    what = "re-judge calls"
    kinds = ("judge",)  # the same kind and account as the first judgement: its lane is in the settings hash

    def __init__(self):
        self.planned = 0

    def wanted(self, ctx: Context, status: str) -> bool:
        return ctx.judge is not None and ctx.opts.rejudge_sample > 0 and status == "completed"

    def execute(self, ctx: Context) -> str:
        from helmbench.run.judge.judge_run import run_rejudge

        status, self.planned = run_rejudge(ctx)
        return status

    def estimate(self, plan: Plan, est: Any) -> None:
        """Nothing, as the judge phase: the outputs it re-judges are known only once judged."""


def phases() -> list[Phase]:
    """The phases of a run, in order."""
    return [AnswerPhase(), ConversationPhase(), JudgePhase(), RejudgePhase()]


def combine_status(before: str, phase: str) -> str:
    """The invocation's status: an interruption or the money limit in any phase wins."""
    for status in ("interrupted", "stopped_cost"):
        if status in (before, phase):
            return status
    return before


def run_phases(ctx: Context, todo: list[Phase]) -> str:
    """Each wanted phase in turn; how the invocation ended."""
    status = "completed"
    for phase in todo:
        if phase.wanted(ctx, status):
            ctx.budget.next_phase()
            status = combine_status(status, phase.execute(ctx))
    return status
