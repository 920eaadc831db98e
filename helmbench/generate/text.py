"""Model output made safe to put in a benchmark file.

Generated text is untrusted: a model (or whoever steers it) could write a line such as `# PT9`
that would start a component of its own in a consolidated file, open a code fence or an HTML
comment that swallows the components after it, or a `---` that reads as frontmatter. Every
line that Markdown could read as structure is escaped with a backslash (CommonMark shows the
character itself), control characters are dropped and lengths are bounded. The writer then
parses the result again and refuses anything whose structure still differs from what it meant
to write (writer.py), so this module is the first of two guards, not the only one.
"""

from __future__ import annotations

import re
import unicodedata

MAX_TEXT = 6_000  # characters of one generated section; the authors' longest section is ~1,500
MAX_TITLE = 160
_STRUCTURE = re.compile(r"^[#`~<>|=+*_-]")
_NUMBERED = re.compile(r"^(\d+)[.)]")


def _printable(ch: str) -> bool:
    return ch in "\n\t" or unicodedata.category(ch)[0] != "C"


def clean(text: object, limit: int) -> str:
    """One string from model output: text only, no control characters, at most `limit` characters."""
    s = text if isinstance(text, str) else ("" if text is None else str(text))
    s = s.replace("\r\n", "\n").replace("\r", "\n")
    return "".join(ch for ch in s if _printable(ch))[:limit]


def one_line(text: object, limit: int = MAX_TITLE) -> str:
    """A title: one line, spaces collapsed."""
    return " ".join(clean(text, limit * 4).split())[:limit]


def safe_markdown(text: object) -> str:
    """Generated prose as Markdown paragraphs that cannot add headings, fences, HTML blocks or
    frontmatter: a line starting with a structural character gets a backslash before it.
    Leading indentation is dropped (four spaces would make an indented code block)."""
    out = []
    for line in clean(text, MAX_TEXT).split("\n"):
        line = line.strip()
        if (m := _NUMBERED.match(line)) is not None:  # "1." would start an ordered list: "1\." is text
            line = m.group(1) + "\\" + line[m.end(1):]
        elif _STRUCTURE.match(line) and not line.startswith(("- ", "* ")):  # keep simple bullet lists
            line = "\\" + line
        out.append(line)
    while out and not out[0]:
        out.pop(0)
    while out and not out[-1]:
        out.pop()
    return "\n".join(out)
