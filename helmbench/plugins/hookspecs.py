"""The hooks a HELMBench plugin may implement (pluggy project name and entry-point group: `helmbench`).

Each hook receives a `register` callable rather than returning a list, so one plugin can add
several things and the manager knows which plugin added each (`helmbench plugins` shows it,
and an error names the plugin at fault).
"""

from __future__ import annotations

import pluggy

from helmbench.plugins.entrypoints import GROUP as PROJECT  # pluggy's project name is the entry-point group

hookspec = pluggy.HookspecMarker(PROJECT)
hookimpl = pluggy.HookimplMarker(PROJECT)


@hookspec
def register_evaluators(register) -> None:
    """Call `register(Evaluator(...))` for each evaluation type the plugin adds."""


@hookspec
def register_lint_rules(register) -> None:
    """Call `register(fn, *codes)` for each lint rule: `fn(bench, out)` may emit the given codes,
    each a built-in code (`"HB501"`) or a `helmbench.lint.codes.Code` the plugin declares."""
