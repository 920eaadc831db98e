"""The review gate at compile time: generated text not yet signed off stays out of the manifest.

`helmbench generate` writes components and draft scenarios with `reviewed: false`. By default
they are left out (the manifest, and so its hash, is exactly what it was before they were
generated); `compile --include-unreviewed` keeps them for trying out, and every case built from
one is marked `unreviewed: true`, which makes a run of that manifest a preview that is never
ranked.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from helmbench.spec.tree import Benchmark, Scenario


@dataclass(frozen=True)
class LeftOut:
    """What the default compile left out (all zero when nothing generated awaits review)."""

    components: int = 0
    scenarios: int = 0
    cases: int = 0

    def __bool__(self) -> bool:
        return bool(self.components or self.scenarios)

    def describe(self) -> str:
        parts = []
        if self.scenarios:
            parts.append(f"{self.scenarios} draft scenario(s)")
        if self.components:
            parts.append(f"{self.components} generated component(s)")
        return (f"left out {' and '.join(parts)} not yet reviewed ({self.cases} case(s)); "
                "set `reviewed: true` once read, or try them with --include-unreviewed")


def _reviewed_scenario(sc: Scenario) -> tuple[Scenario, int]:
    kept = {kind: [c for c in items if not c.unreviewed] for kind, items in sc.components.items()}
    dropped = sum(len(items) - len(kept[kind]) for kind, items in sc.components.items())
    return (replace(sc, components=kept) if dropped else sc), dropped


def reviewed_only(bench: Benchmark) -> tuple[Benchmark, LeftOut]:
    """The tree without unreviewed draft scenarios and components, and what was left out."""
    scenarios, components, drafts, cases = [], 0, 0, 0
    for sc in bench.scenarios:
        if sc.unreviewed:
            drafts += 1
            cases += sc.case_count
            continue
        kept, dropped = _reviewed_scenario(sc)
        components += dropped
        cases += sc.case_count - kept.case_count
        scenarios.append(kept)
    if not (components or drafts):
        return bench, LeftOut()
    return replace(bench, scenarios=scenarios), LeftOut(components, drafts, cases)


def is_unreviewed_case(sc: Scenario, *components) -> bool:
    """A case is unreviewed when its scenario or any component it is built from is."""
    return sc.unreviewed or any(c is not None and c.unreviewed for c in components)
