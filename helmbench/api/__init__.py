"""The public Python API: lint, compile, run, report and publish a benchmark from Python.

Every command of the CLI is one call of this package and the rendering of what it returns (the layer
test's `cli-through-api` rule: cli/ imports no stage); the review functions are in `review.py`,
authoring help in `generate.py`, the tree and its manifests in `tree.py`, Datasette in `datasette.py`,
the authored files' schemas in `schemas.py`, all re-exported here.

Why a module of its own: the CLI commands are thin wrappers over these functions, so a
notebook or a script gets the same checks, the same incremental cache and the same numbers as
`helmbench …` on a terminal, without building `RunOptions` or a rich `Console`. Every failure a
user can act on is raised as a `helmbench.errors.HelmbenchError` (or a subclass) whose message
names the file; nothing here prints. Heavy stages (litellm, mkdocs, the statistics) are
imported inside each function, so importing this module costs almost nothing.
"""

from __future__ import annotations

import io
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Iterable

from helmbench.diagnostics import Diagnostic  # noqa: F401  (public: what lint returns; cli/ renders it)
from helmbench.run.config import DEFAULT_CONCURRENCY, RetryPolicy, RunOptions
from helmbench.run.progress import Progress  # noqa: F401  (public: helmbench.Progress, what on_progress receives)

if TYPE_CHECKING:  # pragma: no cover - names for annotations only
    from rich.console import Console

    from helmbench.manifest import Manifest
    from helmbench.run.session import RunReport
    from helmbench.score.leaderboard import Leaderboard

class _Discard(io.TextIOBase):
    """Where the API's console (progress lines, log lines) goes: nowhere. The run's log file
    (logs/ beside the database) still records everything."""

    def write(self, text: str) -> int:
        return len(text)


def _root(root) -> Path:
    """The benchmark folder: `root` (or its `benchmark/` subfolder), else found from the current folder."""
    from helmbench.errors import UsageError
    from helmbench.spec.discover import benchmark_root

    found = benchmark_root(Path(root) if root is not None else None)
    if not found.is_dir():
        raise UsageError(f"{found}: no such folder", hint="pass the folder that holds scenarios/")
    return found


def in_build(**given: str | Path | None) -> list[Path]:
    """Each path given, or its default in build/ beside the benchmark found from the current folder, in the
    order given: `db, manifest = in_build(db=None, manifest=None)` (the defaults every command uses; a default
    that is a symbolic link is refused)."""
    from helmbench.spec.discover import in_build as defaults

    return defaults(**{k: None if v is None else Path(v) for k, v in given.items()})


def benchmark_root(root: str | Path | None = None) -> Path:
    """The benchmark folder of `root` (or its `benchmark/` subfolder), else the one found from the current folder."""
    from helmbench.spec.discover import benchmark_root as found

    return found(None if root is None else Path(root))


def lint(root: str | Path | None = None, *, as_of: date | None = None) -> list[Diagnostic]:
    """Every finding in the benchmark tree at `root`, sorted by file and position.

    Never raises for problems in the tree (they are the findings); `d.is_error` tells errors
    from warnings (and `d.is_note` notes, which never fail). `as_of`: the day findings that age
    (a crisis-service entry checked too long ago) are judged by; default today.
    """
    from helmbench.lint import lint_tree

    _, diags = lint_tree(_root(root), as_of=as_of)
    return diags


def rules() -> dict:
    """Every diagnostic code, built-in and plugins', by code: each with `severity`, `summary`, `explanation` and
    an `example` (what `helmbench rules` prints and the lint-rules page shows)."""
    from helmbench.lint.rulebook import codes

    return codes()


def _compiled(result):
    """The compiled manifest, plus what compiling knew: its read-only copy and the lint warnings."""
    from helmbench.manifest import Manifest

    class Compiled(Manifest):
        copy: Path
        diagnostics: list
        left_out: object

    m = Compiled(result.path, verify=False)  # just written from the tree: nothing to verify
    m.copy = result.copy
    m.diagnostics = result.diagnostics
    m.left_out = result.left_out
    return m


