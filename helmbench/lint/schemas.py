"""Reading a scenario's response schema: unwrap it, find a field, list its enum values.

A schema file is either a bare JSON Schema or the `response_format` wrapper
`{"type": "json_schema", "json_schema": {"name", "strict", "schema"}}`. Several rules need
the same view of it (the schema rules, the evaluation rules, the prompt-tag rule), so the
unwrapping and `$ref` following live here once.
"""

from __future__ import annotations

from dataclasses import dataclass


def is_wrapped(doc) -> bool:
    return isinstance(doc, dict) and (doc.get("type") == "json_schema" or "json_schema" in doc)


@dataclass(frozen=True)
class Inner:
    """The schema proper and the JSON path prefix at which it sits in the file."""

    schema: object
    prefix: tuple
    strict: bool = True  # False only when the wrapper says `"strict": false`


def inner(doc) -> Inner | None:
    """The schema inside the file, or None when the wrapper is too broken to find one."""
    if not is_wrapped(doc):
        return Inner(doc, ())
    js = doc.get("json_schema")
    if not isinstance(js, dict) or not isinstance(js.get("schema"), dict):
        return None
    return Inner(js["schema"], ("json_schema", "schema"), js.get("strict") is not False)


def resolve(root, node, depth: int = 0):
    """Follow a local `$ref` (`#/$defs/Tag`); anything else is returned unchanged."""
    while isinstance(node, dict) and isinstance(node.get("$ref"), str) and depth < 20:
        ref = node["$ref"]
        if not ref.startswith("#"):
            return node
        target = root
        for part in [p for p in ref[1:].split("/") if p]:
            part = part.replace("~1", "/").replace("~0", "~")
            if not isinstance(target, dict) or part not in target:
                return node
            target = target[part]
        node, depth = target, depth + 1
    return node


def types_of(node) -> set[str]:
    t = node.get("type") if isinstance(node, dict) else None
    if isinstance(t, str):
        return {t}
    return {x for x in t if isinstance(x, str)} if isinstance(t, list) else set()


def field(schema, name: str):
    """The (resolved) schema of top-level property `name`, or None."""
    props = schema.get("properties") if isinstance(schema, dict) else None
    if not isinstance(props, dict) or name not in props:
        return None
    return resolve(schema, props[name])


def enum_of(schema, node) -> list | None:
    """Allowed values of a scalar field (`enum`, or a single `const`)."""
    node = resolve(schema, node)
    if not isinstance(node, dict):
        return None
    if isinstance(node.get("enum"), list):
        return node["enum"]
    if "const" in node:
        return [node["const"]]
    return None


def all_enum_strings(schema) -> set[str]:
    """Every string enum value anywhere in the schema: the tags a prompt may name."""
    found: set[str] = set()
    stack = [schema]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            if isinstance(node.get("enum"), list):
                found.update(v for v in node["enum"] if isinstance(v, str))
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)
    return found


# Keywords whose values are data, not schemas: a `$ref` or `pattern` inside them means nothing.
_DATA_KEYWORDS = {"enum", "const", "examples", "default"}
_REF_KEYWORDS = ("$ref", "$dynamicRef", "$recursiveRef")


_NAMED_SCHEMAS = {"properties", "patternProperties", "$defs", "definitions", "dependentSchemas"}


def _walk(schema, prefix: tuple):
    """Every (schema object, path) in `schema`, iteratively (depth is bounded by the loader).

    Values of data keywords are skipped, except where the key is a property name (a property
    may be called `enum`).
    """
    stack = [(schema, prefix, False)]
    while stack:
        node, path, named = stack.pop()
        if isinstance(node, dict):
            if not named:
                yield node, path
            stack.extend((v, path + (k,), not named and k in _NAMED_SCHEMAS)
                         for k, v in node.items() if named or k not in _DATA_KEYWORDS)
        elif isinstance(node, list):
            stack.extend((v, path + (i,), False) for i, v in enumerate(node))


def _anchors(schema) -> set[str]:
    return {n[k] for n, _ in _walk(schema, ()) for k in ("$anchor", "$dynamicAnchor") if isinstance(n.get(k), str)}


