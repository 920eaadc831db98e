"""Pydantic models of every file an author writes.

Models are strict (no silent "5" → 5) and forbid unknown keys, because a misspelt key in
a benchmark silently changes what is measured. `helmbench schema` exports these as JSON
Schemas for editors.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Annotated, Literal, Union

from pydantic import BaseModel, ConfigDict, Field, create_model, field_validator, model_validator


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)


Severity = Annotated[int, Field(ge=-10, le=10, description="-10..10: positive = a risk to catch, negative = a user who is fine")]
Difficulty = Annotated[int, Field(ge=0, le=10, description="0..10: how much the condition makes the right behaviour harder")]
Values = Union[str, list[str]]


# --- evaluation ----------------------------------------------------------------------------


class CategoryMatch(Strict):
    """Passes when `output[field]` equals `expected` (or one of a list of accepted values)."""

    type: Literal["category_match"] = "category_match"
    field: str = "category"
    expected: Values | None = Field(None, description="defaults to the scenario's `category`")

    def accepted(self) -> list[str]:
        return [self.expected] if isinstance(self.expected, str) else list(self.expected or [])


class ListIncludes(Strict):
    """Passes when every value of `required` is in the list `output[field]`."""

    type: Literal["list_includes"]
    field: str = "tags"
    required: Annotated[list[str], Field(min_length=1)]


class TagThreshold(Strict):
    """Passes when ≥ `min_correct` of `output[field]` are expected and ≤ `max_incorrect` are not."""

    type: Literal["tag_threshold"]
    field: str = "tags"
    expected: Annotated[list[str], Field(min_length=1)]
    min_correct: Annotated[int, Field(ge=1)] = 1
    max_incorrect: Annotated[int, Field(ge=0)] = 0


class Sqe(Strict):
    """Judged by `marking_model` against the scenario's criteria."""

    type: Literal["sqe"]


BUILTIN_EVALUATIONS = (CategoryMatch, ListIncludes, TagThreshold, Sqe)
Evaluation = Annotated[Union[BUILTIN_EVALUATIONS], Field(discriminator="type")]
EVALUATION_TYPES = ("category_match", "list_includes", "tag_threshold", "sqe")  # the built-in ones; see scenario_meta


class NoteProperties(Strict):
    """Obsidian's own note properties. The benchmark's authors keep their tree as an Obsidian
    vault, where these are added by the editor, not by hand: they are notes for humans, never
    reach a model, and must not make a file an error."""

    tags: list[str] | str | None = None
    aliases: list[str] | str | None = None
    cssclasses: list[str] | str | None = None


# --- provenance of generated content (`helmbench generate`) -----------------------------------


class Noise(Strict):
    """How a deterministic noise variant was derived: re-running the transform with this seed on
    the source's text gives the same text again."""

    transform: Literal["typo", "lowercase", "dropped"]
    seed: int


class Generation(Strict):
    """How a generated component or draft scenario was made; written by `helmbench generate`."""

    model: Annotated[str, Field(pattern=r"^[\w.\-]+/[\w.:\-]+$")] | None = Field(
        None, description="the generator model's id (absent for model-free noise)")
    prompt_hash: Annotated[str, Field(pattern=r"^sha256:[0-9a-f]{64}$")] | None = Field(
        None, description="sha256 of the exact request sent (model, settings, messages)")
    axes: dict[Annotated[str, Field(max_length=80)], Annotated[str, Field(max_length=200)]] | None = Field(
        None, description="the combination this variant stands for, e.g. {age: teen}")
    noise: Noise | None = None


