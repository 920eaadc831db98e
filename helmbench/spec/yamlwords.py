"""YAML syntax errors in an author's words.

PyYAML describes its own state ("while parsing a flow sequence … expected ',' or ']', but got
'<stream end>'"); an author needs to know which bracket, quote or indentation to fix. The
error is located at the start of the construct by the caller, so the words here only say
what is wrong with it and what YAML expected instead.
"""

from __future__ import annotations

import re

# (pattern over "context | problem", plain message); first match wins
_PLAIN: list[tuple[re.Pattern, str]] = [(re.compile(p, re.S), m) for p, m in [
    (r"flow sequence.*expected ',' or '\]'", "a list opened with `[` is never closed with `]`"),
    (r"flow mapping.*expected ',' or '\}'", "a mapping opened with `{` is never closed with `}`"),
    (r"quoted scalar.*end of stream", "a quoted value is never closed: add the closing quote"),
    (r"quoted scalar", "a quoted value is not closed properly: check its closing quote"),
    (r"simple key.*could not find expected ':'",
     "a line here is neither `key: value` nor a list item `- …`: a `:` is probably missing"),
    (r"mapping values are not allowed",
     "a `:` where a value was expected: put quotes around a value that contains `: `"),
    (r"block mapping.*expected <block end>",
     "the indentation does not line up: keys of one mapping must start in the same column"),
    (r"block collection.*expected <block end>",
     "the indentation does not line up: items of one list must start in the same column"),
    (r"found character '\\t'", "a tab character: YAML indents with spaces only"),
    (r"undefined alias", "`*name` refers to an anchor `&name` that is not defined above it"),
    (r"did not find expected key", "the indentation does not line up with the keys above it"),
    (r"did not find expected '-' indicator", "a list item does not start with `-` in the column of the items above it"),
    (r"could not find expected ':'", "a `:` is missing after a key"),
    (r"could not determine a constructor for the tag",
     "YAML tags such as `!!python/object` are not allowed: write plain values"),
]]
_START = re.compile(r"found character '(.+?)' that cannot start any token")


def syntax_message(context: str | None, problem: str) -> str:
    """`YAML syntax error: <what is wrong>` without the parser's internal vocabulary."""
    both = f"{context or ''} | {problem}"
    for pattern, plain in _PLAIN:
        if pattern.search(both):
            return f"YAML syntax error: {plain}"
    if m := _START.search(both):
        return f"YAML syntax error: a value cannot start with `{m.group(1)}`: put the value in quotes"
    words = problem.replace("<stream end>", "the end of the text").replace("<block end>", "the end of a block")
    words = re.sub(r"<[^>]*>", "a value", words)
    return f"YAML syntax error: {words}"