def _points_inside(root, ref: str, anchors: set[str]) -> bool:
    fragment = ref[1:]
    if not fragment.startswith("/"):
        return fragment == "" or fragment in anchors
    target = root
    for part in fragment.split("/")[1:]:
        part = part.replace("~1", "/").replace("~0", "~")
        if isinstance(target, dict) and part in target:
            target = target[part]
        elif isinstance(target, list) and part.isdigit() and int(part) < len(target):
            target = target[int(part)]
        else:
            return False
    return True


def foreign_refs(schema, prefix: tuple = ()):
    """(path, message) for each reference that does not stay inside `schema`.

    The run stage validates answers with retrieval switched off, so such a reference would
    fail every answer after the calls were paid for; lint says so first.
    """
    anchors = _anchors(schema)
    for node, path in _walk(schema, prefix):
        if "$id" in node and path != prefix:
            yield path + ("$id",), "`$id` below the root changes what `#` refers to; remove it"
        for key in _REF_KEYWORDS:
            ref = node.get(key)
            if key not in node:
                continue
            if not isinstance(ref, str) or not ref.startswith("#"):
                yield path + (key,), f"`{key}` {str(ref)[:80]!r} points outside this schema; only `#…` references are allowed"
            elif not _points_inside(schema, ref, anchors):
                yield path + (key,), f"`{key}` {ref[:80]!r} does not point at anything in this schema"


def _only_repeat(items) -> bool:
    """Whether a parsed sequence is nothing but one unbounded repetition (through groups and
    alternatives: `a+`, `(?:\\w*)`, `x{2,3}`, one branch of `a|b+`)."""
    import re._constants as c

    if len(items) != 1:
        return False
    op, arg = items[0]
    if op in (c.MAX_REPEAT, c.MIN_REPEAT):
        return arg[1] > 1
    if op is c.SUBPATTERN:
        return _only_repeat(arg[-1])
    if op is c.BRANCH:
        return any(_only_repeat(branch) for branch in arg[1])
    return False


def _nested_repeat(items) -> bool:
    """Whether a parsed pattern repeats a group that is itself only a repetition (`(a+)+`,
    `(\\w*)*`, `(a|b+)*`): the classic shapes of exponential backtracking.

    Python's regex engine backtracks: on a string that almost matches, such a pattern takes
    exponential time, and a model's answer is checked against it in the middle of a paid run,
    which would then hang. A repetition with a delimiter (`([a-z]+-)*`) is unambiguous and
    allowed. The parse tree comes from the standard library's own parser.
    """
    import re._constants as c

    for op, arg in items:
        if op in (c.MAX_REPEAT, c.MIN_REPEAT):
            if arg[1] > 1 and _only_repeat(arg[2]):
                return True
            if _nested_repeat(arg[2]):
                return True
        elif op is c.SUBPATTERN and _nested_repeat(arg[-1]):
            return True
        elif op is c.BRANCH and any(_nested_repeat(branch) for branch in arg[1]):
            return True
        elif op in (c.ASSERT, c.ASSERT_NOT) and _nested_repeat(arg[1]):
            return True
    return False


def bad_patterns(schema, prefix: tuple = ()):
    """(path, message) for each `pattern` or `patternProperties` key that is not a valid regex,
    or that nests one unbounded repetition inside another (exponential backtracking)."""
    import re
    import re._parser

    for node, path in _walk(schema, prefix):
        found = [(path + ("pattern",), node["pattern"])] if isinstance(node.get("pattern"), str) else []
        if isinstance(node.get("patternProperties"), dict):
            found += [(path + ("patternProperties", k), k) for k in node["patternProperties"]]
        for where, pattern in found:
            try:
                re.compile(pattern)
                nested = _nested_repeat(re._parser.parse(pattern))
            except (re.error, RecursionError, OverflowError) as exc:
                yield where, f"`{pattern[:80]}` is not a valid regular expression: {exc}"
                continue
            if nested:
                yield where, (f"`{pattern[:80]}` repeats a group that itself repeats, which can take exponential "
                              "time to check against an answer; write it without the nested repetition")
