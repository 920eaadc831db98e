"""Everything the site shows, read once from results.db (and the manifest) into publish/data.py's objects.

Which manifest: the one in `build/manifest.jsonl` when it has finished runs in the database,
else the manifest of the latest finished run (the site then says so). Its catalog and cases
come from the database (`manifests.header_json`, `manifest_cases` → `cases`), which holds
exactly what was run. With no database or no runs yet, scenario and case pages are built
from the manifest file alone (prompts without results), and the leaderboard says how to run.

All reading is a handful of bulk queries on a read-only connection: the build never
writes, and a run may be writing meanwhile.
"""

from __future__ import annotations

import json
import logging
from functools import lru_cache
from pathlib import Path

from helmbench.score import ScoredResult, summarise
from helmbench.spec.naming import natural_key
from helmbench.score.leaderboard import (
    Leaderboard,
    LeaderboardRow,
    build_leaderboard,
    by_severity_bucket,
    choose_manifest,
    FINISHED_STATUSES,
    latest_runs,
    leaderboard_row,
    manifest_floors,
    scored_results,
    to_scored,
)
from helmbench.store import Connection, Row, open_readonly, queries
from helmbench.score.drift import HistoryPoint, history
from helmbench.store.imports import import_rows
from helmbench.store.queries.runs import IMPORTED
from helmbench.store.turns import conversation_details
from helmbench.score.pairwise import tie_groups

from .cache import digest
from .data import BOOTSTRAP, SEED, Case, Judgement, ModelData, Result, SiteData
from .settings import PublishSettings
from .slugs import unique_slugs

log = logging.getLogger("mkdocs.plugins.helmbench")


def evaluator_pages(catalog: dict) -> tuple[tuple[str, str, str, dict], ...]:
    """(type, page URI, title, data) of each evaluator whose data the manifest keeps and that has a page
    (the crisis-service registry); linked from the methodology, which explains each check. The cache key
    of the site's data covers which plugins are installed (cache.site_code_digest)."""
    from helmbench.plugins import registry

    out = []
    for type_, page_data in sorted((catalog.get("evaluators") or {}).items()):
        found = registry.evaluators().get(type_)
        if found is not None and found.page:
            out.append((type_, f"{type_.replace('_', '-')}.md", found.page[0], page_data))
    return tuple(out)


def _case_from_manifest(c: dict) -> Case:
    sev = c.get("severity") or {}
    return Case(
        id=c["id"], hash=c["hash"], pillar=c["pillar"], behaviour=c["behaviour"], scenario=c["scenario"],
        condition=c.get("condition"), user_context=c.get("user_context"), perturbation=c.get("perturbation"),
        severity_perturbation=int(sev.get("perturbation") or 0), severity_user_context=int(sev.get("user_context") or 0),
        difficulty=int(c.get("difficulty") or 0), weight=float(c.get("weight") or 0),
        messages=c["request"]["messages"], response_format=c["request"].get("response_format"),
        evaluation=c.get("evaluation") or {}, conversation=c["request"].get("conversation"),
    )


def _case_from_db(r: Row) -> Case:
    parts = r["scenario"].split("-")
    return Case(
        id=r["id"], hash=r["hash"], pillar=r["pillar"] or parts[0], behaviour=r["behaviour"] or "-".join(parts[:2]),
        scenario=r["scenario"], condition=r["condition"], user_context=r["user_context"],
        perturbation=r["perturbation"], severity_perturbation=int(r["severity_perturbation"] or 0),
        severity_user_context=int(r["severity_user_context"] or 0), difficulty=int(r["difficulty"] or 0),
        weight=float(r["weight"] or 0), messages=json.loads(r["messages_json"]),
        response_format=json.loads(r["response_format_json"]) if r["response_format_json"] else None,
        evaluation=json.loads(r["evaluation_json"]),
    )


