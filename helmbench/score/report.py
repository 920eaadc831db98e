"""What `helmbench report` shows, read from results.db: the leaderboard (helmbench.score.leaderboard,
the same numbers as the site) plus, per model, its evaluation counts and its breakdowns.

Why a data layer apart from the renderers: text, json, csv and markdown must show the same
numbers; they all format this one `Report`. The database is opened read-only, so a report can
be taken while a run is writing.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path

from helmbench.errors import HelmbenchError, UsageError
from helmbench.score.leaderboard import (
    FINISHED_STATUSES, Leaderboard, LeaderboardRow, build_leaderboard, expected_per_sample, leaderboard_row,
    manifest_floors,
)
from helmbench.spec.naming import natural_key
from helmbench.store import Connection, open_readonly, queries

#: Runs that count in the report: the site's (FINISHED_STATUSES, `partial` included: a run limited
#: with --scenario, whose coverage column says how much of the benchmark it measured).
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
    judges: object | None = None  # score.judges.JudgeSensitivity: each judge's own board (an ensemble only)
    judge_version: object | None = None  # score.judges.VersionFilter: `--judge-version`, the results it kept
    stability: tuple = ()  # score.stability.Stability per criterion: first vs re-judged verdicts (--rejudge-sample)
    #: the manifest's imported runs (`helmbench import transcripts`): listed apart, never ranked here
    imported: list[dict] = field(default_factory=list)

    @property
    def rows(self) -> list[LeaderboardRow]:
        return self.board.rows

    def pillars(self) -> list[str]:
        return self.board.pillars

    def behaviours(self) -> list[str]:
        return sorted({b for r in self.rows for b in r.summary.by_behaviour}, key=natural_key)


def manifest_hash_of(path: Path | None) -> str | None:
    """The hash in a manifest's header line, or None when there is no such file."""
    from helmbench.manifest.reader import read_header

    if path is None or not Path(path).is_file():
        return None
    return read_header(path).get("manifest_hash")


def shown_note(manifest: Path | None, wanted: str | None, shown: str | None) -> str | None:
    """The one sentence every reader (report, agreement, the review page) says when the manifest it was
    pointed at (`--manifest`, default build/manifest.jsonl) has no runs to show and it shows another's."""
    if not wanted or shown == wanted:
        return None
    if shown is None:
        return f"{manifest} ({wanted[:19]}) has no finished runs, and no other manifest has any"
    return f"{manifest} ({wanted[:19]}) has no finished runs; showing the latest runs, of manifest {shown[:19]}"


def manifest_shown(conn: Connection, manifest: Path | None, statuses=REPORT_STATUSES) -> tuple[str | None, str | None]:
    """The one rule for which manifest's runs a reader shows (report, agreement, costs, the site):
    `manifest`'s (`--manifest`, default build/manifest.jsonl) when it has finished runs, else the
    latest finished run's. Returns (the manifest shown, `shown_note`'s sentence or None)."""
    wanted = manifest_hash_of(manifest)
    chosen = queries.choose_manifest(conn, wanted, statuses)
    return chosen, shown_note(manifest, wanted, chosen)


def manifest_note(db: Path, manifest: Path | None, statuses=FINISHED_STATUSES) -> str | None:
    """`shown_note` for a reader that shows the runs `choose_manifest` picks (the site): what it says
    when `manifest` has no finished runs. None without a database."""
    if not Path(db).is_file():
        return None
    conn = open_readonly(db, check=False)
    try:
        return manifest_shown(conn, manifest, statuses)[1]
    finally:
        conn.close()


def _kept_results(keep):
    """A `load_results` for build_leaderboard/leaderboard_row: the run's results whose id `keep` accepts."""
    from helmbench.score.scored import to_scored

    def load(conn: Connection, run) -> list:
        return [to_scored(row) for row in queries.result_case_rows(conn, run.id) if keep(row["result_id"])]
    return load


def _single_run(conn: Connection, run_id: int, bootstrap: int, keep=None) -> Leaderboard:
    run = queries.run_info(conn, run_id)
    if run is None:
        raise UsageError(f"no run with id {run_id}", hint="list runs with `helmbench costs`")
    name, version, n_cases = queries.manifest_meta(conn, run.manifest_hash)
    floors = manifest_floors(conn, run.manifest_hash)
    from helmbench.score.adjudication import adjudication_of

    row = leaderboard_row(conn, run, expected_per_sample(conn, run.manifest_hash, n_cases), bootstrap=bootstrap,
                          floors=floors,
                          results=_kept_results(keep)(conn, run) if keep else None,
                          adjudication=adjudication_of(conn, run.manifest_hash))
    row = replace(row, rank=1 if row.score is not None and row.complete else None,
                  group=1 if row.score is not None and row.complete else None)
    return Leaderboard(manifest_hash=run.manifest_hash, requested_manifest=None, benchmark_name=name,
                       benchmark_version=version, n_cases=n_cases, pillars=sorted(row.pillar_scores), rows=[row],
                       floors=floors)


