"""Where to point an author: the file and line a finding belongs to.

Rules report at the key that needs editing (`required:` in the frontmatter, `P1-B4:` in
scoring.yaml), falling back to the enclosing key or the top of the file when the key is
absent, because "add X here" is still a place to go.
"""

from __future__ import annotations

from functools import lru_cache

from helmbench.spec.tree import Benchmark, Scenario
from helmbench.spec.yamlio import LineDict, YamlError, load_yaml


def key_line(data, *path, default: int = 1) -> int:
    """Line of the deepest key of `path` found in nested LineDicts."""
    line = getattr(data, "line", default) if isinstance(data, LineDict) else default
    node = data
    for key in path:
        if not isinstance(node, LineDict) or key not in node:
            break
        line = node.line_of(key)
        node = node[key]
    return line


def scenario_file(sc: Scenario) -> str:
    """The scenario's own file (S1.md / MCSQE.md), or its folder when there is none."""
    return sc.source.path if sc.source else sc.folder


def evaluation_line(sc: Scenario, *keys: str) -> int:
    """Line of `evaluation.<keys>` in the scenario frontmatter (or of `evaluation`, or 1)."""
    fm = sc.frontmatter
    return key_line(fm, "evaluation", *keys, default=fm.line if isinstance(fm, LineDict) else 1)


@lru_cache(maxsize=8)
def _parse(text: str):
    try:
        return load_yaml(text)[0]
    except YamlError:
        return None


def benchmark_data(bench: Benchmark) -> LineDict | None:
    """benchmark.yml as line-numbered data (the loader keeps only the validated model)."""
    if bench.benchmark_source is None:
        return None
    data = _parse(bench.benchmark_source.text)
    return data if isinstance(data, LineDict) else None