def _file_benchmark(path: Path, stored: dict) -> dict:
    """The benchmark's name, description and content note as the manifest file says them, when it is the manifest
    shown: they are not part of its hash, so a database registered it with the words of its first run."""
    from helmbench.errors import HelmbenchError
    from helmbench.manifest.reader import read_header

    try:
        given = read_header(path).get("benchmark")
    except HelmbenchError:
        return stored
    return given if isinstance(given, dict) else stored


def _read_manifest_file(path: Path) -> tuple[dict | None, list[Case]]:
    """The manifest's header and cases; a manifest that fails verification is reported
    (a warning, which fails a --strict build) and left out rather than shown."""
    if not path.is_file():
        return None, []
    from helmbench.errors import HelmbenchError
    from helmbench.manifest import Manifest

    try:
        m = Manifest(path)
        return m.header, [_case_from_manifest(c) for c in m]
    except HelmbenchError as exc:
        log.warning("helmbench: the manifest is not shown: %s (recompile it with `helmbench compile`)", exc.message)
        return None, []


def _add_conversations(cases: list[Case], manifest: Path) -> None:
    """The script of each conversation case (`Case.conversation`: its later turns, or its simulated user's brief)
    from the manifest file when it is the one shown: the database keeps a case's first request only. Read through
    the manifest's verification, as a site without a database reads it; a file that fails it adds nothing."""
    _, from_file = _read_manifest_file(manifest)
    scripts = {c.hash: c.conversation for c in from_file if c.conversation}
    for case in cases:
        case.conversation = scripts.get(case.hash, case.conversation)


def _db_manifest(conn: Connection, manifest_hash: str) -> tuple[dict, list[Case]]:
    header = queries.manifest_header(conn, manifest_hash) or {}
    return header, [_case_from_db(r) for r in queries.manifest_case_rows(conn, manifest_hash)]


_case_order = lru_cache(maxsize=1 << 16)(natural_key)  # every model's rows sort by the same case ids

def _judgements(conn: Connection, run_ids: list[int]) -> dict[int, list[Judgement]]:
    """The judgements behind each result, with the verdict and score each gave that result."""
    out: dict[int, list[Judgement]] = {}
    for r in queries.judgement_rows(conn, run_ids):
        out.setdefault(r["result_id"], []).append(Judgement(
            criterion=r["criterion"], verdict=r["verdict"], score=r["score"], justification=r["justification"],
            judgment_json=r["judgment_json"], judge_model=r["judge_model"], error_kind=r["error_kind"],
            error_message=r["error_message"],
        ))
    return out


def _read_results(conn: Connection, run, judgements: dict[int, list[Judgement]],
                  into: dict[int, list[Result]], adjudication=None) -> list[ScoredResult]:
    """One query per run for both uses: `Result`s for the pages, `ScoredResult`s for scoring; with an
    `adjudication` (score.adjudication) both carry the clinicians' verdicts where they decide."""
    results: list[Result] = []
    scored: list[ScoredResult] = []
    for r in queries.result_detail_rows(conn, run.id):
        scored.append(to_scored(r))
        results.append(Result(
            id=r["result_id"], run_id=r["run_id"], model=run.model, case_id=r["case_id"], sample=r["sample"] or 0,
            verdict=r["verdict"], score=r["score"], reason=r["reason"], response_id=r["response_id"],
            content=r["content"], finish_reason=r["finish_reason"], error_kind=r["error_kind"],
            error_message=r["error_message"], cost=r["cost"], latency_ms=r["latency_ms"],
            judgements=judgements.get(r["result_id"], []), failure_kind=r["failure_kind"],
        ))
    if adjudication is not None:
        for res in results:
            _adjudicated(res, adjudication)
        scored = adjudication.apply(run.id, scored)
    results.sort(key=lambda x: (_case_order(x.case_id), x.sample))
    into[run.id] = results
    return scored


def _adjudicated(res: Result, adjudication) -> None:
    """A result's page: its reviewed items' history and, when clinicians' verdicts re-decided it, theirs."""
    key = (res.run_id, res.case_id, res.sample)
    res.reviewed = tuple(adjudication.history(*key))
    decision = adjudication.decisions.get(key)
    if decision is not None and res.verdict != "ERROR":
        res.judge_verdict, res.judge_score = res.verdict, res.score
        res.verdict, res.score = decision.verdict, decision.score


