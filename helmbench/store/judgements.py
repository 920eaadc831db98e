"""Judgements: the judge's answers per criterion, their links to results, and the run's judge totals.

A judgement is of one output (`output`): a single answer (`response_id`, the answer first judged)
or a conversation transcript (reached through the results linked to it: `result_turns`); one
table, one write path and one key for both (migration 10). It is keyed by (judge_request_hash,
judge_model, judge_settings_hash): the request holds the criterion, the prompt and the model's
output, so the same output judged against the same criterion by the same judge is never paid for
twice, whichever case or run asks. Like
responses, a successful judgement is never overwritten and an ERROR one is replaced in place
(same id) when a later attempt succeeds. A judged case is written in one transaction: its new
judgements, its result, and the result's links (`result_judgements`) replaced as a whole (and a
conversation's checkpoint verdicts and transcript: `store.turns.link_transcript`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Iterable, NamedTuple

if TYPE_CHECKING:  # annotations only: importing sqlite_utils costs ~0.25 s (it loads pandas)
    import sqlite_utils

from helmbench.store.responses import RESULT_COLUMNS, UPSERT_RESULT, upsert_replacing_errors
from helmbench.store.turns import Transcript, link_transcript

JUDGEMENT_COLUMNS = (
    "judge_request_hash", "judge_model", "judge_settings_hash", "output", "response_id", "run_id", "criterion",
    "verdict", "score", "judgment_json", "justification", "raw", "finish_reason", "cost", "latency_ms",
    "prompt_tokens", "completion_tokens", "attempts", "error_kind", "error_message", "created_at",
)
_KEY = ("judge_request_hash", "judge_model", "judge_settings_hash")

UPSERT_JUDGEMENT = upsert_replacing_errors("judgements", JUDGEMENT_COLUMNS, _KEY)
SELECT_JUDGEMENT = "SELECT * FROM judgements WHERE judge_request_hash = ? AND judge_model = ? AND judge_settings_hash = ?"
UPSERT_RESULT_ID = UPSERT_RESULT + " RETURNING id"


class JudgedCase(NamedTuple):
    """One judged case: per criterion (a new judgement row or a stored one's id, verdict, score), and its result.

    The verdict and score are stored on the link too: they are decided by the criterion's
    pass_values and scores as the case has them, which may differ from when the (reused)
    judgement was first made.
    """

    links: list[tuple[dict | int, str | None, float | None]]
    result: dict | None  # None: only store the judgements (each is saved as soon as it is paid for)
    transcript: Transcript | None = None  # a conversation's: its checkpoints and turns


def find_judgement(db: sqlite_utils.Database, request_hash: str, model: str, settings_hash: str) -> dict | None:
    cur = db.execute(SELECT_JUDGEMENT, [request_hash, model, settings_hash])
    row = cur.fetchone()
    return dict(zip([d[0] for d in cur.description], row)) if row else None


def _judgement_id(conn, row: dict) -> int:
    # what was judged follows from what it points at (the table's CHECK holds the two together)
    row = {"output": "answer" if row.get("response_id") is not None else "transcript", **row}
    found = conn.execute(UPSERT_JUDGEMENT, [row.get(c) for c in JUDGEMENT_COLUMNS]).fetchone()
    if found is None:  # a successful judgement was stored already: keep it
        found = conn.execute(SELECT_JUDGEMENT.replace("*", "id"), [row[c] for c in _KEY]).fetchone()
    return found[0]


def write_judged(db: sqlite_utils.Database, units: Iterable[JudgedCase]) -> int:
    """Write judged cases (judgements, result, links) in one transaction; returns how many."""
    conn = db.conn
    n = 0
    with conn:
        for unit in units:
            links = [(ref if isinstance(ref, int) else _judgement_id(conn, ref), verdict, score)
                     for ref, verdict, score in unit.links]
            if unit.result is None:  # a paid judgement saved on its own, before its case is complete
                n += 1
                continue
            result_id = conn.execute(UPSERT_RESULT_ID, [unit.result.get(c) for c in RESULT_COLUMNS]).fetchone()[0]
            conn.execute("DELETE FROM result_judgements WHERE result_id = ?", [result_id])
            conn.executemany(
                "INSERT OR REPLACE INTO result_judgements (result_id, judgement_id, verdict, score) VALUES (?, ?, ?, ?)",
                [(result_id, j, verdict, score) for j, verdict, score in links])
            if unit.transcript is not None:
                link_transcript(conn, result_id, unit.result["sample"], unit.transcript)
            n += 1
    return n


def judgements_of_result(db: sqlite_utils.Database, result_id: int) -> list[dict]:
    """The judgements behind one result, in criterion order (for run-single and the site)."""
    cur = db.execute(
        "SELECT j.*, rj.verdict AS link_verdict, rj.score AS link_score FROM result_judgements rj JOIN judgements j ON j.id = rj.judgement_id "
        "WHERE rj.result_id = ? ORDER BY j.criterion", [result_id])
    cols = [d[0] for d in cur.description]
    return [dict(zip(cols, row)) for row in cur.fetchall()]


_TOTALS = """
WITH links AS (
  SELECT j.* FROM result_judgements rj JOIN results res ON res.id = rj.result_id
  JOIN judgements j ON j.id = rj.judgement_id WHERE res.run_id = :run
)
SELECT
  (SELECT count(*) FROM links),
  (SELECT count(*) FROM links WHERE error_kind IS NOT NULL),
  (SELECT count(DISTINCT res.id) FROM results res JOIN result_judgements rj ON rj.result_id = res.id
     WHERE res.run_id = :run)
"""
TOTAL_COLUMNS = ("n_judgements", "n_judge_errors", "judge_calls", "judge_cost", "judge_prompt_tokens",
                 "judge_completion_tokens")


def judge_totals(db: sqlite_utils.Database, run_id: int) -> dict:
    """A run's evaluations, kept apart from its case counts.

    n_judgements: criterion judgements behind the run's results (a case with CR1 and CR2 has two);
    n_judge_errors: those that are ERRORs; n_judged_cases: results with judgements; judge_calls: the
    judge calls billed in this run; judge_cost/tokens: of the judge calls behind the results (the
    leaderboard's meaning: `queries.ledger.run_spend`), both from the call ledger.
    An answer's judgements and a transcript's (every judge of an ensemble) are the same rows;
    judge_calls are the run's judge rows in the call ledger (attempts included: what the provider saw).
    """
    conn = getattr(db, "conn", db)  # a sqlite_utils Database or a plain connection (read-only readers)
    from helmbench.store.queries.ledger import JUDGE_KINDS, behind_results_ledger, run_ledger

    row = conn.execute(_TOTALS, {"run": run_id}).fetchone()
    behind = behind_results_ledger(conn, run_id)
    prompt, completion = behind.tokens(kinds=JUDGE_KINDS)
    return {"n_judgements": row[0], "n_judge_errors": row[1], "judge_calls": run_ledger(conn, run_id).calls(
        kinds=JUDGE_KINDS), "judge_cost": behind.cost(kinds=JUDGE_KINDS), "judge_prompt_tokens": prompt,
        "judge_completion_tokens": completion, "n_judged_cases": row[2]}


def record_judge_totals(db: sqlite_utils.Database, run_id: int) -> dict:
    """Store `judge_totals` on the runs row; returns the whole refreshed row."""
    totals = judge_totals(db, run_id)
    with db.conn as conn:
        conn.execute(f"UPDATE runs SET {', '.join(f'{c} = ?' for c in TOTAL_COLUMNS)} WHERE id = ?",
                     [totals[c] for c in TOTAL_COLUMNS] + [run_id])
    cur = db.execute("SELECT * FROM runs WHERE id = ?", [run_id])
    row = dict(zip([d[0] for d in cur.description], cur.fetchone()))
    row["n_judged_cases"] = totals["n_judged_cases"]
    return row
