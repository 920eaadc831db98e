"""The conversation phase of `helmbench run`: rounds of the `ConversationTurns` job kind on the engine.

Each round is one phase on the engine (run/engine.py) with one call per conversation still
going, run in parallel on the models', the simulated user's and the judge's lanes; the engine
commits what a round paid for when the round ends, before the next round asks the turns that
depend on it (see kind.py).
"""

from __future__ import annotations

from helmbench.run.budget import Budget
from helmbench.run.conversation.kind import ConversationTurns, conversation_writer
from helmbench.run.engine import run_phase


def run_conversations(plan, db, judge, *, opts, budget: Budget, progress, provider) -> tuple[str, int, float]:
    """Every conversation of the plan, round by round; returns how the phase ended, and the
    transcript judge calls it paid for now with their cost (the run's summary counts them).

    `progress(total, phase)` makes the progress bar; `provider()` the provider (made at the first call)."""
    kind = ConversationTurns(plan, db, concurrency=opts.concurrency, judge=judge)
    writer = conversation_writer(opts.db)
    status = "completed"
    try:
        kind.start(writer)  # settles what is stored (a verdict from stored turns costs nothing)
        with progress(plan.new_turns, kind.what) as bar:
            while kind.going and status == "completed":
                kind.next_round(writer)
                status = run_phase(kind, provider=provider, writer=writer, progress=bar, policy=opts.retry,
                                   budget=budget)
                writer = kind.writer = conversation_writer(opts.db)
    finally:
        writer.close()
    return status, kind.judge_calls, kind.judge_cost