def compile(root: str | Path | None = None, out: str | Path | None = None, *,  # noqa: A001
            include_unreviewed: bool = False) -> Manifest:
    """Compile the tree at `root` into `out/manifest.jsonl` (default: build/ beside the benchmark).

    Returns the `Manifest` (iterate it for the cases; `.hash`, `.header`, `.path`; `.copy` is the
    read-only copy under `manifests/`, `.diagnostics` the warnings, `.left_out` the generated
    content not yet reviewed that was left out unless `include_unreviewed`). Raises
    `helmbench.manifest.LintFailed` (its `.diagnostics` hold the errors) when the tree has errors.
    """
    from helmbench.manifest import compile_tree
    from helmbench.spec import discover

    bench = _root(root)
    out_dir = Path(out) if out is not None else discover.build_dir(bench)
    return _compiled(compile_tree(bench, out_dir, include_unreviewed=include_unreviewed))


def _as_manifest(manifest) -> Path:
    from helmbench.errors import UsageError

    path = Path(getattr(manifest, "path", manifest))
    if not path.is_file():
        raise UsageError(f"manifest not found: {path}", hint="compile one first: helmbench.compile(root)")
    return path


def run_options(manifest, models: Iterable[str] | None = None, *, db=None, models_file=None,
                scenarios: Iterable[str] = (), case_ids: Iterable[str] = (), samples: int = 1,
                concurrency: int = DEFAULT_CONCURRENCY, max_cost: float | None = None, dry_run: bool = False,
                command: str = "helmbench.run()", retry: RetryPolicy | None = None,
                preview: bool = False, shard: str | None = None, rejudge_sample: int = 0,
                rejudge_seed: int = 0) -> RunOptions:
    """The `RunOptions` that `run` executes, with every default filled in (shared with the CLI).
    `shard`: "K/N" runs part K of N of the work (by case and model); a bad value is a UsageError.
    `rejudge_sample`/`rejudge_seed`: the judge asked again on that many judged outputs (a seeded sample)."""
    from helmbench.run.selection import parse_shard

    shard = parse_shard(shard)
    path = _as_manifest(manifest)
    db = Path(db) if db is not None else path.parent / "results.db"
    return RunOptions(
        manifest=str(path), models_file=str(models_file if models_file is not None else _models_of(path)),
        db=str(db), scenarios=tuple(scenarios or ()), case_ids=tuple(case_ids or ()),
        models=tuple([models] if isinstance(models, str) else (models or ())), samples=samples,
        concurrency=concurrency, max_cost=max_cost, dry_run=dry_run, logs_dir=str(db.parent / "logs"),
        command=command, retry=retry if retry is not None else RetryPolicy.from_env(), preview=preview, shard=shard,
        rejudge_sample=rejudge_sample, rejudge_seed=rejudge_seed)


def run(manifest, models: Iterable[str] | None = None, *, db: str | Path | None = None,
        models_file: str | Path | None = None, scenarios: Iterable[str] = (), samples: int = 1,
        concurrency: int = DEFAULT_CONCURRENCY, max_cost: float | None = None, dry_run: bool = False,
        on_progress: Callable[[Progress], None] | None = None, console: Console | None = None,
        verbose: bool = False, live: bool = False, **options) -> RunReport:
    """Ask the models every selected case of `manifest` (a `Manifest` or a path), evaluate, store.

    `models`: model ids from models.yml (default: all of them); `db` defaults to results.db
    beside the manifest and `models_file` to the benchmark's models.yml. Incremental like
    `helmbench run`: what is stored for (request, model, settings, sample) is never asked again.
    Without `OPENROUTER_API_KEY` in the environment (or with `dry_run=True`) nothing is sent and
    the report counts the calls that would be made (`report.plan.new_calls`).
    `OPENROUTER_API_BASE` points the calls at another OpenRouter-compatible server.
    `shard="K/N"` runs only part K of N of the work (by case and model: N shards together make
    every call one run makes, each once; each run row records its shard in `runs.shard`).

    Returns the `RunReport`: `.status` is completed, partial, interrupted, stopped_cost or
    dry-run, `.runs` the stored run rows (with `n_pass`, `n_fail`, `n_error`, `cost`), `.spent`
    the USD billed, `.ledger` per run id the calls this invocation sent (a `Ledger`: calls, cost,
    tokens by kind and model, from the call ledger) and `.stalled` the models that never answered
    in time. Raises `HelmbenchError` for bad input and for a stopped provider (rejected
    key, unreachable base URL), before or instead of any further spending.
    `on_progress` is called with a `Progress` event after each call of each phase. `console` (a
    rich Console: where log lines go), `verbose` and `live` (the caller draws a bar from the
    events, so no periodic log line) are for the CLI; by default nothing is printed.
    """
    from helmbench.run.session import run as run_session

    opts = run_options(manifest, models, db=db, models_file=models_file, scenarios=scenarios, samples=samples,
                       concurrency=concurrency, max_cost=max_cost, dry_run=dry_run, **options)
    if console is None:
        from rich.console import Console

        console = Console(file=_Discard(), quiet=True)  # nothing printed: the caller reads the returned report
    return run_session(opts, console, verbose=verbose, live=live, on_progress=on_progress)


