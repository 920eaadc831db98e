"""Command-line entry point: a thin layer that calls one stage per command.

Failures are rendered in one place, `helmbench.cli.guard` (the app's command group), so
`main()`, `python -m helmbench` and an in-process `CliRunner` all print the same
`error:` / `hint:` lines with the same exit codes.
"""

from __future__ import annotations

from helmbench.cli.app import app
from helmbench.cli import commands as _commands  # noqa: F401  (registers commands)


def main() -> None:
    app()


__all__ = ["app", "main"]
