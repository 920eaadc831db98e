"""What `helmbench report` shows, read from results.db: the leaderboard (helmbench.score.leaderboard,
the same numbers as the site) plus, per model, its evaluation counts and its breakdowns.

Why a data layer apart from the renderers: text, json, csv and markdown must show the same
numbers; they all format this one `Report`. The database is opened read-only, so a report can
be taken while a run is writing.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass, field, replace
from pathlib import Path

from helmbench.errors import HelmbenchError, UsageError
from helmbench.score.leaderboard import (
    FINISHED_STATUSES, Leaderboard, LeaderboardRow, RunInfo, build_leaderboard, choose_manifest, leaderboard_row,
    manifest_floors, open_readonly,
)

#: Runs that count in the report: the site's, plus `partial` (a run limited with --scenario,
#: whose coverage column says how much of the benchmark it measured).
REPORT_STATUSES = tuple(dict.fromkeys((*FINISHED_STATUSES, "partial")))


@dataclass
class Report:
    board: Leaderboard
    evaluations: dict[int, dict] = field(default_factory=dict)  # run id → judge totals
    pillar_titles: dict[str, str] = field(default_factory=dict)
    behaviour_titles: dict[str, str] = field(default_factory=dict)
    note: str | None = None
    calibration: object | None = None  # score.calibration.CalibrationReport of the judged criteria
    left_out: dict[str, list] = field(default_factory=dict)  # --calibrated-only: scenario → its uncalibrated criteria

    @property
    def rows(self) -> list[LeaderboardRow]:
        return self.board.rows

    def pillars(self) -> list[str]:
        return self.board.pillars

    def behaviours(self) -> list[str]:
        from helmbench.score.breakdown import natural_key

        return sorted({b for r in self.rows for b in r.summary.by_behaviour}, key=natural_key)


def manifest_hash_of(path: Path | None) -> str | None:
    """The hash in a manifest's header line, or None when there is no such file."""
    from helmbench.manifest.reader import read_header

    if path is None or not Path(path).is_file():
        return None
    return read_header(path).get("manifest_hash")


def _run_info(conn: sqlite3.Connection, run_id: int) -> RunInfo:
    r = conn.execute(
        """SELECT r.id, r.model, COALESCE(m.name, r.model) AS model_name, r.manifest_hash, r.status, r.samples,
                  r.started_at, r.finished_at, r.settings_hash, r.helmbench_version
           FROM runs r LEFT JOIN models m ON m.id = r.model WHERE r.id = ?""", [run_id]).fetchone()
    if r is None:
        raise UsageError(f"no run with id {run_id}", hint="list runs with `helmbench costs`")
    return RunInfo(id=r["id"], model=r["model"], model_name=r["model_name"], manifest_hash=r["manifest_hash"],
                   status=r["status"], samples=r["samples"] or 1, started_at=r["started_at"],
                   finished_at=r["finished_at"], settings_hash=r["settings_hash"],
                   helmbench_version=r["helmbench_version"])


def _single_run(conn: sqlite3.Connection, run_id: int, bootstrap: int) -> Leaderboard:
    run = _run_info(conn, run_id)
    meta = conn.execute("SELECT benchmark_name, benchmark_version, cases FROM manifests WHERE hash = ?",
                        [run.manifest_hash]).fetchone()
    n_cases = meta["cases"] if meta else 0
    floors = manifest_floors(conn, run.manifest_hash)
    row = leaderboard_row(conn, run, n_cases, bootstrap=bootstrap, floors=floors)
    row = replace(row, rank=1 if row.score is not None and row.complete else None,
                  group=1 if row.score is not None and row.complete else None)
    return Leaderboard(manifest_hash=run.manifest_hash, requested_manifest=None,
                       benchmark_name=meta["benchmark_name"] if meta else None,
                       benchmark_version=meta["benchmark_version"] if meta else None,
                       n_cases=n_cases, pillars=sorted(row.pillar_scores), rows=[row], floors=floors)


def _evaluations(conn: sqlite3.Connection, run_id: int) -> dict:
    from helmbench.store.judgements import judge_totals

    try:
        return judge_totals(conn, run_id)
    except sqlite3.OperationalError:  # a database from before the judge stage
        return {}


def _titles(conn: sqlite3.Connection, table: str) -> dict[str, str]:
    try:
        return {r[0]: r[1] for r in conn.execute(f"SELECT code, title FROM {table}") if r[1] and r[1] != r[0]}
    except sqlite3.OperationalError:
        return {}


#: What to do when nothing has been run: `helmbench run` without a key is a dry run that stores nothing.
NO_RUN_HINT = ("without OPENROUTER_API_KEY, `helmbench run` (and `make run`) only counts calls and stores nothing; "
               "to make a run: export OPENROUTER_API_KEY=sk-or-... then `helmbench run` (add --max-cost USD)")


def load_report(db: Path, manifest: Path | None = None, run_id: int | None = None, *, bootstrap: int = 1000,
                calibrated_only: bool = False) -> Report:
    """The report of the latest finished run per model (of `manifest` when it has runs), or of one run.

    `calibrated_only`: judged scenarios with an uncalibrated criterion are left out of every number
    (and of the expected case count); `Report.left_out` names them.
    """
    if not Path(db).is_file():
        raise UsageError(f"no run has been made yet (dry run only): there is no results database at {db}",
                         hint=NO_RUN_HINT)
    wanted = manifest_hash_of(manifest) if run_id is None else None
    conn = open_readonly(db)
    try:
        from helmbench.score.calibration import load_calibration, uncalibrated_scenarios

        calibration = load_calibration(conn, choose_manifest(conn, wanted, REPORT_STATUSES)) if run_id is None else None
        left_out = uncalibrated_scenarios(calibration) if calibrated_only and calibration else {}
        if run_id is not None:
            board = _single_run(conn, run_id, bootstrap)
        else:
            board = build_leaderboard(conn, wanted, bootstrap=bootstrap, statuses=REPORT_STATUSES,
                                      exclude_scenarios=frozenset(left_out))
        if board.empty:
            raise HelmbenchError(f"no finished runs in {db}", hint=NO_RUN_HINT)
        note = None
        if wanted and board.manifest_hash != wanted:
            note = (f"{manifest} ({wanted[:19]}) has no finished runs; showing the latest runs, of manifest "
                    f"{board.manifest_hash[:19]}")
        return Report(board, {r.run.id: _evaluations(conn, r.run.id) for r in board.rows},
                      _titles(conn, "pillars"), _titles(conn, "behaviours"), note, calibration, left_out)
    finally:
        conn.close()
