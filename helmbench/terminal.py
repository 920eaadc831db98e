"""What may reach a terminal, a log or a CI annotation: text whose unsafe characters are shown, not obeyed.

Why: model ids, case ids, paths, authored titles and model output all cross a boundary into
HELMBench. A control character in any of them would drive the terminal (ESC [ 2 J, a fake prompt, a
title change) or a log viewer that renders ANSI; a line or paragraph separator would start a new line
(forging a `::error` or `::add-mask::` workflow command in CI); a bidirectional override would reorder
what the reader sees. One rule (`UNSAFE`), three forms:
- `printable(s, keep)`: each unsafe character not in `keep` as a Python-style escape (`\\x1b`,
  `\\u202e`), exact and greppable (lint output, messages);
- `escaped(s)`: the same, keeping newlines and tabs (error messages, log lines);
- `pictured(s)`: each as one visible character, one for one (`␛`; `\\ufffd` for the others), for text
  Rich has already laid out (the CLI's console, `cli/console.py`).
"""

from __future__ import annotations

import re

# C0 and C1 controls, DEL, line/paragraph separators and bidirectional marks, embeddings and isolates
UNSAFE = re.compile("[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]")
LAYOUT = "\n\t"  # what `escaped` and `pictured` keep


def printable(s: str, keep: str = "") -> str:
    """`s` with every unsafe character not in `keep` shown as a Python-style escape (`\\n`,
    `\\x1b`, `\\u202e`)."""
    return UNSAFE.sub(lambda m: m.group() if m.group() in keep else m.group().encode("unicode_escape").decode("ascii"), s)


def clipped(text: str, limit: int = 120) -> str:
    """`text` cut to `limit` characters, the cut marked with how much was left out: a title of thousands of
    characters would otherwise fill a table's column for hundreds of lines (the JSON keeps it whole)."""
    return text if len(text) <= limit else f"{text[:limit - 1]}… (+{len(text) - limit + 1} characters)"


def escaped(text: str) -> str:
    """`text` with each unsafe character but newline and tab written as an escape."""
    return printable(text, keep=LAYOUT)


def _picture(char: str) -> str:
    code = ord(char)
    return chr(0x2400 + code) if code < 0x20 else "\u2421" if code == 0x7F else "\ufffd"


def pictured(text: str) -> str:
    """`text` with each unsafe character but newline and tab replaced by one visible character."""
    return UNSAFE.sub(lambda m: m.group() if m.group() in LAYOUT else _picture(m.group()), text)
