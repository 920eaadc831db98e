"""Rules about components (conditions, user contexts, perturbations) of each scenario."""

from __future__ import annotations

from helmbench.diagnostics import Collector
from helmbench.lint.registry import rule
from helmbench.spec import markdown as md
from helmbench.spec.tree import KINDS, Benchmark


@rule("HB301")
def duplicate_codes(bench: Benchmark, out: Collector) -> None:
    for sc in bench.scenarios:
        for kind in KINDS:
            seen: dict[str, int] = {}
            for c in sc.components[kind]:
                if c.code in seen:
                    out.add("HB301", c.path, c.line, f"duplicate code `{c.code}` in scenario {sc.key} (first at line {seen[c.code]})")
                else:
                    seen[c.code] = c.line


@rule("HB302", "HB303", "HB304", "HB305")
def component_bodies(bench: Benchmark, out: Collector) -> None:
    for sc in bench.scenarios:
        parts = [c for k in KINDS for c in sc.components[k]]
        for c in parts:
            if not c.body.strip():
                out.add("HB302", c.path, c.line, f"{c.code} has no text")
                continue
            secs = md.sections(c.body)
            if all(s.heading is None for s in secs):
                out.add("HB303", c.path, c.body_line, f"{c.code} has no `##` section; its text reaches the model untagged")
            for s in secs:
                if s.heading is not None and not s.tag:
                    out.add("HB305", c.path, c.body_line + s.line - 1, f"heading `## {s.heading}` gives an empty tag name")
            if (fence := md.unclosed_fence(c.body)) is not None:
                out.add("HB304", c.path, c.body_line + fence - 1, "code fence is never closed")


@rule("HB309")
def yields_cases(bench: Benchmark, out: Collector) -> None:
    for sc in bench.scenarios:
        if not sc.conditions or not sc.perturbations:
            missing = [n for n, lst in (("conditions", sc.conditions), ("perturbations", sc.perturbations)) if not lst]
            where = sc.source.path if sc.source else sc.folder
            out.add("HB309", where, 1, f"scenario {sc.key} yields no cases: no {' and no '.join(missing)}")
