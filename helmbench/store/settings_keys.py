"""Re-keying stored rows from one settings hash to another, when the hash's definition changes.

Why: responses, runs and judgements are found by (model, settings hash). When the way that
hash is computed changes (numbers normalised, run/config.py), rows stored under the old form
must be found under the new one, or every call already paid for would be paid again. The
caller knows both forms (it has the settings); this module moves the rows, in one transaction,
and only when there is something to move, so a database that needs nothing is never written
(a dry run on a read-only disk still works).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # annotations only: importing sqlite_utils costs ~0.25 s (it loads pandas)
    import sqlite_utils

PREVIEW_PREFIX = "preview:"  # helmbench.store.runs.PREVIEW_PREFIX: preview runs key their settings hash apart

#: (table, model column, hash column) of every row found by a settings hash.
_KEYED = (("responses", "model", "settings_hash"), ("runs", "model", "settings_hash"),
          ("judgements", "judge_model", "judge_settings_hash"), ("calls", "model", "settings_hash"))


def rekey(db: sqlite_utils.Database, model: str, old: str, new: str) -> int:
    """Move `model`'s rows stored under settings hash `old` to `new`; returns how many moved.

    A row that already exists under `new` wins (UPDATE OR IGNORE keeps it and leaves the old
    one where it is): nothing stored under the current form is ever replaced.
    """
    if old == new:
        return 0
    pairs = [(old, new), (PREVIEW_PREFIX + old, PREVIEW_PREFIX + new)]
    wanted = [(t, m, h, o, n) for t, m, h in _KEYED for o, n in pairs
              if db.execute(f"SELECT 1 FROM {t} WHERE {m} = ? AND {h} = ? LIMIT 1", [model, o]).fetchone()]
    if not wanted:
        return 0
    moved = 0
    with db.conn:
        for table, mcol, hcol, o, n in wanted:
            moved += db.execute(f"UPDATE OR IGNORE {table} SET {hcol} = ? WHERE {mcol} = ? AND {hcol} = ?",
                                [n, model, o]).rowcount
    return moved