def report(db: str | Path, manifest=None, *, run_id: int | None = None, bootstrap: int = 1000,
           calibrated_only: bool = False) -> Leaderboard:
    """The leaderboard of `db`: per model its latest finished run of `manifest` (a `Manifest` or
    a path; default: the latest runs), with scores, intervals, ranks and coverage.

    The same numbers as `helmbench report` and the site. `calibrated_only` leaves the judged
    scenarios whose judge is not calibrated against clinicians out of every number (see
    `agreement`). Raises `HelmbenchError` when the database is missing or holds no finished run.
    """
    return report_data(db, manifest, run_id=run_id, bootstrap=bootstrap, calibrated_only=calibrated_only).board


def agreement(db: str | Path, manifest=None):
    """How far the judge agrees with clinicians' blind reviews (`helmbench review`), per judged criterion.

    Returns a `CalibrationReport`: per criterion and `overall`, n, Cohen's κ with its interval,
    sensitivity and specificity for failing verdicts, Krippendorff's α between clinicians (and
    between judges, for an ensemble), and `calibrated` against benchmark.yml's threshold.
    `manifest` (a `Manifest` or a path) picks whose criteria; when it has no finished runs (it was
    recompiled and not run yet), the latest judged runs are shown and `.note` says so, in the same
    words as `report`.
    """
    from helmbench.score.calibration import load_calibration
    from helmbench.score.report import REPORT_STATUSES, manifest_hash_of, shown_note
    from helmbench.store import open_readonly, queries

    path = None if manifest is None else Path(getattr(manifest, "path", manifest))
    wanted = manifest_hash_of(path)
    conn = open_readonly(Path(db))
    try:
        ran = wanted and queries.choose_manifest(conn, wanted, REPORT_STATUSES) == wanted
        report = load_calibration(conn, wanted if ran else None)
        report.note = shown_note(path, wanted, report.manifest_hash)
        return report
    finally:
        conn.close()


def paid_in(runs: Iterable[dict]) -> float:
    """What `runs` (rows of `helmbench costs`) were billed together: their model's and judge's priced calls."""
    return sum((r["paid"] or 0) + (r["judge_paid"] or 0) for r in runs)


#: The version of `costs(...).to_dict()` (`helmbench costs --format json`): costs.schema.json's `format`.
COSTS_FORMAT = 1


@dataclass
class Costs:
    """What `helmbench costs` shows: per run, from the call ledger, what was billed in it and the cost
    behind its results; the calls no run made (`generate`); the runs of other manifests, summed; and the
    estimate of the calls not made yet for the manifest (None when it is not compiled, or for one run)."""

    runs: list[dict]
    note: str | None = None  # report's sentence: the manifest asked for had no runs, these are another's
    others: list[dict] = field(default_factory=list)  # runs of other manifests (counted, not shown)
    outside: object = None  # store.queries.ledger.Ledger of the calls no run made, or None (one run or model asked)
    estimate: object = None  # run.estimate.Estimate of the calls not made yet, or None
    manifest: Path | None = None  # whose calls not made yet
    estimate_failed: Exception | None = None  # HelmbenchError: the estimate could not be made (the costs still stand)

    @property
    def total(self) -> float:
        """Every priced call shown, paid: the runs' own calls and the calls no run made."""
        return paid_in(self.runs) + ((self.outside.cost() or 0.0) if self.outside is not None else 0.0)

    def to_dict(self) -> dict:
        keys = ("run_id", "model", "status", "started_at", "calls", "errors", "unknown", "unpriced", "prompt_tokens",
                "completion_tokens", "paid", "judge_calls", "judge_paid", "behind_results", "behind_model",
                "behind_user", "behind_judge", "shared_calls", "shared_cost", "shared_with")
        out = self.outside
        return {"format": COSTS_FORMAT, "note": self.note, "runs": [{k: r.get(k) for k in keys} for r in self.runs],
                "generation": None if out is None else {"calls": out.calls(), "cost": out.cost(),
                                                        "unknown": out.unknown()},
                "total_paid": self.total,
                "other_manifests": {"runs": len(self.others), "paid": paid_in(self.others)},
                "not_run_yet": None if self.estimate is None else {"manifest": str(self.manifest),
                                                                   **self.estimate.to_dict()}}


