"""Turn Pydantic validation errors into located diagnostics with "did you mean" hints."""

from __future__ import annotations

import difflib
from typing import TypeVar

from pydantic import BaseModel, ValidationError

from helmbench.diagnostics import Collector
from helmbench.spec import models as m
from helmbench.spec.yamlio import LineDict

T = TypeVar("T", bound=BaseModel)


def _vocabulary() -> list[str]:
    names: set[str] = set()
    for obj in vars(m).values():
        if isinstance(obj, type) and issubclass(obj, BaseModel):
            names.update(obj.model_fields)
    return sorted(names)


_VOCAB = _vocabulary()


def suggest(word: str, choices: list[str] | None = None) -> str | None:
    match = difflib.get_close_matches(str(word), choices or _VOCAB, n=1, cutoff=0.6)
    return f"did you mean `{match[0]}`?" if match else None


def _locate(data, loc: tuple) -> tuple[int, int]:
    """Line and column of the deepest key of `loc` that exists in the YAML data."""
    line, col = (getattr(data, "line", 1), 1)
    node = data
    for part in loc:
        if isinstance(node, LineDict) and part in node:
            line, col = node.key_lines.get(part, (line, col))
            node = node[part]
        elif isinstance(node, list) and isinstance(part, int) and part < len(node):
            node = node[part]
            if isinstance(node, LineDict):
                line, col = node.line, 1
        # else: a union tag or model name inside loc; keep walking
    return line, col


def _code(err: dict) -> str:
    field = next((p for p in reversed(err["loc"]) if isinstance(p, str)), "")
    if err["type"] == "extra_forbidden":
        return "HB201"
    if err["type"] == "missing":
        return "HB202"
    if err["type"] in ("greater_than_equal", "less_than_equal", "greater_than", "less_than"):
        if field == "severity":
            return "HB204"
        if field == "difficulty":
            return "HB205"
    return "HB203"


def validate(model: type[T], data, path: str, out: Collector, *, what: str) -> T | None:
    """Validate YAML data against `model`; every error becomes one diagnostic."""
    try:
        return model.model_validate(data if data is not None else {})
    except ValidationError as exc:
        for err in exc.errors():
            loc = tuple(err["loc"])
            line, col = _locate(data, loc)
            code = _code(err)
            name = ".".join(str(p) for p in loc if isinstance(p, (str, int)) and p not in m.EVALUATION_TYPES)
            if code == "HB201":
                msg = f"unknown field `{name}` in {what}"
                hint = suggest(loc[-1])
            elif code == "HB202":
                msg = f"missing field `{name}` in {what}"
                hint = None
            else:
                value = err.get("input")
                shown = repr(value) if not isinstance(value, (dict, list)) else type(value).__name__
                msg = f"`{name}` in {what}: {err['msg'].lower()} (got {shown})"
                hint = None
            out.add(code, path, line, msg, col=col, hint=hint)
        return None
