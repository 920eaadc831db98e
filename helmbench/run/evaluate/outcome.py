"""The checks every structured answer goes through first, then its type's registered evaluator.

The order of checks gives the most useful reason: an API failure is an ERROR (not the model's
fault, retried next run); then empty output, truncation, invalid JSON and schema violations
are the model's FAIL, each with a reason; only a well-formed answer reaches the evaluator.
"""

from __future__ import annotations

import math
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
    return [(check, checked_evaluate(evaluator_for(check["evaluation"]["type"]), check["evaluation"], answer))
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
        return checked_evaluate(ev, case["evaluation"], content)  # an evaluator of plain-text replies reads the text
    try:
        parsed = parse_output(content, response_format)
    except OutputError as exc:
        return format_failure(str(exc)) if exc.format_failure else fail(str(exc))
    return checked_evaluate(ev, case["evaluation"], parsed)


#: What an evaluator may return: a verdict of these, a finite score in [0, 1] (None with ERROR), text reasons.
VERDICTS = ("PASS", "FAIL", "ERROR")
FAILURE_KINDS = (None, "format")
MAX_REASON = 2000


def _problem(out: Any) -> str | None:
    """What is wrong with an evaluator's return value, or None."""
    if not isinstance(out, tuple) or len(out) not in (3, 4, 5):
        return f"returned {type(out).__name__} {str(out)[:60]!r}, not an Outcome (verdict, score, reason)"
    verdict, score, reason = out[:3]
    if verdict not in VERDICTS:
        return f"returned the verdict {str(verdict)[:40]!r} (allowed: {', '.join(VERDICTS)})"
    if verdict == "ERROR":
        if score is not None:
            return f"returned an ERROR with the score {score!r} (an ERROR has none)"
    elif isinstance(score, bool) or not isinstance(score, (int, float)) or not math.isfinite(score) \
            or not 0.0 <= score <= 1.0:
        return f"returned the score {str(score)[:40]} (a finite number from 0 to 1)"
    if not isinstance(reason, str):
        return f"returned a reason of type {type(reason).__name__} (text expected)"
    if len(out) == 5 and out[4] not in FAILURE_KINDS:
        return f"returned the failure kind {str(out[4])[:40]!r}"
    return None


def checked_evaluate(ev: Evaluator, evaluation: dict, parsed: Any) -> Outcome:
    """`ev.evaluate(evaluation, parsed)`, with its return value checked: an evaluator is a plugin's
    code, run in the middle of a paid run, so whatever it does — raise anything (SystemExit
    included; only Ctrl-C goes through), return None, a bare string, a NaN or out-of-range score
    — is an ERROR on this one case naming the plugin, never a crashed run that loses the answers
    already paid for (they are stored with the ERROR, and evaluated again by the next run)."""
    try:
        out = ev.evaluate(evaluation, parsed)
    except KeyboardInterrupt:
        raise
    except BaseException as exc:  # noqa: BLE001  (a plugin's failure is an ERROR on this case)
        return Outcome("ERROR", None, f"the {ev.type} evaluator of {plugin_registry.owner_label(ev.type)} failed: "
                                      f"{type(exc).__name__}: {exc}"[:300], parsed)
    why = _problem(out)
    if why is not None:
        return Outcome("ERROR", None, f"the {ev.type} evaluator of {plugin_registry.owner_label(ev.type)} {why}"[:300], parsed)
    verdict, score, reason = out[:3]
    kind = out[4] if len(out) == 5 else None
    return Outcome(verdict, None if score is None else float(score), reason[:MAX_REASON], parsed, kind)