def costs(db: str | Path, manifest=None, *, run_id: int | None = None, model: str | None = None,
          models_file: str | Path | None = None, estimate: bool = True) -> Costs:
    """Billed cost and tokens per run (from the call ledger), and the estimate of the calls not made yet.

    The runs are those of `manifest` (a `Manifest` or a path) when it has finished runs, else of the
    latest finished run's manifest (`.note` says so, as `report` does); `run_id` or `model` narrow them.
    The estimate (for `manifest`, with `models_file`, default the models.yml beside it) is left out
    for one run or when `estimate` is False or the manifest does not exist; when the manifest cannot be
    read for it (edited by hand), `.estimate_failed` holds the error. Raises `HelmbenchError` (a
    `UsageError`) when no run matches.
    """
    from helmbench.errors import UsageError
    from helmbench.score.report import manifest_shown
    from helmbench.store import open_reader
    from helmbench.store.queries.ledger import run_costs, unattached_ledger

    path = None if manifest is None else Path(getattr(manifest, "path", manifest))
    reader = open_reader(Path(db))
    try:
        shown, note = manifest_shown(reader.conn, path) if run_id is None else (None, None)
        rows = run_costs(reader, run_id, model, shown)
        if not rows:
            raise UsageError("no runs match" + (f" --run-id {run_id}" if run_id else "")
                             + (f" --model {model}" if model else ""))
        ids = {r["run_id"] for r in rows}
        others = [r for r in run_costs(reader, None, model) if shown and r["run_id"] not in ids]
        outside = None if run_id or model else unattached_ledger(reader)
    finally:
        reader.conn.close()
    remaining = failed = None
    if estimate and path is not None and path.is_file() and run_id is None:
        from helmbench.errors import HelmbenchError
        from helmbench.run.estimate import estimate_remaining

        models = Path(models_file) if models_file is not None else _models_of(path)
        try:
            remaining = estimate_remaining(path, models, Path(db), [model] if model else None)
        except HelmbenchError as exc:  # a manifest edited by hand: what was paid is still shown, then the error
            failed = exc
    return Costs(rows, note, others, outside, remaining, path, failed)


def report_data(db: str | Path, manifest=None, *, run_id: int | None = None, bootstrap: int = 1000,
                calibrated_only: bool = False, judge_version: str | None = None):
    """`report` with what `helmbench report` prints beside the leaderboard (judge totals, titles, the
    judge's calibration); `calibrated_only` leaves judged scenarios with an uncalibrated criterion out;
    `judge_version` keeps only the results whose judgements all came from that judge model version."""
    from helmbench.score.report import load_report

    path = None if manifest is None else Path(getattr(manifest, "path", manifest))
    return load_report(Path(db), path, run_id, bootstrap=bootstrap, calibrated_only=calibrated_only,
                       judge_version=judge_version)


def export(db: str | Path, out_dir: str | Path, *, manifest=None, format: str = "eee", bootstrap: int = 1000):
    """Write the leaderboard in a shared format (`format="eee"`: Every Eval Ever) below `out_dir`.

    Per model's ranked run (the rows `report` ranks), the aggregate record and its instance-level
    samples, laid out as the EEE datastore expects (`data/<benchmark>/<developer>/<model>/<uuid>.json`
    and `<uuid>_samples.jsonl`). `manifest` picks whose runs, as for `report`. Returns what was written
    (`.files`, `.records`, `.samples`); raises `HelmbenchError` when nothing is ranked.
    """
    from helmbench.errors import UsageError
    from helmbench.publish.eee import export_eee

    if format != "eee":
        raise UsageError(f"unknown export format {format!r}", hint="the formats are: eee (Every Eval Ever)")
    path = None if manifest is None else Path(getattr(manifest, "path", manifest))
    return export_eee(Path(db), Path(out_dir), path, bootstrap=bootstrap)


