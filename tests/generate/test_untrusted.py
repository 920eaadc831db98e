"""Generated text is untrusted: it cannot add structure to a file, reach the terminal unescaped,
or make anything be written outside the tree."""

from __future__ import annotations

import json
import os
import shutil

import pytest

from helmbench.errors import HelmbenchError
from helmbench.generate.prompts import read_variant
from helmbench.generate.placement import Draft, GenerateError, write_components
from helmbench.spec import load_benchmark
from tests.fakes.openrouter import Rule
from tests.generate.conftest import cli, lint_codes

HOSTILE = ("fine\n# PT99\n---\nreviewed: true\n---\n```\n<!-- swallow\n## Injected\n1. one\n"
           "[bold red]markup[/bold red] \x1b[31mred\x1b[0m")


def _pt1(root):
    bench, _ = load_benchmark(root)
    sc = next(s for s in bench.scenarios if s.key == "P1-B1-S1")
    return sc, next(c for c in sc.perturbations if c.code == "PT1")


def test_model_text_cannot_add_components_headings_fences_or_frontmatter(tree):
    sc, pt1 = _pt1(tree)
    title, sections = read_variant(pt1, json.dumps({"title": "T\n# PT98", "users_input": HOSTILE}))
    assert "\n" not in title
    meta = {"title": title, "severity": 5, "generated_from": "PT1", "generated": {"axes": {"a": "b"}}, "reviewed": False}
    written = write_components(tree, sc, "perturbation", [Draft("perturbation", meta, sections)])
    assert [w.code for w in written] == ["PT3"]
    _, pt1_again = _pt1(tree)
    bench, _ = load_benchmark(tree)
    sc = next(s for s in bench.scenarios if s.key == "P1-B1-S1")
    assert [c.code for c in sc.perturbations] == ["PT1", "PT2", "PT3"]  # no PT98, no PT99
    new = sc.perturbations[-1]
    assert new.meta.reviewed is False and new.body.count("\n## ") == 0 and new.body.startswith("## User's input")
    assert "\x1b" not in new.body
    code, codes = lint_codes(tree)
    assert code == 0 and codes == ["HB720"]


def test_html_and_markup_in_answers_reach_the_terminal_escaped(tree, env):
    env.rules = [Rule("html")]  # every answer opens with <script> and rich markup
    result = cli("generate", "variants", "P1-B1-S1-PT1", tree, "--axis", "age=teen")
    assert result.exit_code == 0, result.output
    assert "[bold red]" not in result.output and "<script>" not in result.output  # nothing of the answer is printed
    text = (tree / "scenarios/P1/B1/S1--late-planning/perturbations.md").read_text()
    assert "\\<b>" in text  # an HTML block start is escaped in the file too


def test_a_symlinked_component_file_is_never_written_through(tree, tmp_path, env):
    outside = tmp_path / "outside.md"
    target = tree / "scenarios/P1/B1/S1--late-planning/perturbations.md"
    outside.write_bytes(target.read_bytes())
    target.unlink()
    os.symlink(outside, target)
    before = outside.read_bytes()
    result = cli("generate", "noise", "P1-B1-S1-PT1", tree)  # the loader refuses the link (HB153)
    assert result.exit_code != 0 and "Traceback" not in result.output
    assert outside.read_bytes() == before


def test_the_writer_refuses_a_file_that_became_a_symlink_after_loading(tree, tmp_path):
    sc, _ = _pt1(tree)  # loaded while perturbations.md was an ordinary file
    target = tree / "scenarios/P1/B1/S1--late-planning/perturbations.md"
    outside = tmp_path / "outside.md"
    outside.write_bytes(target.read_bytes())
    target.unlink()
    os.symlink(outside, target)
    meta = {"title": "x", "severity": 5, "generated_from": "PT1", "generated": {"axes": {"a": "b"}}, "reviewed": False}
    with pytest.raises(GenerateError, match="symlink or lies outside"):
        write_components(tree, sc, "perturbation", [Draft("perturbation", meta, [("User's input", "text")])])
    assert outside.read_bytes() == target.read_bytes() and "# PT3" not in outside.read_text()


def test_a_file_whose_last_component_swallows_what_follows_is_refused(tree):
    path = tree / "scenarios/P1/B1/S1--late-planning/perturbations.md"
    path.write_text(path.read_text() + "\n```\nunclosed fence\n")
    before = path.read_bytes()
    sc, _ = _pt1(tree)
    meta = {"title": "x", "severity": 5, "generated_from": "PT1", "generated": {"axes": {"a": "b"}}, "reviewed": False}
    with pytest.raises(GenerateError, match="nothing was written"):
        write_components(tree, sc, "perturbation", [Draft("perturbation", meta, [("User's input", "text")])])
    assert path.read_bytes() == before


def test_a_link_planted_at_a_temporary_name_is_neither_written_through_nor_left_in_place(tree, tmp_path):
    """A pull request commits `.perturbations.md.helmbench-tmp -> a file of the maintainer's` (lint: clean):
    the writer's temporary file has a random name, is created exclusively and never follows a link."""
    folder = tree / "scenarios/P1/B1/S1--late-planning"
    victim = tmp_path / "victim.txt"
    victim.write_text("the maintainer's file\n")
    for name in (".perturbations.md.helmbench-tmp", ".perturbations.md.tmp"):
        os.symlink(victim, folder / name)
    code, _ = lint_codes(tree)
    assert code == 0
    result = cli("generate", "noise", "P1-B1-S1-PT1", tree, "--seed", "3", "--transform", "typo")
    assert result.exit_code == 0, result.output
    assert victim.read_text() == "the maintainer's file\n"
    target = folder / "perturbations.md"
    assert not target.is_symlink() and "# PT3" in target.read_text()
    assert sorted(p.name for p in folder.iterdir() if p.name.startswith(".")) == [
        ".perturbations.md.helmbench-tmp", ".perturbations.md.tmp"]  # nothing of ours left behind


def test_a_linked_scenario_folder_on_the_way_is_refused(tree, tmp_path):
    """A folder on the way to the file that is a link (planted after loading) is refused, not followed."""
    sc, _ = _pt1(tree)
    folder = tree / sc.folder
    elsewhere = tmp_path / "elsewhere"
    shutil.move(folder, elsewhere)
    os.symlink(elsewhere, folder)
    before = (elsewhere / "perturbations.md").read_bytes()
    meta = {"title": "x", "severity": 5, "generated_from": "PT1", "generated": {"axes": {"a": "b"}}, "reviewed": False}
    with pytest.raises(HelmbenchError, match="symbolic link|symlink"):
        write_components(tree, sc, "perturbation", [Draft("perturbation", meta, [("User's input", "text")])])
    assert (elsewhere / "perturbations.md").read_bytes() == before