#: What to do when nothing has been run: `helmbench run` without a key is a dry run that stores nothing.
NO_RUN_HINT = ("without OPENROUTER_API_KEY, `helmbench run` (and `make run`) only counts calls and stores nothing; "
               "to make a run: export OPENROUTER_API_KEY=sk-or-... then `helmbench run` (add --max-cost USD)")


def imported_of(conn, manifest_hash: str | None) -> list[dict]:
    """The manifest's imported runs as `report` lists them: model, source, verdict counts, the judge's cost."""
    import json

    if manifest_hash is None:
        return []
    out = []
    for r in queries.imported_runs(conn, manifest_hash):
        try:
            source = (json.loads(r["settings_json"] or "{}") or {}).get("imported")
        except (ValueError, AttributeError):
            source = None
        out.append({"run_id": r["run_id"], "model": r["model"], "model_name": r["model_name"],
                    "source": source if isinstance(source, str) else None, "n_pass": r["n_pass"] or 0,
                    "n_fail": r["n_fail"] or 0, "n_error": r["n_error"] or 0, "judge_calls": r["judge_calls"] or 0,
                    "judge_cost": r["judge_cost"],
                    "note": f"imported from {source}: not run by HELMBench; the model was not called; not ranked"})
    return out


def load_report(db: Path, manifest: Path | None = None, run_id: int | None = None, *, bootstrap: int = 1000,
                calibrated_only: bool = False, judge_version: str | None = None) -> Report:
    """The report of the latest finished run per model (of `manifest` when it has runs), or of one run.

    `calibrated_only`: judged scenarios with an uncalibrated criterion are left out of every number
    (and of the expected case count); `Report.left_out` names them.
    `judge_version`: only the results whose judgements all came from that judge model version (the
    call ledger's); results decided without a judge are kept (`Report.judge_version` says how many
    judged ones were left out). A version no judgement behind the runs came from is a UsageError
    naming the known ones.
    """
    if not Path(db).is_file():
        raise UsageError(f"no run has been made yet (dry run only): there is no results database at {db}",
                         hint=NO_RUN_HINT)
    wanted = manifest_hash_of(manifest) if run_id is None else None
    conn = open_readonly(db)
    try:
        from helmbench.score.calibration import load_calibration, uncalibrated_scenarios

        chosen = queries.choose_manifest(conn, wanted, REPORT_STATUSES) if run_id is None else None
        calibration = load_calibration(conn, chosen) if chosen else None
        left_out = uncalibrated_scenarios(calibration) if calibrated_only and calibration else {}
        left_out = {key: left_out[key] for key in sorted(left_out, key=natural_key)}  # P2 before P10, as everywhere
        only = None
        if judge_version is not None:
            from helmbench.score.judges import version_filter

            run_ids = [run_id] if run_id is not None else [
                r.id for r in (queries.latest_runs(conn, chosen, REPORT_STATUSES) if chosen else [])]
            only = version_filter(conn, run_ids, judge_version) if run_ids else None  # none: "no finished runs"
        keep = only.keeps if only else None
        if run_id is not None:
            board = _single_run(conn, run_id, bootstrap, keep)
        else:
            board = build_leaderboard(conn, wanted, bootstrap=bootstrap, statuses=REPORT_STATUSES,
                                      exclude_scenarios=frozenset(left_out),
                                      load_results=_kept_results(keep) if keep else None)
        if board.empty:
            raise HelmbenchError(f"no finished runs in {db}", hint=NO_RUN_HINT)
        note = shown_note(manifest, wanted, board.manifest_hash)
        from helmbench.score.judges import judge_sensitivity

        from helmbench.score.stability import judge_stability

        judges = None if run_id is not None else judge_sensitivity(conn, board, bootstrap=bootstrap,
                                                                   statuses=REPORT_STATUSES, keep=keep)
        imported = imported_of(conn, board.manifest_hash) if run_id is None else []
        return Report(board, {r.run.id: queries.judge_totals_of(conn, r.run.id) for r in board.rows},
                      queries.titles(conn, "pillars"), queries.titles(conn, "behaviours"), note, calibration, left_out,
                      judges, only, judge_stability(conn, [r.run.id for r in board.rows]), imported)
    finally:
        conn.close()
