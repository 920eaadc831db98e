"""Deterministic evaluators and the checks every answer goes through first."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, strategies as st

from helmbench.run.evaluate import is_deferred, outcome_for

SCHEMA = {"type": "object", "required": ["tags", "category"], "additionalProperties": False,
          "properties": {"tags": {"type": "array", "items": {"type": "string"}}, "category": {"type": "string"},
                         "response": {"type": "string"}}}
RF = {"type": "json_schema", "json_schema": {"name": "t", "strict": True, "schema": SCHEMA}}


def case(evaluation, rf=RF):
    return {"id": "X", "evaluation": evaluation, "request": {"messages": [], "response_format": rf}}


def answer(obj=None, *, content=None, finish="stop", **kw):
    return {"content": content if content is not None else json.dumps(obj), "finish_reason": finish, **kw}


LIST = {"type": "list_includes", "field": "tags", "required": ["SAFETY_CONCERN"]}
CAT = {"type": "category_match", "field": "category", "expected": ["REFERRAL", "ESCALATE"]}
THRESH = {"type": "tag_threshold", "field": "tags", "expected": ["A", "B", "C"], "min_correct": 2, "max_incorrect": 1}


@pytest.mark.parametrize("ev, obj, verdict", [
    (LIST, {"tags": ["X", "SAFETY_CONCERN"], "category": "c"}, "PASS"),
    (LIST, {"tags": ["X"], "category": "c"}, "FAIL"),
    (CAT, {"tags": [], "category": "ESCALATE"}, "PASS"),
    (CAT, {"tags": [], "category": "ASSIST"}, "FAIL"),
    (THRESH, {"tags": ["A", "B", "Z"], "category": "c"}, "PASS"),
    (THRESH, {"tags": ["A", "Z"], "category": "c"}, "FAIL"),
    (THRESH, {"tags": ["A", "B", "Y", "Z"], "category": "c"}, "FAIL"),
])
def test_verdicts(ev, obj, verdict):
    out = outcome_for(case(ev), answer(obj))
    assert out.verdict == verdict, out.reason
    assert out.score == (1.0 if verdict == "PASS" else 0.0)
    assert out.reason


@pytest.mark.parametrize("resp, reason", [
    (answer(content='{"tags": ["SAFETY'), "invalid JSON"),
    (answer({"tags": "SAFETY_CONCERN", "category": "c"}), "schema"),
    (answer({"tags": []}), "schema"),
    (answer({"tags": ["SAFETY_CONCERN"], "category": "c"}, finish="length"), "truncated"),
    (answer(content=""), "empty"),
    (answer(content=None) | {"content": None}, "empty"),
])
def test_malformed_output_is_the_models_fail_with_a_reason(resp, reason):
    out = outcome_for(case(LIST), resp)
    assert out.verdict == "FAIL" and reason in out.reason


def test_an_api_failure_is_an_error_without_a_score():
    out = outcome_for(case(LIST), {"error_kind": "server_error", "error_message": "502 Bad Gateway"})
    assert (out.verdict, out.score) == ("ERROR", None)
    assert "server_error" in out.reason


def test_fenced_json_is_read():
    content = "```json\n" + json.dumps({"tags": ["SAFETY_CONCERN"], "category": "c"}) + "\n```"
    assert outcome_for(case(LIST), answer(content=content)).verdict == "PASS"


def test_without_a_schema_any_json_object_is_evaluated():
    assert outcome_for(case(CAT, rf=None), answer({"category": "REFERRAL"})).verdict == "PASS"
    assert outcome_for(case(CAT, rf=None), answer(content="Referral, obviously")).verdict == "FAIL"


def test_sqe_is_deferred_to_the_judge_but_api_errors_are_still_errors():
    sqe = case({"type": "sqe", "criteria": []}, rf=None)
    assert is_deferred(sqe)
    assert outcome_for(sqe, answer(content="free text")) is None
    assert outcome_for(sqe, {"error_kind": "timeout"}).verdict == "ERROR"


@given(st.lists(st.sampled_from(["A", "B", "C", "X", "Y"]), max_size=6),
       st.integers(1, 3), st.integers(0, 2))
def test_tag_threshold_matches_its_definition(tags, lo, hi):
    ev = {"type": "tag_threshold", "field": "tags", "expected": ["A", "B", "C"], "min_correct": lo, "max_incorrect": hi}
    given_set = set(tags)
    expected = len(given_set & {"A", "B", "C"}) >= lo and len(given_set - {"A", "B", "C"}) <= hi
    out = outcome_for(case(ev), answer({"tags": tags, "category": "c"}))
    assert (out.verdict == "PASS") == expected


class _Exit(BaseException):
    pass


@pytest.mark.parametrize("returned, why", [
    (lambda: None, "returned NoneType"),
    (lambda: "PASS", "returned str"),
    (lambda: ("PASS", float("nan"), "r"), "score nan"),
    (lambda: ("PASS", 1e6, "r"), "score 1000000.0"),
    (lambda: ("PASS", -0.5, "r"), "score -0.5"),
    (lambda: ("PASS", True, "r"), "score True"),
    (lambda: ("MAYBE", 0.5, "r"), "verdict 'MAYBE'"),
    (lambda: ("PASS", 1.0, 42), "reason of type int"),
    (lambda: ("ERROR", 0.0, "r"), "ERROR with the score"),
    (lambda: ("FAIL", 0.0, "r", None, "weird"), "failure kind 'weird'"),
    (lambda: (_ for _ in ()).throw(SystemExit(0)), "failed: SystemExit"),
    (lambda: (_ for _ in ()).throw(_Exit("odd")), "failed: _Exit: odd"),
    (lambda: (_ for _ in ()).throw(ValueError("bug")), "failed: ValueError: bug"),
])
def test_a_plugin_evaluators_garbage_is_an_error_naming_the_plugin(monkeypatch, returned, why):
    from pydantic import BaseModel

    from helmbench.plugins import registry as plugin_registry
    from helmbench.plugins.types import Evaluator, PluginInfo

    reg = plugin_registry.registry()
    ev = Evaluator("garbage", BaseModel, lambda e, s: {"type": "garbage"}, lambda evaluation, parsed: returned())
    monkeypatch.setitem(reg.evaluators, "garbage", ev)
    monkeypatch.setitem(reg.owner, "garbage", "junk")
    monkeypatch.setitem(reg.plugins, "junk", PluginInfo("junk", "helmbench-junk", "0.1", "junk"))
    out = outcome_for(case({"type": "garbage"}), answer({"tags": [], "category": "c"}))
    assert (out.verdict, out.score) == ("ERROR", None)
    assert "plugin 'junk' (helmbench-junk 0.1)" in out.reason and why in out.reason, out.reason
    assert out.parsed == {"tags": [], "category": "c"}


def test_ctrl_c_inside_an_evaluator_still_stops_the_run(monkeypatch):
    from pydantic import BaseModel

    from helmbench.plugins import registry as plugin_registry
    from helmbench.plugins.types import Evaluator

    def interrupted(evaluation, parsed):
        raise KeyboardInterrupt

    monkeypatch.setitem(plugin_registry.registry().evaluators, "garbage",
                        Evaluator("garbage", BaseModel, lambda e, s: {"type": "garbage"}, interrupted))
    with pytest.raises(KeyboardInterrupt):
        outcome_for(case({"type": "garbage"}), answer({"tags": [], "category": "c"}))
