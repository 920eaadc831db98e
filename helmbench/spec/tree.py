"""The loaded benchmark tree: what the compiler and the lint rules work from."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date
from pathlib import Path

from helmbench.spec.conversation import Conversation
from helmbench.spec.models import (
    ConditionMeta,
    CriterionMeta,
    ModelsFile,
    PerturbationMeta,
    ScenarioMeta,
    UserContextMeta,
)
from helmbench.spec.text import SourceText
from helmbench.spec.yamlio import LineDict

KINDS = ("condition", "user_context", "perturbation")


@dataclass
class Component:
    kind: str  # one of KINDS
    code: str  # "C1", scenario-local
    meta: ConditionMeta | UserContextMeta | PerturbationMeta | None  # None when invalid
    body: str
    source: SourceText
    line: int  # 1-based line of its heading (1 for an individual file)
    body_line: int
    frontmatter: LineDict | None = None

    @property
    def path(self) -> str:
        return self.source.path

    @property
    def title(self) -> str | None:
        return self.meta.title if self.meta else None

    @property
    def severity(self) -> int:
        return getattr(self.meta, "severity", 0) or 0

    @property
    def difficulty(self) -> int:
        return getattr(self.meta, "difficulty", 0) or 0

    @property
    def unreviewed(self) -> bool:
        """Generated (`helmbench generate`) and not yet `reviewed: true`: kept out of the manifest."""
        return bool(self.meta and self.meta.unreviewed)


@dataclass
class Criterion:
    code: str  # "CR1", or "criteria" for criteria.md
    meta: CriterionMeta | None
    body: str
    source: SourceText
    body_line: int
    frontmatter: LineDict | None = None

    @property
    def path(self) -> str:
        return self.source.path


@dataclass
class Scenario:
    pillar: str  # "P1"
    behaviour: str  # "B1"
    code: str  # "S1"
    folder: str  # relative path of the scenario folder
    source: SourceText | None = None  # S1.md / MCSQE.md
    meta: ScenarioMeta | None = None
    frontmatter: LineDict | None = None
    body: str = ""
    body_line: int = 1
    schema: dict | None = None
    schema_source: SourceText | None = None
    components: dict[str, list[Component]] = field(default_factory=lambda: {k: [] for k in KINDS})
    criteria: list[Criterion] = field(default_factory=list)
    conversation: Conversation | None = None  # conversation.md: turns after the opening

    @property
    def key(self) -> str:
        return f"{self.pillar}-{self.behaviour}-{self.code}"

    @property
    def behaviour_key(self) -> str:
        return f"{self.pillar}-{self.behaviour}"

    @property
    def conditions(self) -> list[Component]:
        return self.components["condition"]

    @property
    def user_contexts(self) -> list[Component]:
        return self.components["user_context"]

    @property
    def perturbations(self) -> list[Component]:
        return self.components["perturbation"]

    @property
    def evaluation_type(self) -> str | None:
        return self.meta.evaluation.type if self.meta else None

    @property
    def unreviewed(self) -> bool:
        """A generated draft scenario not yet `reviewed: true`: none of its cases reach the manifest."""
        return bool(self.meta and self.meta.unreviewed)

    @property
    def case_count(self) -> int:
        return len(self.conditions) * max(len(self.user_contexts), 1) * len(self.perturbations)


@dataclass
class PillarInfo:
    code: str
    title: str
    description: str | None = None


@dataclass
class BehaviourInfo:
    pillar: str
    code: str
    title: str
    description: str | None = None
    compliance: list[str] = field(default_factory=list)
    weight: float | None = None

    @property
    def key(self) -> str:
        return f"{self.pillar}-{self.code}"


@dataclass
class Benchmark:
    root: Path
    name: str = "untitled"  # without benchmark.yml: the README's `# ` title, else the folder's name (loader)
    version: str | None = None  # only benchmark.yml gives a version
    description: str | None = None
    content_note: str | None = None  # benchmark.yml's: the site's content note in place of HELMBench's own
    declared: bool = False  # benchmark.yml exists
    benchmark_source: SourceText | None = None
    pillars: dict[str, PillarInfo] = field(default_factory=dict)
    behaviours: dict[str, BehaviourInfo] = field(default_factory=dict)  # key "P1-B1"
    scoring_weights: dict[str, float] = field(default_factory=dict)
    floors: list[dict] = field(default_factory=list)  # benchmark.yml `floors:` as {part, minimum, cap}
    calibration: dict | None = None  # benchmark.yml `calibration:` as {min_kappa, min_n}
    adjudication: dict | None = None  # benchmark.yml `adjudication:` as {min_reviews}
    scoring_source: SourceText | None = None
    scoring_data: LineDict | None = None
    scenarios: list[Scenario] = field(default_factory=list)
    models: ModelsFile | None = None
    models_source: SourceText | None = None
    models_data: object = None
    as_of: date | None = None  # the day lint judges "stale" by (`lint --as-of`); None: today

    @property
    def equal_weights(self) -> bool:
        """The documented minimal layout (no benchmark.yml, no scoring.yaml) weighs every
        behaviour the same: the author wrote no weights, so none is missing."""
        return not self.declared and self.scoring_source is None

    def weight(self, behaviour_key: str) -> float | None:
        info = self.behaviours.get(behaviour_key)
        if info and info.weight is not None:
            return info.weight
        if self.equal_weights and behaviour_key in self.behaviours:
            return 1.0
        return self.scoring_weights.get(behaviour_key)

    def weight_source(self, behaviour_key: str) -> SourceText | None:
        info = self.behaviours.get(behaviour_key)
        if info and info.weight is not None:
            return self.benchmark_source
        return self.scoring_source if behaviour_key in self.scoring_weights else None
