"""Stored answers keep their value across the change to normalised settings hashes.

Why: `settings_hash` once hashed `json.dumps(settings)` (so `temperature: 0.0` and `0` differed);
it now goes through the canonical hasher. A database written before holds its responses,
runs and judgements under the old form; before planning, each model's (and the judge's) rows
are moved to the new form, so the plan counts them as stored and nothing is paid twice.
"""

from __future__ import annotations

import logging

from helmbench.run.config import legacy_settings_hash
from helmbench.store.settings_keys import rekey

log = logging.getLogger("helmbench.run")


def adopt_legacy_hashes(db, models: list[tuple[str, dict, str]]) -> int:
    """For each (model id, settings, current hash), move rows stored under the legacy hash."""
    if db is None:
        return 0
    moved = 0
    for model, settings, current in models:
        n = rekey(db, model, legacy_settings_hash(settings), current)
        if n:
            log.info("%s: %d stored row(s) re-keyed to the normalised settings hash %s", model, n, current[:19])
        moved += n
    return moved
