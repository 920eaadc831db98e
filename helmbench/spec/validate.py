"""Turn validation errors into located diagnostics in the author's words.

The models are checked by Pydantic, but its phrasing ("Input should be a valid integer",
"input tag … found using 'type'") and its class names never reach an author: each error is
rewritten as what is wrong, what is expected, and a "did you mean" drawn from the keys or
values allowed at that very place. Each finding points at the offending token: the unknown
key, the wrong value, the wrong list item, or (for a missing key) the key that should hold it.
"""

from __future__ import annotations

import difflib
import types
import typing
from typing import TypeVar

from pydantic import BaseModel, ValidationError

from helmbench.diagnostics import Collector
from helmbench.spec import models as m
from helmbench.spec.yamlio import LineDict, LineList

T = TypeVar("T", bound=BaseModel)


def _vocabulary() -> list[str]:
    names: set[str] = set()
    for obj in vars(m).values():
        if isinstance(obj, type) and issubclass(obj, BaseModel):
            names.update(obj.model_fields)
    return sorted(names)


_VOCAB = _vocabulary()


def closest(word, choices) -> str | None:
    match = difflib.get_close_matches(str(word), [str(c) for c in choices], n=1, cutoff=0.6)
    return match[0] if match else None


def suggest(word: str, choices: list[str] | None = None) -> str | None:
    match = closest(word, _VOCAB if choices is None else choices)
    return f"did you mean `{match}`?" if match else None


def component_code_hint(heading: str, kind: str) -> str:
    """"did you mean `# PT2`?" for `# PT 2`, `# pt2`, `# P2` or `# PT2.` in perturbations.md."""
    from helmbench.spec.naming import COMPONENT_RE

    prefix = {"condition": "C", "user_context": "U", "perturbation": "PT"}[kind]
    squeezed = "".join(ch for ch in heading.split(":")[0].upper() if ch.isalnum())
    digits = "".join(ch for ch in squeezed if ch.isdigit())
    if COMPONENT_RE[kind].match(squeezed):
        return f"did you mean `# {squeezed}`?"
    other = next((k for k, rx in COMPONENT_RE.items() if k != kind and rx.match(squeezed)), None)
    if other:
        return f"`{squeezed}` is a {other.replace('_', ' ')} code; in this file write `# {prefix}{digits or 1}`"
    if digits and len(squeezed) <= len(prefix) + len(digits) + 2 and squeezed[:1] == prefix[:1]:
        return f"did you mean `# {prefix}{digits}`?"
    return f"write `# {prefix}1`, `# {prefix}2`, …"


# --- where in the YAML -----------------------------------------------------------------------


def _walk(data, loc: tuple):
    """(names, node, parent, key span, value span) following `loc` through the YAML data.

    Parts of `loc` that are not in the data (a union member such as `list_includes` or
    `list[str]`) are skipped; a final part that is absent (a missing key) is kept as a name.
    """
    top = getattr(data, "line", 1)
    key_span = value_span = (top, 1, top, 1)
    node, parent, names = data, None, []
    for n, part in enumerate(loc):
        if isinstance(node, LineDict) and part in node:
            key_span = node.key_spans.get(part, key_span)
            value_span = node.value_spans.get(part, value_span)
            parent, node = node, node[part]
            names.append(str(part))
        elif isinstance(node, list) and isinstance(part, int) and 0 <= part < len(node):
            if isinstance(node, LineList):
                key_span = value_span = node.item_spans[part]
            parent, node = node, node[part]
            names.append(part)  # an int: shown 1-based by _dotted
        elif n == len(loc) - 1 and isinstance(part, str) and not _is_member_tag(part):
            names.append(part)
            node = None  # absent
    return names, node, parent, key_span, value_span


def _evaluation_types() -> tuple[str, ...]:
    from helmbench.plugins import registry

    return registry.evaluation_types()


def _is_member_tag(part: str) -> bool:
    return part in _evaluation_types() or part in _TYPE_WORDS or "[" in part


# --- what is allowed at a place -----------------------------------------------------------


def _unwrap(tp) -> list:
    """The concrete types behind Annotated / Optional / Union."""
    origin = typing.get_origin(tp)
    if origin is typing.Annotated:
        return _unwrap(typing.get_args(tp)[0])
    if origin in (typing.Union, types.UnionType):
        return [t for a in typing.get_args(tp) for t in _unwrap(a)]
    return [tp]


