"""Ordered schema migrations: a list of (version, name, function), applied once each, in order.

Why migrations rather than "create if missing": results.db outlives releases (it holds money
already spent), so a schema change must upgrade an existing file in place, never require
deleting it. A version is recorded in `migrations` in the same transaction as its DDL, so a
crash leaves a migration either fully applied or not at all. The FTS migration is the
exception (sqlite-utils commits internally); it is idempotent instead.
"""

from __future__ import annotations

from datetime import datetime, timezone
from typing import TYPE_CHECKING, Callable, NamedTuple

if TYPE_CHECKING:  # annotations only: importing sqlite_utils costs ~0.25 s (it loads pandas)
    import sqlite_utils

from helmbench.store import (generations, imports, ledger, schema_failure_kind, schema_judge, schema_judged_outputs,
                             schema_families, schema_reviews, schema_shard, schema_transcript_links, turns)
from helmbench.store.schema_v1 import DDL


class Migration(NamedTuple):
    version: int
    name: str
    apply: Callable[[sqlite_utils.Database], None]
    atomic: bool = True
    # A migration that rebuilds a table other tables point at names the tables whose keys it touches:
    # foreign keys are off while it runs (a pragma that only takes effect outside a transaction) and
    # those tables' keys are checked before its transaction commits.
    check_keys: tuple[str, ...] = ()


def _initial(db: sqlite_utils.Database) -> None:
    for statement in DDL.split(";"):
        if statement.strip():
            db.conn.execute(statement)


def _responses_fts(db: sqlite_utils.Database) -> None:
    db["responses"].enable_fts(["content"], create_triggers=True, replace=True)


MIGRATIONS: list[Migration] = [
    Migration(1, "initial schema", _initial),
    Migration(2, "full-text search on responses.content", _responses_fts, atomic=False),
    Migration(3, "judge: judgements.run_id, link verdicts, runs' judge totals", schema_judge.apply),
    Migration(4, "results.failure_kind, backfilled from the reasons", schema_failure_kind.apply),
    Migration(5, "generations: cached `helmbench generate` calls", generations.apply),
    Migration(6, "conversations: turns, result_turns, checkpoint_verdicts, transcript_judgements", turns.apply),
    Migration(7, "reviews: clinicians' verdicts keyed by what the judge saw", schema_reviews.apply),
    Migration(8, "result_transcript_judgements: the transcript judgements a result used",
              schema_transcript_links.apply),
    Migration(9, "calls: the ledger of every provider call, backfilled from the stored calls", ledger.apply),
    Migration(10, "one judged output: transcript judgements move into judgements (judgements.output)",
              schema_judged_outputs.apply,
              check_keys=("judgements", "result_judgements")),
    Migration(11, "runs.shard: the part of the work (--shard K/N) a run covered", schema_shard.apply),
    Migration(12, "runs.families_json: models.yml's `families:` the run was made with", schema_families.apply),
    Migration(13, "imports: conversations imported from elsewhere (helmbench import transcripts)", imports.apply),
]


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


def applied_versions(db: sqlite_utils.Database) -> set[int]:
    if "migrations" not in db.table_names():
        return set()
    return {row[0] for row in db.execute("SELECT version FROM migrations")}


def migrate(db: sqlite_utils.Database, migrations: list[Migration] = MIGRATIONS) -> list[int]:
    """Apply every pending migration in order; returns the versions applied now."""
    conn = db.conn
    conn.execute(
        "CREATE TABLE IF NOT EXISTS migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)"
    )
    conn.commit()
    done: list[int] = []
    for m in sorted(migrations, key=lambda m: m.version):
        if m.version in applied_versions(db):
            continue
        if m.atomic:
            keys_on = conn.execute("PRAGMA foreign_keys").fetchone()[0]
            if m.check_keys:
                conn.execute("PRAGMA foreign_keys = OFF")
            conn.execute("BEGIN IMMEDIATE")
            try:
                if conn.execute("SELECT 1 FROM migrations WHERE version = ?", [m.version]).fetchone():
                    conn.execute("ROLLBACK")
                    continue
                m.apply(db)
                if any(conn.execute(f"PRAGMA foreign_key_check({t})").fetchone() for t in m.check_keys):
                    raise RuntimeError(f"migration {m.version} would break a foreign key; nothing was changed")
                conn.execute("INSERT INTO migrations VALUES (?, ?, ?)", [m.version, m.name, _now()])
                conn.execute("COMMIT")
            except BaseException:
                conn.execute("ROLLBACK")
                raise
            finally:
                if m.check_keys and keys_on:
                    conn.execute("PRAGMA foreign_keys = ON")
        else:
            m.apply(db)
            conn.execute("INSERT OR IGNORE INTO migrations VALUES (?, ?, ?)", [m.version, m.name, _now()])
            conn.commit()
        done.append(m.version)
    return done
