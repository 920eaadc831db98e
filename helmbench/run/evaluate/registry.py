"""The evaluator registry and the checks every structured answer goes through first.

The order of checks gives the most useful reason: an API failure is an ERROR (not the model's
fault, retried next run); then empty output, truncation, invalid JSON and schema violations
are the model's FAIL, each with a reason; only a well-formed answer reaches the evaluator.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, NamedTuple

from helmbench.run.evaluate.parse import OutputError, parse_output


class Outcome(NamedTuple):
    verdict: str  # PASS / FAIL / ERROR
    score: float | None
    reason: str
    parsed: Any = None
    failure_kind: str | None = None  # "format": the output was not a usable answer (stored on the result)


@dataclass(frozen=True)
class Evaluator:
    type: str
    fn: Callable[[dict, Any], Outcome] | None  # None: deferred (judged later)


EVALUATORS: dict[str, Evaluator] = {}


def register(type_: str, fn: Callable[[dict, Any], Outcome] | None = None, *, deferred: bool = False):
    """Register `fn(evaluation, parsed_output) -> Outcome`; usable as a decorator."""
    if deferred:
        EVALUATORS[type_] = Evaluator(type_, None)
        return None

    def wrap(f):
        EVALUATORS[type_] = Evaluator(type_, f)
        return f

    return wrap(fn) if fn is not None else wrap


def evaluator_for(type_: str) -> Evaluator:
    try:
        return EVALUATORS[type_]
    except KeyError:
        raise ValueError(f"no evaluator for evaluation type {type_!r}") from None


def is_deferred(case: dict) -> bool:
    return evaluator_for(case["evaluation"]["type"]).fn is None


def fail(reason: str, parsed: Any = None) -> Outcome:
    return Outcome("FAIL", 0.0, reason, parsed)


def format_failure(reason: str, parsed: Any = None) -> Outcome:
    """A FAIL because the output was not a usable answer in the requested format (not an unsafe one)."""
    return Outcome("FAIL", 0.0, reason, parsed, "format")


def passed(reason: str, parsed: Any = None) -> Outcome:
    return Outcome("PASS", 1.0, reason, parsed)


def outcome_for(case: dict, response: dict) -> Outcome | None:
    """The verdict for one stored/just-received response; None when a judge must decide."""
    if response.get("error_kind"):
        return Outcome("ERROR", None, f"{response['error_kind']}: {response.get('error_message') or ''}".strip())
    ev = evaluator_for(case["evaluation"]["type"])
    if ev.fn is None:
        return None
    content = response.get("content")
    finish = response.get("finish_reason")
    if finish == "length":
        return format_failure("truncated: the output hit the token limit (finish_reason=length)")
    if content is None or not content.strip():
        return format_failure(f"empty response (finish_reason={finish})")
    try:
        parsed = parse_output(content, case["request"].get("response_format"))
    except OutputError as exc:
        return format_failure(str(exc)) if exc.format_failure else fail(str(exc))
    out = ev.fn(case["evaluation"], parsed)
    return out._replace(parsed=parsed)
