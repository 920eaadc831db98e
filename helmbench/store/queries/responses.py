"""Stored responses as the cost estimate reads them: how long a model's answers have been."""

from __future__ import annotations

import sqlite3


def completion_tokens_by_scenario(conn: sqlite3.Connection, model: str) -> list[tuple[str, int]]:
    """(scenario, completion tokens) of each successful stored answer of `model` that reported its tokens."""
    return [(r[0], r[1]) for r in conn.execute(
        "SELECT MIN(c.scenario), r.completion_tokens FROM responses r JOIN cases c ON c.request_hash = r.request_hash "
        "WHERE r.model = ? AND r.completion_tokens IS NOT NULL AND r.error_kind IS NULL GROUP BY r.id", (model,))]
