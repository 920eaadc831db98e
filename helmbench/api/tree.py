"""The benchmark tree and its manifests from Python: the scenarios (`helmbench list`), one case as a model
receives it (`helmbench show`), and what changed between two manifests (`helmbench diff`).

Why a module of its own: these read an authored tree or a compiled manifest and return it as data, apart from
running and scoring; the command line prints it.
"""

from __future__ import annotations

import json
from pathlib import Path


def build_dir(root: str | Path | None = None) -> Path:
    """build/ beside the benchmark at `root` (else found from the current folder): where compile writes."""
    from helmbench.spec.discover import build_dir as found

    return found(None if root is None else Path(root))


def models_file_of(root: str | Path | None = None) -> Path | None:
    """models.yml of the benchmark at `root` (else found from the current folder), or None when there is none."""
    from helmbench.spec.discover import find_layout

    layout = find_layout(Path(root)) if root is not None else find_layout()
    return layout.root / "models.yml" if layout is not None else None


def scenarios(root: str | Path) -> dict:
    """Every scenario of the tree at `root` with its pillar and behaviour titles, evaluation type and counts:
    `{"name", "version", "scenarios": [row, …], "cases"}` (the rows of list.schema.json)."""
    from helmbench.spec import load_benchmark

    bench, _ = load_benchmark(Path(root))
    rows = []
    for sc in bench.scenarios:
        p = bench.pillars.get(sc.pillar)
        b = bench.behaviours.get(sc.behaviour_key)
        rows.append({
            "scenario": sc.key, "title": sc.meta.title if sc.meta else None,
            "pillar": sc.pillar, "pillar_title": p.title if p else None,
            "behaviour": sc.behaviour_key, "behaviour_title": b.title if b else None,
            "evaluation": sc.evaluation_type, "conditions": len(sc.conditions),
            "user_contexts": len(sc.user_contexts), "perturbations": len(sc.perturbations),
            "criteria": len(sc.criteria), "cases": sc.case_count,
        })
    return {"name": bench.name, "version": bench.version, "scenarios": rows, "cases": sum(r["cases"] for r in rows)}


def find_case(case_id: str, *, root: str | Path | None = None, manifest=None) -> dict | None:
    """The case `case_id` as a model receives it: read from `manifest` (a `Manifest` or a path) when given, else
    composed from the tree at `root` (default: found from the current folder) in the form the manifest would
    hold; None when there is no such case."""
    if manifest is not None:
        from helmbench.manifest import read_manifest

        path = Path(getattr(manifest, "path", manifest))
        return next((c for c in read_manifest(path) if c["id"] == case_id), None)
    from helmbench.manifest.canonical import canonical
    from helmbench.manifest.cases import scenario_cases
    from helmbench.spec import load_benchmark
    from helmbench.spec.discover import benchmark_root

    bench, _ = load_benchmark(benchmark_root(None if root is None else Path(root)))
    for sc in bench.scenarios:
        if case_id.startswith(sc.key + "-") and sc.meta is not None:
            case = next((c for c in scenario_cases(bench, sc) if c["id"] == case_id), None)
            return json.loads(canonical(case)) if case else None  # the form the manifest would hold
    return None


def diff(old, new):
    """The `ManifestDiff` of two manifests (`Manifest`s or paths): cases added, removed, and changed, split into
    request changes (new model calls), evaluation changes (re-judging only) and scoring changes (no calls)."""
    from helmbench.manifest.diff import diff_manifests

    return diff_manifests(Path(getattr(old, "path", old)), Path(getattr(new, "path", new)))


def compile_at_revision(root: str | Path, ref: str, out_dir: str | Path) -> Path:
    """Compile the tree at `root` as it was at git revision `ref` into `out_dir`; returns the manifest's path."""
    from helmbench.manifest.diff import compile_at_revision as at

    return at(Path(root), ref, Path(out_dir))
