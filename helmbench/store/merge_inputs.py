"""The inputs of a merge, checked before a row of them is read: opened read-only at the current schema (an older
one migrated through a copy, a newer one refused), and refused when a date merge keeps is not an ISO date or is
after this machine's clock.

Why a module: these are the checks an untrusted database passes at the boundary (a CI artifact, another
machine), whatever its rows; the copy (store/merge_rows.py) runs only on what passed them.
"""

from __future__ import annotations

import sqlite3
from datetime import datetime, timezone
from pathlib import Path

from helmbench.errors import StorageError
from helmbench.store.catalog_check import EditedInput
from helmbench.store.db import open_db, open_readonly
from helmbench.store.merge_report import Merged
from helmbench.store.merge_tables import column_names, table_names
from helmbench.store.migrations import MIGRATIONS
from helmbench.store.review_files import CLOCK_SKEW



def _versions(conn) -> set[int]:
    if not conn.execute("SELECT 1 FROM sqlite_master WHERE name = 'migrations'").fetchone():
        return set()
    return {r[0] for r in conn.execute("SELECT version FROM migrations")}


def open_input(path: Path, work: Path, merged: Merged) -> sqlite3.Connection:
    """A read connection on `path` at the current schema (a migrated copy in `work` if it is older)."""
    conn = open_readonly(path)
    known = {m.version for m in MIGRATIONS}
    have = _versions(conn)
    newer = sorted(have - known)
    if newer:
        conn.close()
        raise StorageError(f"{path} was written by a newer HELMBench (schema migration {newer[-1]}; this one "
                           f"knows up to {max(known)}): nothing was merged",
                           hint="upgrade HELMBench (pip install -U helmbench) and merge again")
    if have == known:
        return conn
    copy = work / f"in-{len(merged.migrated)}.db"
    try:
        target = sqlite3.connect(str(copy))
        conn.backup(target)
        target.close()
    finally:
        conn.close()
    open_db(copy).conn.close()  # every pending migration, on the copy only
    merged.migrated.append(path)
    return open_readonly(copy)


#: The dates merge keeps from an input (a run's start and end, when an answer, a verdict or a call was made):
#: one after this machine's clock (as `review import` allows for another machine's drift) refuses the input,
#: since "latest" decides which run the leaderboard shows and which manifest review opens on.
DATED = (("runs", "started_at"), ("runs", "finished_at"), ("responses", "created_at"), ("turns", "created_at"),
         ("judgements", "created_at"), ("results", "created_at"), ("calls", "sent_at"), ("calls", "completed_at"),
         ("generations", "created_at"))


#: An ISO date and time as the store writes them (`2026-11-27T21:31:54+00:00`; older releases wrote a space).
_ISO = "[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9][T ][0-9][0-9]:[0-9][0-9]:[0-9][0-9]*"


def refuse_future(src, name: str) -> None:
    """Every date merge keeps must be text in the store's ISO form and not after this machine's clock. A date
    of another type (a BLOB sorts above every text in SQLite) or shape would win "latest" as surely as 2099."""
    limit = (datetime.now(timezone.utc) + CLOCK_SKEW).strftime("%Y-%m-%dT%H:%M:%S")
    future, odd = [], []
    for table, col in DATED:
        if table not in table_names(src) or col not in column_names(src, table):
            continue
        n = src.execute(f"SELECT count(*) FROM {table} WHERE typeof({col}) = 'text' AND {col} GLOB ? "
                        f"AND substr({col}, 1, 19) > ?", [_ISO, limit]).fetchone()[0]
        if n:
            future.append(f"{table}.{col} of {n} row(s)")
        n = src.execute(f"SELECT count(*) FROM {table} WHERE {col} IS NOT NULL AND "
                        f"(typeof({col}) != 'text' OR {col} NOT GLOB ?)", [_ISO]).fetchone()[0]
        if n:
            odd.append(f"{table}.{col} of {n} row(s)")
    why = ([f"dated in the future (after {limit} UTC): {', '.join(future)}"] if future else []) + \
          ([f"dated with a value that is not an ISO date: {', '.join(odd)}"] if odd else [])
    if why:
        raise EditedInput(f"{name}: refused: {'; '.join(why)}; nothing was written",
                          hint="a database a run wrote has no such dates: merge the unedited one "
                               "(or fix this machine's clock)")
