"""Rule: a scenario without a title.

The leaderboard, the case pages and `helmbench list` name a scenario by its title; without
one readers see only `P1-B1-S1`. A title is optional (the authors' scenarios have none, and
their `MCSQE.md` files no frontmatter at all), so this is a note, which `--strict` lets pass.
"""

from __future__ import annotations

from helmbench.diagnostics import Collector
from helmbench.lint.rulebook import rule
from helmbench.lint.where import has_prompt
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
