"""Assisted authoring from Python (`helmbench generate …`): variants and scenario drafts by the generator model,
noise without a model. Each writes new components with `reviewed: false`, never overwriting.

Why a module of its own: authoring help is one concept apart from running a benchmark; the command line
prints what these return. The key and base URL are read from the environment, as `run` reads them.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Iterable


def _root(root) -> Path:
    from helmbench.spec.discover import benchmark_root

    return benchmark_root(None if root is None else Path(root))


def generation_db(root: str | Path | None = None) -> Path:
    """Where generation calls are cached by default: results.db in build/ beside the benchmark at `root`."""
    from helmbench.spec.discover import build_dir

    return build_dir(_root(root), options="--db") / "results.db"


def _model_backed(fn, root, db, max_cost, dry_run, *args):
    root = _root(root)
    return fn(root, *args, db=Path(db) if db is not None else generation_db(root),
              api_key=os.environ.get("OPENROUTER_API_KEY") or None,
              api_base=os.environ.get("OPENROUTER_API_BASE") or None, max_cost=max_cost, dry_run=dry_run)


def generate_variants(root: str | Path | None, component: str, axes: Iterable[str], *, db: str | Path | None = None,
                      max_cost: float | None = None, dry_run: bool = False):
    """Rewrite the user context or perturbation `component` once per combination of `axes` ("NAME=V1,V2" each)
    with models.yml's `generator_model`. Returns the outcome: `.written` (each `.code`, `.path`, `.new`),
    `.unusable`, `.calls`, `.cached`, `.spent`, `.stopped` (an error to raise, or None), and with `dry_run`
    `.estimate` and `.planned` instead. Calls are cached in `db` (default `generation_db(root)`)."""
    from helmbench.generate.tree import parse_axes
    from helmbench.generate.variants import generate_variants as run

    return _model_backed(run, root, db, max_cost, dry_run, component, parse_axes(list(axes)))


def generate_scenarios(root: str | Path | None, behaviour: str, count: int = 1, *, db: str | Path | None = None,
                       max_cost: float | None = None, dry_run: bool = False):
    """Draft `count` new scenarios for `behaviour` (declared in benchmark.yml) with the generator model; the
    outcome as `generate_variants` returns it."""
    from helmbench.generate.scenario import generate_scenarios as run

    return _model_backed(run, root, db, max_cost, dry_run, behaviour, count)


def noise_transforms() -> tuple[str, ...]:
    """The noise `generate_noise` can add (typo, lowercase, dropped)."""
    from helmbench.generate.noise import TRANSFORMS

    return tuple(TRANSFORMS)


def generate_noise(root: str | Path | None, component: str, transforms: Iterable[str] = (), seed: int = 1) -> list:
    """Noisy versions of `component` without a model (`transforms`: default all), reproducible from `seed`;
    returns what was written (each `.code`, `.path`, `.new`, `.unchanged`). An unknown transform is a UsageError."""
    from helmbench.errors import UsageError
    from helmbench.generate.noisy import generate_noise as run

    known = noise_transforms()
    if bad := [t for t in transforms if t not in known]:
        raise UsageError(f"--transform {bad[0]!r} is not one of {', '.join(known)}")
    return run(_root(root), component, list(dict.fromkeys(transforms)) or list(known), seed)
