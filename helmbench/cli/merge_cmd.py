"""`helmbench merge`: results databases (the shards of a CI matrix, several machines) into one, by content.

Thin: the paths are checked here, the merge is `helmbench.api.merge` (store/merge.py), and what it did is
rendered here.
"""

from __future__ import annotations

from pathlib import Path
from typing import List

import typer

from helmbench.cli.app import app


@app.command("merge")
def merge(
    out: Path = typer.Argument(..., help="The merged database (created, or merged into when it exists)."),
    inputs: List[Path] = typer.Argument(..., help="The results databases to merge into OUT (never modified)."),
) -> None:
    """Merge results databases by content: answers, turns, judgements, results, the call ledger, runs and
    clinicians' reviews, each keyed by what it is (a response by its request, model, settings and
    sample; a ledger row by its uid), so identical rows are kept once and merging again changes nothing.

    The runs of one manifest, model and settings become one run: the shards of `run --shard K/N`
    merged together give the leaderboard one complete run per model, billed the sum of the shards'
    calls; databases of different manifests keep their runs apart. Two databases that answered the
    same request differently are refused, naming the rows and files, and OUT is left as it was (it is
    written whole, then renamed into place). Inputs of an older schema are upgraded in a copy.

    Nothing is trusted that can be recomputed: an input whose benchmark catalog (cases, severities,
    difficulties, weights) does not hash to its manifest's hash, or that is dated in the future, is
    refused, naming it; manifests are registered at OUT's own time. Reviews pass the rules of `review
    import` (one reviewer however the name is spelled; control characters, future dates and items that
    match no judged output refused): each refused review is listed and counted.

    Examples:

        helmbench merge build/results.db build/shard-*/results.db

        helmbench merge team.db laptop.db ci.db
    """
    from helmbench.cli.console import SafeConsole
    from rich.text import Text

    from helmbench.api import merge as merge_api
    from helmbench.cli import validate
    from helmbench.terminal import escaped

    validate.db_to_write(out, "OUT")
    for path in inputs:
        # not db_to_read's first check: a missing shard is not "no run yet (dry run only)"
        validate.input_file(path, "IN", what="results database",
                            hint="pass the results.db each run or shard wrote (e.g. shards/*/results.db)")
        validate.db_to_read(path, "IN")
    result = merge_api(out, inputs)
    console = SafeConsole(highlight=False, stderr=False)

    def say(line: str) -> None:
        # paths and model ids come from the databases merged (anyone's file): escapes shown, not obeyed
        console.print(Text(escaped(line)), soft_wrap=True)

    for path in result.itself:
        say(f"{path}: this is OUT itself, skipped (what it holds is in OUT already)")
    for path in result.migrated:
        say(f"{path}: upgraded to the current schema (in a copy; the file is unchanged)")
    added = ", ".join(f"{n} {table}" for table, n in sorted(result.added.items()) if n)
    replaced = ", ".join(f"{n} {table}" for table, n in sorted(result.replaced.items()) if n)
    if not result.changed:
        say(f"{out}: nothing new in {len(inputs)} database(s)")
    else:
        say(f"{out}: added {added or 'nothing'}" + (f"; superseded {replaced}" if replaced else ""))
    for table, n in sorted(result.twice.items()):
        say(f"{n} {table}: the same request answered differently in two databases (each paid for "
            "it); the first answer is kept, each result keeps the verdict it was decided with")
    for path in result.still_running:
        say(f"{path}: a run in it was still running (or its process stopped without saying so): merged as "
            "interrupted, with what it had stored; for the finished run, merge its database into a new OUT once "
            "that run has ended")
    if result.refused:
        say(f"{len(result.refused)} review(s) refused by the rules `review import` applies (not merged):")
        for line in result.refused[:20]:
            say(f"  {line}")
        if len(result.refused) > 20:
            say(f"  … and {len(result.refused) - 20} more")
    for run in result.runs:
        shard = f", shards {run['shard']}" if run.get("shard") else ""
        say(f"run {run['id']}: {run['model']} {run['status']}{shard}: {run['n_pass']} pass, "
            f"{run['n_fail']} fail, {run['n_error']} error, {run['n_awaiting_judge']} awaiting the judge")
