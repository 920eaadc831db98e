"""Markdown structure of authored files, found from markdown-it-py tokens.

Headings are taken from the token stream, never from regular expressions, so that `##`
inside fenced code, lists, block quotes or HTML is content and not a section.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING

from helmbench.spec.naming import tag_name

if TYPE_CHECKING:
    from markdown_it import MarkdownIt


@lru_cache(maxsize=1)
def _md() -> MarkdownIt:
    # Only block structure is read (headings, fences, their lines and text), never inline
    # children; skipping inline parsing makes every parse ~40% faster with identical blocks.
    # Imported here: the manifest package imports this module, and what only hashes or reads a
    # manifest (the store, a warm site build) never parses Markdown.
    from markdown_it import MarkdownIt

    return MarkdownIt("commonmark").disable("inline")


def parse(text: str):
    return _md().parse(text)


def is_blank(line: str) -> bool:
    return not line.strip()


def _strip_blank_edges(lines: list[str]) -> list[str]:
    start, end = 0, len(lines)
    while start < end and is_blank(lines[start]):
        start += 1
    while end > start and is_blank(lines[end - 1]):
        end -= 1
    return lines[start:end]


# --- frontmatter -------------------------------------------------------------------------


@dataclass(frozen=True)
class Frontmatter:
    text: str | None  # YAML source, None when the part has no frontmatter
    line: int  # 1-based line of the first YAML line (for error offsets)
    body_start: int  # 0-based index of the first body line
    unclosed_at: int | None = None  # 1-based line of an opening `---` never closed
    # `key: value` lines then a `---`, with no `---` above them: (1-based line of the first key,
    # 1-based line of the `---`, the top-level keys). Only a shape: the loader decides from the keys
    # whether it is frontmatter whose opening line was lost, and the part's body is left as written.
    unopened: tuple[int, int, tuple[str, ...]] | None = None


_YAML_KEY = re.compile(r"^([a-z_][a-z0-9_]*)[ \t]*:(?:[ \t]|$)", re.ASCII)  # `severity: 5`, `evaluation:`
_YAML_MORE = re.compile(r"^(?:[ \t]+\S|-(?:[ \t]|$))")  # a nested line or a `- item` under a key


def yaml_block(lines: list[str], start: int, end: int) -> tuple[int, tuple[str, ...]] | None:
    """Lines from `start` that read as frontmatter without its opening `---`: the first non-blank one a
    lower-case `key:`, every other one a key, a nested line, a list item or blank, up to a `---` line.
    Returns (index of that `---`, the top-level keys), or None when the lines are anything else
    (prose, a heading, a `# comment`), so a sentence such as `Note: …` above a rule stays text."""
    keys: list[str] = []
    for j in range(start, end):
        line = lines[j]
        if line.rstrip() == "---":
            return (j, tuple(keys)) if keys else None
        if m := _YAML_KEY.match(line):
            keys.append(m.group(1))
        elif is_blank(line) or (keys and _YAML_MORE.match(line)):
            continue
        else:
            return None
    return None


def find_frontmatter(lines: list[str], start: int, end: int) -> Frontmatter:
    """Frontmatter is a `---` block that is the first non-blank thing of a part."""
    i = start
    while i < end and is_blank(lines[i]):
        i += 1
    if i < end and lines[i].rstrip() != "---" and (block := yaml_block(lines, i, end)):
        return Frontmatter(None, start + 1, start, unopened=(i + 1, block[0] + 1, block[1]))
    if i >= end or lines[i].rstrip() != "---":
        return Frontmatter(None, start + 1, start)
    for j in range(i + 1, end):
        if lines[j].rstrip() in ("---", "..."):
            return Frontmatter("\n".join(lines[i + 1 : j]) + "\n", i + 2, j + 1)
    return Frontmatter(None, i + 2, start, unclosed_at=i + 1)


# --- consolidated files -----------------------------------------------------------------


@dataclass(frozen=True)
class Part:
    """One `# C1` part of a consolidated file."""

    heading: str
    line: int  # 1-based line of the `#` heading
    frontmatter: Frontmatter
    body: str
    body_line: int  # 1-based line where the body starts


@dataclass(frozen=True)
class Split:
    preamble_line: int | None  # 1-based line of non-blank text before the first heading
    parts: list[Part]


_CODE_HEADING = re.compile(r"^[A-Z]{1,3}\d+[A-Za-z]*(?:\s*[:\u2014\u2013-].*)?$")


def split_consolidated(text: str) -> Split:
    """Split a consolidated file at its `#` headings; frontmatter follows each heading."""
    lines = text.split("\n")
    h1: list[tuple[int, str]] = []
    for i, tok in enumerate(tokens := parse(text)):
        if tok.type == "heading_open" and tok.tag == "h1" and tok.markup == "#" and tok.level == 0:
            h1.append((tok.map[0], tokens[i + 1].content.strip()))
    # A frontmatter block may hold `# note` YAML comments (h1 tokens to markdown-it), so it
    # can run past an h1; but it never runs past a component heading (`# C2` after a blank
    # line), or an unclosed `---` under `# C1` would swallow `# C2` and everything after it.
    code_lines = [l for l, title in h1 if _CODE_HEADING.match(title) and (l == 0 or is_blank(lines[l - 1]))]
    headings: list[tuple[int, str, Frontmatter]] = []
    skip_until = -1
    for line, title in h1:
        if line < skip_until:
            continue  # a YAML comment inside frontmatter, not a heading
        limit = next((l for l in code_lines if l > line), len(lines))
        fm = find_frontmatter(lines, line + 1, limit)
        if fm.text is not None:
            skip_until = fm.body_start
        elif fm.unclosed_at is not None:
            skip_until = limit  # the unclosed block's `# ...` lines are YAML comments too
        headings.append((line, title, fm))
    parts = []
    for n, (line, title, fm) in enumerate(headings):
        end = headings[n + 1][0] if n + 1 < len(headings) else len(lines)
        body_start = max(fm.body_start, line + 1)
        if fm.text is None and fm.unclosed_at is None:
            body_start = line + 1
        body = "\n".join(_strip_blank_edges(lines[body_start:end]))
        first = body_start
        while first < end and is_blank(lines[first]):
            first += 1
        parts.append(Part(title, line + 1, fm, body, first + 1))
    first_heading = headings[0][0] if headings else len(lines)
    pre = next((i + 1 for i in range(first_heading) if not is_blank(lines[i])), None)
    return Split(pre, parts)


def split_single(text: str) -> tuple[Frontmatter, str, int]:
    """A whole-file part (S1.md, CR1.md, conditions/C1.md): frontmatter at the top, then body."""
    lines = text.split("\n")
    fm = find_frontmatter(lines, 0, len(lines))
    start = fm.body_start
    while start < len(lines) and is_blank(lines[start]):
        start += 1
    body = "\n".join(_strip_blank_edges(lines[fm.body_start :]))
    return fm, body, start + 1


# --- `##` sections -------------------------------------------------------------------------


@dataclass(frozen=True)
class Section:
    heading: str | None  # None for text before the first `##`
    tag: str | None
    line: int  # 1-based line within the body
    text: str  # content, blank edge lines removed


def sections(body: str) -> list[Section]:
    """Split a body at its top-level ATX `##` headings."""
    return list(_structure(body)[0])


def unclosed_fence(body: str) -> int | None:
    """1-based line of a fenced code block that runs to the end without a closing fence."""
    return _structure(body)[1]


@dataclass(frozen=True)
class Heading:
    line: int  # 1-based line within the body
    markup: str  # `##`, `###`, …
    text: str


def subheadings(body: str) -> tuple[Heading, ...]:
    """Every top-level ATX heading of a body below `#` (`##` … `######`), not those in lists or quotes."""
    return _structure(body)[2]


def frontmatter_blocks(body: str) -> tuple[tuple[int, int, tuple[str, ...]], ...]:
    """Blocks of a body shaped like frontmatter (a `---` line, `key: value` lines, a `---` line) outside
    code and HTML: (1-based line of the opening `---`, of the closing one, the top-level keys)."""
    return _structure(body)[3]


@lru_cache(maxsize=1 << 16)
def _structure(body: str):
    """Sections, unclosed fence, subheadings and frontmatter-shaped blocks of a body from one parse.
    Cached because the linter and the compiler both ask for every body (three parses per body
    before); `compile_tree` clears the cache when done (`clear_cache`)."""
    lines = body.split("\n")
    tokens = parse(body)
    heads = [
        (tok.map[0], tok.map[1], tokens[i + 1].content.strip())
        for i, tok in enumerate(tokens)
        if tok.type == "heading_open" and tok.tag == "h2" and tok.markup == "##" and tok.level == 0
    ]
    out: list[Section] = []
    first = heads[0][0] if heads else len(lines)
    pre = _strip_blank_edges(lines[:first])
    if pre:
        out.append(Section(None, None, 1, "\n".join(pre)))
    for n, (start, end, title) in enumerate(heads):
        stop = heads[n + 1][0] if n + 1 < len(heads) else len(lines)
        out.append(Section(title, tag_name(title), start + 1, "\n".join(_strip_blank_edges(lines[end:stop]))))
    fence = None
    for tok in tokens:
        if tok.type == "fence" and tok.level == 0:
            start, end = tok.map
            closing = lines[end - 1].strip() if end - 1 > start else ""
            marker = tok.markup[0]
            if end >= len(lines) and not (closing.startswith(tok.markup) and set(closing) <= {marker}):
                fence = start + 1
                break
    subs = tuple(Heading(tok.map[0] + 1, tok.markup, tokens[i + 1].content.strip())
                 for i, tok in enumerate(tokens)
                 if tok.type == "heading_open" and tok.level == 0 and tok.markup.startswith("##"))
    return tuple(out), fence, subs, _frontmatter_blocks(lines, tokens)


def _frontmatter_blocks(lines: list[str], tokens) -> tuple[tuple[int, int, tuple[str, ...]], ...]:
    code = {n for tok in tokens if tok.type in ("fence", "code_block", "html_block") and tok.map
            for n in range(*tok.map)}
    found, i = [], 0
    while i < len(lines):
        if i not in code and lines[i].rstrip() == "---" and (block := yaml_block(lines, i + 1, len(lines))):
            close, keys = block
            if not code.intersection(range(i, close + 1)):
                found.append((i + 1, close + 1, keys))
                i = close + 1
                continue
        i += 1
    return tuple(found)


def clear_cache() -> None:
    _structure.cache_clear()
