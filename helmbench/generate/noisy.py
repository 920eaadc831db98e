"""`helmbench generate noise`: typo / lowercase / dropped-character versions of a component,
derived without a model from a seed, each written as a new component with `reviewed: false`."""

from __future__ import annotations

from pathlib import Path

from helmbench.generate.noise import TRANSFORMS, apply_noise
from helmbench.generate.tree import find_component, load
from helmbench.generate.placement import Draft, Written, render_body, write_components
from helmbench.spec import markdown as md


def generate_noise(root: Path, component_id: str, transforms: list[str] = list(TRANSFORMS), seed: int = 1) -> list[Written]:
    bench = load(root)
    sc, source = find_component(bench, component_id)
    body = render_body([(s.heading, s.text) for s in md.sections(source.body)])
    drafts, unchanged = [], []
    for transform in transforms:
        noisy = apply_noise(body, transform, seed)
        if noisy == body:  # e.g. lowercase on a text already in lower case: a duplicate to review for nothing
            unchanged.append(Written(f"{source.code} ({transform})", source.path, False, unchanged=True))
            continue
        meta = {"title": f"{source.title or source.code} ({transform} noise)", "severity": source.severity,
                "generated_from": source.code, "generated": {"noise": {"transform": transform, "seed": seed}},
                "reviewed": False}
        drafts.append(Draft(source.kind, meta, [(s.heading, s.text) for s in md.sections(noisy)]))
    return (write_components(root, sc, source.kind, drafts) if drafts else []) + unchanged

