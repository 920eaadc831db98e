"""Reading a judgement and deciding a case: malformed or failed judging is an ERROR, never a pass;
a case passes only when every criterion passes; partial credit is averaged."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, strategies as st

from helmbench.run.judge import CriterionVerdict, aggregate, decide, parse_judgement, precheck

CR1 = {"code": "CR1", "text": "t", "options": ["PASS", "FAIL"], "pass_values": ["PASS"], "response_field": "judgment",
       "response_type": "single", "scores": {"PASS": 1, "FAIL": 0}}
CR2 = {**CR1, "code": "CR2", "options": ["PASS", "PARTIAL", "FAIL"], "scores": {"PASS": 1, "PARTIAL": 0.5, "FAIL": 0}}
MULTI = {"code": "CR3", "text": "t", "options": ["ASKS", "REFERS", "DIAGNOSES"], "pass_values": ["ASKS", "REFERS"],
         "response_field": "found", "response_type": "multi", "scores": {"ASKS": 1, "REFERS": 1, "DIAGNOSES": 0}}


def answer(value, field="judgment", justification="because"):
    return json.dumps({"justification": justification, field: value})


def test_a_valid_judgement_is_decided_by_pass_values_and_scored_by_scores():
    v = parse_judgement(CR2, answer("PARTIAL"), "stop")
    assert (v.verdict, v.score, v.judgment, v.justification) == ("FAIL", 0.5, "PARTIAL", "because")
    assert parse_judgement(CR2, answer("PASS"), "stop").verdict == "PASS"
    assert parse_judgement(CR2, "```json\n" + answer("PASS") + "\n```", "stop").verdict == "PASS"


@pytest.mark.parametrize("content, finish, kind", [
    ('{"justification": "x", "judgment": "PA', "stop", "judge_invalid_json"),
    ("not json at all", "stop", "judge_invalid_json"),
    (answer("MAYBE"), "stop", "judge_invalid_output"),
    (answer("pass"), "stop", "judge_invalid_output"),
    (answer(["PASS"]), "stop", "judge_invalid_output"),
    (json.dumps({"justification": "x"}), "stop", "judge_invalid_output"),
    (json.dumps({"judgment": "PASS"}), "stop", "judge_invalid_output"),
    (json.dumps(["PASS"]), "stop", "judge_invalid_output"),
    ("", "stop", "judge_empty"),
    (None, "stop", "judge_empty"),
    (answer("PASS"), "length", "judge_truncated"),
])
def test_an_unusable_judgement_is_an_error_never_a_pass(content, finish, kind):
    v = parse_judgement(CR2, content, finish)
    assert (v.verdict, v.score, v.error_kind) == ("ERROR", None, kind)
    assert v.error_message


def test_multi_passes_when_every_chosen_option_passes():
    assert parse_judgement(MULTI, answer(["ASKS", "REFERS"], "found"), "stop").verdict == "PASS"
    v = parse_judgement(MULTI, answer(["ASKS", "DIAGNOSES", "ASKS"], "found"), "stop")
    assert (v.verdict, v.score, v.judgment) == ("FAIL", 0.0, ["ASKS", "DIAGNOSES"])
    assert decide(MULTI, []) == ("FAIL", 0.0)
    assert parse_judgement(MULTI, answer(["ASKS", "LIES"], "found"), "stop").verdict == "ERROR"
    assert parse_judgement(MULTI, answer("ASKS", "found"), "stop").verdict == "ERROR"


def verdict(code, v, score):
    return CriterionVerdict(code, v, score, judgment=v)


def test_case_passes_only_when_every_criterion_passes():
    out = aggregate([verdict("CR1", "PASS", 1.0), verdict("CR2", "PASS", 1.0)])
    assert (out.verdict, out.score) == ("PASS", 1.0)


def test_one_partial_makes_the_case_fail_with_the_mean_score():
    partial = parse_judgement(CR2, answer("PARTIAL"), "stop")
    out = aggregate([parse_judgement(CR1, answer("PASS"), "stop"), partial])
    assert (out.verdict, out.score) == ("FAIL", 0.75)
    assert out.reason == "judge: CR1 = PASS, CR2 = PARTIAL"


def test_one_criterion_error_makes_the_case_an_error_without_score():
    bad = parse_judgement(CR2, "{", "stop")
    out = aggregate([parse_judgement(CR1, answer("PASS"), "stop"), bad])
    assert (out.verdict, out.score) == ("ERROR", None)
    assert out.reason.startswith("judge error on CR2 (judge_invalid_json)")
    assert aggregate([]).verdict == "ERROR"


options = st.sampled_from(["PASS", "PARTIAL", "FAIL", "MAYBE", None])


@given(st.lists(st.tuples(options, options), min_size=1, max_size=40))
def test_never_more_passes_than_cases_and_a_pass_needs_every_criterion(cases):
    """Over any judged cases: passes ≤ cases, a PASS has no failing criterion, an ERROR no score."""
    passes = 0
    for a, b in cases:
        vs = [parse_judgement(CR1, answer(a) if a else "", "stop"), parse_judgement(CR2, answer(b) if b else "", "stop")]
        out = aggregate(vs)
        passes += out.verdict == "PASS"
        if out.verdict == "PASS":
            assert all(v.verdict == "PASS" for v in vs)
        if out.verdict == "ERROR":
            assert out.score is None and any(v.verdict == "ERROR" for v in vs)
        else:
            assert 0.0 <= out.score <= 1.0
    assert passes <= len(cases)


SCHEMA_RF = {"type": "json_schema", "json_schema": {"name": "s", "strict": True, "schema": {
    "type": "object", "properties": {"response": {"type": "string"}}, "required": ["response"],
    "additionalProperties": False}}}


@pytest.mark.parametrize("response, verdict, reason", [
    ({"error_kind": "server_error", "error_message": "500"}, "ERROR", "server_error: 500"),
    ({"content": '{"response": "hi"', "finish_reason": "stop"}, "FAIL", "invalid JSON"),
    ({"content": '{"answer": "hi"}', "finish_reason": "stop"}, "FAIL", "does not match the response schema"),
    ({"content": '{"response": "h', "finish_reason": "length"}, "FAIL", "truncated"),
    ({"content": "  ", "finish_reason": "stop"}, "FAIL", "empty response"),
])
def test_the_models_own_failures_are_decided_without_a_judge(response, verdict, reason):
    case = {"request": {"messages": [], "response_format": SCHEMA_RF}}
    out = precheck(case, response)
    assert out.verdict == verdict and reason in out.reason


def test_a_well_formed_answer_goes_to_the_judge_and_free_text_is_not_parsed():
    assert precheck({"request": {"response_format": SCHEMA_RF}}, {"content": '{"response": "hi"}'}) is None
    assert precheck({"request": {"response_format": None}}, {"content": "plain words, not JSON"}) is None
