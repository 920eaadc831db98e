"""Shared helpers for executor tests: run in-process with fast retries, query the database."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from rich.console import Console

from helmbench.run.config import RetryPolicy, RunOptions
from helmbench.run.session import run

FAST = RetryPolicy(max_attempts=12, base_delay=0.01, max_delay=0.05)


def run_inprocess(paths: dict, *, verbose: bool = False, **kw):
    opts = RunOptions(manifest=str(paths["manifest"]), models_file=str(paths["models"]), db=str(paths["db"]),
                      logs_dir=str(Path(paths["db"]).parent / "logs"), retry=kw.pop("retry", FAST), **kw)
    return run(opts, Console(stderr=True, width=160), verbose=verbose, live=False)


def rows(db: Path, sql: str, params=()) -> list[tuple]:
    conn = sqlite3.connect(db)
    try:
        return conn.execute(sql, params).fetchall()
    finally:
        conn.close()