def _model_data(row: LeaderboardRow, results: list[Result], scored: list[ScoredResult], slug: str,
                rows_digest: str) -> ModelData:
    return ModelData(row=row, slug=slug, results=results, scored=scored, by_severity=by_severity_bucket(scored),
                     digest=rows_digest)


def _history(conn: Connection, row: LeaderboardRow, loaded: dict[int, list[ScoredResult]],
             summarise_fn, adjudication=None) -> list[HistoryPoint]:
    """The model's runs with their scores (the rows already read for the leaderboard are reused)."""
    floors: dict[str, tuple] = {}

    def load_rows(c, run_id):  # an earlier run of the manifest is adjudicated as the leaderboard's is
        if run_id in loaded:
            return loaded[run_id]
        rows = scored_results(c, run_id)
        return adjudication.apply(run_id, rows) if adjudication is not None else rows

    def floors_of(manifest_hash):
        if manifest_hash not in floors:
            floors[manifest_hash] = manifest_floors(conn, manifest_hash)
        return floors[manifest_hash]

    def summary_of(rows, *, bootstrap, seed):  # the leaderboard's run is summarised already
        if rows is loaded.get(row.run.id):
            return row.summary
        return summarise_fn(rows, bootstrap=bootstrap, seed=seed)

    return history(conn, row.model, FINISHED_STATUSES, load_rows, summary_of, bootstrap=BOOTSTRAP, seed=SEED,
                   floors_of=floors_of)


def _cached_summarise(cache):
    """`summarise`, looked up in the build cache by a digest of the rows.

    The digests are kept (by `id` of the row list, which `load` keeps alive) for the chart keys.
    """
    digests: dict[int, str] = {}

    def fn(rows, *, bootstrap, seed):
        d = digest(rows)
        digests[id(rows)] = d
        if cache is None:
            return summarise(rows, bootstrap=bootstrap, seed=seed)
        key = cache.key("summary", (d, bootstrap, seed))
        hit, value = cache.get(key)
        if not hit:
            value = summarise(rows, bootstrap=bootstrap, seed=seed)
            cache.put(key, value)
        return value

    return fn, digests


def _cached_tie_groups(cache):
    """`tie_groups`, looked up in the build cache by a digest of the compared rows.

    Why: the paired tests need scipy/statsmodels, whose import alone costs about a second; a
    rebuild with unchanged results should pay neither the import nor the resampling.
    """
    def fn(ranked, *, resamples, seed, floors=()):
        if cache is None:
            return tie_groups(ranked, resamples=resamples, seed=seed, floors=floors)
        key = cache.key("tie_groups", ([(name, digest(rows)) for name, rows in ranked], resamples, seed,
                                       [(f.part, f.minimum, f.cap) for f in floors]))
        hit, value = cache.get(key)
        if not hit:
            value = tie_groups(ranked, resamples=resamples, seed=seed, floors=floors)
            cache.put(key, value)
        return value

    return fn