def _allowed_keys(model: type[BaseModel], loc: tuple) -> list[str]:
    """Field names of the model(s) that the mapping at `loc` is validated against."""
    candidates = [model]
    for part in loc:
        nxt = []
        for c in candidates:
            if isinstance(c, type) and issubclass(c, BaseModel):
                if part in c.model_fields:
                    nxt += _unwrap(c.model_fields[part].annotation)
                elif part in _evaluation_types() and _literal_of(c) == part:
                    nxt.append(c)
            elif typing.get_origin(c) is dict:
                nxt += _unwrap(typing.get_args(c)[1])
            elif typing.get_origin(c) is list and isinstance(part, int):
                nxt += _unwrap(typing.get_args(c)[0])
        candidates = nxt or candidates
    return sorted({f for c in candidates if isinstance(c, type) and issubclass(c, BaseModel) for f in c.model_fields})


def _literal_of(c: type[BaseModel]) -> str | None:
    field = c.model_fields.get("type")
    if field is None:
        return None
    args = typing.get_args(field.annotation)
    return args[0] if args else None


# --- messages ---------------------------------------------------------------------------------

_TYPE_WORDS = {
    "str": "text", "int": "a whole number", "float": "a number", "bool": "true or false",
    "list[str]": "a list of text", "dict": "a mapping of keys to values",
}
_EXPECTS = {
    "string_type": "text", "int_type": "a whole number", "int_parsing": "a whole number",
    "float_type": "a number", "float_parsing": "a number", "bool_type": "true or false",
    "list_type": "a list", "dict_type": "a mapping of keys to values",
    "model_type": "a mapping of keys to values", "model_attributes_type": "a mapping of keys to values",
    "none_required": "nothing",
}
_BOUNDS = {"ge": "at least", "le": "at most", "gt": "greater than", "lt": "less than"}


def _shown(value) -> str:
    if isinstance(value, dict):
        return "a mapping"
    if isinstance(value, list):
        return "a list"
    if value is None:
        return "nothing"
    if isinstance(value, bool):
        return "`true`" if value else "`false`"
    text = str(value)
    return f"`{text[:60]}…`" if len(text) > 60 else f"`{text}`"


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def _code(kind: str, field: str) -> str:
    if kind == "extra_forbidden":
        return "HB201"
    if kind == "missing":
        return "HB202"
    if kind in ("greater_than_equal", "less_than_equal", "greater_than", "less_than"):
        if field == "severity":
            return "HB204"
        if field == "difficulty":
            return "HB205"
    return "HB203"


def _dotted(names: list) -> str:
    """`models[1].id`: list positions counted from 1, as an author counts items."""
    out = ""
    for part in names:
        out += f"[{part + 1}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


#: Fields whose wrong value may be a secret pasted where a variable's name belongs: shown by name only.
SECRET_FIELDS = ("api_key_env",)


def _describe(model, loc, errs: list[dict], names: list[str], what: str) -> tuple[str, str | None]:
    """(message, hint) for the errors at one place (several when a union's members all failed)."""
    err = errs[0]
    kind, ctx, value = err["type"], err.get("ctx") or {}, err.get("input")
    name = _dotted(names) or "the file"
    if kind == "extra_forbidden":
        allowed = _allowed_keys(model, loc[:-1])
        hint = suggest(loc[-1], allowed) if allowed else suggest(loc[-1])
        known = f"; known keys here: {', '.join(allowed)}" if allowed and not hint else ""
        return f"unknown key `{names[-1] if names else loc[-1]}` in {what}{known}", hint
    if kind == "missing":
        where = f"`{_dotted(names[:-1])}`" if names[:-1] else what
        return f"`{names[-1]}` is missing from {where}", f"add `{names[-1]}:`"
    if kind == "union_tag_invalid":
        tag = ctx.get("tag")
        expected = [t.strip(" '") for t in str(ctx.get("expected_tags", "")).split(",") if t.strip(" '")]
        meant = closest(tag, expected)
        # a type no installed plugin registers: a typo, or the plugin that provides it is missing or disabled
        hint = (f"did you mean `{meant}`? " if meant else "") + \
            (f"if `{tag}` comes from a plugin, install it (`helmbench plugins` lists the loaded ones) "
             "or check that HELMBENCH_DISABLE_PLUGINS does not name it")
        return f"unknown {name} type `{tag}`; expected one of {', '.join(expected)}", hint
    if kind == "literal_error":
        expected = [t.strip(" '") for t in str(ctx.get("expected", "")).replace(" or ", ",").split(",") if t.strip(" '")]
        meant = closest(value, expected)
        return (f"`{name}` must be one of {', '.join(expected)} (got {_shown(value)})",
                f"did you mean `{meant}`?" if meant else None)
    if kind in _EXPECTS or all(e["type"] in _EXPECTS for e in errs):
        wanted = " or ".join(dict.fromkeys(_EXPECTS.get(e["type"], "another value") for e in errs))
        quoted = isinstance(value, str) and kind in ("int_type", "float_type") and _is_number(value)
        return (f"`{name}` in {what} must be {wanted} (got {_shown(value)})",
                f"write it without quotes: `{names[-1]}: {value}`" if quoted and names else None)
    bound = next((k for k in _BOUNDS if k in ctx), None)
    if bound:
        limit = ctx[bound]
        limit = int(limit) if isinstance(limit, float) and limit.is_integer() else limit
        return f"`{name}` in {what} must be {_BOUNDS[bound]} {limit} (got {_shown(value)})", None
    if kind == "too_short":
        return f"`{name}` in {what} must list at least {ctx.get('min_length', 1)} value(s)", None
    if kind == "string_pattern_mismatch":
        if names and names[-1] in SECRET_FIELDS:  # it may be the key itself (lint HB610): never repeated
            return (f"`{name}` in {what} must be the NAME of an environment variable (letters, digits and "
                    "underscores), not its value", f"{names[-1]}: LOCAL_KEY, and export LOCAL_KEY=<the key>")
        if names and names[-1] == "id":
            return f"`{name}` in {what} must be an OpenRouter model id such as `openai/gpt-4.1-mini` (got {_shown(value)})", None
        return f"`{name}` in {what} does not have the expected form (got {_shown(value)})", None
    return f"`{name}` in {what} has a value that is not allowed here (got {_shown(value)})", None


