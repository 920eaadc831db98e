"""The checks every structured answer goes through first, then its type's registered evaluator.

The order of checks gives the most useful reason: an API failure is an ERROR (not the model's
fault, retried next run); then empty output, truncation, invalid JSON and schema violations
are the model's FAIL, each with a reason; only a well-formed answer reaches the evaluator.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from helmbench.errors import HelmbenchError
from helmbench.plugins import registry as plugin_registry
from helmbench.plugins.types import Evaluator
from helmbench.run.evaluate.parse import OutputError, parse_output


class Outcome(NamedTuple):
    verdict: str  # PASS / FAIL / ERROR
    score: float | None
    reason: str
    parsed: Any = None
    failure_kind: str | None = None  # "format": the output was not a usable answer (stored on the result)


def evaluator_for(type_: str) -> Evaluator:
    """The registered evaluator of a type (built-in or from a plugin); ValueError when none is."""
    return plugin_registry.evaluator(type_)


def check_versions(header: dict) -> None:
    """Refuse a manifest compiled with another version of an installed evaluator (a plugin upgraded since
    compile): its cases' hashes carry the old version, so the run would keep the old verdicts and
    reasons for stored answers and give new ones to the rest. Recompiling re-evaluates every stored
    answer with the new version, with no model call."""
    for type_, compiled in ((header.get("catalog") or {}).get("evaluator_versions") or {}).items():
        installed = plugin_registry.evaluators().get(type_)
        now = installed.version if installed is not None else None
        if now != compiled:
            found = f"{plugin_registry.owner_label(type_)} is version {now}" if installed is not None else \
                "no installed plugin registers it"
            raise HelmbenchError(
                f"the manifest was compiled with evaluation type {type_!r} version {compiled}, but {found}",
                exit_code=2, hint="run `helmbench compile` again: stored answers are then evaluated with the "
                                  "installed version, and no model is asked again")


def is_deferred(case: dict) -> bool:
    return evaluator_for(case["evaluation"]["type"]).deferred


def fail(reason: str, parsed: Any = None) -> Outcome:
    return Outcome("FAIL", 0.0, reason, parsed)


def format_failure(reason: str, parsed: Any = None) -> Outcome:
    """A FAIL because the output was not a usable answer in the requested format (not an unsafe one)."""
    return Outcome("FAIL", 0.0, reason, parsed, "format")


def passed(reason: str, parsed: Any = None) -> Outcome:
    return Outcome("PASS", 1.0, reason, parsed)


def _decide(ev: Evaluator, evaluation: dict, answer: Any) -> Outcome:
    try:
        out = ev.evaluate(evaluation, answer)
    except Exception as exc:  # noqa: BLE001  (a plugin's bug is an ERROR on this case, not a crashed run)
        who = f" of {plugin_registry.plugin_label(ev.plugin)}" if ev.plugin else ""
        return Outcome("ERROR", None, f"the {ev.type} evaluator{who} failed: {type(exc).__name__}: {exc}"[:300])
    if not isinstance(out, Outcome):  # a plugin's evaluator may return a plain (verdict, score, reason)
        out = Outcome(*out)
    return out


def answer_of(case: dict, content: str) -> Any:
    """What a check reads: the parsed answer when the scenario asks for structured output, else the text."""
    response_format = case["request"].get("response_format")
    if response_format and response_format.get("type") in ("json_schema", "json_object"):
        try:
            return parse_output(content, response_format)
        except OutputError:
            return content
    return content


def check_outcomes(case: dict, answer: Any) -> list[tuple[dict, Outcome]]:
    """(check, outcome) for each deterministic criterion of a judged case (`evaluation.checks`), on `answer`
    (see `answer_of`; a conversation passes its assistant's replies joined)."""
    return [(check, _decide(evaluator_for(check["evaluation"]["type"]), check["evaluation"], answer))
            for check in case["evaluation"].get("checks") or []]


def outcome_for(case: dict, response: dict) -> Outcome | None:
    """The verdict for one stored/just-received response; None when a judge must decide."""
    if response.get("error_kind"):
        return Outcome("ERROR", None, f"{response['error_kind']}: {response.get('error_message') or ''}".strip())
    ev = evaluator_for(case["evaluation"]["type"])
    if ev.evaluate is None:
        return None
    content = response.get("content")
    finish = response.get("finish_reason")
    if finish == "length":
        return format_failure("truncated: the output hit the token limit (finish_reason=length)")
    if content is None or not content.strip():
        return format_failure(f"empty response (finish_reason={finish})")
    response_format = case["request"].get("response_format")
    if ev.text and not (response_format and response_format.get("type") in ("json_schema", "json_object")):
        return _decide(ev, case["evaluation"], content)  # an evaluator of plain-text replies reads the text
    try:
        parsed = parse_output(content, response_format)
    except OutputError as exc:
        return format_failure(str(exc)) if exc.format_failure else fail(str(exc))
    return _decide(ev, case["evaluation"], parsed)._replace(parsed=parsed)
