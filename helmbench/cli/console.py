"""The CLI's Rich console: everything it prints has its control characters shown, not obeyed.

Why here and not at each call: a command prints model ids, case ids, titles and model output in
tables, rules, log lines and transcripts, and `rich.text.Text` keeps most control characters
(ESC among them). The console replaces them in every piece of content it writes (a segment that
is not a control segment) with a visible picture (`␛`), after layout: Rich measured the character
as zero-width, so a table row holding one is a column wider, a small price beside a terminal that
obeys it. Rich's own styling and cursor movement (the live progress display) are styles or control
segments and are left alone.
"""

from __future__ import annotations

from collections.abc import Iterable

from rich.console import Console
from rich.segment import Segment

from helmbench.terminal import pictured


class SafeConsole(Console):
    # `_render_buffer` is where Rich turns laid-out segments into the text it writes (rich 15.0.0, pinned)
    def _render_buffer(self, buffer: Iterable[Segment]) -> str:
        return super()._render_buffer(
            segment if segment.control else Segment(pictured(segment.text), segment.style)
            for segment in buffer)