def _last_member(data, loc: tuple) -> int | None:
    """Index in `loc` of the last union member's tag (`list[ModelEntry]`), a part that names no key or
    item of the data; None when the place is in no union."""
    node, found = data, None
    for n, part in enumerate(loc):
        if isinstance(node, dict) and part in node:
            node = node[part]
        elif isinstance(node, list) and isinstance(part, int) and 0 <= part < len(node):
            node = node[part]
        elif isinstance(part, str) and (n < len(loc) - 1 or _is_member_tag(part)):
            found = n  # a member tag: the value stays where it is
        else:
            break
    return found


def _matched_shapes(data, errors: list[dict]) -> list[dict]:
    """The errors without a union member's "wrong type" when another member took the value's shape.

    `marking_model: ModelEntry | list[ModelEntry]` given a mapping with a misspelt key fails as a list
    (list_type) and as a mapping (the unknown key): only the mapping's finding is about what the author
    wrote, so a member's type mismatch is left out when another member of the same union failed deeper
    inside the value. With no member going deeper (`marking_model: 5`), every member's type is kept."""
    at = [(_last_member(data, tuple(e["loc"])), tuple(e["loc"])) for e in errors]

    def went_deeper(n: int, loc: tuple) -> bool:
        return any(len(other) > n + 1 and other[:n] == loc[:n] and other[n] != loc[n] and m is not None
                   for m, other in at)

    return [e for e, (n, loc) in zip(errors, at)
            if not (n is not None and n == len(loc) - 1 and e["type"] in _EXPECTS and went_deeper(n, loc))]


def validate(model: type[T], data, path: str, out: Collector, *, what: str) -> T | None:
    """Validate YAML data against `model`; every wrong place becomes one diagnostic."""
    try:
        return model.model_validate(data if data is not None else {})
    except ValidationError as exc:
        places: dict[tuple, list[dict]] = {}
        for err in _matched_shapes(data, exc.errors()):
            loc = tuple(err["loc"])
            names = tuple(_walk(data, loc)[0])
            places.setdefault((names, err["type"] == "missing", err["type"] == "extra_forbidden"), []).append(err)
        for errs in places.values():
            loc = tuple(errs[0]["loc"])
            names, node, parent, key_span, value_span = _walk(data, loc)
            kind = errs[0]["type"]
            if kind == "extra_forbidden":
                span = key_span
            elif kind == "missing":
                span = key_span if len(names) > 1 else (getattr(data, "line", 1), 1, getattr(data, "line", 1), 1)
            elif kind == "union_tag_invalid" and isinstance(node, LineDict) and "type" in node:
                span = node.value_spans["type"]
            else:
                span = value_span
            message, hint = _describe(model, loc, errs, names, what)
            field = names[-1] if names else ""
            out.add(_code(kind, field), path, span, message, hint=hint)
        return None
