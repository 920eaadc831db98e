"""YAML loading that keeps a line number for every key and rejects duplicate keys.

PyYAML's safe loader silently keeps the last of two equal keys and forgets where keys
were; authors need both facts to fix a file, so mappings come back as `LineDict`s.
"""

from __future__ import annotations

from dataclasses import dataclass

import yaml


class LineDict(dict):
    """A dict that remembers the 1-based (line, col) of each key and of itself."""

    key_lines: dict
    line: int

    def line_of(self, key, default: int | None = None) -> int:
        return self.key_lines.get(key, (default or self.line, 1))[0]


@dataclass(frozen=True)
class DuplicateKey:
    key: str
    line: int
    col: int
    first_line: int


class _Loader(yaml.SafeLoader):
    pass


def _construct_mapping(loader: _Loader, node: yaml.MappingNode, deep: bool = False):
    loader.flatten_mapping(node)
    result = LineDict()
    result.key_lines = {}
    result.line = node.start_mark.line + 1
    for key_node, value_node in node.value:
        key = loader.construct_object(key_node, deep=True)
        try:
            hash(key)
        except TypeError:
            raise yaml.constructor.ConstructorError(
                None, None, "a mapping key must be a plain value", key_node.start_mark
            )
        pos = (key_node.start_mark.line + 1, key_node.start_mark.column + 1)
        if key in result.key_lines:
            loader.duplicates.append(DuplicateKey(str(key), pos[0], pos[1], result.key_lines[key][0]))
        result[key] = loader.construct_object(value_node, deep=True)
        result.key_lines[key] = pos
    return result


_Loader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _construct_mapping)


class YamlError(Exception):
    def __init__(self, message: str, line: int, col: int):
        super().__init__(message)
        self.message, self.line, self.col = message, line, col


def load_yaml(text: str, line_offset: int = 0) -> tuple[object, list[DuplicateKey]]:
    """Parse one YAML document; line numbers are shifted by `line_offset` (frontmatter)."""
    loader = _Loader(text)
    loader.duplicates = []
    try:
        data = loader.get_single_data()
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = (mark.line + 1 if mark else 1) + line_offset
        col = mark.column + 1 if mark else 1
        problem = exc.problem or str(exc)
        if exc.context:
            problem = f"{exc.context}: {problem}"
        raise YamlError(f"YAML syntax error: {problem}", line, col) from None
    except yaml.YAMLError as exc:
        raise YamlError(f"YAML syntax error: {exc}", 1 + line_offset, 1) from None
    finally:
        loader.dispose()
    if line_offset:
        _shift(data, line_offset)
    dups = [DuplicateKey(d.key, d.line + line_offset, d.col, d.first_line + line_offset) for d in loader.duplicates]
    return data, dups


def _shift(data, offset: int) -> None:
    if isinstance(data, LineDict):
        data.line += offset
        data.key_lines = {k: (l + offset, c) for k, (l, c) in data.key_lines.items()}
        for v in data.values():
            _shift(v, offset)
    elif isinstance(data, list):
        for v in data:
            _shift(v, offset)
