"""What a run's results cost: billed cost and tokens of the responses and judge calls behind them."""

from __future__ import annotations

import sqlite3
from typing import NamedTuple

from helmbench.store.turns import add_turn_usage


def transcript_judge_usage(conn, run_id: int) -> tuple:
    """(cost, rows with a cost, prompt tokens, completion tokens) of the distinct transcript
    judgements the run's results used; zeros on a database from before they were linked."""
    if not conn.execute("SELECT 1 FROM sqlite_master WHERE name = 'result_transcript_judgements'").fetchone():
        return (None, 0, 0, 0)
    return conn.execute(
        """SELECT SUM(cost), COUNT(cost), COALESCE(SUM(prompt_tokens), 0), COALESCE(SUM(completion_tokens), 0)
           FROM transcript_judgements WHERE id IN (SELECT rtj.judgement_id FROM result_transcript_judgements rtj
                                                   JOIN results res ON res.id = rtj.result_id WHERE res.run_id = ?)""",
        [run_id],
    ).fetchone()


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
    transcript = transcript_judge_usage(conn, run_id)
    if transcript[1]:  # a conversation's transcript judgements count as the judge's, like single answers'
        judge = ((judge[0] or 0.0) + (transcript[0] or 0.0), judge[1] + transcript[1], judge[2] + transcript[2],
                 judge[3] + transcript[3])
    model_cost = resp[0] if resp[1] else None
    # A conversation's result points at no response but at its turns (the simulated user's included):
    # the same usage `finish_run` records as the run's cost, so the report never shows less than was billed.
    cost, pt, ct = add_turn_usage(conn, run_id, (model_cost, resp[2], resp[3]))
    return Spend(cost, judge[0] if judge[1] else None, pt + judge[2], ct + judge[3])