def merge(out: str | Path, inputs: Iterable[str | Path]):
    """Merge the results databases `inputs` into `out` (created when absent) by content key.

    Identical rows are kept once; the runs of one (manifest, model, settings) become one run (the
    shards of `run(shard="K/N")` make one complete run per model, their ledger rows summed once);
    different manifests keep their runs apart. Returns what was added (`.added`, `.replaced` per
    table, `.runs`: the merged run rows, `.refused`: reviews left out by `review import`'s rules). Raises
    `MergeConflict` (a `HelmbenchError`, nothing written) when two inputs hold different content under one
    key, and `EditedInput` when an input's catalog does not hash to its manifest or it is dated in the future.
    """
    from helmbench.store.merge import merge as merge_store

    return merge_store(Path(out), [Path(p) for p in inputs])


def publish(db: str | Path, site_dir: str | Path | None = None, *, manifest=None,
            datasette_url: str = "http://127.0.0.1:8001", config_file: str | Path | None = None,
            strict: bool = False, project_dir: str | Path | None = None, allow_site_code: bool = False,
            show_log: bool = False, include_imported: bool = False) -> Path:
    """Build the static leaderboard site from `db` into `site_dir` (default: site/ beside the db).

    `manifest` (default: manifest.jsonl beside the db) picks which runs are shown;
    `datasette_url` is where the "rows behind this number" links point; `config_file` and
    `project_dir` (a folder with mkdocs.yml or site/) override the packaged site, read as data:
    their hooks, plugins, templates and scripts are taken only with `allow_site_code`. `show_log`:
    mkdocs' own log lines go to standard error (as `mkdocs build` shows them). `include_imported`:
    conversations imported with `import_transcripts` are ranked on the leaderboard beside live runs, marked
    as imported (by default they have their own pages and are never ranked). Returns the site
    folder. Raises `HelmbenchError` when the build fails.
    """
    from helmbench.publish import PublishSettings, build_site, log_to_stderr

    if show_log:
        log_to_stderr()

    db = Path(db)
    path = db.parent / "manifest.jsonl" if manifest is None else Path(getattr(manifest, "path", manifest))
    settings = PublishSettings(db=db, manifest=path, datasette_url=datasette_url.rstrip("/"),
                               include_imported=include_imported)
    return build_site(settings, config_file=config_file, site_dir=site_dir, strict=strict, project_dir=project_dir,
                      allow_code=allow_site_code)


from helmbench.api.review import (  # noqa: E402,F401  (public: the review functions; cheap, stages load inside)
    PACKETS_DIR, PLAN_FILE, ReviewImport, ReviewPacket, ReviewSession, is_loopback, read_review_plan,
    review_export, review_import, review_packets, review_plan, review_plan_path, review_session, review_status)


def models_file(manifest: str | Path | None = None) -> Path:
    """models.yml of the benchmark whose build/ holds `manifest` (when given and there is one), else of the
    benchmark found from the current folder: every command's default `--models-file`."""
    from helmbench.spec import discover

    return discover.models_file(None if manifest is None else Path(manifest))


_models_of = models_file  # for the functions whose `models_file` parameter hides this one


def preload_provider() -> None:
    """Start importing the provider library (litellm: seconds) in the background, before a run needs it."""
    from helmbench.run.provider import preload_litellm

    preload_litellm()


def estimate_run(report: RunReport, db: str | Path | None = None):
    """The `Estimate` of the new calls of `report`'s plan (a dry run's): tokens and cost per model."""
    from helmbench.run.estimate import estimate_plan

    return estimate_plan(report.plan, db)


