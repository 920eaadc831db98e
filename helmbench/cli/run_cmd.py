"""`helmbench run`, `run-batch`, `run-all`, `run-single` and `costs`: the executor stage.

Everything heavy (the executor, sqlite, litellm) is imported inside the command bodies, so
`helmbench lint` and `helmbench --help` stay fast.
"""

from __future__ import annotations

import shlex
import sys
from enum import Enum
from pathlib import Path
from typing import List, Optional

import typer

from helmbench.cli.app import app


def _manifest():
    return typer.Option(None, "--manifest", help="The compiled manifest (`helmbench compile`; default build/manifest.jsonl).")


def _models_file():
    return typer.Option(None, "--models-file", help="models.yml: the models under test (default: that of the benchmark whose build/ holds the manifest, else of the benchmark found from here).")


def _db():
    return typer.Option(None, "--db", help="The results database (created if missing; default build/results.db: beside the benchmark, or in the build/ folder holding a named manifest).")


def _defaults(manifest: Optional[Path], models_file: Optional[Path], db: Optional[Path]):
    """Paths not given: in the build/ folder holding a named manifest (and its benchmark's models.yml) when it
    is one, else build/ beside the benchmark found from the current folder and its models.yml."""
    from helmbench import api

    manifest, db = api.in_build(manifest=manifest, db=db)
    return manifest, models_file if models_file is not None else api.models_file(manifest), db


def _models():
    return typer.Option(None, "--models", "-m", help="Only these model ids (comma-separated or repeated).")


def _scenario():
    return typer.Option(None, "--scenario", "-s",
                        help="Only this scenario (P1-B1-S1), behaviour (P1-B1) or pillar (P1); repeatable.")


def _samples():
    return typer.Option(1, "--samples", min=1, help="Answers per case and model (samples 0..N-1).")


def _concurrency():
    return typer.Option(8, "--concurrency", "-c", min=1,
                        help="Most calls in flight per model and for the judge (a model's `concurrency` in models.yml "
                             "wins); halved for that model alone on its rate limits.")


def _max_cost():
    return typer.Option(None, "--max-cost", min=0.0, help="Stop making calls once this much (USD) is billed.")


def _dry_run():
    return typer.Option(False, "--dry-run", help="Send nothing; show how many calls would be made.")


def _shard():
    return typer.Option(None, "--shard", metavar="K/N",
                        help="Run part K of N of the work (by case and model; a case keeps its shard when the "
                             "manifest grows): N jobs with 1/N … N/N make every call of one run, each once.")


def _rejudge_sample():
    return typer.Option(0, "--rejudge-sample", min=0, metavar="N",
                        help="After judging, ask the judge again on N judged outputs (a seeded sample) in a cache "
                             "lane of their own: `report` shows the judge's run-to-run agreement; scores unchanged.")


def _rejudge_seed():
    return typer.Option(0, "--rejudge-seed", help="Which outputs --rejudge-sample draws (same seed, same sample).")


def _verbose():
    return typer.Option(False, "--verbose", "-v", help="Debug logging.")


def _consoles():
    """stdout for tables, stderr for progress and logs; wide tables when not on a terminal (CI logs)."""
    from helmbench.cli.console import SafeConsole

    out, err = SafeConsole(highlight=False), SafeConsole(stderr=True, highlight=False)
    for c in (out, err):
        if not c.is_terminal:
            c.width = 160
    return out, err


def _exit_for(result) -> None:
    """Leave with 1 when the run ended with ERROR results: a script must not mistake it for a clean run."""
    if not result.dry_run and any(r.get("n_error") for r in result.runs):
        raise typer.Exit(1)


