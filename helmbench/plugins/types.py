"""What a plugin registers: an evaluator (one object per evaluation type) and lint rules.

These are plain data so that every stage can ask the registry about them without importing
another stage: the loader asks for `model`, the compiler for `case`, lint for `field`,
`values` and `check`, the executor for `evaluate`, the site for `partial`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Literal, Mapping

from pydantic import BaseModel


@dataclass(frozen=True)
class ComponentContext:
    """One component of a case as an evaluator sees it: its code, title and frontmatter (plain data)."""

    code: str
    title: str | None
    frontmatter: Mapping[str, Any]


@dataclass(frozen=True)
class CaseContext:
    """What `case(evaluation, scenario, context)` knows about the one case it spells the evaluation of.

    - `root`: the benchmark folder (absolute), so a data file named in the tree is found from any
      working folder. Resolve names with `within(root, name)`-style care: never follow one out of it.
    - `condition`, `user_context`, `perturbation`: the case's components (`user_context` is None when
      the scenario has none), each with its frontmatter, e.g. `context.user_context.frontmatter["country"]`.
    - `case_id`: the case's id (`P2-B1-S1-C1-U1-PT1`), for messages.
    """

    root: Path
    case_id: str
    condition: ComponentContext
    user_context: ComponentContext | None
    perturbation: ComponentContext


@dataclass(frozen=True)
class Evaluator:
    """Everything HELMBench knows about one evaluation type.

    - `model`: the Pydantic model of the scenario's `evaluation:` block; its `type` field must be
      `Literal["<type>"]`, and it should forbid unknown keys (a typo changes what is measured).
    - `case(evaluation, scenario, context) -> dict`: the manifest case's `evaluation` (JSON values
      only); it must contain `"type"`. Whatever the run stage needs goes here: the manifest is all it
      reads. Written with three parameters it is called once per case with a `CaseContext` (the
      benchmark root, the case's components and their frontmatter); with two, once per scenario.
      An exception here stops compile with a message naming the plugin and its package.
    - `evaluate(evaluation, parsed_output) -> Outcome`: the verdict on a well-formed answer
      (`helmbench.plugin_api.passed` / `fail`). None defers the case to the judge, which reads the
      criteria of the built-in `sqe` only, so the registry refuses None from a third-party plugin.
      Its return value is checked (`run.evaluate.outcome.checked_evaluate`); a bad one, or
      anything raised here (SystemExit included), is that case's ERROR naming the plugin, not a
      crashed run. With `text=True` the evaluator also
      reads plain-text answers: `parsed_output` is then the reply's text (a `str`) when the scenario
      has no response schema, and the evaluator may be a deterministic criterion of a judged scenario.
    - `version`: part of every case's hash, so a new version re-evaluates stored answers (with no new
      model call) at the next compile and run. Default: the plugin's distribution version (None for
      HELMBench's own evaluators, which change with the manifest format).
    - `field`: the shape of the structured-output field the evaluation reads (`"one"` value or a
      `"list"`), so the shared lint checks (HB501-HB503, HB507) apply; None when it reads none.
    - `values(evaluation, scenario) -> (key, values)`: the values the field's enum must allow (HB503).
    - `check(bench, scenario, out)`: checks of its own, emitting codes from `codes` or built-in ones.
    - `partial`: Jinja source shown on case and scenario pages, rendered with `ev` (the case's
      evaluation dict) and autoescaped.
    - `catalog(bench, scenarios) -> dict`: data of the evaluator's own (JSON values) that the manifest
      keeps when a scenario uses the type, and `page` = (title, Jinja source) renders it as a page of
      the site (with `page_data`, autoescaped): e.g. the crisis-service registry. `schemas` lists the
      data files it reads as (stem, description, pydantic model): `helmbench schema` writes their
      JSON Schemas beside the frontmatter's.
    """

    type: str
    model: type[BaseModel]
    case: Callable[[Any, Any], dict]
    evaluate: Callable[[dict, Any], Any] | None = None
    field: Literal["one", "list"] | None = None
    values: Callable[[Any, Any], tuple[str, list]] | None = None
    check: Callable[[Any, Any, Any], None] | None = None
    codes: tuple = ()  # helmbench.lint.codes.Code: the codes `check` emits that are not built in
    partial: str = ""
    summary: str = ""
    version: str | None = None
    text: bool = False
    catalog: Callable[[Any, list], dict | None] | None = None
    page: tuple[str, str] | None = None
    schemas: tuple = ()  # (file stem, description, pydantic model) of data files it reads: `helmbench schema` writes them
    plugin: str | None = None  # set by the registry: the entry-point name that registered it
    per_case: bool = False  # set by the registry: `case` takes the case's context

    @property
    def deferred(self) -> bool:
        return self.evaluate is None


@dataclass(frozen=True)
class LintRule:
    name: str
    codes: tuple[str, ...]
    fn: Callable[[Any, Any], None]
    plugin: str


@dataclass
class PluginInfo:
    """One loaded plugin as `helmbench plugins` shows it."""

    name: str
    source: str  # "built-in", or the distribution's name
    version: str | None
    module: str
    distribution: str = "helmbench"  # the package to upgrade or uninstall
    evaluators: list[str] = field(default_factory=list)
    rules: list[str] = field(default_factory=list)
    codes: list[str] = field(default_factory=list)

    def to_dict(self) -> dict:
        return {"name": self.name, "source": self.source, "version": self.version, "module": self.module,
                "evaluators": self.evaluators, "rules": self.rules, "codes": self.codes}
