"""Parse a model's answer as JSON and check it against the response schema (jsonschema).

Structured outputs are requested, but providers do not all enforce them and truncated or
schema-violating content comes back as a normal response; so the answer is validated here.
A single surrounding ``` fence is tolerated (some providers add one when they ignore
response_format): the JSON inside is what the model said.
"""

from __future__ import annotations

import json
import re
from functools import lru_cache
from typing import Any

from jsonschema import Draft202012Validator
from jsonschema.exceptions import best_match
from jsonschema.validators import validator_for
from referencing import Registry
from referencing.exceptions import Unresolvable

MAX_REASON = 300


class OutputError(ValueError):
    """The model's output is unusable; the message is the FAIL reason.

    `format_failure` is False when the fault is the benchmark's (a schema that cannot be used),
    not the model's answer."""

    def __init__(self, message: str, *, format_failure: bool = True):
        super().__init__(message)
        self.format_failure = format_failure


def _unfence(text: str) -> str:
    s = text.strip()
    if s.startswith("```") and s.endswith("```") and s.count("```") == 2:
        s = s[3:-3]
        first, _, rest = s.partition("\n")
        return rest if first.strip().isalpha() or not first.strip() else s
    return s


@lru_cache(maxsize=256)
def _validator(schema_json: str):
    # An empty registry never retrieves: a `$ref` to a URL or a file is unresolvable instead of
    # fetched (lint refuses such schemas; this guards a manifest edited by hand).
    schema = json.loads(schema_json)
    return validator_for(schema, default=Draft202012Validator)(schema, registry=Registry())


def schema_of(response_format: dict | None) -> dict | None:
    if not response_format or response_format.get("type") != "json_schema":
        return None
    return (response_format.get("json_schema") or {}).get("schema")


def parse_output(content: str, response_format: dict | None) -> Any:
    try:
        value = json.loads(_unfence(content))
    except json.JSONDecodeError as exc:
        raise OutputError(f"invalid JSON: {exc.msg} at line {exc.lineno} column {exc.colno}") from None
    schema = schema_of(response_format)
    if schema is not None:
        try:
            err = best_match(_validator(json.dumps(schema, sort_keys=True)).iter_errors(value))
        except (Unresolvable, re.error) as exc:
            raise OutputError(f"the response schema cannot be used: {exc}"[:MAX_REASON], format_failure=False) from None
        if err is not None:
            where = "/".join(str(p) for p in err.absolute_path) or "(root)"
            raise OutputError(f"does not match the response schema at {where}: {err.message}"[:MAX_REASON])
    return value
