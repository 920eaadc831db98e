"""Responses and results: what is already stored, and the one batched write path.

Responses are keyed by (request_hash, model, settings_hash, sample). A successful response is
never overwritten; an error row is replaced in place (same id) when a later attempt succeeds.
Results are keyed by (run_id, case_hash, sample). Both writes are upserts, so replaying a
batch after a crash cannot create duplicates.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Iterable, NamedTuple

if TYPE_CHECKING:  # annotations only: importing sqlite_utils costs ~0.25 s (it loads pandas)
    import sqlite_utils

RESPONSE_COLUMNS = (
    "request_hash", "model", "settings_hash", "sample", "run_id", "content", "reasoning", "parsed_json",
    "finish_reason", "latency_ms", "prompt_tokens", "completion_tokens", "cost", "provider", "model_version",
    "generation_id", "attempts", "error_kind", "error_message", "created_at",
)
_KEY = ("request_hash", "model", "settings_hash", "sample")



def upsert_replacing_errors(table: str, columns: tuple[str, ...], key: tuple[str, ...]) -> str:
    """INSERT … ON CONFLICT that overwrites a stored row only when it recorded an error.

    Something already paid for successfully (a response, a judgement) is never replaced;
    a failed attempt is, in place, keeping its id.
    """
    return (
        f"INSERT INTO {table} ({', '.join(columns)}) VALUES ({', '.join('?' * len(columns))}) "
        f"ON CONFLICT({', '.join(key)}) DO UPDATE SET "
        + ", ".join(f"{c} = excluded.{c}" for c in columns if c not in key)
        + f" WHERE {table}.error_kind IS NOT NULL RETURNING id"
    )


UPSERT_RESPONSE = upsert_replacing_errors("responses", RESPONSE_COLUMNS, _KEY)
SELECT_RESPONSE_ID = "SELECT id FROM responses WHERE request_hash = ? AND model = ? AND settings_hash = ? AND sample = ?"

RESULT_COLUMNS = ("run_id", "case_id", "case_hash", "sample", "response_id", "verdict", "score", "reason",
                  "failure_kind", "created_at")
UPSERT_RESULT = (
    f"INSERT INTO results ({', '.join(RESULT_COLUMNS)}) VALUES ({', '.join('?' * len(RESULT_COLUMNS))}) "
    "ON CONFLICT(run_id, case_hash, sample) DO UPDATE SET "
    + ", ".join(f"{c} = excluded.{c}"
                for c in ("response_id", "verdict", "score", "reason", "failure_kind", "created_at"))
)


CLEAR_ERROR = "DELETE FROM results WHERE run_id = ? AND case_hash = ? AND sample = ? AND verdict = 'ERROR'"
CLEAR_ERROR_LINKS = ("DELETE FROM result_judgements WHERE result_id IN (SELECT id FROM results WHERE run_id = ? "
                     "AND case_hash = ? AND sample = ? AND verdict = 'ERROR')")


class Write(NamedTuple):
    """One unit of work for the writer: a response (or None to reuse `result['response_id']`) and its result.

    A result whose `verdict` is None removes an earlier ERROR result for that case instead
    (the case now awaits its judge).
    """

    response: dict | None
    result: dict | None


def done_keys(db: sqlite_utils.Database, model: str, settings_hash: str, *,
              with_errors: bool = False) -> set[tuple[str, int]]:
    """(request_hash, sample) of every successful stored response: these are never requested again.
    `with_errors`: failed ones too (a preview never replaces a response a scored result points to)."""
    rows = db.execute(
        "SELECT request_hash, sample FROM responses WHERE model = ? AND settings_hash = ?"
        + ("" if with_errors else " AND error_kind IS NULL"),
        [model, settings_hash],
    )
    return {(r[0], r[1]) for r in rows}


def settled_results(db: sqlite_utils.Database, run_id: int) -> set[tuple[str, int]]:
    """(case_hash, sample) of the run's results that need no new evaluation (anything but ERROR)."""
    rows = db.execute("SELECT case_hash, sample FROM results WHERE run_id = ? AND verdict != 'ERROR'", [run_id])
    return {(r[0], r[1]) for r in rows}


def stored_response(db: sqlite_utils.Database, request_hash: str, model: str, settings_hash: str, sample: int) -> dict | None:
    cur = db.execute(
        "SELECT * FROM responses WHERE request_hash = ? AND model = ? AND settings_hash = ? AND sample = ?",
        [request_hash, model, settings_hash, sample],
    )
    found = cur.fetchall()  # exhausted, so no read snapshot stays open on this connection
    return dict(zip([d[0] for d in cur.description], found[0])) if found else None


def stored_result(db: sqlite_utils.Database, run_id: int, case_hash: str, sample: int) -> dict | None:
    """The run's result row for (case, sample) as a dict, or None."""
    cur = db.execute("SELECT * FROM results WHERE run_id = ? AND case_hash = ? AND sample = ?",
                     [run_id, case_hash, sample])
    found = cur.fetchall()
    return dict(zip([d[0] for d in cur.description], found[0])) if found else None


def write_batch(db: sqlite_utils.Database, writes: Iterable[Write]) -> int:
    """Write responses and their results in one transaction; returns how many units were written."""
    conn = db.conn
    n = 0
    with conn:
        for w in writes:
            response_id = None
            if w.response is not None:
                r = w.response
                row = conn.execute(UPSERT_RESPONSE, [r.get(c) for c in RESPONSE_COLUMNS]).fetchone()
                if row is None:  # a successful response was already stored: keep it
                    row = conn.execute(SELECT_RESPONSE_ID, [r[c] for c in _KEY]).fetchone()
                response_id = row[0]
            if w.result is not None and w.result.get("verdict") is None:
                # a deferred (judged) case whose API error is now answered: the stale ERROR goes
                key = [w.result["run_id"], w.result["case_hash"], w.result["sample"]]
                conn.execute(CLEAR_ERROR_LINKS, key)  # a judge ERROR has judgements linked to it
                conn.execute(CLEAR_ERROR, key)
            elif w.result is not None:
                res = dict(w.result)
                if response_id is not None:
                    res["response_id"] = response_id
                conn.execute(UPSERT_RESULT, [res.get(c) for c in RESULT_COLUMNS])
            n += 1
    return n
