"""The conversation phase of `helmbench run`: rounds of the `ConversationTurns` job kind on the engine.

Each round is one phase on the engine (run/engine.py) with one call per conversation still
going, run in parallel on the models' and the simulated user's lanes; the engine
commits what a round paid for when the round ends, before the next round asks the turns that
depend on it (see kind.py).
"""

from __future__ import annotations

from helmbench.run.conversation.kind import ConversationTurns, conversation_writer
from helmbench.run.engine import run_phase


def run_conversations(ctx) -> str:
    """Every conversation of the plan, round by round; returns how the phase ended. `ctx` is the
    invocation's `phases.Context` (its calls are counted by the ledger, like every phase's)."""
    kind = ConversationTurns(ctx.plan, ctx.db, concurrency=ctx.opts.concurrency)
    writer = conversation_writer(ctx.opts.db)
    status = "completed"
    try:
        kind.start(writer)  # settles what is stored (a verdict from stored turns costs nothing)
        with ctx.progress(ctx.plan.conversation_calls, kind.what) as bar:
            while kind.going and status == "completed":
                kind.next_round(writer)
                status = run_phase(kind, **ctx.engine(writer, bar))
                writer = kind.writer = conversation_writer(ctx.opts.db)
    finally:
        writer.close()
    return status
