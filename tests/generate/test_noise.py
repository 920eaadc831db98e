"""Model-free noise: reproducible from the seed its frontmatter records, written once."""

from __future__ import annotations

import shutil

import pytest

from helmbench.generate.noise import TRANSFORMS, apply_noise
from helmbench.spec import load_benchmark
from tests.generate.conftest import cli, lint_codes, snapshot

TEXT = ("## User's input\n\nNeed to make a will online, tonight. How do you do that? My brother should get "
        "everything, including the motorbike and whatever savings are left.\n\n```\n## Not A Heading Inside\n```")


@pytest.mark.parametrize("transform", TRANSFORMS)
def test_the_same_seed_gives_the_same_text_and_headings_and_code_keep_every_byte(transform):
    first = apply_noise(TEXT, transform, 7)
    assert first == apply_noise(TEXT, transform, 7)
    assert first != TEXT
    lines = first.split("\n")
    assert lines[0] == "## User's input" and lines[-3:] == ["```", "## Not A Heading Inside", "```"]


def test_seeds_differ_and_each_transform_does_what_it_says():
    typo = {apply_noise(TEXT, "typo", seed) for seed in range(6)}
    assert len(typo) > 1  # the seed chooses the typos
    assert apply_noise(TEXT, "lowercase", 3).split("\n")[2] == TEXT.split("\n")[2].lower()
    dropped = apply_noise(TEXT, "dropped", 3).split("\n")[2]
    assert len(dropped) < len(TEXT.split("\n")[2])
    assert sorted(apply_noise(TEXT, "typo", 3).split("\n")[2]) == sorted(TEXT.split("\n")[2])  # letters swapped only
    with pytest.raises(ValueError):
        apply_noise(TEXT, "shout", 1)


def test_noise_written_by_the_cli_is_reproducible_from_its_recorded_seed(tree, tmp_path):
    twin = tmp_path / "twin"
    shutil.copytree(tree, twin)
    for root in (tree, twin):
        result = cli("generate", "noise", "P1-B1-S1-PT1", root, "--seed", "11")
        assert result.exit_code == 0, result.output
    assert snapshot(tree) == snapshot(twin)  # same tree + same seed = same bytes
    bench, _ = load_benchmark(tree)
    sc = next(s for s in bench.scenarios if s.key == "P1-B1-S1")
    source = next(c for c in sc.perturbations if c.code == "PT1")
    made = [c for c in sc.perturbations if c.meta.is_generated]
    assert sorted(c.meta.generated.noise.transform for c in made) == sorted(TRANSFORMS)
    for c in made:  # re-derive each from what its frontmatter records
        assert c.meta.generated_from == "PT1" and c.meta.reviewed is False and c.severity == source.severity
        assert c.body == apply_noise(source.body, c.meta.generated.noise.transform, c.meta.generated.noise.seed)
    code, codes = lint_codes(tree)
    assert code == 0 and codes == ["HB720"] * 3
    files = snapshot(tree)
    again = cli("generate", "noise", "P1-B1-S1-PT1", tree, "--seed", "11")
    assert again.exit_code == 0 and "nothing new written" in again.output and snapshot(tree) == files
    other = cli("generate", "noise", "P1-B1-S1-PT1", tree, "--seed", "12", "--transform", "typo")
    assert other.exit_code == 0 and "wrote: PT6" in other.output


def test_an_unknown_transform_is_refused(tree):
    result = cli("generate", "noise", "P1-B1-S1-PT1", tree, "--transform", "shout")
    assert result.exit_code == 2 and "not one of typo, lowercase, dropped" in result.output


def test_a_scenario_with_one_file_per_component_gets_new_files_beside_them(tree):
    folder = tree / "scenarios/P1/B1/S1--late-planning"
    consolidated = (folder / "perturbations.md").read_text()
    (folder / "perturbations.md").unlink()
    (folder / "perturbations").mkdir()
    for code, part in zip(("PT1", "PT2"), consolidated.split("\n# PT2\n")):
        (folder / "perturbations" / f"{code}.md").write_text(part.split("\n", 1)[1] if code == "PT1" else part)
    assert lint_codes(tree)[1] == []
    result = cli("generate", "noise", "P1-B1-S1-PT2", tree, "--transform", "lowercase", "--seed", "4")
    assert result.exit_code == 0, result.output
    assert sorted(p.name for p in (folder / "perturbations").iterdir()) == ["PT1.md", "PT2.md", "PT3.md"]
    assert not (folder / "perturbations.md").exists()
    assert lint_codes(tree)[1] == ["HB720"]


def test_a_transform_that_changes_nothing_writes_nothing_to_review(tree):
    folder = tree / "scenarios/P1/B1/S1--late-planning"
    text = (folder / "perturbations.md").read_text()
    bench, _ = load_benchmark(tree)
    source = next(c for s in bench.scenarios if s.key == "P1-B1-S1" for c in s.perturbations if c.code == "PT1")
    (folder / "perturbations.md").write_text(text.replace(source.body, source.body.lower()))  # already lower case
    files = snapshot(tree)
    result = cli("generate", "noise", "P1-B1-S1-PT1", tree, "--transform", "lowercase", "--seed", "4")
    assert result.exit_code == 0, result.output
    assert "not written: PT1 (lowercase) noise leaves the text as it is" in result.output
    assert "nothing new written" in result.output and snapshot(tree) == files
