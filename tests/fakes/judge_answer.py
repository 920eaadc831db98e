"""Programmable judge answers for the fake OpenRouter.

A judge request is recognised by its structured output's name (`judgement`, as helmbench's
judge sends it) and its criterion by the `<judge_criterion code="CR2"` delimiter of the judge
prompt. Without programming, the fake answers a judge like any request, from the schema (so
its judgments vary deterministically with the request); programmed per criterion code, it gives
a chosen option or one of JUDGE_FAULTS, a malformed answer the judge must turn into an ERROR.
"""

from __future__ import annotations

import json
import re

JUDGE_FAULTS = ("!invalid_json", "!not_an_option", "!empty", "!truncated")
_CRITERION = re.compile(r'<judge_criterion code="([^"]+)"')


def judge_criterion(body: dict) -> str | None:
    """The criterion code of a judge request; None for any other request."""
    rf = body.get("response_format") or {}
    if rf.get("type") != "json_schema" or (rf.get("json_schema") or {}).get("name") != "judgement":
        return None
    found = _CRITERION.search(str((body.get("messages") or [{}])[-1].get("content") or ""))
    return found.group(1) if found else "?"


def forced_judgement(schema: dict, forced) -> tuple[str, str]:
    """(content, finish_reason) of a programmed answer: an option, a JUDGE_FAULT, or (a criterion with named
    questions) a dict of answers per question id, with an optional `justification` of its own."""
    if isinstance(forced, dict):
        answers = {k: v for k, v in forced.items() if k != "justification"}
        why = forced.get("justification", f"programmed answers: {answers}")
        return json.dumps({"justification": why, "answers": answers}, ensure_ascii=False), "stop"
    field = next((k for k in schema.get("properties", {}) if k != "justification"), "judgment")
    multi = schema.get("properties", {}).get(field, {}).get("type") == "array"
    value = "NOT_AN_OPTION" if forced == "!not_an_option" else forced
    content = json.dumps({"justification": f"programmed answer: {value}", field: [value] if multi else value})
    if forced == "!invalid_json":
        return content[: len(content) // 2], "stop"
    if forced == "!truncated":
        return content[: len(content) // 2], "length"
    return ("", "stop") if forced == "!empty" else (content, "stop")
