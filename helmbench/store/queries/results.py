"""Result rows as the scorer and the site read them, with their case, and what a run's results rest on."""

from __future__ import annotations

import sqlite3

from helmbench.store import schema_failure_kind

#: `results.failure_kind` of a FAIL whose output was not a usable answer (invalid JSON, a schema
#: violation, truncated or empty output, not the requested shape): written by the run from the
#: evaluator's outcome, backfilled once for older rows by migration 4.
FORMAT = "format"

#: The result columns the scorer needs, joined with their case (the scorer's `to_scored` reads them).
RESULT_CASE_SQL = """
SELECT res.id AS result_id, res.run_id, res.case_id, res.case_hash, res.sample, res.response_id,
       res.verdict, res.score, res.reason,
       COALESCE(c.pillar, b.pillar) AS pillar, COALESCE(c.behaviour, s.behaviour) AS behaviour,
       c.scenario, c.condition, c.user_context, c.perturbation,
       c.severity_perturbation, c.severity_user_context, c.difficulty,
       COALESCE(c.weight, b.weight, 1.0) AS weight, {simulator} AS simulator
FROM results res
JOIN cases c ON c.hash = res.case_hash
LEFT JOIN scenarios s ON s.code = c.scenario
LEFT JOIN behaviours b ON b.code = COALESCE(c.behaviour, s.behaviour)
"""

#: `RESULT_CASE_SQL` plus the response and the failure kind, for the pages that show each result.
RESULT_DETAIL_SQL = RESULT_CASE_SQL.replace(
    "FROM results res",
    """, {failure_kind} AS failure_kind, rs.content, rs.finish_reason, rs.error_kind, rs.error_message, rs.cost,
       rs.latency_ms
FROM results res
LEFT JOIN responses rs ON rs.id = res.response_id""",
)


def _failure_kind(conn: sqlite3.Connection, alias: str = "res") -> str:
    """The column, or on a database opened read-only before migration 4 the value it would have."""
    if any(r[1] == "failure_kind" for r in conn.execute("PRAGMA table_info(results)")):
        return f"{alias}.failure_kind"
    schema_failure_kind.register(conn)
    return f"{schema_failure_kind.SQL_FUNCTION}({alias}.verdict, {alias}.reason)"


#: Who played the user in a conversation's result: the simulated user whose turns the result was decided on
#: (the one account of what happened: the turns' `caller`), NULL for a single answer or a scripted user.
_SIMULATOR = """(SELECT t.caller FROM result_turns rt JOIN turns t ON t.id = rt.turn_id
                 WHERE rt.result_id = res.id AND t.source = 'user_model' LIMIT 1)"""


def _simulator(conn: sqlite3.Connection) -> str:
    """The expression of a result's simulated user, or NULL on a database from before conversations."""
    tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table' "
                                         "AND name IN ('result_turns', 'turns')")}
    return _SIMULATOR if len(tables) == 2 else "NULL"


def _rows(conn: sqlite3.Connection, sql: str, params: list) -> list[sqlite3.Row]:
    cur = conn.execute(sql, params)
    cur.row_factory = sqlite3.Row
    return cur.fetchall()


def result_case_rows(conn: sqlite3.Connection, run_id: int) -> list[sqlite3.Row]:
    """Every result of a run (ERROR included) with its case, in write order."""
    sql = RESULT_CASE_SQL.format(simulator=_simulator(conn))
    return _rows(conn, sql + " WHERE res.run_id = ? ORDER BY res.id", [run_id])


def result_detail_rows(conn: sqlite3.Connection, run_id: int) -> list[sqlite3.Row]:
    """`result_case_rows` with the response text, its error and cost, and the failure kind."""
    sql = RESULT_DETAIL_SQL.format(failure_kind=_failure_kind(conn), simulator=_simulator(conn))
    return _rows(conn, sql + " WHERE res.run_id = ?", [run_id])


def format_failure_count(conn: sqlite3.Connection, run_id: int) -> int:
    """FAIL results of the run whose output was not a usable answer (`failure_kind = 'format'`)."""
    kind = _failure_kind(conn, "results")
    return conn.execute(f"SELECT COUNT(*) FROM results WHERE run_id = ? AND verdict = 'FAIL' AND {kind} = ?",
                        [run_id, FORMAT]).fetchone()[0]


def served_counts(conn: sqlite3.Connection, run_id: int) -> list[tuple[str | None, str | None, int]]:
    """(returned model version, serving provider, answers) over the responses a run's results rest on."""
    return [tuple(r) for r in conn.execute(
        """SELECT s.model_version, s.provider, COUNT(*) FROM results r JOIN responses s ON s.id = r.response_id
           WHERE r.run_id = ? GROUP BY s.model_version, s.provider""", [run_id])]


#: What each result of a run cost to answer: its response's tokens, cost and latency, or for a
#: conversation the sums over the model's own turns it was decided on (not the simulated user's).
_USAGE_SQL = """
SELECT res.id, rs.prompt_tokens, rs.completion_tokens, rs.cost, rs.latency_ms
FROM results res JOIN responses rs ON rs.id = res.response_id WHERE res.run_id = :run
"""
_TURN_USAGE_SQL = """
SELECT rt.result_id, sum(t.prompt_tokens), sum(t.completion_tokens), sum(t.cost), sum(t.latency_ms)
FROM result_turns rt JOIN turns t ON t.id = rt.turn_id JOIN results res ON res.id = rt.result_id
WHERE res.run_id = :run AND t.role = 'assistant' GROUP BY rt.result_id
"""


def result_usage(conn: sqlite3.Connection, run_id: int) -> dict[int, tuple]:
    """{result id: (prompt tokens, completion tokens, cost, latency ms)} of a run's results (None where
    unknown), for an export that reports each sample's usage."""
    out = {r[0]: tuple(r[1:]) for r in conn.execute(_USAGE_SQL, {"run": run_id})}
    if conn.execute("SELECT 1 FROM sqlite_master WHERE name = 'result_turns'").fetchone():
        out.update({r[0]: tuple(r[1:]) for r in conn.execute(_TURN_USAGE_SQL, {"run": run_id})})
    return out
