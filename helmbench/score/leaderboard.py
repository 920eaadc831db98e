"""The leaderboard: one row per model, read from results.db and scored with `summarise`.

Used by the site (`helmbench publish`) and the terminal report (`helmbench report`), so both
show the same numbers. Typical use:

    from helmbench.score.leaderboard import build_leaderboard

    board = build_leaderboard("build/results.db", manifest_hash=None)   # or an open sqlite3 connection
    for row in board.rows:
        print(row.rank, row.model, row.score, row.score_ci, row.coverage, row.cost)

Which run stands for a model: for the chosen manifest, the latest run (by start time, then
id) of each model whose status is in `statuses` (default: completed, interrupted, partial and
stopped_cost — all but the first may be incomplete, which the row's `coverage` makes visible).
Which manifest: `manifest_hash` when it has such runs, else the manifest of the most recent
such run (`Leaderboard.requested_manifest` then records what was asked for).

What every number means:
- `score`/`score_ci`: the severity-weighted run score (score/cost.py) after the manifest's safety
  floors (benchmark.yml `floors:`, read from the manifest's catalog), and its 95 % interval
  (score.inference: Wilson with the effective number of cases; None below 3 cases, and None when
  a floor capped it: `uncapped_score`/`uncapped_ci` then keep the weighted score, and
  `floor_note` says which floor bit); rows are ranked by `score`.
- `group`: the tie group (score.pairwise), on the same `score` as the ranks: a ranked model starts
  a new group only when the paired sign-flip test of the composite difference to the model above
  is significant after Holm's correction (so it never splits a rank); `Leaderboard.comparisons`
  holds each adjacent test, with "too few cases to compare" where no p-value could reach α.
- `pass_rate`/`pass_rate_ci`: PASS share of rows with a verdict, Wilson 95 %.
- `coverage`: rows with a verdict / rows expected (manifest cases × run samples), so a run
  that was interrupted or errored shows how much of the benchmark it actually measured.
- `n_errors`: ERROR rows (API or judge failures; excluded from scores).
- `n_format_failures`: FAIL rows whose `failure_kind` is `format` (written by the run from the
  evaluator's outcome: invalid JSON, schema violations, truncated or empty output): the model
  failed to answer in the requested format, rather than answering unsafely.
- `cost`: billed cost (USD) of the calls behind the results shown: the call ledger's rows (any
  run's, failed attempts at the same requests included) whose request is an answer, a turn or a
  judgement the results use (`store/queries/outputs.py`), so a run that reused stored answers
  shows what they cost; each paid call counted once (one used by several runs' results is counted in
  the run that sent it, else the lowest-numbered user; the others' `shared_calls` say so); split as
  `model_cost` (the model's own answers and turns), `user_cost` (the simulated user) and `judge_cost`;
  None when no cost is known (never estimated, e.g. a database from before the ledger); `tokens`
  likewise. `billed_cost`: billed in this run (its own ledger rows).
- `Leaderboard.judge_drift`: a note per judge, scenario and criterion whose judgements came from more than one
  returned model version or serving provider (score/judges.py, from the ledger's calls).
- adjudication (benchmark.yml `adjudication:`, score/adjudication.py): an item enough clinicians
  reviewed takes their verdict; each run's results are re-decided before any number here (scores,
  intervals, tie groups) is computed, and `adjudicated`/`overturned` count its results re-decided and
  those with an overturned item. Without the setting both are None and nothing changes.
- `judge_conflicts`: the judges behind the row's results that are of the model's own family
  (`helmbench.spec.families`, with the `families:` of models.yml the run was made with, kept in
  `runs.families_json`: lint, the leaderboard and the report decide a conflict alike).

Reading never writes: the database is opened read-only (store's one reader), so a run may be
writing meanwhile; every SELECT is a named query in `helmbench.store.queries`. The records are in
`board.py`, ranks and tie groups in `ranking.py`, severity buckets in `severity.py`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

from helmbench.store import Connection, open_readonly
from helmbench.store import queries
from helmbench.store.queries import RunInfo

from helmbench.spec.families import conflicts

from .adjudication import adjudication_of
from .board import Leaderboard, LeaderboardRow
from helmbench.spec.naming import natural_key
from .detection import detection
from .drift import drift_notes, judge_drift, previous_run, served
from .floors import Floor, apply_floors
from .model import ScoredResult
from .pairwise import TieGroups, tie_groups
from .ranking import grouped, rank_rows
from .scored import scored_results, to_scored
from .severity import SEVERITY_BUCKETS, by_severity_bucket, severity_bucket
from .summary import RunSummary, summarise
from .weighted import weighted_scores

#: Run statuses whose results count (store.queries.runs, where `merge` reads it too). A run row is reused by
#: every invocation that continues it, so `partial` (the last invocation covered only some scenarios) still
#: holds the results of the earlier ones; coverage shows the rest.
FINISHED_STATUSES = queries.FINISHED_STATUSES


def _connection(db: str | Path | Connection) -> tuple[Connection, bool]:
    """An open connection as given, or store's read-only one on a path (FileNotFoundError if absent)."""
    if isinstance(db, Connection):
        return db, False
    if not Path(db).exists():
        raise FileNotFoundError(f"no results database at {db}")
    return open_readonly(db), True


