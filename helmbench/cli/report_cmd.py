"""`helmbench report`: the leaderboard and its breakdowns in the terminal, or as json/csv/markdown.

Reads only build/results.db (read-only) and, to pick which manifest's runs to show, the header
line of the manifest; it never imports the executor or litellm, so it is quick.
"""

from __future__ import annotations

from enum import Enum
from pathlib import Path
from typing import Optional

import typer

from helmbench.cli.app import app


class ReportFormat(str, Enum):
    text = "text"
    json = "json"
    csv = "csv"
    markdown = "markdown"


@app.command("report")
def report(
    db: Optional[Path] = typer.Option(None, "--db", help="The results database (`helmbench run`; default build/results.db)."),
    manifest: Optional[Path] = typer.Option(None, "--manifest",
                                  help="Show the runs of this manifest (default: the latest runs if it has none)."),
    format: ReportFormat = typer.Option(ReportFormat.text, "--format", "-f",
                                        help="text, json (its shape: report.schema.json, `helmbench schema`), csv or "
                                             "markdown."),
    run_id: Optional[int] = typer.Option(None, "--run-id", help="Report one run only (any status)."),
    bootstrap: int = typer.Option(1000, "--bootstrap", min=0, help="Random sign flips per paired test when more than 16 cases differ (0: no intervals, no tests)."),
    calibrated_only: bool = typer.Option(False, "--calibrated-only",
                                         help="Leave judged scenarios whose judge is not calibrated against clinicians "
                                              "out of every number, and say which."),
    judge_version: Optional[str] = typer.Option(
        None, "--judge-version", metavar="VERSION",
        help="Only results whose judgements all came from this judge model version (as the call ledger recorded "
             "it: see the judge drift note); results decided without a judge are kept."),
) -> None:
    """Show the leaderboard: per model the severity-weighted score and pass rate with 95 % intervals,
    coverage, errors, judge evaluations and billed cost, then per-pillar and per-behaviour breakdowns.

    One row per model: its latest finished run of the manifest. Cases and evaluations (the
    judge's criterion calls) are counted apart. json, csv and markdown carry the same numbers.

    Examples:

        helmbench report

        helmbench report --format markdown > docs/leaderboard.md

        helmbench report --format csv --db build/results.db > leaderboard.csv

        helmbench report --run-id 3 --format json

        helmbench report --calibrated-only

        helmbench report --judge-version openai/gpt-4.1-2025-04-14
    """
    from helmbench.api import in_build, report_data
    from helmbench.cli import report_render as render, validate

    if calibrated_only and run_id is not None:
        from helmbench.errors import UsageError

        raise UsageError("--calibrated-only applies to the leaderboard, not to one run (--run-id)",
                         hint="drop one of the two options")
    db, manifest = in_build(db=db, manifest=manifest)
    validate.db_to_read(db), validate.input_file(manifest, "--manifest", what="manifest", optional=True)

    data = report_data(db, manifest, run_id=run_id, bootstrap=bootstrap, calibrated_only=calibrated_only,
                       judge_version=judge_version)
    if format is ReportFormat.text:
        from helmbench.cli.console import SafeConsole

        out = SafeConsole(highlight=False)
        if not out.is_terminal:
            out.width = 200
        render.text(data, out)
        return
    rendered = {"json": render.as_json, "csv": render.as_csv, "markdown": render.as_markdown}[format.value](data)
    typer.echo(rendered, nl=not rendered.endswith("\n"))
