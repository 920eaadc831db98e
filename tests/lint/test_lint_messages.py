"""Lint messages are in the author's words: what is wrong, what is expected, "did you mean".

No class name or validation-library phrasing may reach an author: every message and hint the
broken-tree corpus produces, and those of a spread of wrong frontmatter and YAML, is scanned.
"""

from __future__ import annotations

import re

import pytest

from helmbench.diagnostics import Collector
from helmbench.lint import lint_tree
from helmbench.spec import models as m
from helmbench.spec.validate import validate
from helmbench.spec.yamlio import YamlError, load_yaml
from lint_corpus import build, case_names

LEAKS = re.compile(
    r"LineDict|LineList|input tag|Input should|pydantic|validation error|type=|Field required|"
    r"Extra inputs|extra_forbidden|model_attributes|union_tag|NoneType|list\[str\]|<stream end>|"
    r"<block end>|while parsing|while scanning|given schemas|errors\.pydantic|SafeLoader",
    re.IGNORECASE,
)

WRONG = [  # (model, frontmatter) — each is one usual mistake
    (m.ScenarioMeta, "evaluation:\n  type: tag_treshold\n  expected: [A]\n"),
    (m.ScenarioMeta, "evaluation:\n  type: category_match\n  expected: 3\n"),
    (m.ScenarioMeta, "evaluation:\n  type: list_includes\n"),
    (m.ScenarioMeta, "evaluation:\n  type: list_includes\n  required: [A, 3]\n  feild: tags\n"),
    (m.ScenarioMeta, "evaluation: list_includes\n"),
    (m.ScenarioMeta, "evaluation:\n  type: tag_threshold\n  expected: [A]\n  min_correct: 0\n"),
    (m.ScenarioMeta, "title: [a, b]\ncategory: {x: 1}\n"),
    (m.ScenarioMeta, "evaluation:\n  type: sqe\n  field: tags\n"),
    (m.CriterionMeta, "response_type: singel\npass_values: []\n"),
    (m.CriterionMeta, "options: PASS\nscores: {PASS: high}\n"),
    (m.ConditionMeta, "difficulty: 2.5\n"),
    (m.ConditionMeta, "difficulty: '3'\n"),
    (m.UserContextMeta, "severty: 1\n"),
    (m.PerturbationMeta, "severity: true\n"),
    (m.PerturbationMeta, "severity: null\n"),
    (m.ModelsFile, "models:\n  - id: foo\n    temperature: hot\n  - name: x\n"),
    (m.ModelsFile, "marking_model: [a]\nmodels: {a: b}\n"),
    (m.BenchmarkFile, "name: x\nversion: 1\npillars:\n  P1:\n    title: t\n    behaviours:\n"
                      "      B1: {title: x, weight: -1, extra: 2}\n"),
    (m.BenchmarkFile, "pillars: []\n"),
    (m.ScoringFile, "weights:\n  P1-B1: high\n"),
    (m.ScoringFile, "weights: [1, 2]\n"),
]

BAD_YAML = ["a: [3\nb: 2\n", "a: {x: 1\n", "a: 'abc\n", "a: b: c\n", "a:\n  b: 1\n c: 2\n", "- a\nb: 1\n",
            "a: *x\n", "a:\n\t- b\n", "a: &x [1\n", "? [a\n", "a: !!python/object:os.system x\n", "a: @x\n"]


def _texts(diags):
    for d in diags:
        yield d.message
        if d.hint:
            yield d.hint


def test_no_corpus_message_leaks_library_phrasing(tmp_path):
    seen = 0
    for name in case_names():
        _, diags = lint_tree(build(name, tmp_path / name))
        for text in _texts(diags):
            seen += 1
            assert not LEAKS.search(text), (name, text)
    assert seen > 60


@pytest.mark.parametrize("model, text", WRONG)
def test_validation_messages_are_plain(model, text):
    data, _ = load_yaml(text)
    out = Collector()
    assert validate(model, data, "f.md", out, what="frontmatter") is None
    assert out.items
    for text in _texts(out.items):
        assert not LEAKS.search(text), text


@pytest.mark.parametrize("text", BAD_YAML)
def test_yaml_syntax_messages_are_plain(text):
    with pytest.raises(YamlError) as err:
        load_yaml(text)
    assert err.value.message.startswith("YAML syntax error: ")
    assert not LEAKS.search(err.value.message), err.value.message


