"""Markdown splitting and line-numbered YAML: the pieces under the loader."""

from __future__ import annotations

import pytest

from helmbench.spec import markdown as md
from helmbench.spec.naming import tag_name
from helmbench.spec.yamlio import LineDict, YamlError, load_yaml


@pytest.mark.parametrize("heading, tag", [
    ("User's input", "users_input"),
    ("User\u2019s input", "users_input"),
    ("System instructions", "system_instructions"),
    ("  Evaluation criteria \u2014 CR1: Safety!  ", "evaluation_criteria_cr1_safety"),
    ("???", ""),
])
def test_tag_name(heading, tag):
    assert tag_name(heading) == tag


def test_sections_ignore_hashes_in_code_lists_and_quotes():
    body = "Intro.\n\n## User's input\n\n```\n## not a heading\n```\n\n- ## nor this\n\n> ## nor this\n\n## Second\n\nEnd."
    secs = md.sections(body)
    assert [(s.heading, s.tag, s.line) for s in secs] == [
        (None, None, 1), ("User's input", "users_input", 3), ("Second", "second", 13)]
    assert secs[1].text.startswith("```\n## not a heading")


def test_unclosed_fence_line():
    assert md.unclosed_fence("## A\n\n```\ncode\n## B") == 3
    assert md.unclosed_fence("## A\n\n```\ncode\n```") is None


def test_split_single_reports_body_line():
    fm, body, line = md.split_single("---\na: 1\n---\n\n\n## X\n\ny\n\n")
    assert fm.text == "a: 1\n" and fm.line == 2
    assert body == "## X\n\ny" and line == 6


def test_line_dict_keeps_key_lines_with_offset():
    data, dups = load_yaml("a: 1\nb:\n  c: 2\n  d: [1, 2]\n", line_offset=10)
    assert isinstance(data, LineDict) and dups == []
    assert data.line_of("a") == 11 and data.line_of("b") == 12
    assert data["b"].line_of("d") == 14


def test_duplicate_keys_are_found_not_dropped_silently():
    data, dups = load_yaml("x: 1\ny:\n  z: 1\n  z: 2\nx: 3\n")
    assert sorted((d.key, d.line, d.first_line) for d in dups) == [("x", 5, 1), ("z", 4, 3)]


def test_yaml_syntax_error_has_a_line():
    with pytest.raises(YamlError) as exc:
        load_yaml("a: 1\nb: [1\nc: 2\n", line_offset=4)
    assert exc.value.line >= 6 and "YAML syntax error" in exc.value.message


def test_yaml_is_safe():
    with pytest.raises(YamlError):
        load_yaml("a: !!python/object/apply:os.system ['true']\n")


def test_frontmatter_without_its_opening_line_is_found_as_a_shape():
    lines = "# C1\ndifficulty: 0\nevaluation:\n  type: sqe\n  pass:\n    - A\n---\n\n## X\n\ny".split("\n")
    fm = md.find_frontmatter(lines, 1, len(lines))
    assert fm.text is None and fm.body_start == 1  # the body is left as written
    assert fm.unopened == (2, 7, ("difficulty", "evaluation"))
    for prose in ("Note: keep it short.\n---", "# a comment\nseverity: 1\n---", "severity: 1\n\nA sentence.\n---"):
        lines = prose.split("\n")
        assert md.find_frontmatter(lines, 0, len(lines)).unopened is None, prose


def test_frontmatter_blocks_and_subheadings_of_a_body():
    body = "## A\n\ntext\n\n#PT2\n---\nseverity: 5\n---\n\n```\n---\ntitle: x\n---\n```\n\n> ## quoted\n\n### PT3: Late"
    assert md.frontmatter_blocks(body) == ((6, 8, ("severity",)),)
    assert [(h.line, h.markup, h.text) for h in md.subheadings(body)] == [(1, "##", "A"), (18, "###", "PT3: Late")]