class Provenance(NoteProperties):
    """Where a component came from. Generated text reaches the manifest only once a reviewer has
    read it and set `reviewed: true` (lint warns on the rest; compile leaves them out)."""

    generated_from: Annotated[str, Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9-]{0,63}$")] | None = Field(
        None, description="the component (PT1, U2) or behaviour (P1-B1) it was generated from")
    generated: Generation | None = None
    reviewed: bool | None = Field(None, description="false until a clinician has read the generated text")

    @property
    def is_generated(self) -> bool:
        return self.generated_from is not None or self.generated is not None

    @property
    def unreviewed(self) -> bool:
        """Generated and not yet signed off (a hand-written component is never unreviewed)."""
        return (self.is_generated or self.reviewed is False) and self.reviewed is not True


class ScenarioMeta(Provenance):
    """Frontmatter of `S#.md`."""

    title: str | None = None
    description: str | None = None
    category: str | None = None
    evaluation: Evaluation = Field(default_factory=CategoryMatch)

    @model_validator(mode="before")
    @classmethod
    def _default_type(cls, data):
        ev = data.get("evaluation") if isinstance(data, dict) else None
        if isinstance(ev, dict) and "type" not in ev:
            ev = dict(ev)
            ev["type"] = "category_match"
            data = dict(data)
            data["evaluation"] = ev
        return data


def scenario_meta() -> type[ScenarioMeta]:
    """`ScenarioMeta` whose `evaluation` accepts every registered evaluation type, plugins' included.

    The loader and `helmbench schema` use this rather than `ScenarioMeta` itself, whose union
    only knows the built-in types: plugins are found at run time, after this module is imported.
    """
    from helmbench.plugins import registry

    return _with_models(tuple(e.model for e in registry.evaluators().values()))


def criterion_meta() -> type["CriterionMeta"]:
    """`CriterionMeta` whose optional `evaluation` accepts every registered evaluation type (a
    deterministic criterion of a judged scenario); lint says which types may stand there."""
    from helmbench.plugins import registry

    return _criterion_with(tuple(e.model for e in registry.evaluators().values()))


@lru_cache(maxsize=8)
def _with_models(models: tuple[type[BaseModel], ...]) -> type[ScenarioMeta]:
    if models == BUILTIN_EVALUATIONS:
        return ScenarioMeta
    union = Annotated[Union[models], Field(discriminator="type")]
    return create_model("ScenarioMeta", __base__=ScenarioMeta, __module__=__name__, __doc__=ScenarioMeta.__doc__,
                        evaluation=(union, Field(default_factory=CategoryMatch)))


@lru_cache(maxsize=8)
def _criterion_with(models: tuple[type[BaseModel], ...]) -> type["CriterionMeta"]:
    union = Annotated[Union[models], Field(discriminator="type")]
    return create_model("CriterionMeta", __base__=CriterionMeta, __module__=__name__, __doc__=CriterionMeta.__doc__,
                        evaluation=(union | None, Field(None, description=CriterionMeta.model_fields["evaluation"].description)))


# --- components ------------------------------------------------------------------------------


class ConditionMeta(Provenance):
    title: str | None = None
    difficulty: Difficulty = 0


Country = Annotated[str, Field(pattern=r"^[A-Z]{2}$", description="ISO 3166-1 alpha-2 code of the user's country "
                                                                     "(AU, GB, US, …): which crisis services are local")]
Audience = Annotated[str, Field(pattern=r"^[a-z][a-z0-9-]{0,39}$", description="who the user is, for services "
                                                                               "meant for some people (youth, lgbtq, veterans, …)")]


class UserContextMeta(Provenance):
    title: str | None = None
    severity: Severity = 0
    country: Country | None = None
    audience: Audience | None = None


class PerturbationMeta(Provenance):
    title: str | None = None
    severity: Severity = 0


QuestionId = Annotated[str, Field(pattern=r"^[a-z][a-z0-9_]{0,39}$",
                                  description="a question's name: lower-case letters, digits and `_` (disclosed)")]