def _execute(*, manifest: Path, models_file: Path, db: Path, scenarios: list[str], models: list[str],
             samples: int, concurrency: int, max_cost: float | None, dry_run: bool, verbose: bool,
             case_ids: tuple[str, ...] = (), preview: bool = False, shard: str | None = None,
             rejudge_sample: int = 0, rejudge_seed: int = 0):
    import os

    from helmbench import api

    shard = api.parse_shard(shard)  # a bad K/N is refused before any path is looked at

    if not dry_run and os.environ.get("OPENROUTER_API_KEY"):  # start litellm's seconds-long import first
        api.preload_provider()
    from helmbench.cli import validate
    from helmbench.cli import run_render as render

    manifest, models_file, db = _defaults(manifest, models_file, db)
    validate.run_paths(manifest, models_file, db, dry_run=dry_run)

    command = "helmbench " + shlex.join(sys.argv[1:])
    out, err = _consoles()
    from contextlib import nullcontext

    from helmbench.cli.progress_bar import ProgressBar

    live = err.is_terminal and not dry_run
    try:
        with ProgressBar(err) if live else nullcontext() as bar:
            result = api.run(manifest, models, db=db, models_file=models_file, scenarios=scenarios, samples=samples,
                             concurrency=concurrency, max_cost=max_cost, dry_run=dry_run, console=err,
                             verbose=verbose, live=live, on_progress=bar, command=command, case_ids=case_ids,
                             preview=preview, shard=shard, rejudge_sample=rejudge_sample,
                             rejudge_seed=rejudge_seed)
    except KeyboardInterrupt:  # before any run started: nothing to save
        err.print(f"Interrupted. Resume with:\n  {command}", markup=False)
        raise typer.Exit(130) from None
    if result.dry_run:
        if not case_ids:
            render.dry_run(result, out)
            from helmbench.cli.estimate_render import render as render_estimate

            render_estimate(api.estimate_run(result, db), out)
        return result
    if not case_ids:
        render.summary(result, out)
    if result.status == "interrupted":
        saved = sum(ledger.calls() - ledger.unknown() for ledger in result.ledger.values())
        err.print(f"Interrupted: {saved} response(s) from this invocation are saved. Resume with:", markup=False)
        err.print(f"  {command}", markup=False)
        raise typer.Exit(130)
    if result.status == "stopped_cost":
        err.print(f"Stopped at --max-cost ${max_cost}: ${result.spent:.4f} billed. Run again (with a higher "
                  f"--max-cost) to continue: nothing stored is asked again.", markup=False)
        raise typer.Exit(3)
    if result.stalled:  # one message per model that never answered in time; the other models finished
        for message in result.stalled.values():
            err.print(f"error: {message}", markup=False, highlight=False)
        raise typer.Exit(3)
    if not case_ids:
        _exit_for(result)
    return result


@app.command("run")
def run_(
    manifest: Optional[Path] = _manifest(), models_file: Optional[Path] = _models_file(), db: Optional[Path] = _db(),
    scenario: Optional[List[str]] = _scenario(),
    all_scenarios: bool = typer.Option(False, "--all-scenarios", help="Every scenario (the default)."),
    models: Optional[List[str]] = _models(), samples: int = _samples(), concurrency: int = _concurrency(),
    max_cost: Optional[float] = _max_cost(), dry_run: bool = _dry_run(), verbose: bool = _verbose(),
    shard: Optional[str] = _shard(), rejudge_sample: int = _rejudge_sample(), rejudge_seed: int = _rejudge_seed(),
) -> None:
    """Ask every model in models.yml every case of the manifest, evaluate, and store the results.

    Incremental: a response already stored for the same request, model, settings and sample
    is never requested again, so an interrupted run resumes where it stopped and a re-run
    costs nothing. Without OPENROUTER_API_KEY (or with --dry-run) nothing is sent: it shows how
    many calls would be made. Ctrl-C saves what completed and prints how to resume.

    Examples:

        helmbench run --dry-run

        OPENROUTER_API_KEY=sk-or-... helmbench run --models google/gemini-2.5-flash --max-cost 2

        helmbench run --scenario P1-B1-S1 --samples 3 --concurrency 16

        helmbench run --shard 2/3 --db build/shard-2/results.db

    --shard K/N runs a deterministic part of the work (one job of a CI matrix): each (case, model)
    belongs to one shard, by a hash of their ids, so the N shards together ask every call of one
    run exactly once; the run row records its shard, and counts as partial.

    --rejudge-sample N asks the judge (each judge of an ensemble) again on N judged outputs, drawn
    by a seeded hash (--rejudge-seed), in a cache lane of its own: N × criteria × judges calls
    once, none on a second run. The first judgement still decides every result; `helmbench
    report` shows the run-to-run agreement per criterion (Cohen's κ with its interval).

    --concurrency is the default per model (and for the judge); a model's `concurrency` in
    models.yml overrides it. Each model slows down on its own rate limits, not the others'.

    Exit codes: 0 every call has a verdict; 1 some results are errors (run again to retry them);
    2 bad usage; 3 stopped early (--max-cost reached, key rejected, provider unreachable);
    130 interrupted (Ctrl-C; run the same command to resume).
    """
    _execute(manifest=manifest, models_file=models_file, db=db, scenarios=[] if all_scenarios else (scenario or []),
             models=models or [], samples=samples, concurrency=concurrency, max_cost=max_cost, dry_run=dry_run,
             verbose=verbose, shard=shard, rejudge_sample=rejudge_sample, rejudge_seed=rejudge_seed)


