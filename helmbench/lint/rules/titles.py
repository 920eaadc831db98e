"""Rules on titles: a scenario without one; a title holding an invisible character.

The leaderboard, the case pages and `helmbench list` name a scenario by its title; without
one readers see only `P1-B1-S1`. A title is optional (the authors' scenarios have none, and
their `MCSQE.md` files no frontmatter at all), so this is a note, which `--strict` lets pass.
"""

from __future__ import annotations

import re

from helmbench.diagnostics import Collector
from helmbench.lint.rulebook import rule
from helmbench.lint.where import benchmark_data, has_prompt, value_span
from helmbench.spec.tree import Benchmark


@rule("HB318")
def scenario_titles(bench: Benchmark, out: Collector) -> None:
    for sc in bench.scenarios:
        if not has_prompt(sc) or (sc.meta.title or "").strip():
            continue
        fm = sc.frontmatter
        line = fm.line - 1 if fm is not None else 1  # the opening `---`, where `title:` goes
        hint = ("add `title: <a few words>` to the frontmatter" if fm is not None else
                "to give it one, start the file with frontmatter: `---`, `title: <a few words>`, `---`")
        out.add("HB318", sc.source.path, line, f"scenario {sc.key} has no title; the site shows only its code",
                hint=hint)


#: Characters a title should not hold: C0 and C1 controls (a YAML double-quoted "\e" or "\x07" makes them) and the
#: bidirectional embeddings, overrides and isolates. A title reaches the public site's headings, navigation and
#: <title>, a terminal and a spreadsheet; a control shows as nothing or garbage there, and an override (U+202E)
#: makes the text after it read backwards, so a title can look like another. In a user's message the same
#: characters may be the test itself (adversarial text), so only titles and names are checked.
_INVISIBLE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def _invisible(text) -> str | None:
    """`U+XXXX` of the first character of `text` that _INVISIBLE matches, else None."""
    found = _INVISIBLE.search(text) if isinstance(text, str) else None
    return f"U+{ord(found.group(0)):04X}" if found else None


@rule("HB322")
def invisible_characters_in_titles(bench: Benchmark, out: Collector) -> None:
    def check(path: str, data, keys: tuple, what: str, value) -> None:
        if (char := _invisible(value)) is not None:
            out.add("HB322", path, value_span(data, *keys), f"{what} holds the invisible character {char}",
                    hint="remove it: on the site and in a terminal it shows as nothing, as garbage, or reverses "
                         "the text after it")

    data = benchmark_data(bench)
    if data is not None and bench.benchmark_source is not None:
        for key in ("name", "description"):
            check(bench.benchmark_source.path, data, (key,), f"the benchmark's {key}", data.get(key))
    for sc in bench.scenarios:
        if sc.frontmatter is not None:
            check(sc.source.path, sc.frontmatter, ("title",), f"the title of scenario {sc.key}",
                  sc.frontmatter.get("title"))
        for parts in sc.components.values():
            for c in parts:
                if c.frontmatter is not None:
                    check(c.path, c.frontmatter, ("title",), f"the title of {c.code}", c.frontmatter.get("title"))
        for cr in sc.criteria:
            if cr.frontmatter is not None:
                check(cr.path, cr.frontmatter, ("title",), f"the title of {cr.code}", cr.frontmatter.get("title"))
        conv = sc.conversation
        if conv is not None and getattr(conv, "frontmatter", None) is not None:
            check(conv.path, conv.frontmatter, ("title",), "the conversation's title", conv.frontmatter.get("title"))
            for i, cp in enumerate(conv.frontmatter.get("checkpoints") or []):
                if isinstance(cp, dict):
                    check(conv.path, conv.frontmatter, ("checkpoints", i, "title"), f"the title of checkpoint {i + 1}",
                          cp.get("title"))
