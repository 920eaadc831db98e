"""Rules about judge criteria (`criteria.md`, `CR#.md`).

The judge can only answer one of `options`; a pass value or a partial-credit score for a
value outside them can never be given, so the criterion silently always fails (or never
earns its partial credit).
"""

from __future__ import annotations

import re

from helmbench.diagnostics import Collector
from helmbench.lint.rulebook import rule
from helmbench.lint.where import item_span, key_span, value_span
from helmbench.plugins import registry as plugins
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


@rule("HB510")
def deterministic_criteria(bench: Benchmark, out: Collector) -> None:
    """A criterion with an `evaluation:` is checked, not judged: its evaluator must decide on a reply's text."""
    for sc in bench.scenarios:
        for cr in sc.criteria:
            ev = getattr(cr.meta, "evaluation", None) if cr.meta is not None else None
            if ev is None:
                continue
            found = plugins.evaluators().get(ev.type)
            if found is None or found.deferred or not found.text:
                why = "is judged, not checked" if found is not None and found.deferred else \
                    "reads only a structured field, not a reply's text"
                out.add("HB510", cr.path, value_span(cr.frontmatter, "evaluation", "type"),
                        f"criterion {cr.code}: evaluation type `{ev.type}` {why}, so it cannot be a criterion's check",
                        hint="use a type that reads text (such as crisis_resources), or remove `evaluation:` to "
                             "have the judge decide the criterion")


#: A level-one heading naming a criterion code (`# CR1`, `# CR2 — title`): the sectioned form of
#: conditions.md, which a criteria file does not have. A `## … CR1 …` heading inside a criterion's text
#: (the authors' own CR1.md has one) is prose, not a section.
_CRITERION_SECTION = re.compile(r"^#[ \t]+(CR\d+)\b", re.M)


@rule("HB511")
def one_criterion_per_file(bench: Benchmark, out: Collector) -> None:
    """`criteria.md` written as `# CR1 … # CR5` sections compiled silently as ONE PASS/FAIL criterion whose
    frontmatter went to the judge as text (and lost its PARTIAL option). The documented form is one file per
    criterion; this names it at the first section heading."""
    for sc in bench.scenarios:
        for cr in sc.criteria:
            text = cr.source.text
            found = [m for m in _CRITERION_SECTION.finditer(text) if not _in_fence(text, m.start())]
            if not found:
                continue
            first = found[0]
            line = text.count("\n", 0, first.start()) + 1
            codes = ", ".join(m.group(1) for m in found)
            name = cr.path.rsplit("/", 1)[-1]
            out.add("HB511", cr.path, line,
                    f"`{name}` holds criterion sections ({codes}); a criteria file is one criterion, so this "
                    "would be judged as one PASS/FAIL criterion with the frontmatter sent to the judge as text",
                    hint="write one file per criterion beside the scenario file: "
                         + ", ".join(f"{m.group(1)}.md" for m in found)
                         + " (each with its frontmatter at the top, without the `# CR…` heading)")


def _in_fence(text: str, pos: int) -> bool:
    """Whether `pos` lies inside a fenced code block (an example of the wrong form inside a criterion's text)."""
    return sum(1 for line in text[:pos].split("\n") if line.lstrip().startswith(("```", "~~~"))) % 2 == 1
