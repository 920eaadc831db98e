"""The helpers under the rules: JSON positions, schema reading, tag near-misses."""

from __future__ import annotations

import json

from helmbench.lint import lint_tree, schemas
from helmbench.lint.jsonpos import locate
from helmbench.lint.rules.prompt_tags import near_miss
from helmbench.lint.rules.schema import strict_problems

DOC = """{
  "type": "object",
  "properties": {
    "tags": {
      "type": "array",
      "items": [
        {"type": "string"},
        {"enum": ["A", "B"]}
      ]
    }
  }
}
"""


def test_locate_reports_keys_and_array_elements():
    assert locate(DOC, ()) == (1, 1)
    assert locate(DOC, ("properties", "tags")) == (4, 5)
    assert locate(DOC, ("properties", "tags", "items", 1)) == (8, 9)
    assert locate(DOC, ("properties", "tags", "items", 1, "enum", 0)) == (8, 19)
    assert locate(DOC, ("properties", "nope", "deeper")) == (3, 3)  # deepest existing prefix


def test_locate_survives_escapes_and_unicode():
    text = '{"a\\"b": {"c": "d\\u00e9\\n"}, "e": [1, -2.5e3, true, null, "\u00e9"]}'
    assert json.loads(text)
    assert locate(text, ("e", 4)) == (1, 1 + text.index('"\u00e9"'))


def test_refs_are_followed_for_fields_and_enums():
    schema = {"$defs": {"Tag": {"type": "string", "enum": ["X", "Y"]}},
              "properties": {"tags": {"type": "array", "items": {"$ref": "#/$defs/Tag"}},
                             "kind": {"$ref": "#/$defs/Tag"}}}
    assert schemas.types_of(schemas.field(schema, "kind")) == {"string"}
    assert schemas.enum_of(schema, schemas.field(schema, "tags")["items"]) == ["X", "Y"]
    assert schemas.all_enum_strings(schema) == {"X", "Y"}


def test_unwrapping():
    bare = {"type": "object"}
    assert schemas.inner(bare).schema is bare and schemas.inner(bare).prefix == ()
    wrapped = {"type": "json_schema", "json_schema": {"name": "n", "strict": False, "schema": bare}}
    found = schemas.inner(wrapped)
    assert found.schema is bare and found.prefix == ("json_schema", "schema") and found.strict is False
    assert schemas.inner({"type": "json_schema", "json_schema": {"name": "n"}}) is None


def test_strict_problems_reach_nested_anyof_and_defs():
    schema = {"type": "object", "additionalProperties": False, "required": ["a"],
              "properties": {"a": {"anyOf": [{"type": "object", "properties": {}}, {"type": "null"}]}},
              "$defs": {"D": {"type": "object", "additionalProperties": False, "properties": {"x": {}}}}}
    found = {(path, msg.split()[0]) for path, msg in strict_problems(schema)}
    assert found == {(("properties", "a", "anyOf", 0), "object"), (("$defs", "D", "properties", "x"), "property")}
    assert [p for p, _ in strict_problems({"type": "string"})] == [()]


def test_near_miss():
    enum = {"META_INQUIRY", "TASK", "ASSISTANCE"}
    assert near_miss("META_ENQUIRY", enum) == "META_INQUIRY"
    assert near_miss("META_INQUIRY", enum) is None
    assert near_miss("TASKS", enum) is None  # a plural, not a new tag
    assert near_miss("ATTENTION", enum) is None
    assert near_miss("PLEASE", enum) is None


def test_tag_threshold_expected_values_are_checked_against_item_enum(clean_tree):
    s1 = clean_tree / "scenarios/P1/B1/S1--late-planning/S1.md"
    s1.write_text(s1.read_text().replace(
        "  type: list_includes\n  field: tags\n  required: [ASSISTANCE]\n",
        "  type: tag_threshold\n  field: tags\n  expected: [ASSISTANCE, META_ENQUIRY]\n  min_correct: 1\n"))
    _, diags = lint_tree(clean_tree)
    assert [(d.code, d.line) for d in diags] == [("HB503", 6)]
    assert "META_ENQUIRY" in diags[0].message and diags[0].hint == "did you mean `META_INQUIRY`?"


