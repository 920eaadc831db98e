"""Finding what to generate from: the tree, a component by its id, the generator model."""

from __future__ import annotations

from pathlib import Path

from helmbench.errors import UsageError
from helmbench.spec.loader import load_benchmark
from helmbench.spec.models import ModelEntry
from helmbench.spec.tree import Benchmark, Component, Scenario

#: Kinds a variant or noise can be derived from: the parts that describe the person.
SOURCE_KINDS = ("user_context", "perturbation")


def load(root: Path) -> Benchmark:
    bench, _ = load_benchmark(root)
    return bench


def find_component(bench: Benchmark, component_id: str, kinds=SOURCE_KINDS) -> tuple[Scenario, Component]:
    """`P1-B1-S1-PT1` → its scenario and component (a user context or perturbation)."""
    key, _, code = component_id.strip().rpartition("-")
    sc = next((s for s in bench.scenarios if s.key == key), None)
    if sc is None:
        raise UsageError(f"no scenario {key or component_id!r} in {bench.root}",
                         hint="name a component as SCENARIO-CODE, e.g. P1-B1-S1-PT1 (see `helmbench list`)")
    for kind in kinds:
        for c in sc.components[kind]:
            if c.code == code:
                if c.meta is None:
                    raise UsageError(f"{c.path}:{c.line}: {component_id} has invalid frontmatter",
                                     hint="fix it first: run `helmbench lint`")
                return sc, c
    codes = ", ".join(c.code for k in kinds for c in sc.components[k]) or "none"
    raise UsageError(f"scenario {sc.key} has no user context or perturbation {code!r} (it has: {codes})",
                     hint="variants and noise are derived from a user context (U1) or a perturbation (PT1)")


def generator_model(bench: Benchmark) -> ModelEntry:
    models = bench.models
    if models is None or models.generator_model is None:
        raise UsageError("models.yml names no generator_model",
                         hint="add e.g. `generator_model: {id: openai/gpt-4.1, temperature: 0.7}` to models.yml")
    return models.generator_model


def parse_axes(values: list[str], limit: int = 50) -> dict[str, list[str]]:
    """`["age=teen,older", "country=UK,India"]` → {"age": ["teen", "older"], "country": ["UK", "India"]}."""
    axes: dict[str, list[str]] = {}
    for raw in values:
        name, sep, rest = raw.partition("=")
        name = name.strip()
        items = [v.strip() for v in rest.split(",") if v.strip()]
        if not sep or not name or not items:
            raise UsageError(f"--axis {raw!r} is not NAME=VALUE[,VALUE…]", hint="e.g. --axis age=teen,older")
        if name in axes:
            raise UsageError(f"--axis {name} is given twice", hint="list every value of an axis in one --axis")
        if any(len(v) > 80 or not v.isprintable() for v in [name, *items]):
            raise UsageError(f"--axis {raw!r}: names and values are short printable text", hint="e.g. --axis age=teen")
        axes[name] = list(dict.fromkeys(items))
    if not axes:
        raise UsageError("no --axis given", hint="e.g. --axis age=teen,older --axis country=UK,India")
    combos = 1
    for items in axes.values():
        combos *= len(items)
    if combos > limit:
        raise UsageError(f"{combos} combinations of axes; at most {limit} in one invocation",
                         hint="split the axes over several invocations")
    return axes