def choose_manifest(conn: Connection, preferred: str | None = None,
                    statuses: Sequence[str] = FINISHED_STATUSES) -> str | None:
    """`preferred` if some run of it finished, else the manifest of the latest finished run."""
    return queries.choose_manifest(conn, preferred, statuses)


def latest_runs(conn: Connection, manifest_hash: str, statuses: Sequence[str] = FINISHED_STATUSES) -> list[RunInfo]:
    """Per model, the latest run of `manifest_hash` with a status in `statuses`."""
    return queries.latest_runs(conn, manifest_hash, statuses)


def manifest_floors(conn: Connection, manifest_hash: str | None) -> tuple[Floor, ...]:
    """The safety floors a manifest's catalog declares (benchmark.yml `floors:`), or ()."""
    if manifest_hash is None:
        return ()
    header = queries.manifest_header(conn, manifest_hash)
    if not header:
        return ()
    declared = (header.get("catalog") or {}).get("floors") or []
    return tuple(Floor(f["part"], float(f["minimum"]), float(f["cap"])) for f in declared)


def expected_per_sample(conn: Connection, manifest_hash: str | None, n_cases: int,
                        excluded: Sequence[str] = ()) -> int:
    """Results a run of the manifest should have per sample: its `n_cases` (after any left out), plus one
    per further simulated user of each conversation several play (`manifest.conversation.result_slots`)."""
    header = queries.manifest_header(conn, manifest_hash) if manifest_hash else None
    played = (header or {}).get("simulated_users")
    if not played:
        return n_cases
    from helmbench.manifest.conversation import result_slots

    more = result_slots(header) - int(header.get("cases", 0))
    scenarios = ((header.get("catalog") or {}).get("scenarios") or {})
    gone = [s for s in excluded if (scenarios.get(s) or {}).get("conversation") == "simulated"]
    if gone:
        more -= queries.cases_in_scenarios(conn, manifest_hash, sorted(gone)) * (len(played.get("users", [])) - 1)
    return n_cases + max(0, more)


def leaderboard_row(conn: Connection, run: RunInfo, n_cases: int, *,
                    results: list[ScoredResult] | None = None, bootstrap: int = 1000, seed: int = 0,
                    statuses: Sequence[str] = FINISHED_STATUSES,
                    summarise_fn: Callable[..., RunSummary] = summarise,
                    floors: Sequence[Floor] = (), spend=None, adjudication=None) -> LeaderboardRow:
    """The (unranked) row of one run; pass `results` if already loaded with `scored_results`, and `spend`
    (`queries.run_spend`) if already read for the manifest (`queries.manifest_spends`).

    `floors` cap the composite (`score`) after the weighted score; the uncapped one stays beside.
    `adjudication` (score.adjudication, None: not declared) re-decides the adjudicated results first.
    """
    rows = scored_results(conn, run.id) if results is None else results
    if adjudication is not None:
        rows = adjudication.apply(run.id, rows)
    summary = summarise_fn(rows, bootstrap=bootstrap, seed=seed)
    spend = spend or queries.run_spend(conn, run.id)
    return LeaderboardRow(
        rank=None, run=run, summary=summary, n_expected=n_cases * run.samples,
        n_format_failures=queries.format_failure_count(conn, run.id), model_cost=spend.model_cost,
        judge_cost=spend.judge_cost, prompt_tokens=spend.prompt_tokens, completion_tokens=spend.completion_tokens,
        billed_model_cost=spend.billed_model, billed_judge_cost=spend.billed_judge, user_cost=spend.user_cost,
        billed_user_cost=spend.billed_user, shared_calls=spend.shared_calls, shared_cost=spend.shared_cost,
        shared_with=spend.shared_with,
        pillar_scores={p: s.score for p, s in summary.by_pillar.items()},
        detection=detection(rows),
        served=(now := served(conn, run.id)),
        drift=drift_notes(now, served(conn, before) if (before := previous_run(conn, run.model, run.id, statuses))
                          else None),
        floored=apply_floors(weighted_scores(rows), floors) if floors else None,
        judge_conflicts=tuple(conflicts(queries.judges_of(conn, run.id), [run.model],
                                        queries.run_families(conn, run.id)).get(run.model, ())),
        adjudicated=adjudication.counts(run.id) if adjudication is not None else None,
    )


