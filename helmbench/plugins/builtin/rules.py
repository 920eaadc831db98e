"""The built-in lint rules, registered through the plugin hook like a third party's."""

from __future__ import annotations

from helmbench.plugins.hookspecs import hookimpl


@hookimpl
def register_lint_rules(register) -> None:
    from helmbench.lint.registry import BUILTIN_RULES
    from helmbench.lint import rules as _rules  # noqa: F401  (each module adds its rules to BUILTIN_RULES)

    for r in BUILTIN_RULES:
        register(r.fn, *r.codes)
