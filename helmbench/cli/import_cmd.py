"""`helmbench import transcripts`: conversations that already happened, judged with the tree's criteria.

Thin: the paths are checked here, the import is `helmbench.api.import_transcripts` (run/imported.py), and
what it stored and what the judge did is rendered here. Every name printed came from the file (anyone's):
escapes shown, never obeyed.
"""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from helmbench.cli.app import app

import_app = typer.Typer(
    name="import", no_args_is_help=True, rich_markup_mode="markdown",
    help="Bring outputs made elsewhere into the results database.\n\nExample:\n\n"
         "helmbench import transcripts logs.jsonl --source vendor-pilot --dry-run",
)
app.add_typer(import_app, name="import")


@import_app.command("transcripts")
def transcripts(
    file: Path = typer.Argument(..., help="The JSONL file: one conversation per line (`helmbench schema --print transcripts.schema.json`)."),
    source: str = typer.Option(..., "--source", help="Where the conversations come from (letters, digits, . _ -): "
                                                     "they are stored as model `imported:SOURCE/LABEL`."),
    manifest: Optional[Path] = typer.Option(None, "--manifest", help="The compiled manifest whose criteria judge "
                                                                     "them (default build/manifest.jsonl)."),
    models_file: Optional[Path] = typer.Option(None, "--models-file", help="models.yml: its `marking_model` is "
                                                                           "the judge (default: the benchmark's)."),
    db: Optional[Path] = typer.Option(None, "--db", help="The results database (created if missing; default "
                                                         "build/results.db)."),
    dry_run: bool = typer.Option(False, "--dry-run", help="Check the file and count the judge calls and their "
                                                          "cost; store nothing, call nothing."),
    concurrency: int = typer.Option(8, "--concurrency", "-c", min=1, help="Most judge calls in flight."),
    max_cost: Optional[float] = typer.Option(None, "--max-cost", min=0.0,
                                             help="Stop judging once this much (USD) is billed."),
) -> None:
    """Judge conversations that already happened (another benchmark's published transcripts, consented and
    de-identified production logs) with the tree's criteria, without calling any model under test and
    without a simulated user: only the judge is asked.

    Each line names a case of the manifest (`case`) or, for a conversation that was not one of its cases,
    a scenario (`scenario`), a model label, and the messages. A file with any bad line (unknown key,
    unknown case, a role other than user/assistant/system, a control character) is refused whole, each
    problem named at its line; importing the same file again stores nothing twice. Imported runs are shown
    on the site marked as imported, and ranked on the leaderboard only with `publish --include-imported`.

    Examples:

        helmbench import transcripts published.jsonl --source paper-2025 --dry-run

        helmbench import transcripts published.jsonl --source paper-2025

        helmbench import transcripts logs.jsonl --source pilot --manifest build/manifest.jsonl --max-cost 2
    """
    from rich.text import Text

    from helmbench import api
    from helmbench.api import money
    from helmbench.cli import validate
    from helmbench.cli.console import SafeConsole
    from helmbench.terminal import escaped

    manifest, db = api.in_build(manifest=manifest, db=db)
    validate.input_file(file, "FILE", what="transcript file", hint="one conversation per line, as JSON")
    validate.input_file(manifest, "--manifest", what="manifest", hint="compile one first: helmbench compile")
    validate.db_to_read(db, optional=True) if dry_run else validate.db_to_write(db)
    report = api.import_transcripts(file, source, manifest, db=db, models_file=models_file, dry_run=dry_run,
                                    concurrency=concurrency, max_cost=max_cost)
    console = SafeConsole(highlight=False, stderr=False)

    def say(line: str) -> None:
        console.print(Text(escaped(line)), soft_wrap=True)

    labels = ", ".join(f"{label} ({n})" for label, n in sorted(report.by_model.items()))
    say(f"{report.file}: {report.conversations} conversation(s) from source {report.source}: {labels}")
    if report.dry_run:
        say(f"would store {report.new} new, {report.already} already stored (nothing is stored by a dry run)")
        cost = ("unknown (the judge has no known price: add `price:` to its entry in models.yml)"
                if report.judge_cost_low is None else
                f"{money(report.judge_cost_low)} – {money(report.judge_cost_high) if report.judge_cost_high is not None else 'no limit'}")
        say(f"judge {report.judge}: {report.judge_calls} call(s) to make, {report.judge_cached} judgement(s) "
            f"reused; estimated cost {cost}")
        say("calls to a model under test or a simulated user: none (imported conversations are judged as they are)")
        return
    say(f"stored {report.new} new, {report.already} already stored")
    say(f"judge {report.judge}: {report.judge_calls} call(s), {money(report.judge_cost)} billed, "
        f"{report.judge_cached} judgement(s) reused; no model under test and no simulated user was called")
    for row in report.runs:
        say(f"run {row['id']} {row['model']}: {row['n_pass']} pass, {row['n_fail']} fail, {row['n_error']} error "
            "(status imported: not ranked unless `publish --include-imported`)")
    if report.status != "imported":
        say(f"judging {report.status}: import the same file again to finish it (nothing is asked twice)")
        raise typer.Exit(3)
