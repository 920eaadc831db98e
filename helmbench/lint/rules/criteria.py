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


#: A heading's text that names a criterion code (`CR1`, `CR2 — title`).
_CODE = re.compile(r"^(CR\d+)\b")
_YAML_KEY = re.compile(r"^[A-Za-z_][\w-]*[ \t]*:")


@rule("HB511")
def one_criterion_per_file(bench: Benchmark, out: Collector) -> None:
    """`criteria.md` written as `# CR1 … # CR5` sections compiled silently as ONE PASS/FAIL criterion whose
    frontmatter went to the judge as text (and lost its PARTIAL option). The documented form is one file per
    criterion; this names it at the first section. A section is a heading naming a criterion code directly
    followed by a frontmatter block, in the file's body (a `## … CR1 …` heading in a criterion's text, the
    authors' own CR1.md has one, or a YAML comment in the frontmatter is not)."""
    for sc in bench.scenarios:
        for cr in sc.criteria:
            found = _sections(cr.source.text.split("\n"), cr.body_line - 1)  # the body: after a frontmatter
            if not found:
                continue
            codes = ", ".join(code for _, code in found)
            name = cr.path.rsplit("/", 1)[-1]
            out.add("HB511", cr.path, found[0][0],
                    f"`{name}` holds criterion sections ({codes}); a criteria file is one criterion, so this "
                    "would be judged as one PASS/FAIL criterion with the frontmatter sent to the judge as text",
                    hint="write one file per criterion beside the scenario file: "
                         + ", ".join(f"{code}.md" for _, code in found)
                         + " (each with its frontmatter at the top, without the `# CR…` heading)")


def _sections(lines: list[str], start: int) -> list[tuple[int, str]]:
    """(1-based line, code) of each criterion section from line index `start`: a heading (any level, ATX or
    setext, from the Markdown token stream as spec/markdown.py reads headings, so fenced code holds none) naming
    a code, followed by a frontmatter block. A setext heading's `---` underline may itself open that block."""
    from helmbench.spec.markdown import parse

    tokens = parse("\n".join(lines[start:]))
    found = []
    for i, tok in enumerate(tokens):
        if tok.type != "heading_open" or tok.level != 0 or not (m := _CODE.match(tokens[i + 1].content.strip())):
            continue
        first, end = start + tok.map[0], start + tok.map[1]
        after = end - 1 if tok.markup == "-" else end  # `CR1` then `---`: the underline opens the frontmatter
        while after < len(lines) and not lines[after].strip():
            after += 1
        if after < len(lines) and lines[after].strip() == "---" and _frontmatter_at(lines, after + 1):
            found.append((first + 1, m.group(1)))
    return found


def _frontmatter_at(lines: list[str], k: int) -> bool:
    """Whether the lines from `k` hold a YAML key before a closing `---` (a frontmatter, not a thematic break)."""
    keys = False
    for line in lines[k:k + 200]:
        if line.strip() == "---":
            return keys
        keys = keys or bool(_YAML_KEY.match(line))
    return False
