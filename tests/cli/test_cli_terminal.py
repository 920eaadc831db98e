"""Control characters from outside (model ids, model output, a provider's message) are shown, not obeyed,
on every path to the terminal: the CLI's console, and the run's log lines."""

from __future__ import annotations

import io
import logging
import re
from pathlib import Path

from rich.table import Table
from rich.text import Text

from helmbench.cli.console import SafeConsole
from helmbench.run.logs import Redact
from helmbench.terminal import escaped, pictured

CLEAR = "\x1b[2J\x1b]0;owned\x07"  # clear the screen, set the window title


def _console(**kw) -> tuple[SafeConsole, io.StringIO]:
    buf = io.StringIO()
    return SafeConsole(file=buf, width=80, **kw), buf


def test_content_is_pictured_and_richs_own_styling_survives():
    console, buf = _console(force_terminal=True, color_system="standard")
    console.print(Text("model " + CLEAR + " done", style="bold"))
    out = buf.getvalue()
    assert "\x1b[2J" not in out and "\x1b]0;" not in out and "\x07" not in out
    assert "model ␛[2J␛]0;owned done" in out  # (Rich drops a bell itself)
    assert "\x1b[1m" in out  # the bold Rich itself writes is still there


def test_a_table_cell_is_pictured_too():
    console, buf = _console()
    table = Table("model", "calls")
    table.add_row(Text("evil\x1b[31m/model"), "3")
    console.print(table)
    assert "\x1b" not in buf.getvalue() and "evil␛[31m/model" in buf.getvalue()


def test_the_two_forms():
    assert escaped("a\x1bb\nc\td\x9b") == "a\\x1bb\nc\td\\x9b"
    assert pictured("a\x1bb\nc\x7f\x9b") == "a␛b\nc␡\ufffd"
    assert len(pictured(CLEAR)) == len(CLEAR)
    # a bidirectional override would reorder what the reader sees; a line separator forge a CI command
    assert escaped("a\u202eb\u2028c") == "a\\u202eb\\u2028c" and pictured("a\u202eb") == "a\ufffdb"


def test_a_log_line_escapes_control_characters_and_redacts_the_key():
    record = logging.LogRecord("helmbench.run", logging.WARNING, __file__, 1,
                               "model %s said %s with sk-or-secret", ("evil\x1b[31m", CLEAR), None)
    assert Redact(["sk-or-secret"]).filter(record)
    message = record.getMessage()
    assert "\x1b" not in message and "\\x1b[31m" in message and "***" in message and "secret" not in message


def test_every_console_the_cli_makes_is_a_safe_one():
    cli = Path(__file__).resolve().parents[2] / "helmbench" / "cli"
    made = {p.name: re.findall(r"\b(\w*Console)\(", p.read_text(encoding="utf-8")) for p in cli.glob("*.py")}
    plain = {name: found for name, found in made.items() if any(c != "SafeConsole" for c in found)}
    assert not plain, plain
    assert sum(len(found) for found in made.values()) >= 5