@app.command("run-batch")
def run_batch(
    scenario: Optional[List[str]] = _scenario(),
    all_scenarios: bool = typer.Option(False, "--all-scenarios", help="Every scenario."),
    manifest: Optional[Path] = _manifest(), models_file: Optional[Path] = _models_file(), db: Optional[Path] = _db(),
    models: Optional[List[str]] = _models(), samples: int = _samples(), concurrency: int = _concurrency(),
    max_cost: Optional[float] = _max_cost(), dry_run: bool = _dry_run(), verbose: bool = _verbose(),
) -> None:
    """Run some scenarios (or all of them): like `run`, but the selection must be explicit.

    Examples:

        helmbench run-batch --scenario P1-B1-S1 --scenario P1-B2

        helmbench run-batch --all-scenarios --models openai/gpt-4.1-mini
    """
    from helmbench.errors import UsageError

    if not scenario and not all_scenarios:
        raise UsageError("run-batch needs --scenario CODE (repeatable) or --all-scenarios")
    _execute(manifest=manifest, models_file=models_file, db=db, scenarios=[] if all_scenarios else scenario,
             models=models or [], samples=samples, concurrency=concurrency, max_cost=max_cost, dry_run=dry_run,
             verbose=verbose)


@app.command("run-all")
def run_all(
    manifest: Optional[Path] = _manifest(), models_file: Optional[Path] = _models_file(), db: Optional[Path] = _db(), samples: int = _samples(),
    concurrency: int = _concurrency(), max_cost: Optional[float] = _max_cost(), dry_run: bool = _dry_run(),
    verbose: bool = _verbose(),
) -> None:
    """Every scenario with every model in models.yml.

    Example:

        helmbench run-all --max-cost 20
    """
    _execute(manifest=manifest, models_file=models_file, db=db, scenarios=[], models=[], samples=samples,
             concurrency=concurrency, max_cost=max_cost, dry_run=dry_run, verbose=verbose)


@app.command("run-single")
def run_single(
    case_id: str = typer.Argument(..., help="A case id, e.g. P1-B1-S1-C1-U1-PT1."),
    model: Optional[List[str]] = typer.Option(None, "--model", "-m", help="Only this model (default: every model)."),
    manifest: Optional[Path] = _manifest(), models_file: Optional[Path] = _models_file(), db: Optional[Path] = _db(),
    dry_run: bool = _dry_run(), verbose: bool = _verbose(),
) -> None:
    """Ask one case of each model (or one model) and print the prompt, the answers and the verdicts.

    A stored answer is shown without asking again. Output is printed literally (no markup).
    A preview never changes the leaderboard: its verdicts are kept apart (a run with status
    'preview'), while the answers it paid for are reused by the next full run.

    Examples:

        helmbench run-single P1-B1-S1-C1-U1-PT1

        helmbench run-single P1-B1-S1-C1-U1-PT1 --model openai/gpt-4.1-mini
    """
    from helmbench import api
    from helmbench.cli import run_render as render

    manifest, models_file, db = _defaults(manifest, models_file, db)
    result = _execute(manifest=manifest, models_file=models_file, db=db, scenarios=[], models=model or [], samples=1,
                      concurrency=1, max_cost=None, dry_run=dry_run, verbose=verbose, case_ids=(case_id,),
                      preview=True)
    case, answers = api.single_case(manifest, case_id, db, result)
    render.single_case(case, answers, _consoles()[0], dry=result.dry_run)
    _exit_for(result)


class CostsFormat(str, Enum):
    text = "text"
    json = "json"


@app.command("costs")
def costs(
    db: Optional[Path] = _db(),
    run_id: Optional[int] = typer.Option(None, "--run-id", help="Only this run."),
    model: Optional[str] = typer.Option(None, "--model", "-m", help="Only this model id."),
    manifest: Optional[Path] = _manifest(), models_file: Optional[Path] = _models_file(),
    format: CostsFormat = typer.Option(CostsFormat.text, "--format", "-f",
                                       help="text, or json (its shape: costs.schema.json, `helmbench schema`)."),
) -> None:
    """Cost and tokens per run and model, from the results database (billed costs), then the
    estimated output tokens and cost of the calls not made yet for the compiled manifest.

    The runs shown are those of the manifest (`--manifest`, default build/manifest.jsonl) when it
    has finished runs, else of the latest finished run's manifest, as in `report`, which says so in
    the same sentence; the runs of other manifests are summed on one line.

    Examples:

        helmbench costs

        helmbench costs --model openai/gpt-4.1-mini

        helmbench costs --format json > costs.json
    """
    import json

    from helmbench import api
    from helmbench.cli import run_render as render, validate
    from helmbench.cli.estimate_render import render as render_estimate

    manifest, models_file, db = _defaults(manifest, models_file, db)
    validate.db_to_read(db)
    data = api.costs(db, manifest, run_id=run_id, model=model, models_file=models_file)
    if format is CostsFormat.json:
        typer.echo(json.dumps(data.to_dict(), ensure_ascii=False, indent=2, allow_nan=False))
    else:
        out = _consoles()[0]
        render.costs(data.runs, out, data.outside, total=data.total, note=data.note, others=data.others)
        if data.estimate is not None:
            out.print(f"\nNot run yet for {manifest} (one sample per case):", markup=False)
            render_estimate(data.estimate, out)
    if data.estimate_failed is not None:
        raise data.estimate_failed
