"""Command-line entry point: a thin layer that calls one stage per command and renders errors."""

from __future__ import annotations

import sys

from helmbench.cli.app import app
from helmbench.cli import commands as _commands  # noqa: F401  (registers commands)
from helmbench.errors import HelmbenchError


def main() -> None:
    try:
        app()
    except HelmbenchError as exc:
        print(f"error: {exc.message}", file=sys.stderr)
        if exc.hint:
            print(f"  hint: {exc.hint}", file=sys.stderr)
        sys.exit(exc.exit_code)
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        sys.exit(130)


__all__ = ["app", "main"]
