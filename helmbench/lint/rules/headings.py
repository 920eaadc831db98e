"""Rules about `##` headings, which become the XML tags a model sees.

A misspelt `## Yuor job` or one perturbation written with `## User input` while its siblings
say `## User's input` composes without complaint, but the cases of one scenario then wrap the
same part in different tags (<user_input> vs <users_input>), so models are compared on
different prompts. Headings an author uses consistently are their choice and never reported;
only a heading that is a near miss of a known heading (HB314), or of the heading its siblings
use (HB315), is: one finding per heading, the sibling rule first.
"""

from __future__ import annotations

import difflib
from collections import Counter

from helmbench.diagnostics import Collector
from helmbench.lint.rulebook import rule
from helmbench.lint.where import body_usable
from helmbench.spec import markdown as md
from helmbench.spec.naming import tag_name
from helmbench.spec.tree import KINDS, Benchmark

# The headings of the authors' guide, as written by the benchmark's authors.
KNOWN = ("Your job", "System instructions", "User memory", "User profile", "User's input")
KNOWN_TAGS = {tag_name(h): h for h in KNOWN}
CLOSE = 0.8  # difflib ratio between tag names: `yuor_job`/`your_job`, `user_input`/`users_input`
NOUN = {"condition": "conditions", "user_context": "user contexts", "perturbation": "perturbations"}


def _ratio(a: str, b: str) -> float:
    return difflib.SequenceMatcher(None, a, b).ratio()


def _headings(body: str, first_line: int):
    """(span, heading, tag) of each `##` heading of a body whose line 1 is `first_line`."""
    for s in md.sections(body):
        if s.heading is not None and s.tag:
            line = first_line + s.line - 1
            yield (line, 1, line, len(f"## {s.heading}") + 1), s.heading, s.tag


def _misspelt(tag: str) -> str | None:
    if tag in KNOWN_TAGS:
        return None
    best = max(KNOWN_TAGS, key=lambda k: _ratio(tag, k))
    return KNOWN_TAGS[best] if _ratio(tag, best) >= CLOSE else None


@rule("HB314", "HB315")
def heading_names(bench: Benchmark, out: Collector) -> None:
    texts = []  # (scenario, kind or None, component or None, headings)
    for sc in bench.scenarios:
        if body_usable(sc):
            texts.append((sc, None, None, list(_headings(sc.body, sc.body_line))))
        for kind in KINDS:
            for c in sc.components[kind]:
                if body_usable(c) and c.body.strip():
                    texts.append((sc, kind, c, list(_headings(c.body, c.body_line))))
    # a heading written twice or more anywhere in the tree is the author's choice, not a slip
    everywhere = Counter(tag for *_, found in texts for tag in {t for _, _, t in found})
    for sc, kind, c, found in texts:
        path = c.path if c else sc.source.path
        siblings = [f for s2, k2, c2, f in texts if s2 is sc and k2 == kind and c2 is not c] if c else []
        users = Counter(t for f in siblings for t in {t for _, _, t in f})
        written = {t: h for f in siblings for _, h, t in f}
        own = {t for _, _, t in found}
        for span, heading, tag in found:
            usual = [t for t, n in users.items() if t not in own and _ratio(tag, t) >= CLOSE
                     and n >= 2 and n * 2 > len(siblings) and tag not in users]
            if usual:
                other = max(usual, key=lambda t: users[t])
                out.add("HB315", path, span,
                        f"{c.code} uses `## {heading}` where the other {NOUN[kind]} of scenario {sc.key} "
                        f"use `## {written[other]}`: its cases get <{tag}> instead of <{other}>",
                        hint=f"did you mean `## {written[other]}`?")
            elif everywhere[tag] == 1 and (meant := _misspelt(tag)):
                _report_misspelt(out, path, span, heading, meant)


def _report_misspelt(out: Collector, path: str, span, heading: str, meant: str) -> None:
    out.add("HB314", path, span,
            f"heading `## {heading}` is not a known section heading; it becomes the tag <{tag_name(heading)}>",
            hint=f"did you mean `## {meant}`?")
