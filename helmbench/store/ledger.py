"""The call ledger: one row per request sent to a provider, whatever asked it (migration 9).

Why a ledger beside the caches (`responses`, `judgements`, `turns`, `transcript_judgements`,
`generations`): the caches say what is known, keyed by what was asked, so nothing is paid twice;
they cannot say what was paid, by whom, or what a crash cut off. Every number about calls and
money (the run's summary, progress, `costs`, the report's cost, the site, the API, Datasette's
canned queries) is a named query over this one table, so those numbers cannot disagree.

A row is written in state `sent` and committed *before* the request leaves (the writer's group
commit: `Writer.sent`), and completed (`answered` or `failed`, with tokens, billed cost, the
returned model version and serving provider) once what the call returned is stored. A call cut
by a crash or a kill -9 therefore stays visible as sent-but-unknown, possibly billed: after a
crash the provider's count of requests equals the completed rows plus the `sent` ones.

`invocation` names the process that sent it (one `helmbench run` or `generate`), so "billed
now" is a query too; backfilled rows have none. `uid` is the row's content key: random for a new call, `m9:<table>:<id>` for a row backfilled
from the caches by the migration, so ledgers of several databases merge row by row, idempotently.
Backfilled rows record the stored call (one row per stored row, `attempt` = its attempt count):
the releases before the ledger did not keep failed attempts that were retried.
"""

from __future__ import annotations

import os
import random
from typing import TYPE_CHECKING, Any, Iterable, NamedTuple

if TYPE_CHECKING:  # annotations only: importing sqlite_utils costs ~0.25 s (it loads pandas)
    import sqlite_utils

#: The kinds of call, in the order a run makes them.
KINDS = ("answer", "turn", "user", "judge", "generation")

DDL = """
CREATE TABLE calls (
  id INTEGER PRIMARY KEY,
  uid TEXT NOT NULL UNIQUE,
  kind TEXT NOT NULL CHECK (kind IN ('answer', 'turn', 'user', 'judge', 'generation')),
  run_id INTEGER REFERENCES runs(id),
  invocation TEXT,
  model TEXT NOT NULL,
  settings_hash TEXT,
  request_key TEXT NOT NULL,
  sample INTEGER,
  attempt INTEGER NOT NULL DEFAULT 1,
  state TEXT NOT NULL CHECK (state IN ('sent', 'answered', 'failed')),
  error_kind TEXT,
  prompt_tokens INTEGER,
  completion_tokens INTEGER,
  cost REAL,
  latency_ms INTEGER,
  model_version TEXT,
  provider TEXT,
  generation_id TEXT,
  sent_at TEXT NOT NULL,
  completed_at TEXT
);
CREATE INDEX idx_calls_run ON calls(run_id, kind);
CREATE INDEX idx_calls_model ON calls(kind, model);
CREATE INDEX idx_calls_request ON calls(request_key);
CREATE INDEX idx_calls_invocation ON calls(invocation)
"""

COLUMNS = ("uid", "kind", "run_id", "invocation", "model", "settings_hash", "request_key", "sample", "attempt", "state",
           "error_kind", "prompt_tokens", "completion_tokens", "cost", "latency_ms", "model_version", "provider",
           "generation_id", "sent_at", "completed_at")
INSERT = f"INSERT OR IGNORE INTO calls ({', '.join(COLUMNS)}) VALUES ({', '.join('?' * len(COLUMNS))})"
_DONE_COLUMNS = ("state", "error_kind", "prompt_tokens", "completion_tokens", "cost", "latency_ms", "model_version",
                 "provider", "generation_id", "completed_at")
COMPLETE = (f"UPDATE calls SET {', '.join(f'{c} = ?' for c in _DONE_COLUMNS)} WHERE uid = ? AND state = 'sent'")

