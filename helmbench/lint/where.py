"""Where to point an author: the file and line a finding belongs to.

Rules report at the key that needs editing (`required:` in the frontmatter, `P1-B4:` in
scoring.yaml), falling back to the enclosing key or the top of the file when the key is
absent, because "add X here" is still a place to go.
"""

from __future__ import annotations

from functools import lru_cache

from helmbench.spec.text import SourceText
from helmbench.spec.tree import Benchmark, Scenario
from helmbench.diagnostics import Span
from helmbench.spec.yamlio import LineDict, LineList, YamlError, load_yaml


def key_span(data, *path, default: int = 1) -> Span:
    """Span of the deepest key of `path` found (the key token itself)."""
    return _spans(data, path, default)[0]


def value_span(data, *path, default: int = 1) -> Span:
    """Span of the value of the deepest key of `path` found, or of a list item when the last
    part of `path` is an index (`required`, 1 → the second item of `required:`)."""
    return _spans(data, path, default)[1]


def _spans(data, path, default: int) -> tuple[Span, Span]:
    top = getattr(data, "line", default) if isinstance(data, (LineDict, LineList)) else default
    key = value = (top, 1, top, 1)
    node = data
    for part in path:
        if isinstance(node, LineDict) and part in node:
            # a key added by the loader (MCSQE.md's implied evaluation) has no span: keep the parent's
            key, value = node.key_spans.get(part, key), node.value_spans.get(part, value)
            node = node[part]
        elif isinstance(node, LineList) and isinstance(part, int) and 0 <= part < len(node):
            key = value = node.item_spans[part]
            node = node[part]
        else:
            break
    return key, value


def item_span(data, *path, value, default: int = 1) -> Span:
    """Span of the first item equal to `value` in the list at `path` (or of the whole value
    when it is a single item rather than a list)."""
    node = data
    for part in path:
        node = node.get(part) if isinstance(node, LineDict) else None
    if isinstance(node, LineList) and value in node:
        return value_span(data, *path, node.index(value), default=default)
    return value_span(data, *path, default=default)


def is_blank(src: SourceText | None) -> bool:
    """An existing file with nothing but white space in it (reported once, as HB316/HB317)."""
    return src is not None and not src.text.strip()


def has_prompt(sc: Scenario) -> bool:
    """The scenario's file loaded and is not empty: rules about its contents apply."""
    return sc.meta is not None and not is_blank(sc.source)


def body_usable(sc_or_component) -> bool:
    """Its frontmatter parsed (valid or not), so the text after it is the real body and not
    unparsed YAML: rules about the body's text still apply when only a value was wrong."""
    src = sc_or_component.source
    return (src is not None and not is_blank(src)
            and (sc_or_component.meta is not None or sc_or_component.frontmatter is not None))


def scenario_file(sc: Scenario) -> str:
    """The scenario's own file (S1.md / MCSQE.md), or its folder when there is none."""
    return sc.source.path if sc.source else sc.folder


def evaluation_span(sc: Scenario, *keys: str, value=None) -> Span:
    """Span of `evaluation.<keys>`'s value (of the item equal to `value` in a list)."""
    fm = sc.frontmatter
    default = fm.line if isinstance(fm, LineDict) else 1
    if value is not None:
        return item_span(fm, "evaluation", *keys, value=value, default=default)
    return value_span(fm, "evaluation", *keys, default=default)


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
