"""Conversations that already happened, judged with the tree's criteria (`helmbench import transcripts`).

Why in the API: a script that pulls a team's de-identified logs gets the same checks, the same storage and
the same judge as the command line; the CLI only renders the `ImportReport` returned here.
"""

from __future__ import annotations

from pathlib import Path

from helmbench.run.config import DEFAULT_CONCURRENCY


def import_transcripts(file: str | Path, source: str, manifest, *, db: str | Path | None = None,
                       models_file: str | Path | None = None, dry_run: bool = False,
                       concurrency: int = DEFAULT_CONCURRENCY, max_cost: float | None = None):
    """Store the conversations of the JSONL `file` (transcripts.schema.json) as the outputs of `source`
    (model `imported:SOURCE/LABEL`, run status `imported`) and judge them with the criteria of `manifest`
    (a `Manifest` or a path) for their case or scenario. Only the judge (models.yml's `marking_model`) is
    called: never a model under test, never a simulated user.

    `db` defaults to results.db beside the manifest, `models_file` to the benchmark's models.yml.
    `dry_run`: check the file against the manifest and the store and count the judge calls and their cost;
    store nothing, call nothing. A file with any bad line is refused whole (`HelmbenchError` naming each
    file:line and field); a re-import of the same file stores nothing new and asks only what was left to the
    judge; a different conversation under a stored key (source, model label, `id`) is refused naming both.

    Returns the `ImportReport` (`.new`, `.already`, `.judge_calls`, `.judge_cost`, `.runs`, and
    `.model_calls`, always 0).
    """
    from helmbench.api import _as_manifest, _models_of
    from helmbench.run.imported import ImportOptions, import_transcripts as run_import

    path = _as_manifest(manifest)
    opts = ImportOptions(
        file=str(file), source=source, manifest=str(path),
        models_file=str(models_file if models_file is not None else _models_of(path)),
        db=str(Path(db) if db is not None else path.parent / "results.db"), dry_run=dry_run,
        concurrency=concurrency, max_cost=max_cost)
    return run_import(opts)