# The backfill: one row per stored call of the releases before the ledger (`state` from its error).
_STATE = "CASE WHEN error_kind IS NULL THEN 'answered' ELSE 'failed' END"
_BACKFILL = [
    f"""INSERT INTO calls (uid, kind, run_id, model, settings_hash, request_key, sample, attempt, state, error_kind,
          prompt_tokens, completion_tokens, cost, latency_ms, model_version, provider, generation_id, sent_at,
          completed_at)
        SELECT 'm9:responses:' || id, 'answer', run_id, model, settings_hash, request_hash, sample,
          max(attempts, 1), {_STATE}, error_kind, prompt_tokens, completion_tokens, cost, latency_ms, model_version,
          provider, generation_id, created_at, created_at FROM responses""",
    f"""INSERT INTO calls (uid, kind, run_id, model, settings_hash, request_key, sample, attempt, state, error_kind,
          prompt_tokens, completion_tokens, cost, latency_ms, model_version, provider, generation_id, sent_at,
          completed_at)
        SELECT 'm9:turns:' || id, CASE WHEN role = 'assistant' THEN 'turn' ELSE 'user' END, run_id,
          COALESCE(caller, model), settings_hash, turn_key, sample, max(attempts, 1), {_STATE}, error_kind,
          prompt_tokens, completion_tokens, cost, latency_ms, model_version, provider, generation_id, created_at,
          created_at FROM turns WHERE source IN ('model', 'user_model')""",
    f"""INSERT INTO calls (uid, kind, run_id, model, settings_hash, request_key, sample, attempt, state, error_kind,
          prompt_tokens, completion_tokens, cost, latency_ms, sent_at, completed_at)
        SELECT 'm9:judgements:' || id, 'judge', run_id, judge_model, judge_settings_hash, judge_request_hash, NULL,
          max(attempts, 1), {_STATE}, error_kind, prompt_tokens, completion_tokens, cost, latency_ms, created_at,
          created_at FROM judgements""",
    f"""INSERT INTO calls (uid, kind, run_id, model, settings_hash, request_key, sample, attempt, state, error_kind,
          prompt_tokens, completion_tokens, cost, latency_ms, sent_at, completed_at)
        SELECT 'm9:transcript_judgements:' || id, 'judge', run_id, judge_model, judge_settings_hash,
          judge_request_hash, NULL, max(attempts, 1), {_STATE}, error_kind, prompt_tokens, completion_tokens, cost,
          latency_ms, created_at, created_at FROM transcript_judgements""",
    """INSERT INTO calls (uid, kind, run_id, model, settings_hash, request_key, sample, attempt, state,
          prompt_tokens, completion_tokens, cost, provider, generation_id, sent_at, completed_at)
        SELECT 'm9:generations:' || prompt_hash, 'generation', NULL, model, NULL, prompt_hash, NULL, 1, 'answered',
          prompt_tokens, completion_tokens, cost, provider, generation_id, created_at, created_at FROM generations""",
]


def apply(db: sqlite_utils.Database) -> None:
    """Migration 9: the table, and every call the caches recorded, so no number loses its past."""
    for statement in DDL.split(";"):
        if statement.strip():
            db.conn.execute(statement)
    for statement in _BACKFILL:
        db.conn.execute(statement)


class Account(NamedTuple):
    """What a job kind tells the engine about a call, for its ledger row."""

    kind: str  # one of KINDS
    run_id: int | None
    request_key: str  # the key of the cache row the answer is stored under
    settings_hash: str | None = None
    sample: int | None = None


#: Seeded once from the OS: an `os.urandom` call per row cost a quarter of a millisecond here.
_random = random.Random(os.urandom(16))


def new_uid() -> str:
    """96 random bits: unique across machines, so ledgers merge by `uid`."""
    return f"{_random.getrandbits(96):024x}"


def sent_row(account: Account, model: str, attempt: int, at: str, invocation: str | None) -> dict[str, Any]:
    """The `sent` row of one attempt, committed before the request leaves."""
    return {"uid": new_uid(), "kind": account.kind, "run_id": account.run_id, "invocation": invocation,
            "model": model,
            "settings_hash": account.settings_hash, "request_key": account.request_key, "sample": account.sample,
            "attempt": attempt, "state": "sent", "sent_at": at}


def done_values(uid: str, result, at: str) -> tuple:
    """The completion of one attempt: `result` is a `Completion` or a `ProviderError` (duck-typed:
    the store imports no later stage). Its own cost only: the retry loop sums attempts elsewhere."""
    if isinstance(result, BaseException):
        return ("failed", getattr(result, "kind", "internal"), None, None, getattr(result, "cost", None), None,
                None, None, None, at, uid)
    return ("answered", None, result.prompt_tokens, result.completion_tokens, result.cost, result.latency_ms,
            result.model_version, result.provider, result.generation_id, at, uid)


class Sent(NamedTuple):
    """A writer item: a ledger row to commit before its request leaves; `waiter` is told once it is
    committed (or that it could not be)."""

    row: dict
    waiter: Any


class Done(NamedTuple):
    """A writer item: the completion of one attempt (`done_values`), committed after what it returned."""

    values: tuple


def write_sent(conn, rows: Iterable[dict]) -> None:
    conn.executemany(INSERT, [[r.get(c) for c in COLUMNS] for r in rows])


def write_done(conn, values: Iterable[tuple]) -> None:
    conn.executemany(COMPLETE, list(values))
