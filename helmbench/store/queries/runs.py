"""Runs as readers see them: which manifest to show, each model's latest run, a run by id."""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class RunInfo:
    """The `runs` row that stands for a model on the leaderboard."""

    id: int
    model: str
    model_name: str
    manifest_hash: str
    status: str
    samples: int
    started_at: str | None
    finished_at: str | None
    settings_hash: str
    helmbench_version: str | None
    settings_json: str | None = None  # what the run's target was sent with (route, base URL, deployment prompt)

    @property
    def date(self) -> str | None:
        """The day the run finished (or started, if it never finished), `YYYY-MM-DD`."""
        stamp = self.finished_at or self.started_at
        return stamp[:10] if stamp else None


_RUN_COLUMNS = """r.id, r.model, COALESCE(m.name, r.model) AS model_name, r.manifest_hash, r.status, r.samples,
       r.started_at, r.finished_at, r.settings_hash, r.helmbench_version, r.settings_json
FROM runs r LEFT JOIN models m ON m.id = r.model"""


def _placeholders(values: Sequence) -> str:
    return ",".join("?" * len(values))


def _run(r) -> RunInfo:
    return RunInfo(id=r[0], model=r[1], model_name=r[2], manifest_hash=r[3], status=r[4], samples=r[5] or 1,
                   started_at=r[6], finished_at=r[7], settings_hash=r[8], helmbench_version=r[9],
                   settings_json=r[10])


#: The status of a run whose outputs were imported (`helmbench import transcripts`, store/imports.py): no model
#: was called. Not a finished status: the leaderboard ranks an imported run only when the publisher asks
#: (`publish --include-imported`).
IMPORTED = "imported"

#: The statuses of a run whose results the leaderboard shows (a run still going or one that failed shows nothing).
FINISHED_STATUSES: tuple[str, ...] = ("completed", "interrupted", "partial", "stopped_cost")


def choose_manifest(conn: sqlite3.Connection, preferred: str | None, statuses: Sequence[str]) -> str | None:
    """`preferred` if some run of it has a status in `statuses`, else the manifest of the latest such run."""
    q = f"SELECT manifest_hash FROM runs WHERE status IN ({_placeholders(statuses)})"
    if preferred and conn.execute(q + " AND manifest_hash = ? LIMIT 1", [*statuses, preferred]).fetchone():
        return preferred
    row = conn.execute(q + " ORDER BY started_at DESC, id DESC LIMIT 1", list(statuses)).fetchone()
    return row[0] if row else None


def latest_runs(conn: sqlite3.Connection, manifest_hash: str, statuses: Sequence[str]) -> list[RunInfo]:
    """Per model, the latest run (by start time, then id) of `manifest_hash` with a status in `statuses`."""
    rows = conn.execute(
        f"""SELECT {_RUN_COLUMNS}
            WHERE r.manifest_hash = ? AND r.status IN ({_placeholders(statuses)})
            ORDER BY r.started_at, r.id""",
        [manifest_hash, *statuses],
    ).fetchall()
    latest = {r[1]: _run(r) for r in rows}  # ascending, so the last one seen per model wins
    return sorted(latest.values(), key=lambda run: run.model)


def run_info(conn: sqlite3.Connection, run_id: int) -> RunInfo | None:
    """The run with this id, or None."""
    r = conn.execute(f"SELECT {_RUN_COLUMNS} WHERE r.id = ?", [run_id]).fetchone()
    return _run(r) if r is not None else None


def model_runs(conn: sqlite3.Connection, model: str, statuses: Sequence[str]) -> list[dict]:
    """Every run of a model with a status in `statuses`, oldest first (id, manifest_hash, status, times)."""
    rows = conn.execute(
        f"""SELECT id, manifest_hash, status, started_at, finished_at FROM runs
            WHERE model = ? AND status IN ({_placeholders(statuses)}) ORDER BY started_at, id""",
        [model, *statuses]).fetchall()
    return [{"id": r[0], "manifest_hash": r[1], "status": r[2], "started_at": r[3], "finished_at": r[4]}
            for r in rows]


def all_runs(conn: sqlite3.Connection) -> list[RunInfo]:
    """Every run, whatever its status, by id."""
    return [_run(r) for r in conn.execute(f"SELECT {_RUN_COLUMNS} ORDER BY r.id")]


def imported_runs(conn: sqlite3.Connection, manifest_hash: str) -> list[dict]:
    """The imported runs of a manifest (`helmbench import transcripts`), by model: what `report` lists apart from
    the leaderboard (id, model, name, settings, counts, and the judge's cost, the only one they have)."""
    rows = conn.execute(
        """SELECT r.id, r.model, COALESCE(m.name, r.model), r.settings_json, r.n_pass, r.n_fail, r.n_error,
                  r.judge_calls, r.judge_cost
           FROM runs r LEFT JOIN models m ON m.id = r.model
           WHERE r.manifest_hash = ? AND r.status = ? ORDER BY r.model""", [manifest_hash, IMPORTED]).fetchall()
    keys = ("run_id", "model", "model_name", "settings_json", "n_pass", "n_fail", "n_error", "judge_calls",
            "judge_cost")
    return [dict(zip(keys, r)) for r in rows]


def run_of(conn: sqlite3.Connection, manifest_hash: str, model: str, settings_hash: str) -> int | None:
    """The id of the run of (manifest, model, settings) if there is one: the run `helmbench run` would
    continue (store.runs.start_run), for a dry run that opens none."""
    row = conn.execute("SELECT id FROM runs WHERE manifest_hash = ? AND model = ? AND settings_hash = ?",
                       [manifest_hash, model, settings_hash]).fetchone()
    return row[0] if row else None
