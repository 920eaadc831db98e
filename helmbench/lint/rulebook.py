"""Lint rules are small functions registered with the codes they may emit.

A rule receives the loaded benchmark and a collector; it must not raise on odd input
(half-loaded scenarios have `meta=None`), so one bad file never hides the other findings.
Built-in rules mark themselves with `@rule(...)`; the built-in plugin
(helmbench/lint/rules/__init__.py) registers them through the same hook a third-party
plugin uses, and `rules()` asks the plugin registry, so both kinds run the same way.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from helmbench.diagnostics import Collector
from helmbench.lint.codes import CODES, Code
from helmbench.plugins import registry as plugin_registry
from helmbench.plugins.types import LintRule
from helmbench.spec.tree import Benchmark

RuleFn = Callable[[Benchmark, Collector], None]


@dataclass(frozen=True)
class Rule:
    name: str
    codes: tuple[str, ...]
    fn: RuleFn


BUILTIN_RULES: list[Rule] = []


def rule(*codes: str):
    def register(fn: RuleFn) -> RuleFn:
        BUILTIN_RULES.append(Rule(fn.__name__, codes, fn))
        return fn

    return register


def rules() -> list[LintRule]:
    """Every rule to run: the built-in ones, then the plugins' (in the order they registered)."""
    return plugin_registry.lint_rules()


def codes() -> dict[str, Code]:
    """Every diagnostic code, built-in and declared by plugins, sorted: what `helmbench rules` and the
    lint-rules page list."""
    return dict(sorted({**CODES, **plugin_registry.lint_codes()}.items()))


class RuleCollector(Collector):
    """A collector for one rule: a code a plugin declared gets its declared severity (the catalogue
    in lint/codes.py only knows the built-in ones), and a code nobody declared is the plugin's
    bug, reported by name rather than as a KeyError."""

    def __init__(self, r: LintRule, table: dict[str, Code]) -> None:
        super().__init__()
        self.rule, self.table = r, table

    def add(self, code, path, line, message, *, severity=None, **kw) -> None:
        if code not in self.table:
            raise plugin_registry.PluginError(
                f"lint rule {self.rule.name!r} of plugin {self.rule.plugin!r} emitted {code!r}, which is not declared",
                hint=_skip_hint(self.rule.plugin))
        super().add(code, path, line, message, severity=severity or self.table[code].severity, **kw)


def _skip_hint(plugin: str) -> str:
    return f"report it to the plugin's authors, or skip the plugin with {plugin_registry.DISABLE_ENV}={plugin}"


def run_rules(bench: Benchmark) -> Collector:
    out = Collector()
    table = codes()
    for r in rules():
        found = RuleCollector(r, table)
        try:
            r.fn(bench, found)
        except plugin_registry.PluginError:
            raise
        except Exception as exc:
            if plugin_registry.is_builtin(r.plugin):
                raise  # our own bug: keep the traceback for the guard's report
            raise plugin_registry.PluginError(
                f"lint rule {r.name!r} of {plugin_registry.plugin_label(r.plugin)} failed: "
                f"{type(exc).__name__}: {exc}"[:1000],
                hint=_skip_hint(r.plugin)) from None
        out.extend(found)
    return out
