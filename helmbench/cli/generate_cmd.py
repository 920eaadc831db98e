"""`helmbench generate noise|variants|scenario`: assisted authoring, behind the review gate.

Everything generated is written as ordinary spec files with `reviewed: false`: lint warns
(HB720), `--strict` fails and compile leaves it out until a reviewer sets `reviewed: true`.
Generated text is untrusted: it is printed only through `printable`.
"""

from __future__ import annotations

from pathlib import Path
from typing import List, Optional

import typer

from helmbench.cli.app import app

generate_app = typer.Typer(
    name="generate", no_args_is_help=True, rich_markup_mode="markdown",
    help="Generate variants, noisy versions and draft scenarios as ordinary spec files, each `reviewed: false` "
         "until a clinician has read it.\n\nExamples:\n\n"
         "helmbench generate variants P1-B1-S1-PT1 --axis age=teen,older --axis country=UK,India\n\n"
         "helmbench generate noise P1-B1-S1-PT4 --seed 7\n\n"
         "helmbench generate scenario P1-B2 --dry-run",
)
app.add_typer(generate_app, name="generate")

ROOT = typer.Argument(None, help="The benchmark folder (holds scenarios/; default: found from the current folder up).")
DB = typer.Option(None, "--db", help="Where generation calls are cached (default: build/results.db beside the benchmark).")
MAX_COST = typer.Option(None, "--max-cost", min=0.0, help="Start no call once the spend reaches USD (counting what "
                                                            "calls in flight will likely cost).")
DRY_RUN = typer.Option(False, "--dry-run", help="Show the calls and their estimated cost; call nothing, write nothing.")


def _paths(root: Optional[Path], db: Optional[Path]) -> tuple[Path, Path]:
    from helmbench import api
    from helmbench.cli import validate

    root = api.benchmark_root(root)
    validate.bench_root(root)
    return root, db if db is not None else api.generation_db(root)


def _written(written, root: Path) -> None:
    from helmbench.terminal import printable

    new = [w for w in written if w.new]
    for w in written:
        if w.unchanged:
            print(f"not written: {printable(w.code)} noise leaves the text as it is")
            continue
        state = "wrote" if w.new else "already in the tree"
        print(f"{state}: {printable(w.code)} in {printable(str(root / w.path))}")
    if new:
        print(f"{len(new)} new item(s), each `reviewed: false`: read them (authors' guide, \"What a reviewer "
              "must check\"), then set `reviewed: true`; until then compile leaves them out")
    else:
        print("nothing new written")


def _report(outcome, root: Path) -> None:
    from helmbench.terminal import printable
    from helmbench.cli.estimate_render import money

    if outcome.estimate is not None:
        est = outcome.estimate
        for label in outcome.planned:
            print(f"would generate: {printable(label)}")
        cost = (f"{money(est.low)}–{money(est.high)}" if est.low is not None
                else "unknown (no price for the generator model: add `price:` to its entry in models.yml)")
        print(f"dry run: {est.calls} call(s) to make, {est.cached} answered from the cache; estimated cost {cost}; "
              "nothing called, nothing written")
        return
    _written(outcome.written, root)
    for label in outcome.unusable:
        print(f"not usable (kept in the cache, nothing written): {printable(label)}")
    print(f"{outcome.calls} call(s) made, {outcome.cached} answered from the cache, {outcome.spent:.4f} USD spent")
    if outcome.stopped is not None:
        raise outcome.stopped


def _generate(fn, root: Optional[Path], db: Optional[Path], max_cost: Optional[float], dry_run: bool, *args) -> None:
    """Run one model-backed generator (variants, scenario) of helmbench.api (the key from the environment)."""
    from helmbench.cli import validate

    root, db_path = _paths(root, db)
    if not dry_run:
        validate.db_to_write(db_path)
    _report(fn(root, *args, db=db_path, max_cost=max_cost, dry_run=dry_run), root)


@generate_app.command("variants")
def variants(
    component: str = typer.Argument(..., help="The user context or perturbation to vary, e.g. P1-B1-S1-PT1."),
    root: Optional[Path] = ROOT,
    axis: List[str] = typer.Option([], "--axis", help="NAME=VALUE[,VALUE…]; repeat for more axes (every combination "
                                                      "is generated)."),
    db: Optional[Path] = DB,
    max_cost: Optional[float] = MAX_COST,
    dry_run: bool = DRY_RUN,
) -> None:
    """Rewrite a user context or perturbation once per combination of axes with `generator_model`
    (models.yml), keeping its intent and severity; each result is a new component (next free code,
    never overwriting) recording `generated_from`, the axes, the model and the prompt hash, with
    `reviewed: false`. Calls are cached: the same invocation again makes no call and writes nothing.

    Example: helmbench generate variants P1-B1-S1-PT1 --axis age=teen,older --axis country=UK,India
    """
    from helmbench.api import generate_variants

    _generate(generate_variants, root, db, max_cost, dry_run, component, axis)


@generate_app.command("scenario")
def scenario(
    behaviour: str = typer.Argument(..., help="The behaviour to draft for, e.g. P1-B2 (declared in benchmark.yml)."),
    root: Optional[Path] = ROOT,
    count: int = typer.Option(1, "--count", min=1, max=10, help="How many drafts."),
    db: Optional[Path] = DB,
    max_cost: Optional[float] = MAX_COST,
    dry_run: bool = DRY_RUN,
) -> None:
    """Draft new scenarios for a behaviour from its title, description and compliance criteria in
    benchmark.yml: a new folder (S3--draft) with the task, conditions, perturbations and one judge
    criterion per compliance criterion, for an author to complete; `reviewed: false` until then.

    Example: helmbench generate scenario P1-B2 --count 2 --max-cost 0.50
    """
    from helmbench.api import generate_scenarios

    _generate(generate_scenarios, root, db, max_cost, dry_run, behaviour, count)


@generate_app.command("noise")
def noise(
    component: str = typer.Argument(..., help="The perturbation (or user context) to add noise to, e.g. P1-B1-S1-PT1."),
    root: Optional[Path] = ROOT,
    transform: List[str] = typer.Option([], "--transform", help="typo, lowercase or dropped; repeat for several "
                                                                "(default: all three)."),
    seed: int = typer.Option(1, "--seed", help="The same seed always gives the same text."),
) -> None:
    """Derive typo / lowercase / dropped-character versions of a component without a model,
    reproducible from the seed recorded in each new component's frontmatter (`reviewed: false`).

    Example: helmbench generate noise P1-B1-S1-PT1 --transform typo --seed 7
    """
    from helmbench.api import generate_noise

    root, _ = _paths(root, None)
    _written(generate_noise(root, component, transform, seed), root)
