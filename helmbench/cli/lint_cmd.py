"""`helmbench lint`: the pull-request gate for the benchmark tree."""

from __future__ import annotations

import sys
from enum import Enum
from pathlib import Path

import typer

from helmbench.cli.app import app


class Format(str, Enum):
    text = "text"
    github = "github"
    json = "json"


@app.command()
def lint(
    root: Path = typer.Argument(Path("benchmark"), help="The benchmark folder (holds scenarios/)."),
    format: Format = typer.Option(Format.text, "--format", "-f", help="text, github (annotations) or json."),
    strict: bool = typer.Option(False, "--strict", help="Warnings fail too."),
) -> None:
    """Check the benchmark tree and report every problem as `path:line:col CODE message`.

    Exit 0 when clean, 1 when there are findings (errors, or warnings with --strict), 2 on a usage error.

    Examples:

        helmbench lint benchmark

        helmbench lint --strict --format github benchmark
    """
    from helmbench.lint import lint_tree
    from helmbench.lint.render import RENDERERS

    if not root.is_dir():
        from helmbench.errors import UsageError

        raise UsageError(f"benchmark folder not found: {root}")
    _, diags = lint_tree(root)
    rendered = RENDERERS[format.value](diags)
    if rendered:
        print(rendered)
    errors = sum(d.is_error for d in diags)
    warnings = len(diags) - errors
    if format is Format.text:
        print(f"{errors} error(s), {warnings} warning(s)", file=sys.stderr)
    if errors or (strict and warnings):
        raise typer.Exit(1)


@app.command()
def rules() -> None:
    """List every diagnostic code with its meaning and an example."""
    from helmbench.lint.codes import CODES

    for c in CODES.values():
        print(f"{c.code} ({c.severity}) {c.summary}\n    {c.explanation}")
        for line in c.example.split("\n"):
            print(f"      | {line}")
        print()
