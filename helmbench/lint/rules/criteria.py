"""Rules about judge criteria (`criteria.md`, `CR#.md`).

The judge can only answer one of `options`; a pass value or a partial-credit score for a
value outside them can never be given, so the criterion silently always fails (or never
earns its partial credit).
"""

from __future__ import annotations

from helmbench.diagnostics import Collector
from helmbench.lint.registry import rule
from helmbench.lint.where import item_span, key_span
from helmbench.spec.tree import Benchmark
from helmbench.spec.validate import closest


def _fix(value: str, options: list[str]) -> str:
    meant = closest(value, options)
    return f"did you mean `{meant}`?" if meant else "add it to `options` or correct the spelling"


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
                    out.add("HB506", cr.path, item_span(cr.frontmatter, "pass_values", value=value),
                            f"pass value `{value}` is not one of the options ({shown})",
                            hint=_fix(value, options))
            for value in cr.meta.scores or {}:
                if value not in options:
                    out.add("HB506", cr.path, key_span(cr.frontmatter, "scores", value),
                            f"score given for `{value}`, which is not one of the options ({shown})",
                            hint=_fix(value, options))
