"""What a plugin registers: an evaluator (one object per evaluation type) and lint rules.

These are plain data so that every stage can ask the registry about them without importing
another stage: the loader asks for `model`, the compiler for `case`, lint for `field`,
`values` and `check`, the executor for `evaluate`, the site for `partial`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Literal

from pydantic import BaseModel


@dataclass(frozen=True)
class Evaluator:
    """Everything HELMBench knows about one evaluation type.

    - `model`: the Pydantic model of the scenario's `evaluation:` block; its `type` field must be
      `Literal["<type>"]`, and it should forbid unknown keys (a typo changes what is measured).
    - `case(evaluation, scenario) -> dict`: the manifest case's `evaluation` (JSON values only);
      it must contain `"type"`. Whatever the run stage needs goes here: the manifest is all it reads.
    - `evaluate(evaluation, parsed_output) -> Outcome`: the verdict on a well-formed answer
      (`helmbench.run.evaluate.passed` / `fail`). None defers the case to the judge, which reads the
      criteria of the built-in `sqe` only, so the registry refuses None from a third-party plugin.
      Its return value is checked (`run.evaluate.registry.checked_evaluate`); a bad one, or
      anything raised here (SystemExit included), is that case's ERROR naming the plugin, not a
      crashed run.
    - `field`: the shape of the structured-output field the evaluation reads (`"one"` value or a
      `"list"`), so the shared lint checks (HB501-HB503, HB507) apply; None when it reads none.
    - `values(evaluation, scenario) -> (key, values)`: the values the field's enum must allow (HB503).
    - `check(bench, scenario, out)`: checks of its own, emitting codes from `codes` or built-in ones.
    - `partial`: Jinja source shown on case and scenario pages, rendered with `ev` (the case's
      evaluation dict) and autoescaped.
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
    evaluators: list[str] = field(default_factory=list)
    rules: list[str] = field(default_factory=list)
    codes: list[str] = field(default_factory=list)

    def to_dict(self) -> dict:
        return {"name": self.name, "source": self.source, "version": self.version, "module": self.module,
                "evaluators": self.evaluators, "rules": self.rules, "codes": self.codes}
