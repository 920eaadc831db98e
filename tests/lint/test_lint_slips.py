"""The silent slips (headings, labels) are found without flagging what authors do on purpose:
headings used consistently, ordinary capitals in prose, the authors' own sample."""

from __future__ import annotations

import pytest

from helmbench.lint import lint_tree
from helmbench.lint.rules.prompt_tags import scan
from lint_corpus import UPSTREAM

S1 = "scenarios/P1/B1/S1--late-planning"
ENUM = {"CHIT_CHAT", "ASSISTANCE", "META_INQUIRY", "TASK"}


def _perturbations(*headings: str) -> str:
    parts = [f"# PT{n}\n---\nseverity: {n}\n---\n\n## {h}\n\nText {n}.\n" for n, h in enumerate(headings, 1)]
    return "\n".join(parts)


def _codes(root):
    return [(d.path.rsplit("/", 1)[-1], d.line, d.code) for d in lint_tree(root)[1]]


def test_a_heading_used_consistently_is_the_authors_choice(clean_tree):
    (clean_tree / S1 / "perturbations.md").write_text(_perturbations("Message", "Message", "Message"), encoding="utf-8")
    assert _codes(clean_tree) == []


def test_a_near_known_heading_used_by_every_sibling_is_not_a_slip(clean_tree):
    (clean_tree / S1 / "perturbations.md").write_text(_perturbations("User input", "User input"), encoding="utf-8")
    assert _codes(clean_tree) == []


def test_the_odd_one_out_among_siblings_is_reported_once(clean_tree):
    (clean_tree / S1 / "perturbations.md").write_text(
        _perturbations("User's input", "User input", "User's input", "User's input"), encoding="utf-8")
    diags = lint_tree(clean_tree)[1]
    assert [(d.line, d.code) for d in diags] == [(15, "HB315")]
    assert "<user_input> instead of <users_input>" in diags[0].message
    assert diags[0].hint == "did you mean `## User's input`?"


def test_a_one_off_misspelling_between_two_components_is_hb314(clean_tree):
    (clean_tree / S1 / "perturbations.md").write_text(_perturbations("User's input", "Users inptu"), encoding="utf-8")
    assert _codes(clean_tree) == [("perturbations.md", 15, "HB314")]


@pytest.mark.parametrize("prose", [
    "People in the UK, US and EU; GP, CBT, ADHD, PTSD, OK, NHS, A&E, 988.",
    "ATTENTION: DO NOT USE BOTH THE TASK TAG AND ANY OTHER TAGS. NOTE: PLEASE ENSURE THIS.",
    "1. **TASK:** a request. 2. **CHIT_CHAT:** small talk. TASKS are fine. N.B.: IMPORTANT.",
    "- **Note:** mixed case is prose, and so is **IMPORTANT** in the middle of a line.",
    "- **NOTE:** a list of remarks is not a list of labels\n- **IMPORTANT:** neither is this",
])
def test_ordinary_capitals_are_not_labels(prose):
    assert list(scan(prose, 1, ENUM)) == []


def test_label_like_words_outside_the_enum_are_found_with_their_place():
    found = list(scan("Use IMMEDIATE_DANGER now.\n2. **ESCALATE:** hand off\n* **TASK** ok", 5, ENUM))
    assert [(line, col, word, meant) for line, col, word, meant, _ in found] == [
        (5, 5, "IMMEDIATE_DANGER", None), (6, 6, "ESCALATE", None)]


def test_a_near_miss_stays_hb504_and_is_not_reported_twice():
    found = list(scan("mark it META_ENQUIRY", 1, ENUM))
    assert [(w, meant) for _, _, w, meant, _ in found] == [("META_ENQUIRY", "META_INQUIRY")]


@pytest.mark.skipif(not UPSTREAM.is_dir(), reason="upstream sample not present")
def test_the_authors_sample_has_no_heading_or_label_findings():
    codes = {d.code for d in lint_tree(UPSTREAM)[1]}
    assert not codes & {"HB314", "HB315", "HB509", "HB316", "HB317", "HB302"}
