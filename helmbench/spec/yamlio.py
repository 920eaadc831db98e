"""YAML loading that keeps a line number for every key and rejects duplicate keys.

PyYAML's safe loader silently keeps the last of two equal keys and forgets where keys
were; authors need both facts to fix a file, so mappings come back as `LineDict`s.

Authored YAML comes from strangers' pull requests, so the parser is bounded: a document may
nest at most `MAX_DEPTH` levels (PyYAML composes recursively and would raise RecursionError)
and expand to at most `MAX_NODES` values counting every alias as the copy it stands for (an
"alias bomb" of a few hundred bytes otherwise expands to billions of values). Numbers must be
finite and fit in 64 bits, because `.inf`/`.nan` or a 5,000-digit integer pass schema checks
that compare with `>` and then crash JSON encoding in compile. The authors' own files use no
anchors at all, so these bounds only ever meet hostile input.
"""

from __future__ import annotations

import math
import re
import unicodedata
from dataclasses import dataclass

import yaml

from helmbench.spec.yamlwords import syntax_message

Span = tuple[int, int, int, int]  # 1-based (line, col, end_line, end_col); end_col is just past the token


def _span(node: yaml.Node) -> Span:
    start, end = node.start_mark, node.end_mark
    return (start.line + 1, start.column + 1, end.line + 1, end.column + 1)


class LineDict(dict):
    """A dict that remembers the 1-based (line, col) of each key and of itself, and the span
    of each key and value token (so a finding can point at the wrong value, not its key)."""

    key_lines: dict
    key_spans: dict
    value_spans: dict
    line: int

    def line_of(self, key, default: int | None = None) -> int:
        return self.key_lines.get(key, (default or self.line, 1))[0]


class LineList(list):
    """A list that remembers the span of each item (`required: [A, B]` points at `B`)."""

    item_spans: list
    line: int


@dataclass(frozen=True)
class DuplicateKey:
    key: str
    line: int
    col: int
    first_line: int


MAX_DEPTH = 50  # nested collections in one document; the authors' files nest at most ~5
MAX_NODES = 5_000  # values in one document after expanding aliases (models.yml of 50 models: ~500)
MAX_INT = 2**63  # integers beyond 64 bits cannot be sent to a provider or stored in SQLite


class _Refused(yaml.MarkedYAMLError):
    """A well-formed document that exceeds a bound; carries its own diagnostic code."""

    def __init__(self, code: str, problem: str, mark):
        super().__init__(None, None, problem, mark)
        self.code = code


class _Loader(yaml.SafeLoader):
    depth = 0
    aliases = 0

    def compose_node(self, parent, index):
        if self.check_event(yaml.AliasEvent):
            event = self.peek_event()
            node = self.anchors.get(event.anchor)
            if node is not None and id(node) not in self.sizes:
                raise _Refused("HB150", f"alias *{event.anchor} refers to the collection that contains it",
                               event.start_mark)
            self.aliases += 1
            return super().compose_node(parent, index)
        mark = self.peek_event().start_mark
        self.depth += 1
        if self.depth > MAX_DEPTH:
            raise _Refused("HB151", f"nesting deeper than {MAX_DEPTH} levels", mark)
        try:
            node = super().compose_node(parent, index)
        finally:
            self.depth -= 1
        self.sizes[id(node)] = size = 1 + sum(self.sizes[id(c)] for c in _children(node))
        if size > MAX_NODES:
            if self.aliases:
                raise _Refused("HB150", f"aliases expand this YAML to more than {MAX_NODES:,} values", mark)
            raise _Refused("HB152", f"YAML document with more than {MAX_NODES:,} values", mark)
        return node


def _children(node):
    if isinstance(node, yaml.SequenceNode):
        return node.value
    if isinstance(node, yaml.MappingNode):
        return [n for pair in node.value for n in pair]
    return ()


def _construct_float(loader: _Loader, node):
    value = yaml.SafeLoader.construct_yaml_float(loader, node)
    if not math.isfinite(value):
        raise _Refused("HB156", f"number `{node.value}` is not finite", node.start_mark)
    return value


def _construct_int(loader: _Loader, node):
    if len(node.value) > 40:  # before int(): a 5,000-digit literal is refused without converting it
        raise _Refused("HB156", "integer does not fit in 64 bits", node.start_mark)
    value = yaml.SafeLoader.construct_yaml_int(loader, node)
    if abs(value) >= MAX_INT:
        raise _Refused("HB156", f"integer `{node.value}` does not fit in 64 bits", node.start_mark)
    return value


def _construct_mapping(loader: _Loader, node: yaml.MappingNode, deep: bool = False):
    loader.flatten_mapping(node)
    result = LineDict()
    result.key_lines, result.key_spans, result.value_spans = {}, {}, {}
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
        result.key_spans[key] = _span(key_node)
        result.value_spans[key] = _span(value_node)
    return result


def _construct_sequence(loader: _Loader, node: yaml.SequenceNode, deep: bool = False):
    result = LineList(loader.construct_object(child, deep=True) for child in node.value)
    result.item_spans = [_span(child) for child in node.value]
    result.line = node.start_mark.line + 1
    return result


_Loader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _construct_mapping)
_Loader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_SEQUENCE_TAG, _construct_sequence)
_Loader.add_constructor("tag:yaml.org,2002:float", _construct_float)
_Loader.add_constructor("tag:yaml.org,2002:int", _construct_int)


