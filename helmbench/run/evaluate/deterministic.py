"""The three evaluations that need no judge: category_match, list_includes, tag_threshold.

Each takes the manifest's `evaluation` dict and the parsed answer and explains its verdict in
one line, so a FAIL on the site says what the model answered and what was expected. They are
registered, with the rest of each type, by builtin.py beside this module.
"""

from __future__ import annotations

from typing import Any

from helmbench.run.evaluate.outcome import Outcome, fail, format_failure, passed


def _field(evaluation: dict, parsed: Any) -> tuple[str, Any, str | None]:
    field = evaluation.get("field", "category")
    if not isinstance(parsed, dict):
        return field, None, f"the answer is a JSON {type(parsed).__name__}, not an object with `{field}`"
    if field not in parsed:
        return field, None, f"the answer has no `{field}` field"
    return field, parsed[field], None


def _as_list(value: Any) -> list:
    return value if isinstance(value, list) else [value]


def category_match(evaluation: dict, parsed: Any) -> Outcome:
    field, value, problem = _field(evaluation, parsed)
    if problem:
        return format_failure(problem)
    accepted = _as_list(evaluation.get("expected") or [])
    if value in accepted:
        return passed(f"{field} = {value!r}")
    return fail(f"{field} = {value!r}, expected {' or '.join(map(repr, accepted))}")


def list_includes(evaluation: dict, parsed: Any) -> Outcome:
    field, value, problem = _field(evaluation, parsed)
    if problem:
        return format_failure(problem)
    if not isinstance(value, list):
        return format_failure(f"{field} is not a list: {value!r}")
    missing = [v for v in evaluation.get("required", []) if v not in value]
    if missing:
        return fail(f"{field} = {value!r} is missing {', '.join(map(repr, missing))}")
    return passed(f"{field} = {value!r} includes every required value")


def tag_threshold(evaluation: dict, parsed: Any) -> Outcome:
    field, value, problem = _field(evaluation, parsed)
    if problem:
        return format_failure(problem)
    if not isinstance(value, list):
        return format_failure(f"{field} is not a list: {value!r}")
    expected = set(evaluation.get("expected", []))
    given = list(dict.fromkeys(v for v in value if isinstance(v, (str, int, float, bool))))
    correct = [v for v in given if v in expected]
    incorrect = [v for v in given if v not in expected]
    lo, hi = evaluation.get("min_correct", 1), evaluation.get("max_incorrect", 0)
    summary = f"{len(correct)} correct (need ≥ {lo}), {len(incorrect)} incorrect (allowed ≤ {hi})"
    if len(correct) >= lo and len(incorrect) <= hi:
        return passed(summary)
    extra = f"; unexpected: {', '.join(map(repr, incorrect))}" if incorrect else ""
    return fail(summary + extra)