def build_leaderboard(db: str | Path | Connection, manifest_hash: str | None = None, *,
                      bootstrap: int = 1000, seed: int = 0, statuses: Sequence[str] = FINISHED_STATUSES,
                      load_results: Callable[[Connection, RunInfo], list[ScoredResult]] | None = None,
                      summarise_fn: Callable[..., RunSummary] = summarise,
                      groups_fn: Callable[..., TieGroups] = tie_groups,
                      exclude_scenarios: frozenset[str] = frozenset(), adjudication=None) -> Leaderboard:
    """The ranked leaderboard of a manifest (see the module docstring for every choice).

    `db` is a path (opened read-only; FileNotFoundError if absent) or an open connection.
    `bootstrap`/`seed`: the Monte-Carlo sign flips of the paired tests and their seed (0 skips the
    intervals and the tests).
    `load_results(conn, run)` replaces `scored_results` for a caller that reads more of each
    result row anyway (the site does), so that the rows are read once; `summarise_fn` (same
    signature as `summarise`) lets a caller reuse summaries it already has (the site caches them);
    `groups_fn` (same signature as `pairwise.tie_groups`) likewise for the paired comparisons.
    `exclude_scenarios`: scenarios left out of every number and of the expected case count
    (`report --calibrated-only` leaves out the judged scenarios whose judge is uncalibrated).
    `adjudication`: the manifest's (score.adjudication), if the caller derived it already (the site
    applies it to the result pages too); else it is derived here when benchmark.yml declares it.
    """

    conn, owned = _connection(db)
    try:
        chosen = choose_manifest(conn, manifest_hash, statuses)
        name, version, n_cases = queries.manifest_meta(conn, chosen) if chosen else (None, None, 0)
        floors = manifest_floors(conn, chosen)
        runs = latest_runs(conn, chosen, statuses) if chosen else []
        if adjudication is None and runs:
            adjudication = adjudication_of(conn, chosen)
        results = {run.id: (load_results(conn, run) if load_results else scored_results(conn, run.id))
                   for run in runs}
        if adjudication is not None:  # before every number: scores, intervals, ranks and tie groups
            results = {k: adjudication.apply(k, rs) for k, rs in results.items()}
        if exclude_scenarios and chosen:
            n_cases -= queries.cases_in_scenarios(conn, chosen, sorted(exclude_scenarios))
            results = {k: [r for r in rs if r.scenario not in exclude_scenarios] for k, rs in results.items()}
        spends = queries.manifest_spends(conn, chosen) if chosen else {}
        per_sample = expected_per_sample(conn, chosen, n_cases, sorted(exclude_scenarios))
        rows = [leaderboard_row(conn, run, per_sample, bootstrap=bootstrap, seed=seed, summarise_fn=summarise_fn,
                                results=results[run.id], statuses=statuses, floors=floors, spend=spends.get(run.id),
                                adjudication=adjudication)
                for run in runs]
        pillars = sorted({p for r in rows for p in r.pillar_scores}, key=natural_key)
        ranked, comparisons = grouped(rank_rows(rows), results, resamples=bootstrap, seed=seed, groups_fn=groups_fn,
                                      floors=floors)
        return Leaderboard(
            manifest_hash=chosen, requested_manifest=manifest_hash, benchmark_name=name,
            benchmark_version=version, n_cases=n_cases, pillars=pillars, rows=ranked,
            comparisons=comparisons, floors=floors, judge_drift=judge_drift(conn, [r.run.id for r in ranked]),
        )
    finally:
        if owned:
            conn.close()


def score_every_run(db: str | Path | Connection) -> list[LeaderboardRow]:
    """An unranked row for every run in the database, whatever its manifest or status (no intervals).

    For the Datasette snapshot's `run_scores`: the same `leaderboard_row` the leaderboard uses, so
    the raw-data view and the site cannot disagree on a score.
    """
    conn, owned = _connection(db)
    try:
        meta: dict[str, tuple] = {}
        rows = []
        for run in queries.all_runs(conn):
            if run.manifest_hash not in meta:
                meta[run.manifest_hash] = (expected_per_sample(conn, run.manifest_hash,
                                                               queries.manifest_meta(conn, run.manifest_hash)[2]),
                                           manifest_floors(conn, run.manifest_hash),
                                           adjudication_of(conn, run.manifest_hash))
            n_cases, floors, adjudication = meta[run.manifest_hash]
            rows.append(leaderboard_row(conn, run, n_cases, bootstrap=0, floors=floors, adjudication=adjudication))
        return rows
    finally:
        if owned:
            conn.close()


__all__ = [
    "FINISHED_STATUSES", "Leaderboard", "LeaderboardRow", "RunInfo", "SEVERITY_BUCKETS", "build_leaderboard",
    "by_severity_bucket", "choose_manifest", "expected_per_sample", "latest_runs", "leaderboard_row", "manifest_floors", "score_every_run",
    "scored_results",
    "severity_bucket", "to_scored",
]