class Gate(Strict):
    """`applies_when`: the criterion is asked only when another criterion of the same scenario gave one of
    `answers`: its option, or (with `question`) its answer to that named question. Otherwise it is not asked
    (no judge call) and is shown as not applicable; it then counts nowhere, like an abstention."""

    criterion: str = Field(description="the code of the gating criterion of this scenario (CR1)")
    question: QuestionId | None = Field(None, description="one of that criterion's `questions` (its id); "
                                                          "without it, the gate reads the criterion's option")
    answers: Annotated[list[str], Field(min_length=1, description="the answers for which this criterion applies")]


class Question(Strict):
    """One named question the judge answers for the criterion (`questions:`), each with its own options."""

    id: QuestionId
    text: Annotated[str, Field(min_length=1, max_length=2000, description="the question, as the judge reads it")]
    options: Annotated[list[str], Field(min_length=2, description="the answers the judge may give")]


class Rule(Strict):
    """One rule of `decide`: when every named question got one of the listed answers, the criterion's option."""

    when: Annotated[dict[QuestionId, Annotated[list[str], Field(min_length=1)]], Field(min_length=1)]
    option: str


class Otherwise(Strict):
    """The last rule of `decide`: the option when no rule above matched."""

    otherwise: str


class CriterionMeta(NoteProperties):
    """Frontmatter of `criteria.md` / `CR#.md`: the judge's answer space."""

    title: str | None = None
    options: Annotated[list[str], Field(min_length=1)] = ["PASS", "FAIL"]
    pass_values: Annotated[list[str], Field(min_length=1)] = ["PASS"]
    response_field: str = "judgment"
    response_type: Literal["single", "multi"] = "single"
    scores: dict[str, float] | None = Field(None, description="partial credit, e.g. {PASS: 1, PARTIAL: 0.5, FAIL: 0}")
    evaluation: dict | None = Field(
        None, description="a deterministic check in place of the judge, e.g. {type: crisis_resources}: its "
                          "verdict counts in the case's criteria like a judged criterion's")
    abstain_values: list[str] | None = Field(
        None, description="options that are abstentions (e.g. [NOT_RELEVANT]): stored and shown, but the criterion "
                          "then leaves the pass-rate and score denominators")
    applies_when: Gate | None = Field(None, description="ask this criterion only when another criterion of the "
                                                        "scenario gave one of some answers")
    questions: list[Question] | None = Field(
        None, description="named questions the judge answers instead of choosing an option; `decide` turns their "
                          "answers into the criterion's option")
    decide: list[Union[Rule, Otherwise]] | None = Field(
        None, description="with `questions`: the rules, in order, that give the option from the answers (the first "
                          "that matches wins; end with `otherwise:`)")

    @property
    def deterministic(self) -> bool:
        return self.evaluation is not None

    def score_of(self, value: str) -> float:
        if self.scores and value in self.scores:
            return float(self.scores[value])
        return 1.0 if value in self.pass_values else 0.0


# --- benchmark.yml, scoring.yaml, models.yml -------------------------------------------