def _one(model, text, what="scenario frontmatter"):
    data, _ = load_yaml(text)
    out = Collector()
    validate(model, data, "f.md", out, what=what)
    assert len(out.items) == 1, out.items
    return out.items[0]


def test_misspelt_evaluation_type_says_what_is_expected_and_did_you_mean():
    d = _one(m.ScenarioMeta, "evaluation:\n  type: tag_treshold\n  expected: [A]\n")
    assert d.message == ("unknown evaluation type `tag_treshold`; expected one of "
                         "category_match, list_includes, tag_threshold, sqe")
    # the nearest type, then that a type may come from a plugin that is not installed (or is disabled)
    assert d.hint.startswith("did you mean `tag_threshold`? if `tag_treshold` comes from a plugin, install it")
    assert (d.line, d.col, d.end_line, d.end_col) == (2, 9, 2, 21)  # the value, not `evaluation:`


def test_unknown_key_suggests_a_key_allowed_at_that_place():
    d = _one(m.ScenarioMeta, "evaluation:\n  type: list_includes\n  required: [A]\n  feild: tags\n")
    assert d.code == "HB201" and d.message == "unknown key `feild` in scenario frontmatter"
    assert d.hint == "did you mean `field`?" and (d.line, d.col) == (4, 3)


def test_wrong_list_item_is_located_and_named_from_one():
    d = _one(m.ScenarioMeta, "evaluation:\n  type: list_includes\n  required:\n    - A\n    - 3\n")
    assert d.message == "`evaluation.required[2]` in scenario frontmatter must be text (got `3`)"
    assert (d.line, d.col) == (5, 7)


def test_literal_value_did_you_mean():
    d = _one(m.CriterionMeta, "response_type: singel\n")
    assert d.message == "`response_type` must be one of single, multi (got `singel`)"
    assert d.hint == "did you mean `single`?"


def test_range_message_names_the_bound():
    d = _one(m.PerturbationMeta, "severity: 12\n")
    assert (d.code, d.message) == ("HB204", "`severity` in scenario frontmatter must be at most 10 (got `12`)")


def test_missing_key_points_at_the_mapping_that_needs_it():
    d = _one(m.ScenarioMeta, "title: x\nevaluation:\n  type: list_includes\n")
    assert (d.code, d.line, d.message) == ("HB202", 2, "`required` is missing from `evaluation`")


def test_enum_value_and_component_code_and_tag_suggestions(clean_tree):
    s1 = clean_tree / "scenarios/P1/B1/S1--late-planning"
    text = (s1 / "S1.md").read_text(encoding="utf-8")
    (s1 / "S1.md").write_text(text.replace("required: [ASSISTANCE]", "required: [ASISTANCE]")
                              .replace("META_INQUIRY.", "META_ENQUIRY."), encoding="utf-8")
    (s1 / "perturbations.md").write_text((s1 / "perturbations.md").read_text(encoding="utf-8")
                                         .replace("# PT2", "# PT 2"), encoding="utf-8")
    _, diags = lint_tree(clean_tree)
    hints = {d.code: d.hint for d in diags}
    assert hints["HB503"] == "did you mean `ASSISTANCE`?"
    assert hints["HB504"].startswith("write `META_INQUIRY`")
    assert hints["HB311"] == "did you mean `# PT2`?"


@pytest.mark.parametrize("text, where, message", [
    ("marking_model:\n  id: openai/gpt-4o-mini\n  temprature: 0\n", (3, 3), "unknown key `temprature` in models.yml"),
    ("marking_model:\n  id: 5\n", (2, 7), "`marking_model.id` in models.yml must be text (got `5`)"),
    ("user_model:\n  - id: openai/gpt-4o-mini\n    max_token: 800\n", (3, 5), "unknown key `max_token` in models.yml"),
])
def test_a_mistake_inside_one_form_of_a_union_is_not_also_the_other_forms_type(text, where, message):
    """`marking_model` is a mapping or a list (an ensemble): a mistake inside the form the author chose
    is that mistake only, not also "must be a list" (or "must be a mapping")."""
    d = _one(m.ModelsFile, text, "models.yml")
    assert ((d.line, d.col), d.message) == (where, message)


def test_a_value_of_neither_form_names_both():
    d = _one(m.ModelsFile, "marking_model: 5\n", "models.yml")
    assert d.message == "`marking_model` in models.yml must be a mapping of keys to values or a list (got `5`)"
