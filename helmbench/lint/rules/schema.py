"""Rules about each scenario's response schema file (`S1.json`).

The schema is sent to the provider as a strict structured-output `response_format`; a schema
the provider rejects fails every case of the scenario at run time, after money is spent, so
the problems are found here instead.
"""

from __future__ import annotations

import json
import re

from helmbench.diagnostics import Collector
from helmbench.lint import schemas
from helmbench.lint.jsonpos import locate
from helmbench.lint.rulebook import rule
from helmbench.spec.tree import Benchmark, Scenario
from helmbench.spec.validate import suggest

_NAME = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
_WRAPPER_KEYS = {"name", "strict", "schema", "description"}


def _wrapper_problems(doc: dict):
    """(path, message) for each way the response_format wrapper is malformed."""
    if doc.get("type") != "json_schema":
        yield ("type",), f'wrapper `type` must be "json_schema" (got {doc.get("type")!r})'
    for key in sorted(set(doc) - {"type", "json_schema"}, key=str):
        yield (key,), f"unexpected key `{key}` in the response_format wrapper"
    js = doc.get("json_schema")
    if not isinstance(js, dict):
        yield ("json_schema",), "`json_schema` must be an object holding `name`, `strict` and `schema`"
        return
    name = js.get("name")
    if not isinstance(name, str) or not _NAME.match(name):
        yield ("json_schema", "name"), "`json_schema.name` must be 1-64 letters, digits, `_` or `-`"
    if "strict" in js and not isinstance(js["strict"], bool):
        yield ("json_schema", "strict"), "`json_schema.strict` must be true or false"
    if not isinstance(js.get("schema"), dict):
        yield ("json_schema", "schema"), "`json_schema.schema` must be a JSON Schema object"
    for key in sorted(set(js) - _WRAPPER_KEYS, key=str):
        yield ("json_schema", key), f"unexpected key `{key}` in `json_schema`"


def _children(node: dict, path: tuple):
    for key in ("properties", "$defs", "definitions", "patternProperties"):
        if isinstance(node.get(key), dict):
            for name, sub in node[key].items():
                yield sub, path + (key, name)
    for key in ("items", "additionalItems", "contains", "not", "if", "then", "else"):
        if isinstance(node.get(key), dict):
            yield node[key], path + (key,)
    for key in ("anyOf", "oneOf", "allOf", "prefixItems", "items"):
        if isinstance(node.get(key), list):
            for i, sub in enumerate(node[key]):
                yield sub, path + (key, i)


def strict_problems(schema, path: tuple = ()):
    """(path, message) for what strict structured outputs reject, recursively."""
    if not isinstance(schema, dict) or "object" not in schemas.types_of(schema):
        yield path, "the root of a strict response schema must be `\"type\": \"object\"`"
        if not isinstance(schema, dict):
            return
    stack = [(schema, path)]
    while stack:
        node, at = stack.pop()
        if not isinstance(node, dict):
            continue
        if "object" in schemas.types_of(node) or "properties" in node:
            if node.get("additionalProperties") is not False:
                yield at, "object without `\"additionalProperties\": false`"
            props = node.get("properties") if isinstance(node.get("properties"), dict) else {}
            required = node.get("required") if isinstance(node.get("required"), list) else []
            for name in props:
                if name not in required:
                    yield at + ("properties", name), f"property `{name}` is not listed in `required`"
        stack.extend(_children(node, at))


def _meta_schema_errors(schema):
    from jsonschema.validators import Draft202012Validator  # only paid for when a schema exists

    validator = Draft202012Validator(Draft202012Validator.META_SCHEMA)
    unique = {}
    for err in validator.iter_errors(schema):  # the meta-schema's vocabularies repeat errors
        unique.setdefault((tuple(err.absolute_path), err.message), err)
    return [unique[k] for k in sorted(unique, key=lambda k: ([str(p) for p in k[0]], k[1]))]


_TYPES = "string, number, integer, boolean, object, array, null"
_KINDS = {"array": "a list `[...]`", "object": "an object `{...}`", "string": "text in quotes",
          "integer": "a whole number", "number": "a number", "boolean": "true or false"}


def _plain(err) -> str:
    """The meta-schema's complaint without its vocabulary ("not valid under any of the given schemas")."""
    value = json.dumps(err.instance, ensure_ascii=False)
    value = value if len(value) <= 60 else value[:59] + "…"
    if err.validator in ("anyOf", "oneOf") and err.absolute_path and err.absolute_path[-1] == "type":
        return f"{value} is not a JSON Schema type"
    if err.validator == "type":
        wanted = err.validator_value if isinstance(err.validator_value, list) else [err.validator_value]
        return f"{value} must be " + " or ".join(_KINDS.get(w, str(w)) for w in wanted)
    if err.validator in ("anyOf", "oneOf"):
        return f"{value} is not a form allowed here"
    if err.validator == "enum":
        return f"{value} must be one of " + ", ".join(json.dumps(v) for v in err.validator_value)
    return err.message


@rule("HB401", "HB402", "HB403")
def response_schema(bench: Benchmark, out: Collector) -> None:
    for sc in bench.scenarios:
        if sc.schema_source is None:
            continue
        if sc.schema is not None:
            check_schema_file(sc, out)
        elif sc.schema_source.text.strip() == "null":  # valid JSON, so the loader let it through
            out.add("HB401", sc.schema_source.path, 1, "the response schema file holds `null`, not a schema")


def check_schema_file(sc: Scenario, out: Collector) -> None:
    src, doc = sc.schema_source, sc.schema

    def add(code: str, path: tuple, message: str, hint: str | None = None) -> None:
        line, col = locate(src.text, path)
        out.add(code, src.path, line, message, col=col, hint=hint)

    if schemas.is_wrapped(doc):
        problems = list(_wrapper_problems(doc))
        for path, message in problems:
            add("HB402", path, message,
                hint='write {"type": "json_schema", "json_schema": {"name": "…", "strict": true, "schema": {…}}} '
                     "or give the bare schema")
        if problems:
            return
    found = schemas.inner(doc)
    errors = _meta_schema_errors(found.schema)
    for err in errors:
        path = found.prefix + tuple(err.absolute_path)
        where = "/".join(str(p) for p in err.absolute_path) or "the root"
        hint = None
        if err.absolute_path and err.absolute_path[-1] == "type":
            hint = suggest(str(err.instance), _TYPES.split(", ")) or f"JSON Schema types are {_TYPES}"
        add("HB401", path, f"not a valid JSON Schema at {where}: {_plain(err)}", hint)
    if errors or not found.strict:
        return
    for path, message in strict_problems(found.schema, found.prefix):
        where = "/".join(str(p) for p in path[len(found.prefix):]) or "the root"
        add("HB403", path, f"not usable with strict structured outputs: {message} (at {where})",
            hint="strict mode needs an object root, every property in `required` and "
                 "`additionalProperties: false` on every object")