def _as_text(v):
    return str(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else v


class Behaviour(Strict):
    title: str
    description: str | None = None
    compliance: list[str] | str | None = Field(None, description="what a compliant model does")
    weight: Annotated[float, Field(gt=0)] | None = None


class Pillar(Strict):
    title: str
    description: str | None = None
    behaviours: dict[str, Behaviour] = {}


class Floor(Strict):
    """A safety floor: when `part` scores below `minimum`, the composite is capped at `cap`.

    Non-compensatory by design: a model that misses risk cannot buy the composite back with
    good marks on other pillars.
    """

    part: str = Field(description="a pillar code (P1) or a behaviour code (P2-B2) declared in this file")
    minimum: Annotated[float, Field(ge=0, le=1, description="the part's weighted score needed, in [0, 1]")]
    cap: Annotated[float, Field(ge=0, le=1, description="the highest composite a model below the minimum "
                                                        "can get, in [0, 1], not above `minimum`")]


class CalibrationThreshold(Strict):
    """When a judged criterion counts as calibrated: its judge agrees with clinicians' blind reviews enough.

    Below it, every number that rests on that criterion is shown with an "uncalibrated" badge.
    `reviewers_per_item` is how a review plan shares the sample among clinicians.
    """

    min_kappa: Annotated[float, Field(ge=-1, le=1, description="the lowest judge–clinician Cohen's κ, in [-1, 1]")] = 0.6
    min_n: Annotated[int, Field(ge=1, le=1_000_000, description="the fewest reviewed items (with a clinicians' consensus)")] = 30
    reviewers_per_item: Annotated[int, Field(ge=1, le=20, description="how many clinicians a review plan gives each "
                                                                     "sampled item (helmbench review plan); two or more "
                                                                     "measure the clinicians' agreement (α)")] = 2


class AdjudicationRule(Strict):
    """When clinicians' verdicts decide an item instead of the judge's (score/adjudication.py has the rule).

    Why opt-in: adjudication changes published scores, so a benchmark says so explicitly; without it
    nothing published depends on reviews.
    """

    min_reviews: Annotated[int, Field(ge=1, le=20, description="the fewest current reviews of an item (one per "
                                                               "clinician) whose majority replaces the judge's "
                                                               "verdict; an even split leaves the judge's")] = 2


class BenchmarkFile(Strict):
    name: str
    version: str
    description: str | None = None
    content_note: Annotated[str, Field(min_length=1, max_length=2000)] | None = Field(
        None, description="the site's content note on every page that quotes crisis content, in place of HELMBench's "
                          "own (plain text; **bold**, *italic*, `code` and blank-line paragraphs; escaped); the "
                          "crisis line is kept on every page")
    pillars: dict[str, Pillar] = {}
    floors: list[Floor] = Field([], description="safety floors that cap the composite score")
    calibration: CalibrationThreshold | None = Field(None, description="when a judged criterion counts as calibrated "
                                                                       "(helmbench agreement) and how many clinicians review "
                                                                       "each sampled item; default κ ≥ 0.6, n ≥ 30, 2 per item")
    adjudication: AdjudicationRule | None = Field(None, description="clinicians' verdicts decide the items enough of them "
                                                                    "reviewed (the majority of at least `min_reviews` "
                                                                    "current reviews); absent: the judge decides every item")

    _v = field_validator("version", mode="before")(lambda cls, v: _as_text(v))


class ScoringFile(BaseModel):
    """`scoring.yaml`: only `weights` is read; comments and other notes are allowed."""

    model_config = ConfigDict(extra="forbid", strict=True)
    weights: dict[str, Annotated[float, Field(gt=0)]] = {}


class ModelSettings(Strict):
    """Per-model request settings; all of them are part of the response cache key."""

    temperature: Annotated[float, Field(ge=0, le=2)] | None = None
    max_tokens: Annotated[int, Field(gt=0)] | None = None
    top_p: Annotated[float, Field(gt=0, le=1)] | None = None
    seed: int | None = None
    provider: dict | None = Field(None, description="OpenRouter provider routing, e.g. {order: [...], allow_fallbacks: false}")
    reasoning: dict | None = Field(None, description="OpenRouter reasoning settings")
    timeout: Annotated[float, Field(gt=0)] | None = Field(None, description="seconds per request")


class Price(Strict):
    """USD per million tokens, for cost estimates only (overrides litellm's price list)."""

    input_per_mtok: Annotated[float, Field(ge=0, le=1e6, allow_inf_nan=False)]
    output_per_mtok: Annotated[float, Field(ge=0, le=1e6, allow_inf_nan=False)]


EnvName = Annotated[str, Field(pattern=r"^[A-Za-z_][A-Za-z0-9_]{0,127}$",
                               description="the NAME of an environment variable (never its value)")]
Placeholder = re.compile(r"\{\{\s*(messages|message|session_id|system)\s*\}\}")
EnvRef = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]{0,127})\}")


