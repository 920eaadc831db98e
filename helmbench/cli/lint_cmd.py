"""`helmbench lint` and `helmbench rules`: the pull-request gate for the benchmark tree."""

from __future__ import annotations

import os
import sys
from enum import Enum
from pathlib import Path
from typing import Optional

import typer

from helmbench.cli.app import app


class Format(str, Enum):
    text = "text"
    github = "github"
    json = "json"


def _prefix(root: Path, outside: str = "absolute") -> str:
    """The root as seen from the working directory: for a terminal `../bench/` is just as clickable
    (`outside="relative"`); elsewhere a root outside the working directory is given absolute."""
    rel = os.path.relpath(root.resolve(), Path.cwd().resolve())
    if rel.startswith("..") and outside == "absolute":
        rel = root.resolve().as_posix()
    rel = Path(rel).as_posix()
    return "" if rel == "." else rel.rstrip("/") + "/"


def repository_prefix(root: Path) -> str:
    """The root as a path from its repository's top folder, which GitHub annotations need whatever folder the
    step runs in (`working-directory: sub`, or lint run from inside the tree): the workflow's checkout
    (GITHUB_WORKSPACE) when the root is inside it, else the nearest folder above the root holding `.git`;
    without either, as `_prefix` gives it."""
    resolved = root.resolve()
    workspace = os.environ.get("GITHUB_WORKSPACE")
    candidates = [Path(workspace).resolve()] if workspace else []
    candidates += [d for d in (resolved, *resolved.parents) if (d / ".git").exists()][:1]
    for top in candidates:
        if resolved == top or top in resolved.parents:
            rel = resolved.relative_to(top).as_posix()
            return "" if rel == "." else rel + "/"
    return _prefix(root)


@app.command()
def lint(
    root: Optional[Path] = typer.Argument(None, help="The benchmark folder (holds scenarios/; default: found from the current folder up)."),
    format: Format = typer.Option(Format.text, "--format", "-f",
                                  help="text, github (annotations) or json (its shape: lint.schema.json, `helmbench schema`)."),
    strict: bool = typer.Option(False, "--strict", help="Warnings fail too (notes never do)."),
    as_of: Optional[str] = typer.Option(None, "--as-of", metavar="YYYY-MM-DD",
                                        help="The day findings that age (a crisis-service entry checked too long "
                                             "ago) are judged by; default today."),
) -> None:
    """Check the benchmark tree and report every problem as `path:line:col: CODE message`.

    Text paths are relative to the current folder (they open with a click); github paths are
    repository paths (from the top of the checkout, whichever folder lint runs in); json paths are relative to the benchmark root, with `root` giving the
    root as seen from the current folder.

    Exit 0 when clean, 1 when there are findings (errors, or warnings with --strict), 2 on a
    usage error. `helmbench rules` explains every code.

    Examples:

        helmbench lint

        helmbench lint benchmark

        helmbench lint --strict --format github benchmark
    """
    from helmbench import api
    from helmbench.cli import validate

    root = api.benchmark_root(root)
    validate.bench_root(root)
    day = validate.iso_date(as_of, "--as-of") if as_of is not None else None

    from helmbench.cli.lint_render import RENDERERS, notes, summary
    from helmbench.terminal import printable

    diags = api.lint(root, as_of=day)
    rendered = RENDERERS[format.value](diags, repository_prefix(root) if format is Format.github else _prefix(root, "relative"))
    if rendered:
        print(rendered)
    errors, warnings = summary(diags)
    if format is Format.text:
        verdict = "failed" if errors or (strict and warnings) else "ok"
        noted = f", {n} note(s)" if (n := notes(diags)) else ""
        print(f"{printable(str(root))}: {errors} error(s), {warnings} warning(s){noted}: {verdict}", file=sys.stderr)
        if awaiting := sum(d.code == "HB720" for d in diags):
            print(f"{awaiting} generated item(s) await review (HB720): compile leaves them out", file=sys.stderr)
    if errors or (strict and warnings):
        raise typer.Exit(1)


@app.command()
def rules(
    code: str = typer.Argument(None, help="Show only this code (e.g. HB504)."),
) -> None:
    """List every diagnostic code with its meaning and an example.

    Examples:

        helmbench rules

        helmbench rules HB504
    """
    from helmbench.api import rules as api_rules
    from helmbench.errors import UsageError

    CODES = api_rules()  # built-in and plugins' codes
    selected = list(CODES.values())
    if code:
        if code.upper() not in CODES:
            raise UsageError(f"unknown code {code}", hint="run `helmbench rules` for the list")
        selected = [CODES[code.upper()]]
    for c in selected:
        print(f"{c.code} ({c.severity}) {c.summary}\n    {c.explanation}\n    example:")
        for line in c.example.split("\n"):
            print(f"      | {line}")
        print()
