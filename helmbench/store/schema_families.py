"""Migration 12 "run families": `runs.families_json`, the `families:` of models.yml the run was made with.

Why: whether a model under test is judged by its own family (a conflict of interest) is decided by
`spec.families`, whose default table models.yml's `families:` may override. Lint reads models.yml,
but the leaderboard and the report read only the database: without the override stored with the run
they would apply the default table and could disagree with lint about the same model and judge. The
run keeps the mapping its latest invocation used (a JSON object, prefix → family, keys sorted; NULL:
models.yml had none), so every reader decides a conflict from one place, the run's own record. Not
part of any cache key: which family a model belongs to changes no answer.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Mapping

if TYPE_CHECKING:  # annotations only: importing sqlite_utils costs ~0.25 s (it loads pandas)
    import sqlite_utils


def apply(db: sqlite_utils.Database) -> None:
    db.conn.execute("ALTER TABLE runs ADD COLUMN families_json TEXT")


def families_json(families: Mapping[str, str] | None) -> str | None:
    """The column's value of a models.yml `families:` mapping (None when it names none)."""
    return json.dumps(dict(families), sort_keys=True, ensure_ascii=False) if families else None


def read_families(value: str | None) -> dict[str, str]:
    """The mapping a column value holds; {} for NULL or anything that is not an object of strings
    (the database is input like any file)."""
    try:
        data = json.loads(value) if value else {}
    except ValueError:
        return {}
    if not isinstance(data, dict):
        return {}
    return {k: v for k, v in data.items() if isinstance(k, str) and isinstance(v, str)}
