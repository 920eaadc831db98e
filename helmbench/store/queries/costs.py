"""What a run's results cost: billed cost and tokens of the responses and judge calls behind them."""

from __future__ import annotations

import sqlite3
from typing import NamedTuple

from helmbench.store.turns import add_turn_usage


class Spend(NamedTuple):
    model_cost: float | None  # None: no response reported a cost (never estimated)
    judge_cost: float | None
    prompt_tokens: int  # responses and judgements together
    completion_tokens: int


def run_spend(conn: sqlite3.Connection, run_id: int) -> Spend:
    """Summed from the stored rows the run's results point to (a reused response counts for each run using it)."""
    resp = conn.execute(
        """SELECT SUM(cost), COUNT(cost), COALESCE(SUM(prompt_tokens), 0), COALESCE(SUM(completion_tokens), 0)
           FROM responses WHERE id IN (SELECT response_id FROM results WHERE run_id = ?)""",
        [run_id],
    ).fetchone()
    judge = conn.execute(
        """SELECT SUM(cost), COUNT(cost), COALESCE(SUM(prompt_tokens), 0), COALESCE(SUM(completion_tokens), 0)
           FROM judgements WHERE id IN (SELECT rj.judgement_id FROM result_judgements rj
                                        JOIN results res ON res.id = rj.result_id WHERE res.run_id = ?)""",
        [run_id],
    ).fetchone()
    model_cost = resp[0] if resp[1] else None
    # A conversation's result points at no response but at its turns (the simulated user's included):
    # the same usage `finish_run` records as the run's cost, so the report never shows less than was billed.
    cost, pt, ct = add_turn_usage(conn, run_id, (model_cost, resp[2], resp[3]))
    return Spend(cost, judge[0] if judge[1] else None, pt + judge[2], ct + judge[3])