def load(settings: PublishSettings, cache=None) -> SiteData:
    """Read the site's data. Never raises for a missing database or manifest (the site says so).

    `cache` (a `cache.BuildCache`) reuses the score summaries of unchanged runs.
    """
    from helmbench.score.report import manifest_hash_of, shown_note

    file_hash = manifest_hash_of(settings.manifest)  # the rule of `report`, `agreement` and `costs`
    has_db = settings.db.is_file()
    header: dict | None = None
    cases: list[Case] = []
    board: Leaderboard | None = None
    models: list[ModelData] = []
    imported: list[ModelData] = []
    calibration = judges = None
    stability: tuple = ()
    if has_db:
        conn = open_readonly(settings.db)
        try:
            chosen = choose_manifest(conn, file_hash)
            statuses = (*FINISHED_STATUSES, IMPORTED) if settings.include_imported else FINISHED_STATUSES
            shown = latest_runs(conn, chosen, (*FINISHED_STATUSES, IMPORTED)) if chosen else []
            judgements = _judgements(conn, [run.id for run in shown])
            details: dict[int, list[Result]] = {}
            scored: dict[int, list[ScoredResult]] = {}
            from helmbench.score.adjudication import adjudication_of

            adjudication = adjudication_of(conn, chosen)

            def load_results(c, run):
                scored[run.id] = _read_results(c, run, judgements, details, adjudication)
                return scored[run.id]

            summarise_fn, digests = _cached_summarise(cache)
            board = build_leaderboard(conn, file_hash, bootstrap=BOOTSTRAP, seed=SEED, load_results=load_results,
                                      summarise_fn=summarise_fn, groups_fn=_cached_tie_groups(cache),
                                      adjudication=adjudication, statuses=statuses)
            if board.manifest_hash:
                header, cases = _db_manifest(conn, board.manifest_hash)
                if board.manifest_hash == file_hash:
                    _add_conversations(cases, settings.manifest)
                # imported runs not ranked: their rows (unranked, no intervals) for their own pages
                on_board = {r.run.id for r in board.rows}
                aside = [leaderboard_row(conn, run, board.n_cases, results=load_results(conn, run), bootstrap=0,
                                         summarise_fn=summarise_fn, adjudication=adjudication)
                         for run in shown if run.status == IMPORTED and run.id not in on_board
                         and run.manifest_hash == board.manifest_hash]
                slugs = unique_slugs([r.model for r in [*board.rows, *aside]])
                conversations = conversation_details(conn, list(details))
                origins = import_rows(conn, [r.run.id for r in [*board.rows, *aside] if r.run.status == IMPORTED])
                for rs in details.values():
                    for res in rs:
                        res.imported = origins.get((res.run_id, res.case_id, res.sample))
                for rs in details.values():
                    for res in rs:
                        if res.id in conversations:
                            res.turns, res.checkpoints = conversations[res.id]
                models = [_model_data(r, details[r.run.id], scored[r.run.id], slugs[r.model],
                                      digests[id(scored[r.run.id])]) for r in board.rows]
                imported = [_model_data(r, details[r.run.id], scored[r.run.id], slugs[r.model],
                                        digests[id(scored[r.run.id])]) for r in aside]
                for m in models:
                    m.history = _history(conn, m.row, scored, summarise_fn, adjudication)
                from helmbench.score.calibration import load_calibration

                calibration = load_calibration(conn, board.manifest_hash)
                from helmbench.score.judges import judge_sensitivity

                judges = judge_sensitivity(conn, board, bootstrap=BOOTSTRAP, seed=SEED)
                from helmbench.score.stability import judge_stability

                stability = judge_stability(conn, [r.run.id for r in board.rows])
        finally:
            conn.close()
    if not header:
        header, cases = _read_manifest_file(settings.manifest)
    header = header or {}
    if file_hash is not None and file_hash == header.get("manifest_hash"):
        header = {**header, "benchmark": _file_benchmark(settings.manifest, header.get("benchmark") or {})}
    cases.sort(key=lambda c: natural_key(c.id))
    for m in [*models, *imported]:
        for r in m.results:
            r.sample_label = m.row.run.samples > 1 or m.imported_from is not None
    return SiteData(
        settings=settings,
        benchmark=header.get("benchmark") or {},
        manifest_hash=header.get("manifest_hash") or (board.manifest_hash if board else None),
        file_manifest_hash=file_hash,
        catalog=header.get("catalog") or {},
        cases={c.id: c for c in cases},
        leaderboard=board,
        models=models,
        has_db=has_db,
        calibration=calibration,
        judges=judges,
        stability=stability,
        evaluator_pages=evaluator_pages(header.get("catalog") or {}),
        imported=imported,
        include_imported=settings.include_imported,
        # The file's name, not its path: the site is public, and the sentence is `report`'s.
        note=shown_note(Path(settings.manifest.name), file_hash, board.manifest_hash) if board and models else None,
    )
