"""What the site shows, as plain objects: the cases, each model's results with their judgements, the
leaderboard's rows and the site's data as a whole (`SiteData`).

Why a module: these dataclasses are what the build cache stores (codec.py decodes them from this module, which
`allow`s itself) and what every page template reads; reading them from results.db is publish/reader.py's.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from functools import cached_property

from helmbench.score import ScoredResult
from helmbench.score.breakdown import GroupStats
from helmbench.spec.naming import natural_key
from helmbench.score.leaderboard import Leaderboard, LeaderboardRow
from helmbench.store import queries
from helmbench.score.drift import HistoryPoint
from helmbench.store.queries.runs import IMPORTED

from .codec import allow
from .settings import PublishSettings

allow(__name__)  # SiteData and the dataclasses it holds are cached as data (codec.py)

#: Bootstrap resamples for the published intervals (and their seed: the site is reproducible).
BOOTSTRAP = 1000
SEED = 0


@dataclass
class Case:
    id: str
    hash: str
    pillar: str
    behaviour: str
    scenario: str
    condition: str | None
    user_context: str | None
    perturbation: str | None
    severity_perturbation: int
    severity_user_context: int
    difficulty: int
    weight: float
    messages: list[dict]
    response_format: dict | None
    evaluation: dict
    #: The manifest's request.conversation of a conversation case (its later turns or simulated user), else None;
    #: a case read from the database alone has none (the database keeps the first turn's request only).
    conversation: dict | None = None

    @property
    def severity_base(self) -> int:
        return self.severity_perturbation + self.severity_user_context


@dataclass(slots=True)
class Judgement:
    criterion: str
    verdict: str | None
    score: float | None
    justification: str | None
    judgment_json: str | None
    judge_model: str
    error_kind: str | None
    error_message: str | None


@dataclass(slots=True)
class Result:
    """One result row with its response, as a page shows it."""

    id: int
    run_id: int
    model: str
    case_id: str
    sample: int
    verdict: str
    score: float | None
    reason: str | None
    response_id: int | None
    content: str | None
    finish_reason: str | None
    error_kind: str | None
    error_message: str | None
    cost: float | None
    latency_ms: int | None
    judgements: list[Judgement] = field(default_factory=list)
    turns: list[dict] = field(default_factory=list)  # a conversation's transcript (store/turns.py)
    checkpoints: list[dict] = field(default_factory=list)  # and the verdict of each of its checkpoints
    sample_label: bool = False  # the model answered this case more than once: label each sample
    failure_kind: str | None = None  # results.failure_kind: "format" when the output was not a usable answer
    #: with benchmark.yml's `adjudication:` only: the result's reviewed items (score.adjudication.ItemHistory),
    #: and the verdict and score the run stored when clinicians' verdicts re-decided it (`verdict`/`score` then
    #: are the clinicians')
    reviewed: tuple = ()
    judge_verdict: str | None = None
    judge_score: float | None = None
    #: an imported conversation's `imports` row (store/imports.py: its id, source, provenance, opening), else None
    imported: dict | None = None

    @property
    def format_failure(self) -> bool:
        return self.verdict == "FAIL" and self.failure_kind == queries.FORMAT


@dataclass
class ModelData:
    row: LeaderboardRow
    slug: str
    results: list[Result]  # natural case order, then sample
    scored: list[ScoredResult]
    by_severity: dict[str, GroupStats]
    digest: str  # of `scored`: the cache key of everything computed from the rows
    # Bootstrap intervals of the pillar and behaviour scores: filled in by the chart job
    # (charts.run_model_job), which computes them in a worker process while pages render.
    pillar_ci: dict[str, tuple[float, float] | None] = field(default_factory=dict)
    behaviour_ci: dict[str, tuple[float, float] | None] = field(default_factory=dict)
    history: list[HistoryPoint] = field(default_factory=list)  # every finished run of the model, oldest first

    @property
    def id(self) -> str:
        return self.row.model

    @property
    def name(self) -> str:
        return self.row.model_name

    @property
    def imported_from(self) -> str | None:
        """The source of an imported run (`helmbench import transcripts`), None for a run HELMBench made."""
        return imported_source(self.row.run)

    @property
    def imported_note(self) -> str | None:
        """What every place that shows an imported run says of it."""
        source = self.imported_from
        return None if source is None else f"Imported from {source}: not run by HELMBench; the model was not called"


def imported_source(run) -> str | None:
    """The source an imported run's settings name (store/imports.py), None for a run HELMBench made."""
    if run.status != IMPORTED:
        return None
    try:
        settings = json.loads(run.settings_json or "{}")
    except ValueError:
        settings = {}
    source = settings.get("imported") if isinstance(settings, dict) else None
    return source if isinstance(source, str) else "elsewhere"


@dataclass
class SiteData:
    settings: PublishSettings
    benchmark: dict  # name, version, description
    manifest_hash: str | None
    file_manifest_hash: str | None  # the hash in the manifest file, when there is one
    catalog: dict  # pillars, behaviours, scenarios, components (FORMAT.md)
    cases: dict[str, Case]  # natural order
    leaderboard: Leaderboard | None
    models: list[ModelData]  # leaderboard order
    has_db: bool
    calibration: object | None = None  # score.calibration.CalibrationReport: the judge against clinicians
    note: str | None = None  # report.shown_note: the manifest file has no finished runs; these are another's
    judges: object | None = None  # score.judges.JudgeSensitivity: each judge's own board (an ensemble only)
    stability: tuple = ()  # score.stability.Stability per criterion: the judge's run-to-run agreement
    #: (type, page URI, title, data) of each evaluator with a page of its own (`evaluator_pages`): kept with the
    #: data, so a build that finds the data in its cache does not load the plugins to plan its pages.
    evaluator_pages: tuple = ()
    #: Imported runs (`helmbench import transcripts`) not on the leaderboard: pages of their own, never ranked
    #: (`publish --include-imported` puts them on the leaderboard instead, in `models`, marked).
    imported: list = field(default_factory=list)
    include_imported: bool = False

    @property
    def has_results(self) -> bool:
        return bool(self.models)

    @property
    def every_model(self) -> list[ModelData]:
        """The leaderboard's models, then the imported runs not on it: every model with pages and results."""
        return [*self.models, *self.imported]

    @cached_property
    def results_by_case(self) -> dict[str, dict[str, list[Result]]]:
        """Case id → model id → its results (by sample): the models' own `Result`s, indexed. Derived, not a
        field: the build cache stores the data as JSON, which would hold every result twice."""
        by_case: dict[str, dict[str, list[Result]]] = {c: {} for c in self.cases}
        for m in self.every_model:
            for r in m.results:
                by_case.setdefault(r.case_id, {}).setdefault(m.id, []).append(r)
        return by_case

    def results(self, case_id: str, model_id: str) -> list[Result]:
        """A model's results for a case (one per sample; empty when it has none)."""
        return self.results_by_case.get(case_id, {}).get(model_id, [])

    def scenario_cases(self, scenario: str) -> list[Case]:
        return [c for c in self.cases.values() if c.scenario == scenario]

    def components(self, scenario: str, kind: str) -> list[tuple[str, dict]]:
        items = [(code, comp) for code, comp in self.catalog.get("components", {}).items()
                 if comp.get("scenario") == scenario and comp.get("kind") == kind]
        return sorted(items, key=lambda kv: natural_key(kv[0]))

    def component_title(self, code: str | None) -> str | None:
        if not code:
            return None
        return (self.catalog.get("components", {}).get(code) or {}).get("title")
