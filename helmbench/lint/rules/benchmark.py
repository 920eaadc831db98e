"""Rules tying scenarios to benchmark.yml and to behaviour weights.

The run score is a weighted mean over behaviours: a behaviour with scenarios but no
weight cannot be scored, and a weight for a behaviour nobody declared usually means a
renamed or mistyped code whose scenarios are now weighted by nothing.
"""

from __future__ import annotations

from helmbench.diagnostics import Collector
from helmbench.lint.rulebook import rule
from helmbench.lint.where import benchmark_data, key_span, scenario_file, value_span
from helmbench.spec.models import BenchmarkFile
from helmbench.spec.tree import Benchmark
from helmbench.spec.validate import suggest


def _declaration_usable(bench: Benchmark) -> bool:
    """benchmark.yml exists and is valid; when it is not, the loader already said why."""
    data = benchmark_data(bench)
    if data is None:
        return False
    try:
        BenchmarkFile.model_validate(data)
    except ValueError:
        return False
    return True


@rule("HB602")
def declared(bench: Benchmark, out: Collector) -> None:
    if not bench.declared or not _declaration_usable(bench):
        return
    for sc in bench.scenarios:
        if sc.pillar not in bench.pillars:
            msg = f"scenario {sc.key} is under pillar {sc.pillar}, which benchmark.yml does not declare"
        elif sc.behaviour_key not in bench.behaviours:
            msg = f"scenario {sc.key} is under behaviour {sc.behaviour_key}, which benchmark.yml does not declare"
        else:
            continue
        out.add("HB602", scenario_file(sc), 1, msg,
                hint="declare it under `pillars:` in benchmark.yml, or move the scenario")


@rule("HB603")
def unknown_weights(bench: Benchmark, out: Collector) -> None:
    weights = bench.scoring_data.get("weights") if bench.scoring_data is not None else None
    if not weights or bench.scoring_source is None or (bench.declared and not _declaration_usable(bench)):
        return  # an unreadable benchmark.yml declares nothing to compare with (the loader said why)
    with_scenarios = {sc.behaviour_key for sc in bench.scenarios}
    for key in weights:
        if bench.declared:
            if key in bench.behaviours:
                continue
            why = "not declared in benchmark.yml"
        elif key in with_scenarios:
            continue
        else:
            why = "a behaviour with no scenarios"
        out.add("HB603", bench.scoring_source.path, key_span(weights, key),
                f"weight for `{key}`, {why}; it is ignored",
                hint="check the behaviour code, or remove the weight")


@rule("HB604")
def missing_weights(bench: Benchmark, out: Collector) -> None:
    if bench.declared and not _declaration_usable(bench):
        return
    data = benchmark_data(bench)
    for key in dict.fromkeys(sc.behaviour_key for sc in bench.scenarios):
        info = bench.behaviours.get(key)
        if bench.weight(key) is not None or (bench.declared and info is None):
            continue  # weighted, or undeclared (HB602 says so)
        if bench.declared:
            path = bench.benchmark_source.path
            line = key_span(data, "pillars", info.pillar, "behaviours", info.code)
            hint = "add `weight: <number>` to the behaviour"
        else:  # weights come from scoring.yaml (without either file they are all equal)
            path, line = bench.scoring_source.path, key_span(bench.scoring_data, "weights")
            hint = f"add `{key}: <number>` under `weights:`"
        out.add("HB604", path, line, f"behaviour {key} has scenarios but no weight", hint=hint)


@rule("HB608")
def floors(bench: Benchmark, out: Collector) -> None:
    """A floor must name a declared part (or it never bites) and cap at most at its minimum."""
    if not bench.floors or not _declaration_usable(bench):
        return
    data = benchmark_data(bench)
    path = bench.benchmark_source.path
    parts = [*bench.pillars, *bench.behaviours]
    seen: set[str] = set()
    for i, floor in enumerate(bench.floors):
        part = floor["part"]
        if part not in parts:
            hint = suggest(part, parts) or f"declared parts: {', '.join(parts) or 'none'}"
            out.add("HB608", path, value_span(data, "floors", i, "part"),
                    f"floor on `{part}`, which benchmark.yml does not declare as a pillar or behaviour", hint=hint)
        elif part in seen:
            out.add("HB608", path, value_span(data, "floors", i, "part"),
                    f"a second floor on `{part}`", hint="keep one floor per part")
        seen.add(part)
        if floor["cap"] > floor["minimum"]:
            out.add("HB608", path, value_span(data, "floors", i, "cap"),
                    f"floor on `{part}` caps at {floor['cap']:g}, above its minimum {floor['minimum']:g}",
                    hint="a cap at or below the minimum, e.g. minimum 0.70, cap 0.40")
