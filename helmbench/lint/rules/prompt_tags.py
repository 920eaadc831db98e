"""Rule: the prompt asks for a tag the response schema cannot hold.

Real content asked for `META_ENQUIRY` while the schema's enum says `META_INQUIRY`: a model
that obeys the prompt is forced to break the schema or ignore the instruction. ALL-CAPS
words in every text composed into the scenario's prompts are compared with the schema's
enum values; a near miss (difflib ratio >= 0.8) is reported at its exact line and column.
"""

from __future__ import annotations

import difflib
import re

from helmbench.diagnostics import Collector
from helmbench.lint import schemas
from helmbench.lint.rulebook import rule
from helmbench.spec.tree import KINDS, Benchmark

# SNAKE_CASE tags, or plain all-caps words of four letters or more.
TAG_WORD = re.compile(r"\b[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+\b|\b[A-Z]{4,}\b")
# A word in the place of a label: the bold head of an item in a list whose other heads are
# enum values (`1. **TASK:** …`); a lone `- **NOTE:** …` list is prose.
LABEL_PLACE = re.compile(r"^\s*(?:\d+[.)]|[-*+])\s+\*\*([A-Z][A-Z0-9_]{2,})\s*:?\s*\*\*")
THRESHOLD = 0.8
# Distinct ALL-CAPS words x enum values compared per scenario (~10 us each): a hostile tree
# with thousands of each would otherwise take hours. The authors' scenarios need ~500.
MAX_PAIRS = 50_000


def _plural_of(word: str, enum: set[str]) -> bool:
    return any(word in (value + "S", value + "ES") for value in enum)


def near_miss(word: str, enum: set[str]) -> str | None:
    """The enum value `word` was probably meant to be, or None."""
    if word in enum or _plural_of(word, enum):
        return None  # a real tag, or an English plural of one ("TASKS")
    best, score = None, 0.0
    for value in enum:
        ratio = difflib.SequenceMatcher(None, word, value).ratio()
        if ratio > score:
            best, score = value, ratio
    return best if score >= THRESHOLD else None


def scan(text: str, first_line: int, enum: set[str], cache: dict | None = None):
    """(line, col, word, meant, label) for each suspicious word of `text` (line 1 = `first_line`):
    a near miss of an enum value (`meant` set), or a label-like word that is no enum value
    (`label` True: it contains `_`, or heads an item of a list of labels). Ordinary capitals such as
    "UK", "ADHD" or "NOTE" are neither, so they are never reported. `cache` keeps each distinct
    word's near miss, so a long prompt costs one comparison per word, not per occurrence."""
    cache = {} if cache is None else cache

    def missed(word: str) -> str | None:
        if word not in cache:
            cache[word] = near_miss(word, enum)
        return cache[word]

    lines = text.split("\n")
    heads = [m.group(1) for line in lines if (m := LABEL_PLACE.match(line))]
    labelled = any(h in enum for h in heads)  # a list that defines the labels (`1. **TASK:** …`)
    for n, line in enumerate(lines):
        place = LABEL_PLACE.match(line) if labelled else None
        seen = set()
        for m in TAG_WORD.finditer(line):
            word = m.group(0)
            seen.add(m.start())
            meant = missed(word)
            label = not meant and word not in enum and not _plural_of(word, enum) and (
                "_" in word or bool(place and place.start(1) == m.start()))
            if meant or label:
                yield first_line + n, m.start() + 1, word, meant, label
        if place and place.start(1) not in seen and place.group(1) not in enum and not missed(place.group(1)):
            yield first_line + n, place.start(1) + 1, place.group(1), None, True


@rule("HB504", "HB509", "HB152")
def prompt_tags(bench: Benchmark, out: Collector) -> None:
    for sc in bench.scenarios:
        found = schemas.inner(sc.schema) if sc.schema is not None else None
        enum = schemas.all_enum_strings(found.schema) if found else set()
        if not enum:
            continue
        texts = [(sc.source.path, sc.body, sc.body_line)] if sc.source else []
        texts += [(c.path, c.body, c.body_line) for kind in KINDS for c in sc.components[kind]]
        words = {m.group(0) for _, body, _ in texts for m in TAG_WORD.finditer(body)} - enum
        if len(words) * len(enum) > MAX_PAIRS:
            out.add("HB152", sc.schema_source.path, 1,
                    f"{len(words):,} ALL-CAPS words in the prompts x {len(enum):,} enum values are too many to "
                    "check for misspelt tags", hint="a response schema needs a few enum values, not thousands")
            continue
        cache: dict = {}
        for path, body, first in texts:
            for line, col, word, meant, _ in scan(body, first, enum, cache):
                span = (line, col, line, col + len(word))
                if meant:
                    out.add("HB504", path, span,
                            f"prompt names tag `{word}`, which is not in the response schema's enum "
                            f"(closest: `{meant}`)",
                            hint=f"write `{meant}`, or add `{word}` to the enum in {sc.schema_source.path}")
                else:
                    nearest = difflib.get_close_matches(word, sorted(enum), n=3, cutoff=0.0)
                    out.add("HB509", path, span,
                            f"prompt names label `{word}`, which the response schema's enum does not have; "
                            f"closest values: {', '.join(f'`{v}`' for v in nearest)}",
                            hint=f"use one of the enum's values, or add `{word}` to the enum in "
                                 f"{sc.schema_source.path}")