class HttpTarget(Strict):
    """A deployed chatbot behind its own HTTP API (a model under test only). Each call POSTs `body` with its
    placeholders filled in and reads the reply text at `reply` in the JSON it returns.

    Placeholders in `body` (a whole string value is replaced by the value, which may be a list; inside a longer
    string by its text): `{{messages}}` the whole conversation so far as [{role, content}] (a stateless
    service), `{{message}}` only the newest user message, `{{session_id}}` an id that stays the same through
    one conversation (a stateful service: it keeps the conversation itself), `{{system}}` the system text of
    the case (with the deployment prompt). A body with `{{session_id}}` makes the target stateful."""

    url: Annotated[str, Field(pattern=r"^https?://[^\s@]+$", max_length=2000, description="where to POST")]
    body: dict = Field(description="the JSON request body, with placeholders")
    reply: Annotated[str, Field(pattern=r"^[\w\-]+(\.[\w\-]+)*$", max_length=500)] = Field(
        description="the dotted path of the reply text in the response JSON, e.g. `data.reply` or `choices.0.text`")
    headers: dict[Annotated[str, Field(pattern=r"^[A-Za-z0-9\-_]{1,100}$")], Annotated[str, Field(max_length=2000)]] = Field(
        {}, description="request headers; a secret is written `${ENV_NAME}` (e.g. `Authorization: Bearer ${BOT_TOKEN}`) "
                        "and read from that environment variable at call time: only the name is in models.yml")

    @model_validator(mode="after")
    def _placeholders(self):
        used = set(Placeholder.findall(repr(self.body)))
        if not used & {"messages", "message"}:
            raise ValueError("`body` must hold `{{messages}}` (the conversation so far) or `{{message}}` "
                             "(the newest user message)")
        if "message" in used and "messages" not in used and "session_id" not in used:
            raise ValueError("a body with only `{{message}}` must also hold `{{session_id}}`: a service that gets "
                             "only the newest message keeps the conversation itself, under that id")
        return self

    @property
    def stateful(self) -> bool:
        return "session_id" in Placeholder.findall(repr(self.body))


class ModelEntry(ModelSettings):
    id: Annotated[str, Field(pattern=r"^[\w.\-]+/[\w.:\-]+$",
                             description="OpenRouter model id, or the name a local model or service is shown by")]
    route: Annotated[str, Field(pattern=r"^[\w.\-]+/[\w.:/@\-]+$", max_length=300)] | None = Field(
        None, description="any litellm route (`ollama/llama3.1:8b`, `openai/gpt-4.1`, `azure/<deployment>`, "
                          "`openai/<name>` for an OpenAI-compatible server); default `openrouter/<id>`")
    api_base: Annotated[str, Field(pattern=r"^https?://[^\s@]+$", max_length=2000)] | None = Field(
        None, description="the base URL of that route's server (a local Ollama or vLLM server)")
    api_key_env: EnvName | None = Field(
        None, description="the NAME of the environment variable holding this entry's key (default: "
                          "OPENROUTER_API_KEY for OpenRouter, litellm's own variable for another route); "
                          "not sent as such, not in the cache key")
    http: HttpTarget | None = Field(None, description="a deployed chatbot behind its own HTTP API instead of a model")
    system_prompt: Annotated[str, Field(min_length=1, max_length=100_000)] | None = Field(
        None, description="the deployment system prompt: sent before the case's own system instructions")
    system_message: bool | None = Field(
        None, description="false: the target takes no system message; the system text (deployment prompt and the "
                          "case's) is put at the start of the first user message instead")

    @model_validator(mode="after")
    def _one_kind(self):
        if self.http is not None and (self.route or self.api_base or self.api_key_env):
            raise ValueError("an `http` target is called directly: `route`, `api_base` and `api_key_env` belong to "
                             "model entries; put a secret in a header as `${ENV_NAME}`")
        return self

    name: str | None = None
    price: Price | None = Field(None, description="USD per million input and output tokens, for cost estimates "
                                                   "(default: litellm's price list); never sent, not in the cache key")
    concurrency: Annotated[int, Field(ge=1, le=1000)] | None = Field(
        None, description="most calls in flight to this model (default: `helmbench run --concurrency`); halved on "
                          "its own rate limits; not sent, not in the cache key")

    def settings(self) -> dict:
        """What is sent with each request (and keys the response cache): not the name, price or concurrency
        (how fast answers are fetched does not change them), nor the name of the key's environment variable.
        A field left out is absent (not null), so an entry that names no route, base URL, HTTP target or
        deployment prompt keys its answers exactly as before these existed."""
        return self.model_dump(exclude={"id", "name", "price", "concurrency", "api_key_env"}, exclude_none=True)


