"""`regex_match`: passes when a field of the structured answer matches a regular expression.

    evaluation:
      type: regex_match
      field: response
      pattern: "\\b988\\b"

Lint rule RX101 refuses a pattern that does not compile or that could backtrack exponentially
(the answer is matched in the middle of a paid run, which such a pattern would stall); the
evaluator's own check RX102 warns about a pattern that matches the empty string (every answer
would pass).
"""

from __future__ import annotations

import re
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from helmbench.lint.schemas import bad_patterns
from helmbench.lint.where import evaluation_span, has_prompt, scenario_file
from helmbench.lint.codes import Code
from helmbench.plugins import Evaluator, hookimpl
from helmbench.run.evaluate import fail, passed

TYPE = "regex_match"
MAX_TEXT = 20_000  # characters of the answer the pattern is matched against


class RegexMatch(BaseModel):
    """Passes when `output[field]` (text) matches `pattern` (Python `re.search`)."""

    model_config = ConfigDict(extra="forbid", strict=True)
    type: Literal["regex_match"]
    field: str = "response"
    pattern: str = Field(min_length=1, max_length=500)
    ignore_case: bool = False


RX101 = Code("RX101", "error", "regex_match pattern is invalid or exponential",
                 "The `pattern` of a regex_match evaluation must compile, and may not repeat a group that "
                 "itself only repeats (`(a+)+`): matching it against an answer could take exponential time.",
                 "evaluation: {type: regex_match, field: response, pattern: '(a+)+$'}")
RX102 = Code("RX102", "warning", "regex_match pattern matches the empty string",
                 "A pattern that matches the empty string (`x*`, `a|`) matches every answer: the case "
                 "cannot fail.", "evaluation: {type: regex_match, pattern: 'help*'}")


def case(ev: RegexMatch, scenario) -> dict:
    return {"type": TYPE, "field": ev.field, "pattern": ev.pattern, "ignore_case": ev.ignore_case}


def evaluate(evaluation: dict, parsed: Any):
    field = evaluation["field"]
    if not isinstance(parsed, dict) or not isinstance(parsed.get(field), str):
        return fail(f"the answer has no text field `{field}`")
    flags = re.IGNORECASE if evaluation.get("ignore_case") else 0
    found = re.search(evaluation["pattern"], parsed[field][:MAX_TEXT], flags)
    if found:
        return passed(f"{field} matches /{evaluation['pattern']}/ at {found.group(0)!r}")
    return fail(f"{field} does not match /{evaluation['pattern']}/")


def _usable(pattern: str) -> bool:
    return not any(True for _ in bad_patterns({"pattern": pattern}))


def check(bench, sc, out) -> None:
    ev = sc.meta.evaluation
    if _usable(ev.pattern) and re.search(ev.pattern, "") is not None:
        out.add("RX102", scenario_file(sc), evaluation_span(sc, "pattern"),
                f"pattern `{ev.pattern}` matches the empty string, so every answer passes",
                hint="anchor it or require at least one character")


def invalid_patterns(bench, out) -> None:
    """RX101: the same bounds HB155 puts on a response schema's `pattern`."""
    for sc in bench.scenarios:
        if not has_prompt(sc) or sc.meta.evaluation.type != TYPE:
            continue
        for _, message in bad_patterns({"pattern": sc.meta.evaluation.pattern}):
            out.add("RX101", scenario_file(sc), evaluation_span(sc, "pattern"), message,
                    hint="test it with `python -c \"import re; re.compile(r'…')\"`")


PARTIAL = ('<p class="rx-partial">Passes when <code>{{ ev.get("field") }}</code> matches the regular expression '
           '<code>{{ ev.get("pattern") }}</code>{% if ev.get("ignore_case") %} (ignoring case){% endif %}.</p>')


@hookimpl
def register_evaluators(register) -> None:
    register(Evaluator(TYPE, RegexMatch, case, evaluate, field="one", check=check, codes=(RX102,),
                       partial=PARTIAL, summary="output[field] matches a regular expression"))


@hookimpl
def register_lint_rules(register) -> None:
    register(invalid_patterns, RX101)
