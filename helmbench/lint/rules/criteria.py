"""Rules about judge criteria (`criteria.md`, `CR#.md`).

The judge can only answer one of `options`; a pass value or a partial-credit score for a
value outside them can never be given, so the criterion silently always fails (or never
earns its partial credit).
"""

from __future__ import annotations

from helmbench.diagnostics import Collector
from helmbench.lint.registry import rule
from helmbench.lint.where import key_line
from helmbench.spec.tree import Benchmark


@rule("HB506")
def values_within_options(bench: Benchmark, out: Collector) -> None:
    for sc in bench.scenarios:
        for cr in sc.criteria:
            if cr.meta is None:
                continue
            options = cr.meta.options
            shown = ", ".join(options)
            for value in cr.meta.pass_values:
                if value not in options:
                    out.add("HB506", cr.path, key_line(cr.frontmatter, "pass_values"),
                            f"pass value `{value}` is not one of the options ({shown})",
                            hint="add it to `options` or correct the spelling")
            for value in cr.meta.scores or {}:
                if value not in options:
                    out.add("HB506", cr.path, key_line(cr.frontmatter, "scores", value),
                            f"score given for `{value}`, which is not one of the options ({shown})",
                            hint="add it to `options` or correct the spelling")
