"""Plugins: evaluation types and lint rules added through the `helmbench` entry-point group.

A plugin is a module (or object) with pluggy hook implementations, named in its package's
`pyproject.toml`::

    [project.entry-points.helmbench]
    regex = "helmbench_regex"

and implementing `register_evaluators(register)` and/or `register_lint_rules(register)`
(decorated with `hookimpl`). A plugin imports everything from `helmbench.plugin_api`; the site's
plugin page is a complete example. `helmbench plugins` lists what is loaded.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from helmbench import lazy

if TYPE_CHECKING:
    from helmbench.plugins.hookspecs import hookimpl
    from helmbench.plugins.types import Evaluator, LintRule, PluginInfo

__all__ = ["Evaluator", "LintRule", "PluginInfo", "hookimpl"]

# Loaded on first use: reading which plugins are declared (`entrypoints`, on every site build) must
# not import pluggy and Pydantic.
__getattr__ = lazy.exports(__name__, {"hookimpl": "helmbench.plugins.hookspecs", "Evaluator": "helmbench.plugins.types",
                                      "LintRule": "helmbench.plugins.types", "PluginInfo": "helmbench.plugins.types"})