def estimate_cases(cases: Iterable[dict], models_file: str | Path, db: str | Path | None = None):
    """The `Estimate` of asking every model of `models_file` each of `cases` (manifest cases) once: what a pull
    request's new cases would cost (`helmbench diff --format comment`)."""
    from helmbench.run.estimate import Estimator
    from helmbench.run.selection import load_models_file

    entries = list(load_models_file(Path(models_file)).models)
    estimator = Estimator(entries, db)
    for case in cases:
        for e in entries:
            estimator.add(e.id, case)
    return estimator.result()


def single_case(manifest, case_id: str, db: str | Path, report: RunReport) -> tuple[dict, list]:
    """The case `case_id` of `manifest` and each model's stored answers to it, after `report` (a run of that one
    case, `run(case_ids=(case_id,), preview=True)`): what `helmbench run-single` shows."""
    from helmbench.run.single import answers_for, find_case

    case = find_case(_as_manifest(manifest), case_id)
    return case, answers_for(Path(db), case, report.plan.models)


def plugins() -> list[dict]:
    """Every plugin loaded (built-in and installed, by entry point), as data: name, source, version, module and
    what it adds (evaluators, rules, codes); what `helmbench plugins --format json` prints."""
    from helmbench.plugins import registry

    return [p.to_dict() for p in registry.plugins()]


def project_dir() -> Path | None:
    """The folder holding the project's own site (mkdocs.yml or site/) found from the current folder, or None
    (the packaged site is built)."""
    from helmbench.spec import discover

    return discover.project_dir()


def site_note(db: str | Path, manifest=None) -> str | None:
    """What the site says when `manifest` has no finished runs in `db` (it shows another's), in `report`'s
    words; None when it has, or without a database."""
    from helmbench.score.report import manifest_note

    return manifest_note(Path(db), _path_of(manifest))


def check_database(db: str | Path) -> None:
    """Open `db` and check it is a results database HELMBench can read (else a `StorageError` naming it), for a
    caller that would otherwise find a corrupt file deep inside a long job."""
    from helmbench.store.db import open_readonly

    open_readonly(Path(db)).close()


def manifest_header(manifest) -> dict:
    """The header line of `manifest` (a `Manifest` or a path), not verified; a broken one is a `HelmbenchError`."""
    from helmbench.manifest.reader import read_header

    return read_header(_path_of(manifest))


def _path_of(manifest) -> Path | None:
    return None if manifest is None else Path(getattr(manifest, "path", manifest))


from helmbench.lazy import exports  # noqa: E402

#: Names the command line's renderers need, from the stages that define them (loaded on first use).
__getattr__ = exports(__name__, {
    "RunReport": "helmbench.run.session",
    "ImportReport": "helmbench.run.imported",
    "Report": "helmbench.score.report",
    "Leaderboard": "helmbench.score.leaderboard",
    "LeaderboardRow": "helmbench.score.leaderboard",
    "Ledger": "helmbench.store.queries.ledger",
    "MODEL_KINDS": "helmbench.store.queries.ledger",
    "NO_RUN_HINT": "helmbench.score.report",
    "format_p": "helmbench.score.pairwise",
    "criterion_key": "helmbench.score.model",
    # the one safe way to write a file (no link followed, atomic, inside a root): what the CLI writes itself
    "write_text": "helmbench.safewrite",
    "Estimate": "helmbench.run.estimate",
    "ModelEstimate": "helmbench.run.estimate",
    "money": "helmbench.run.estimate",  # how an amount of USD is written wherever HELMBench shows one
    "ManifestDiff": "helmbench.manifest.diff",
    "DIFF_FORMAT": "helmbench.manifest.diff",
    "LintFailed": "helmbench.manifest.emit",
    # a bad "K/N" refused before any path is looked at (run_options checks it again)
    "parse_shard": "helmbench.run.selection",
    "read_manifest": "helmbench.manifest.reader",
})

from helmbench.api.datasette import DatasetteFiles, datasette_publish, datasette_serve  # noqa: E402,F401
from helmbench.api.imports import import_transcripts  # noqa: E402,F401
from helmbench.api.schemas import input_schemas  # noqa: E402,F401
from helmbench.api.tree import (  # noqa: E402,F401
    build_dir, compile_at_revision, diff, find_case, models_file_of, scenarios)
from helmbench.api.generate import (  # noqa: E402,F401
    generate_noise, generate_scenarios, generate_variants, generation_db, noise_transforms)