def test_diagnostics_are_sorted_and_deterministic(clean_tree):
    (clean_tree / "models.yml").unlink()
    (clean_tree / "scenarios/P1/B1/S1--late-planning/S1.json").unlink()
    first = lint_tree(clean_tree)[1]
    assert first == lint_tree(clean_tree)[1]
    assert [d.code for d in first] == ["HB607", "HB507"]


def _hb511(text: str) -> list[tuple[int, str]]:
    from helmbench.lint.rules.criteria import _sections
    from helmbench.spec import markdown as md

    _, _, body_line = md.split_single(text)
    return _sections(text.split("\n"), body_line - 1)


def test_hb511_finds_criterion_sections_in_every_heading_form_and_nothing_else():
    """A criterion section is a code heading directly followed by a frontmatter block, in the body. Found: `##`,
    indented and setext forms, after a line that only looks like a fence. Not found (the authors' own files must
    lint): a title heading in a criterion's text, a YAML comment in the frontmatter, an example in a fence, a
    heading followed by a thematic break."""
    fm = "---\ntitle: A\noptions: [PASS, FAIL]\n---\n"
    assert _hb511(f"# CR1\n{fm}text\n\n## CR2\n---\ntitle: B\n---\nmore\n") == [(1, "CR1"), (8, "CR2")]
    assert _hb511(f"## CR1\n{fm}text\n") == [(1, "CR1")]
    assert _hb511(f" # CR1\n{fm}text\n") == [(1, "CR1")]
    assert _hb511(f"CR1\n===\n{fm}text\n") == [(1, "CR1")]
    assert _hb511(f"```json``` is the format\n\n# CR1\n{fm}") == [(3, "CR1")]
    assert _hb511(f"{fm}# CR1 — Recognise suicidality\n\nAssess whether …\n") == []
    assert _hb511("---\n# CR1 options agreed with the panel\noptions: [PASS, FAIL]\n---\nbody\n") == []
    assert _hb511(f"```markdown\n# CR1\n{fm}```\n") == []
    assert _hb511("## CR1 notes\n\n---\n\nA paragraph after a rule.\n") == []
    assert _hb511(f"~~~~\n```\n~~~\n# CR1\n{fm}~~~~\n# CR2\n{fm}") == [(10, "CR2")]


def test_a_content_note_that_is_not_text_is_an_error_at_its_line_and_text_compiles(clean_tree):
    """benchmark.yml `content_note:` (the site's note in place of HELMBench's): text, checked by lint; emitted in
    the manifest's header only when given, outside the manifest's hash (an edit re-runs nothing)."""
    from helmbench.manifest import compile_tree

    yml = clean_tree / "benchmark.yml"
    plain = yml.read_text(encoding="utf-8")
    before = compile_tree(clean_tree, clean_tree / "build").path.read_bytes()
    yml.write_text(plain + "content_note: [not, text]\n", encoding="utf-8")
    _, diags = lint_tree(clean_tree)
    line = len(plain.splitlines()) + 1
    assert [(d.code, d.line) for d in diags] == [("HB203", line)] and "content_note" in diags[0].message
    yml.write_text(plain + "content_note: Invented conversations; **take care**.\n", encoding="utf-8")
    assert lint_tree(clean_tree)[1] == []
    after = compile_tree(clean_tree, clean_tree / "build2").path.read_bytes()
    header = json.loads(after.splitlines()[0])
    assert header["benchmark"]["content_note"] == "Invented conversations; **take care**."
    assert b"content_note" not in before  # not given: not emitted (the manifest's bytes as before)
    assert header["manifest_hash"] == json.loads(before.splitlines()[0])["manifest_hash"]  # nothing is re-run
