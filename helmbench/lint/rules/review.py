"""Rule: generated content that no reviewer has signed off yet (the review gate).

In this domain a clinician reads every case before it is measured. `helmbench generate` writes
variants and drafts with `reviewed: false`; this warning names each of them, `--strict` (CI)
fails on it, and compile leaves them out, so generated text never reaches a leaderboard unread.
"""

from __future__ import annotations

from helmbench.diagnostics import Collector
from helmbench.lint.rulebook import rule
from helmbench.spec.loader import WHAT
from helmbench.spec.tree import KINDS, Benchmark

HINT = ("read it as the authors' guide asks a reviewer to (intent, severity, safety of the wording), edit what "
        "needs it, then set `reviewed: true`")


def _origin(meta) -> str:
    parts = []
    if meta.generated_from:
        parts.append(f"from {meta.generated_from}")
    gen = meta.generated
    if gen is not None and gen.axes:
        parts.append(", ".join(f"{k}={v}" for k, v in gen.axes.items()))
    if gen is not None and gen.noise is not None:
        parts.append(f"{gen.noise.transform} noise, seed {gen.noise.seed}")
    return f" ({'; '.join(parts)})" if parts else ""


def _line(data, default: int) -> int:
    if data is None:
        return default
    return data.line_of("reviewed", data.line_of("generated_from", data.line))


@rule("HB720")
def unreviewed(bench: Benchmark, out: Collector) -> None:
    for sc in bench.scenarios:
        if sc.unreviewed and sc.source is not None:
            out.add("HB720", sc.source.path, _line(sc.frontmatter, 1),
                    f"draft scenario {sc.key}{_origin(sc.meta)} is not reviewed: none of its cases are compiled",
                    hint=HINT)
        for kind in KINDS:
            for c in sc.components[kind]:
                if c.unreviewed:
                    out.add("HB720", c.path, _line(c.frontmatter, c.line),
                            f"generated {WHAT[kind]} {c.code}{_origin(c.meta)} is not reviewed: it is left out "
                            "of the manifest", hint=HINT)
