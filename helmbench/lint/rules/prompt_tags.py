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
from helmbench.lint.registry import rule
from helmbench.spec.tree import KINDS, Benchmark

# SNAKE_CASE tags, or plain all-caps words of four letters or more.
TAG_WORD = re.compile(r"\b[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+\b|\b[A-Z]{4,}\b")
THRESHOLD = 0.8
# Distinct ALL-CAPS words x enum values compared per scenario (~10 us each): a hostile tree
# with thousands of each would otherwise take hours. The authors' scenarios need ~500.
MAX_PAIRS = 50_000


def near_miss(word: str, enum: set[str]) -> str | None:
    """The enum value `word` was probably meant to be, or None."""
    if word in enum:
        return None
    best, score = None, 0.0
    for value in enum:
        if word in (value + "S", value + "ES"):
            return None  # an English plural of a real tag ("TASKS"), not a new tag
        ratio = difflib.SequenceMatcher(None, word, value).ratio()
        if ratio > score:
            best, score = value, ratio
    return best if score >= THRESHOLD else None


def scan(text: str, first_line: int, enum: set[str], cache: dict | None = None):
    """(line, col, word, meant) for each near-miss tag in `text`, whose line 1 is `first_line`."""
    cache = {} if cache is None else cache
    for n, line in enumerate(text.split("\n")):
        for m in TAG_WORD.finditer(line):
            word = m.group(0)
            if word not in cache:
                cache[word] = near_miss(word, enum)
            meant = cache[word]
            if meant:
                yield first_line + n, m.start() + 1, m.group(0), meant


@rule("HB504", "HB152")
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
            for line, col, word, meant in scan(body, first, enum, cache):
                out.add("HB504", path, line,
                        f"prompt names tag `{word}`, which is not in the response schema's enum "
                        f"(closest: `{meant}`)", col=col,
                        hint=f"write `{meant}`, or add `{word}` to the enum in {sc.schema_source.path}")
