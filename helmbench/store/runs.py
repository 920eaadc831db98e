"""Runs: one row per (manifest, model, settings), reused by every invocation that continues it.

Why reuse: a run is "model M with settings S answering manifest X". Running it again (to
resume after Ctrl-C, to add scenarios, to retry errors) continues the same run, so the
leaderboard has one row per model and manifest, with coverage counts that tell how complete
it is. A new manifest (any content change) starts a new run that reuses stored responses.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import json
from datetime import datetime, timezone

if TYPE_CHECKING:  # annotations only: importing sqlite_utils costs ~0.25 s (it loads pandas)
    import sqlite_utils

from helmbench.store.queries.runs import IMPORTED, run_of  # noqa: F401  (IMPORTED: a run status, re-exported)
from helmbench.store.schema_families import families_json
from helmbench.store.schema_shard import combined

STATUSES = ("running", "completed", "partial", "interrupted", "failed", "stopped_cost", "preview", "imported")

#: A preview (`helmbench run-single`) gets a run row of its own, status 'preview', keyed by this
#: prefix on the settings hash: the row of the real run (same manifest, model and settings) is
#: never touched by a preview, and the leaderboard, which reads finished statuses only, never
#: scores a preview. Responses stay keyed by the real settings hash, so a later full run reuses
#: (and does not pay again for) what a preview asked.
PREVIEW_PREFIX = "preview:"


def now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


def start_run(db: sqlite_utils.Database, *, manifest_hash: str, model: str, settings: dict, settings_hash: str,
              samples: int, n_cases: int, version: str, preview: bool = False, shard: object = None,
              families: dict | None = None) -> int:
    """Open (or continue) the run of (manifest, model, settings); `shard` (a `K/N`, None: all the work)
    is recorded in `runs.shard` (schema_shard.combined), and `families` (models.yml's `families:`) in
    `runs.families_json`: the invocation continuing a run records the mapping it used."""
    status = "preview" if preview else "running"
    key = PREVIEW_PREFIX + settings_hash if preview else settings_hash
    with db.conn as conn:
        before = run_of(conn, manifest_hash, model, key)
        row = conn.execute(
            "INSERT INTO runs (manifest_hash, model, settings_json, settings_hash, samples, started_at, status, n_cases, "
            "helmbench_version) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) "
            "ON CONFLICT(manifest_hash, model, settings_hash) DO UPDATE SET status = excluded.status, "
            "finished_at = NULL, samples = max(samples, excluded.samples), n_cases = max(n_cases, excluded.n_cases), "
            "helmbench_version = excluded.helmbench_version RETURNING id",
            [manifest_hash, model, json.dumps(settings, sort_keys=True), key, samples, now(), status, n_cases, version],
        ).fetchone()
        columns = {c[1] for c in conn.execute("PRAGMA table_info(runs)")}
        if "shard" in columns:  # migration 11 applied
            was = conn.execute("SELECT shard FROM runs WHERE id = ?", [row[0]]).fetchone()[0]
            conn.execute("UPDATE runs SET shard = ? WHERE id = ?",
                         [combined(was, None if shard is None else str(shard), existing=before is not None), row[0]])
        if "families_json" in columns:  # migration 12 applied
            conn.execute("UPDATE runs SET families_json = ? WHERE id = ?", [families_json(families), row[0]])
    return row[0]


_VERDICTS = "SELECT verdict, count(*) FROM results WHERE run_id = :run GROUP BY verdict"

# Both queries walk indexes (manifest_cases → cases → the responses/results unique keys), so a
# 10,000-case run summarises in milliseconds.
_AWAITING_JUDGE = """
SELECT count(*) FROM manifest_cases mc
JOIN cases c ON c.hash = mc.case_hash AND c.evaluation_type = 'sqe'
JOIN responses resp ON resp.request_hash = c.request_hash AND resp.model = :model
  AND resp.settings_hash = :settings_hash AND resp.sample < :samples AND resp.error_kind IS NULL
WHERE mc.manifest_hash = :manifest_hash
  AND NOT EXISTS (SELECT 1 FROM results res WHERE res.run_id = :run AND res.case_hash = c.hash
                  AND res.sample = resp.sample)
"""



def finish_run(db: sqlite_utils.Database, run_id: int, status: str) -> dict:
    """Record how the invocation ended and refresh the run's counts from what is stored (`refresh_counts`)."""
    assert status in STATUSES, status
    with db.conn as conn:
        conn.execute("UPDATE runs SET status = ?, finished_at = ? WHERE id = ?", [status, now(), run_id])
        return refresh_counts(conn, run_id)


def refresh_counts(conn, run_id: int) -> dict:
    """The run's counts from what is stored (its verdicts, the answers awaiting the judge), and its `cost`/tokens:
    those of the model's calls behind its results, whoever paid for them (the call ledger:
    `queries.ledger.run_spend`, the leaderboard's meaning). Also what `helmbench merge` recomputes for a run
    whose parts came from several databases. Returns the refreshed row."""
    from helmbench.store.queries.ledger import MODEL_KINDS, behind_results_ledger

    run = conn.execute("SELECT manifest_hash, model, settings_hash, samples FROM runs WHERE id = ?",
                       [run_id]).fetchone()
    params = {"run": run_id, "manifest_hash": run[0], "model": run[1],
              "settings_hash": run[2].removeprefix(PREVIEW_PREFIX), "samples": run[3]}
    verdicts = dict(conn.execute(_VERDICTS, params).fetchall())
    awaiting = conn.execute(_AWAITING_JUDGE, params).fetchone()[0]
    behind = behind_results_ledger(conn, run_id)
    cost, (pt, ct) = behind.cost(kinds=MODEL_KINDS), behind.tokens(kinds=MODEL_KINDS)
    conn.execute(
        "UPDATE runs SET n_pass = ?, n_fail = ?, n_error = ?, n_awaiting_judge = ?, cost = ?, prompt_tokens = ?, "
        "completion_tokens = ? WHERE id = ?",
        [verdicts.get("PASS", 0), verdicts.get("FAIL", 0), verdicts.get("ERROR", 0), awaiting, cost, pt, ct, run_id],
    )
    cur = conn.execute("SELECT * FROM runs WHERE id = ?", [run_id])
    return dict(zip([d[0] for d in cur.description], cur.fetchone()))
