"""What may reach a terminal or a log: text with its control characters shown, not obeyed.

Why: model ids, case ids, paths, authored titles and model output all cross a boundary into
HELMBench, and an escape sequence in any of them (ESC [ 2 J, a fake prompt, a hyperlink, a title
change) would be obeyed by the terminal or a log viewer that renders ANSI. Two forms:
- `escaped`: each control character as `\\xNN` (error messages, log lines: exact and greppable);
- `pictured`: each as one Unicode control picture (`␛`), one character for one, for text Rich
  has already laid out (the CLI's console, `cli/console.py`).
Newlines and tabs are kept: they are layout, and every other character of C0, DEL and C1 is not.
"""

from __future__ import annotations

import re

CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def escaped(text: str) -> str:
    """`text` with each control character written as `\\xNN`."""
    return CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}", text)


def _picture(char: str) -> str:
    code = ord(char)
    return chr(0x2400 + code) if code < 0x20 else "\u2421" if code == 0x7F else "\ufffd"


def pictured(text: str) -> str:
    """`text` with each control character replaced by one visible character (its length unchanged)."""
    return CONTROL.sub(lambda m: _picture(m.group()), text)
