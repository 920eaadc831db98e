"""`helmbench export`: the leaderboard in a shared format (Every Eval Ever), for submission elsewhere.

Reads only results.db (read-only), like `report`; writes below the folder it is given.
"""

from __future__ import annotations

from enum import Enum
from pathlib import Path
from typing import Optional

import typer

from helmbench.cli.app import app


class ExportFormat(str, Enum):
    eee = "eee"


@app.command("export")
def export(
    out: Path = typer.Argument(..., help="The folder to write into (its data/ folder is the EEE datastore's)."),
    format: ExportFormat = typer.Option(..., "--format", "-f", help="eee: Every Eval Ever (schema 0.3.0)."),
    db: Optional[Path] = typer.Option(None, "--db", help="The results database (default build/results.db)."),
    manifest: Optional[Path] = typer.Option(None, "--manifest",
                                            help="Export the runs of this manifest (default: as `report` picks)."),
) -> None:
    """Write each model's ranked run as Every Eval Ever records: the aggregate record (scores with their
    intervals, the judge and the criteria as the evaluation method, cost and tokens) and its
    instance-level samples (single-turn answers and multi-turn conversations), laid out as the
    datastore expects: OUT/data/<benchmark>/<developer>/<model>/<uuid>.json and <uuid>_samples.jsonl.

    The benchmark is named by benchmark.yml, else the README's title, else its folder. Exporting the
    same runs again rewrites the same files. Check them with the format's own validator:
    `python -m every_eval_ever validate 'OUT/data/*/*/*/*'`.

    Examples:

        helmbench export --format eee build/eee

        helmbench export --format eee --db shard-merged.db out/
    """
    from helmbench.cli.console import SafeConsole
    from rich.text import Text

    from helmbench.api import export as export_api, in_build
    from helmbench.cli import validate

    db, manifest = in_build(db=db, manifest=manifest)
    validate.db_to_read(db), validate.input_file(manifest, "--manifest", what="manifest", optional=True)
    validate.output_dir(out, "OUT")
    result = export_api(db, out, manifest=manifest, format=format.value)
    console = SafeConsole(highlight=False)
    for path in result.files:
        console.print(Text(str(path)))
    console.print(Text(f"{result.records} record(s), {result.samples} sample(s) written below {result.out_dir}"))
