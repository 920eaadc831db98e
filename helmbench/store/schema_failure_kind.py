"""Migration "failure kind": `results.failure_kind`, so readers stop guessing from reason text.

Why: the scorer used to count format failures (the model did not answer in the requested
format) by matching the start of `results.reason`, which ties every reader to the wording of
the evaluators. The run now writes the kind from the evaluator's outcome; this migration adds
the column and fills it once for results written before, with the classification those
readers used (`legacy_failure_kind`, frozen here: it describes old rows, not new reasons).
A reader of a database that has not been migrated yet (read-only) computes the same value.
"""

from __future__ import annotations

import re

#: How the executor's `results.reason` began, up to this migration, when the model's output was
#: not a usable answer (matched case-insensitively): run/evaluate/outcome.py (truncated, empty),
#: parse.py (invalid JSON, schema) and deterministic.py (not an object, missing field, not a list).
FORMAT_FAILURE_PREFIXES: tuple[str, ...] = (
    "truncated",
    "empty response",
    "invalid json",
    "does not match the response schema",
    "the answer is a json",
    "the answer has no",
)
_NOT_A_LIST = re.compile(r"^\S+ is not a list: ")

#: The SQL function name under which readers and this migration call `legacy_failure_kind`.
SQL_FUNCTION = "helmbench_legacy_failure_kind"


def legacy_failure_kind(verdict: str | None, reason: str | None) -> str | None:
    """'format' for a FAIL whose reason says the output was not a usable answer, else None."""
    if verdict != "FAIL" or not reason:
        return None
    text = reason.strip()
    if text.lower().startswith(FORMAT_FAILURE_PREFIXES) or _NOT_A_LIST.match(text):
        return "format"
    return None


def register(conn) -> None:
    """Make `legacy_failure_kind` callable from SQL on this connection (no write: read-only ones too)."""
    conn.create_function(SQL_FUNCTION, 2, legacy_failure_kind, deterministic=True)


def apply(db) -> None:
    conn = db.conn
    conn.execute("ALTER TABLE results ADD COLUMN failure_kind TEXT")
    register(conn)
    conn.execute(f"UPDATE results SET failure_kind = {SQL_FUNCTION}(verdict, reason) WHERE verdict = 'FAIL'")
