"""`helmbench generate variants`: a user context or perturbation rewritten once per combination
of axes (age group, country, register, …) by the generator model, keeping intent and severity.

Each combination is one cached call; each usable answer is one new component with
`reviewed: false`. The source's headings, kind and severity are kept by construction (only the
text of each section comes from the model), so what a reviewer checks is the wording.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from pathlib import Path

from helmbench.generate.call import Estimate, Generator
from helmbench.generate.prompts import read_variant, variant_request
from helmbench.generate.tree import find_component, generator_model, load
from helmbench.generate.placement import Draft, GenerateError, Written, write_components
from helmbench.spec.loader import WHAT


@dataclass
class Outcome:
    """What an invocation did: files written (or found already written), answers not usable,
    calls made and answered from the cache, money spent, and what stopped it early."""

    written: list[Written] = field(default_factory=list)
    unusable: list[str] = field(default_factory=list)
    calls: int = 0
    cached: int = 0
    spent: float = 0.0
    stopped: GenerateError | None = None
    estimate: Estimate | None = None  # dry run only
    planned: list[str] = field(default_factory=list)  # dry run: labels of the calls


def combinations(axes: dict[str, list[str]]) -> list[dict[str, str]]:
    names = list(axes)
    return [dict(zip(names, values)) for values in itertools.product(*(axes[n] for n in names))]


def generate_variants(root: Path, component_id: str, axes: dict[str, list[str]], *, db: Path,
                      api_key: str | None = None, api_base: str | None = None, max_cost: float | None = None,
                      dry_run: bool = False) -> Outcome:
    """Variants of `component_id` (`P1-B1-S1-PT1`), one per combination of `axes`; `db`: the
    results database that caches the calls."""
    bench = load(root)
    sc, source = find_component(bench, component_id)
    gen = Generator.open(db, generator_model(bench), dry_run=dry_run, api_key=api_key, api_base=api_base,
                         max_cost=max_cost)
    entry = gen.entry
    combos = combinations(axes)
    requests = [variant_request(sc, source, WHAT[source.kind], combo) for combo in combos]
    if dry_run:
        return Outcome(estimate=gen.estimate(requests), planned=[r.label for r in requests])
    answers, stopped = gen.answer_all(requests)
    drafts = []
    out = Outcome(calls=gen.calls, spent=gen.spent, stopped=stopped)
    for combo, request in zip(combos, requests):
        if (key := gen.hash_of(request)) not in answers:
            continue  # not answered (a stop): the next invocation asks it
        read = read_variant(source, answers[key])
        if read is None:
            out.unusable.append(request.label)
            continue
        title, sections = read
        label = ", ".join(f"{k}={v}" for k, v in combo.items())
        meta = {"title": title or f"{source.title or source.code} ({label})"}
        meta["severity"] = source.severity
        meta.update({"generated_from": source.code,
                     "generated": {"model": entry.id, "prompt_hash": key, "axes": combo},
                     "reviewed": False})
        drafts.append(Draft(source.kind, meta, sections))
    out.written = write_components(root, sc, source.kind, drafts) if drafts else []
    out.cached = gen.cached
    return out
