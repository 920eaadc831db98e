"""Everything a HELMBench plugin imports, from one module: `from helmbench.plugin_api import ...`.

Why one module: a plugin is written from the published docs, against an installed (non-editable)
HELMBench, and should not have to find out where each part lives inside the stages. What is named
here is the plugin surface; what is not is internal and may move.

The hooks (decorate with `hookimpl`; name the module in your package's entry points, group
`helmbench`):

- `register_evaluators(register)`: `register(Evaluator(...))` for each evaluation type.
- `register_lint_rules(register)`: `register(fn, *codes)`; `fn(bench, out)` may emit those codes.

An evaluator (`Evaluator`): its frontmatter model, `case` (the manifest's evaluation of a case;
give it a third parameter to receive the `CaseContext`: the benchmark root and the case's
components' frontmatter), `evaluate(evaluation, parsed)` returning `passed(...)` / `fail(...)`,
and optionally `field`, `values`, `check`, `codes`, `partial`, `version`, `text`, `catalog`, `page`.

A lint rule's inputs: `bench` is the loaded tree (`Benchmark`: `bench.root`, the benchmark folder;
`bench.scenarios`, each a `Scenario` with `sc.key`, `sc.folder`, `sc.meta.evaluation` (the validated
evaluation block), `sc.frontmatter` (the raw frontmatter, with positions), `sc.criteria`,
`sc.user_contexts`, `sc.conditions`, `sc.perturbations`, each component with `.code`, `.meta`,
`.frontmatter`, `.path`, `.line`). `out.add(code, path, where, message, hint=...)` reports a finding:
`path` relative to `bench.root`, `where` a line or a span from `key_span` / `value_span` /
`evaluation_span`. `bench.as_of` is the date lint judges "stale" against (`helmbench lint --as-of`,
default today). `validate(model, data, path, out, what=...)` checks YAML data (from `load_yaml`,
which keeps positions) against a pydantic model and reports each wrong place at its line (HB201,
HB202, HB203). Declare each code of your own with `Code(code, severity, summary, explanation,
example)`: severity `error` (compile refuses), `warning` (`lint --strict` fails) or `note` (shown only).
"""

from __future__ import annotations

from pathlib import Path

from helmbench.codes import Code
from helmbench.diagnostics import Collector, Diagnostic
from helmbench.lint.schemas import bad_patterns
from helmbench.lint.where import evaluation_span, has_prompt, item_span, key_span, scenario_file, value_span
from helmbench.plugins.hookspecs import hookimpl
from helmbench.plugins.types import CaseContext, ComponentContext, Evaluator
from helmbench.run.evaluate.outcome import Outcome, fail, format_failure, passed
from helmbench.spec.tree import Benchmark, Component, Criterion, Scenario
from helmbench.spec.validate import validate
from helmbench.spec.yamlio import LineDict, LineList, YamlError, load_yaml


def in_tree(root: Path, name: str) -> Path | None:
    """The file `name` (relative, POSIX) inside the benchmark folder `root`, or None when it would lead
    out of it (an absolute path, `..`, a symlink out of the tree): a data file a benchmark names is
    untrusted input, and a path in it is never followed out of the tree."""
    if not name or name.startswith(("/", "\\")) or "\\" in name or any(p in ("..", "") for p in name.split("/")):
        return None
    root = Path(root).resolve()
    try:
        path = (root / name).resolve(strict=True)
    except (OSError, RuntimeError):
        return None
    return path if path.is_relative_to(root) and path.is_file() else None


__all__ = [
    "Benchmark", "CaseContext", "Code", "Collector", "Component", "ComponentContext", "Criterion", "Diagnostic",
    "Evaluator", "LineDict", "LineList", "Outcome", "Scenario", "YamlError", "bad_patterns", "evaluation_span",
    "fail", "format_failure", "has_prompt", "hookimpl", "in_tree", "item_span", "key_span", "load_yaml", "passed",
    "scenario_file", "validate", "value_span",
]
