"""Every rule module is imported here so that its rules register; this package is also the built-in
plugin that hands them to the plugin registry (an entry point of HELMBench's own package, pyproject.toml)."""

from helmbench.lint.rulebook import BUILTIN_RULES
from helmbench.plugins.hookspecs import hookimpl

from helmbench.lint.rules import benchmark  # noqa: F401
from helmbench.lint.rules import components  # noqa: F401
from helmbench.lint.rules import conversation  # noqa: F401
from helmbench.lint.rules import criteria  # noqa: F401
from helmbench.lint.rules import evaluation  # noqa: F401
from helmbench.lint.rules import models  # noqa: F401
from helmbench.lint.rules import prompt_tags  # noqa: F401
from helmbench.lint.rules import schema  # noqa: F401
from helmbench.lint.rules import schema_safety  # noqa: F401
from helmbench.lint.rules import headings  # noqa: F401
from helmbench.lint.rules import titles  # noqa: F401
from helmbench.lint.rules import review  # noqa: F401
from helmbench.lint.rules import rubric  # noqa: F401


@hookimpl
def register_lint_rules(register) -> None:
    for r in BUILTIN_RULES:
        register(r.fn, *r.codes)
