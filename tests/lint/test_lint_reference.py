"""The rules page of the site is generated from the code catalogue and cannot drift from it.

Regenerate with: python -m helmbench.lint.reference > helmbench/publish/site_default/lint-rules.md
"""

from __future__ import annotations

from pathlib import Path

from helmbench.lint.codes import CODES
from helmbench.lint.reference import rules_markdown

REPO = Path(__file__).resolve().parents[2]
PAGE = REPO / "helmbench" / "publish" / "site_default" / "lint-rules.md"


def test_committed_page_equals_the_generated_text():
    assert PAGE.read_text(encoding="utf-8") == rules_markdown(), (
        "helmbench/publish/site_default/lint-rules.md is stale: run `python -m helmbench.lint.reference > helmbench/publish/site_default/lint-rules.md`")


def test_page_documents_every_code_with_its_example():
    page = rules_markdown()
    for c in CODES.values():
        assert f"### {c.code}\n" in page and f"| [{c.code}](#{c.code.lower()}) | {c.severity} |" in page
        assert c.explanation in page and c.example in page


def test_examples_never_break_out_of_their_fence():
    from helmbench.spec.markdown import parse

    from helmbench.lint.rulebook import codes

    fences = [t for t in parse(rules_markdown()) if t.type == "fence"]
    assert [t.content.rstrip("\n") for t in fences] == [c.example for c in codes().values()]


def test_authors_guide_links_to_the_page():
    assert "(lint-rules.md)" in (REPO / "helmbench" / "publish" / "site_default" / "authors-guide.md").read_text(encoding="utf-8")