class YamlError(Exception):
    """Why a document could not be read; `code` is HB101 (syntax) or the bound it exceeds.

    A syntax error is located at the start of the construct it belongs to (the `[` that is
    never closed), with the parser's own position (where it gave up) as `parser_at`."""

    def __init__(self, message: str, line: int, col: int, code: str = "HB101",
                 parser_at: tuple[int, int] | None = None):
        super().__init__(message)
        self.message, self.line, self.col, self.code, self.parser_at = message, line, col, code, parser_at


_UNCLOSED = ("flow sequence", "flow mapping", "quoted scalar")


class _InertTagsLoader(_Loader):
    """Reads configuration as data: a value with a tag no safe loader knows (`!ENV`, `!relative`,
    `!!python/object/apply:os.system`) becomes None and is recorded, never constructed."""


def _inert(loader, suffix, node):
    loader.inert.append((node.tag, node.start_mark.line + 1))
    return None


_InertTagsLoader.add_multi_constructor("", _inert)


def load_yaml(text: str, line_offset: int = 0, *, inert_tags: list | None = None) -> tuple[object, list[DuplicateKey]]:
    """Parse one YAML document; line numbers are shifted by `line_offset` (frontmatter).

    `inert_tags`: a list to collect (tag, line) of values with unknown tags, which are read as
    None instead of refusing the document (for a configuration file written for another tool)."""
    try:  # the reader refuses a character YAML does not allow before parsing starts
        loader = _Loader(text) if inert_tags is None else _InertTagsLoader(text)
    except yaml.reader.ReaderError as exc:
        raise _unacceptable(text, exc, line_offset) from None
    loader.inert = inert_tags
    loader.duplicates = []
    loader.sizes = {}
    try:
        data = loader.get_single_data()
    except _Refused as exc:
        mark = exc.problem_mark
        raise YamlError(exc.problem, mark.line + 1 + line_offset, mark.column + 1, exc.code) from None
    except yaml.MarkedYAMLError as exc:
        # An unclosed bracket or quote belongs where it opened (the parser only notices at
        # the end of the text); other errors belong where the parser stopped.
        opened = bool(exc.context_mark) and any(w in (exc.context or "") for w in _UNCLOSED)
        mark = exc.context_mark if opened else (exc.problem_mark or exc.context_mark)
        line = (mark.line + 1 if mark else 1) + line_offset
        col = mark.column + 1 if mark else 1
        parser_at = None
        if opened and exc.problem_mark and exc.problem_mark.line != exc.context_mark.line:
            parser_at = (exc.problem_mark.line + 1 + line_offset, exc.problem_mark.column + 1)
        raise YamlError(syntax_message(exc.context, exc.problem or str(exc)), line, col,
                        parser_at=parser_at) from None
    except yaml.YAMLError as exc:
        raise YamlError(syntax_message(None, str(exc)), 1 + line_offset, 1) from None
    except (ValueError, OverflowError) as exc:  # e.g. a timestamp `2024-13-45`: a value, not syntax
        raise YamlError(f"YAML value cannot be read: {exc}", 1 + line_offset, 1) from None
    finally:
        loader.dispose()
    if line_offset:
        _shift(data, line_offset, set())
    dups = [DuplicateKey(d.key, d.line + line_offset, d.col, d.first_line + line_offset) for d in loader.duplicates]
    return data, dups


_BREAK = re.compile(r"\r\n|\r|\n")


def _unacceptable(text: str, exc: yaml.reader.ReaderError, line_offset: int) -> YamlError:
    """A character YAML does not allow anywhere, even in a comment (ESC, BEL, DEL, a lone surrogate),
    located at the character itself: it is invisible in most editors, so its code point is named."""
    pos = exc.position if isinstance(exc.position, int) else 0
    breaks = list(_BREAK.finditer(text, 0, pos))
    line = len(breaks) + 1 + line_offset
    col = pos - (breaks[-1].end() if breaks else 0) + 1
    char = exc.character if isinstance(exc.character, int) else ord(text[pos]) if pos < len(text) else 0
    kind = "control character" if unicodedata.category(chr(char)) == "Cc" else "character"
    return YamlError(f"YAML syntax error: {kind} U+{char:04X} is not allowed anywhere in YAML, comments included "
                     "(most editors do not show it): delete it", line, col)


def _shift_span(span: Span, offset: int) -> Span:
    return (span[0] + offset, span[1], span[2] + offset, span[3])


def _shift(data, offset: int, seen: set[int]) -> None:
    """Move line numbers by `offset`, visiting each object once (an alias shares its target)."""
    if id(data) in seen:
        return
    seen.add(id(data))
    if isinstance(data, LineDict):
        data.line += offset
        data.key_lines = {k: (l + offset, c) for k, (l, c) in data.key_lines.items()}
        data.key_spans = {k: _shift_span(v, offset) for k, v in data.key_spans.items()}
        data.value_spans = {k: _shift_span(v, offset) for k, v in data.value_spans.items()}
        for v in data.values():
            _shift(v, offset, seen)
    elif isinstance(data, list):
        if isinstance(data, LineList):
            data.line += offset
            data.item_spans = [_shift_span(v, offset) for v in data.item_spans]
        for v in data:
            _shift(v, offset, seen)