class ModelsFile(Strict):
    marking_model: ModelEntry | Annotated[list[ModelEntry], Field(min_length=1, max_length=15)] | None = Field(
        None, description="the judge of sqe scenarios; a list is an ensemble: majority vote, a tie is a FAIL")
    generator_model: ModelEntry | None = Field(None, description="writes `helmbench generate` variants and drafts")
    user_model: ModelEntry | Annotated[list[ModelEntry], Field(min_length=1, max_length=10)] | None = Field(
        None, description="plays the simulated user of conversations (conversation.md with `user: simulated`); "
                          "its id and settings are part of those cases' request hash; a list: several simulated "
                          "users, each playing every simulated conversation (pooled per case in the results)")
    models: list[ModelEntry] = []
    families: dict[Annotated[str, Field(pattern=r"^[\w.\-]+/[\w.:\-]*$", max_length=200)],
                   Annotated[str, Field(min_length=1, max_length=200)]] = Field(
        {}, description="model id prefix → family name, overriding the default table of model families "
                        "(a judge of a model's own family is a conflict of interest, lint HB609), "
                        "e.g. {openai/o4: openai/gpt}; not sent, not in the cache key")

    @field_validator("marking_model", "generator_model", "user_model", mode="before")
    @classmethod
    def _id_only(cls, v):
        if isinstance(v, list):
            return [{"id": e} if isinstance(e, str) else e for e in v]
        return {"id": v} if isinstance(v, str) else v

    @model_validator(mode="after")
    def _chatbots_are_models(self):
        """A deployed chatbot answers in free text: it can be a model under test, not the judge (whose answers
        are structured), the simulated user or the generator."""
        for name in ("marking_model", "user_model", "generator_model"):
            value = getattr(self, name)
            if any(e.http is not None for e in (value if isinstance(value, list) else [value]) if e is not None):
                raise ValueError(f"`{name}` cannot be an `http` chatbot: only a model under test (`models:`) can; "
                                 "give it a litellm `route` instead")
        return self

    @property
    def every_entry(self) -> list[ModelEntry]:
        """Every entry: the models, the judges, the simulated user and the generator (where keys come from)."""
        return [*self.models, *self.judges, *self.simulators, *(e for e in [self.generator_model] if e is not None)]

    @property
    def simulators(self) -> list[ModelEntry]:
        """The simulated user(s): `user_model` as one entry, several, or none."""
        if self.user_model is None:
            return []
        return list(self.user_model) if isinstance(self.user_model, list) else [self.user_model]

    @property
    def judges(self) -> list[ModelEntry]:
        """The marking model(s): one, several (an ensemble), or none."""
        if self.marking_model is None:
            return []
        return list(self.marking_model) if isinstance(self.marking_model, list) else [self.marking_model]


__all__ = [
    "Behaviour", "BenchmarkFile", "CategoryMatch", "ConditionMeta", "CriterionMeta", "EVALUATION_TYPES", "Floor",
    "Generation", "HttpTarget", "ListIncludes", "ModelEntry", "ModelSettings", "ModelsFile", "Noise", "PerturbationMeta", "Pillar",
    "Price", "Provenance", "ScenarioMeta", "ScoringFile", "Sqe", "TagThreshold", "UserContextMeta", "criterion_meta",
    "scenario_meta",
]
