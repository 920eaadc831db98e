"""The tree loader on both layouts and on the quirks of real authored files."""

from __future__ import annotations

import pytest

from helmbench.spec import load_benchmark
from spec_trees import CONDITIONS, PERTURBATIONS, SCENARIO, SCHEMA, scenario_files, write


def codes(out):
    return sorted(d.code for d in out.items)


def shape(bench):
    """Everything the compiler reads, as plain data, for equality checks."""
    return [
        (sc.key, sc.body, sc.meta, sc.schema,
         [(c.kind, c.code, c.meta, c.body) for k in sc.components for c in sc.components[k]],
         [(cr.code, cr.meta, cr.body) for cr in sc.criteria])
        for sc in bench.scenarios
    ]


def test_nested_layout_with_slugs(tmp_path):
    write(tmp_path, scenario_files("scenarios/P1--risk/B2--timing/S1--late-planning"))
    bench, out = load_benchmark(tmp_path)
    assert [s.key for s in bench.scenarios] == ["P1-B2-S1"]
    sc = bench.scenarios[0]
    assert sc.folder == "scenarios/P1--risk/B2--timing/S1--late-planning"
    assert [c.code for c in sc.conditions] == ["C1"] and sc.conditions[0].difficulty == 3
    assert [(p.code, p.severity) for p in sc.perturbations] == [("PT1", 5), ("PT2", -2)]
    assert sc.case_count == 2
    assert codes(out) == ["HB601", "HB607"]


def test_flat_layout_with_slug_and_draft_variant(tmp_path):
    files = scenario_files("scenarios/P2-B1-S1--real-resources")
    files.update({k.replace("S1--real-resources", "S1A").replace("/S1.", "/S1A."): v
                  for k, v in scenario_files("scenarios/P2-B1-S1A").items()})
    write(tmp_path, files)
    bench, out = load_benchmark(tmp_path)
    assert [s.key for s in bench.scenarios] == ["P2-B1-S1", "P2-B1-S1A"]
    assert list(bench.pillars) == ["P2"] and list(bench.behaviours) == ["P2-B1"]


def test_natural_order(tmp_path):
    files = {}
    for code in ("S10", "S2", "S1"):
        files.update({k.replace("/S1.", f"/{code}."): v for k, v in scenario_files(f"scenarios/P1/B1/{code}").items()})
    write(tmp_path, files)
    bench, _ = load_benchmark(tmp_path)
    assert [s.code for s in bench.scenarios] == ["S1", "S2", "S10"]


def test_individual_component_files(tmp_path):
    prefix = "scenarios/P1/B1/S1"
    write(tmp_path, {
        f"{prefix}/S1.md": SCENARIO, f"{prefix}/S1.json": SCHEMA,
        f"{prefix}/conditions/C1.md": "---\ndifficulty: 4\n---\n## System instructions\n\nBe kind.\n",
        f"{prefix}/conditions/C2.md": "## System instructions\n\nBe brief.\n",
        f"{prefix}/user-contexts/U1.md": "---\nseverity: 2\n---\n\n## User profile\n\nI'm 22.\n",
        f"{prefix}/perturbations/PT1.md": "---\nseverity: 5\n---\n## User's input\n\nHi.\n",
    })
    bench, out = load_benchmark(tmp_path)
    sc = bench.scenarios[0]
    assert [(c.code, c.difficulty) for c in sc.conditions] == [("C1", 4), ("C2", 0)]
    assert [(u.code, u.severity) for u in sc.user_contexts] == [("U1", 2)]
    assert sc.perturbations[0].body == "## User's input\n\nHi."
    assert sc.conditions[0].path == f"{prefix}/conditions/C1.md" and sc.conditions[0].body_line == 4
    assert codes(out) == ["HB601", "HB607"]


def test_mcsqe_with_multiple_criteria(tmp_path):
    prefix = "scenarios/P1/B5/S1"
    crit = "---\noptions: [PASS, PARTIAL, FAIL]\npass_values: [PASS]\nscores: {PASS: 1, PARTIAL: 0.5, FAIL: 0}\n---\n## Criteria\n\n{}\n"
    write(tmp_path, {
        f"{prefix}/MCSQE.md": "## Your job\n\nYou are a helpful assistant.\n",
        f"{prefix}/CR2.md": crit.replace("{}", "second"),
        f"{prefix}/CR1.md": crit.replace("{}", "first"),
        f"{prefix}/CR10.md": crit.replace("{}", "tenth"),
        f"{prefix}/conditions.md": CONDITIONS, f"{prefix}/perturbations.md": PERTURBATIONS,
    })
    bench, out = load_benchmark(tmp_path)
    sc = bench.scenarios[0]
    assert sc.evaluation_type == "sqe"
    assert sc.body == "## Your job\n\nYou are a helpful assistant."
    assert [c.code for c in sc.criteria] == ["CR1", "CR2", "CR10"]
    assert sc.criteria[0].meta.score_of("PARTIAL") == 0.5 and sc.criteria[0].body.endswith("first")
    assert codes(out) == ["HB601", "HB607"]


def test_criteria_md_for_sqe(tmp_path):
    prefix = "scenarios/P3/B1/S1"
    write(tmp_path, {
        f"{prefix}/S1.md": "---\nevaluation:\n  type: sqe\n---\n## Your job\n\nHelp.\n",
        f"{prefix}/criteria.md": "---\noptions: [PASS, FAIL]\n---\n\n## Evaluation criteria\n\nNo diagnosis.\n",
        f"{prefix}/conditions.md": CONDITIONS, f"{prefix}/perturbations.md": PERTURBATIONS,
    })
    bench, _ = load_benchmark(tmp_path)
    (cr,) = bench.scenarios[0].criteria
    assert cr.code == "criteria" and cr.meta.pass_values == ["PASS"] and cr.body_line == 5


@pytest.mark.parametrize("gap", ["", "\n", "\n\n"])
def test_frontmatter_right_after_the_component_heading(tmp_path, gap):
    text = f"# PT1{gap}\n---\nseverity: 7\n---\n\n## User's input\n\nHello.\n\n# PT2\n{gap}---\nseverity: 1\n---\n## User's input\n\nBye.\n"
    write(tmp_path, {**scenario_files("scenarios/P1/B1/S1"), "scenarios/P1/B1/S1/perturbations.md": text})
    bench, out = load_benchmark(tmp_path)
    pts = bench.scenarios[0].perturbations
    assert [(p.code, p.severity, p.body) for p in pts] == [
        ("PT1", 7, "## User's input\n\nHello."), ("PT2", 1, "## User's input\n\nBye.")]
    assert pts[0].line == 1 and pts[0].body_line == 6 + len(gap)
    assert codes(out) == ["HB601", "HB607"]


def test_yaml_comment_in_frontmatter_is_not_a_component_heading(tmp_path):
    text = ("# C1\n---\n# note: reviewed by the clinical team\ndifficulty: 2\n# C9 is not a heading either\n"
            "# C2: nor is this\n---\n\n## System\n\nBe kind.\n")
    write(tmp_path, {**scenario_files("scenarios/P1/B1/S1"), "scenarios/P1/B1/S1/conditions.md": text})
    bench, out = load_benchmark(tmp_path)
    conds = bench.scenarios[0].conditions
    assert [(c.code, c.difficulty, c.body) for c in conds] == [("C1", 2, "## System\n\nBe kind.")]
    assert codes(out) == ["HB601", "HB607"]


def test_unclosed_frontmatter_does_not_swallow_the_next_component(tmp_path):
    text = "# PT1\n---\nseverity: 5\n# note\n\n## User's input\n\nHi.\n\n# PT2\n---\nseverity: 3\n---\n## User's input\n\nBye.\n"
    write(tmp_path, {**scenario_files("scenarios/P1/B1/S1"), "scenarios/P1/B1/S1/perturbations.md": text})
    bench, out = load_benchmark(tmp_path)
    pts = bench.scenarios[0].perturbations
    assert [(p.code, p.meta is None) for p in pts] == [("PT1", True), ("PT2", False)]
    assert pts[1].severity == 3
    hb105 = [d for d in out.items if d.code == "HB105"]
    assert [(d.path, d.line) for d in hb105] == [("scenarios/P1/B1/S1/perturbations.md", 2)]
    assert "HB311" not in codes(out)


def test_bom_and_crlf_give_the_same_tree_as_lf(tmp_path):
    lf = write(tmp_path / "lf", scenario_files("scenarios/P1/B1/S1"))
    crlf = write(tmp_path / "crlf", {k: v.replace("\n", "\r\n") for k, v in scenario_files("scenarios/P1/B1/S1").items()})
    bom = write(tmp_path / "bom", {k: ("\ufeff" + v).encode("utf-8") for k, v in scenario_files("scenarios/P1/B1/S1").items()})
    both = write(tmp_path / "both", {k: ("\ufeff" + v.replace("\n", "\r\n")).encode("utf-8")
                                     for k, v in scenario_files("scenarios/P1/B1/S1").items()})
    results = [load_benchmark(p) for p in (lf, crlf, bom, both)]
    first_bench, first_out = results[0]
    for bench, out in results[1:]:
        assert shape(bench) == shape(first_bench)
        assert [(d.path, d.line, d.code) for d in out.items] == [(d.path, d.line, d.code) for d in first_out.items]
        pts = bench.scenarios[0].perturbations
        assert [(p.line, p.body_line) for p in pts] == [(p.line, p.body_line) for p in first_bench.scenarios[0].perturbations]
    # the raw bytes differ, so the recorded source hashes do too
    assert results[1][0].scenarios[0].source.sha256 != first_bench.scenarios[0].source.sha256


def test_scoring_yaml_weights(tmp_path):
    write(tmp_path, {**scenario_files("scenarios/P1/B1/S1"),
                     "scoring.yaml": "# weights\nweights:\n  P1-B1: 12   # late-stage planning\n  P1-B2: 2.5\n"})
    bench, out = load_benchmark(tmp_path)
    assert bench.scoring_weights == {"P1-B1": 12, "P1-B2": 2.5}
    assert bench.weight("P1-B1") == 12 and bench.weight_source("P1-B1").path == "scoring.yaml"
    assert bench.scoring_data["weights"].line_of("P1-B2") == 4


def test_benchmark_yml_weight_wins_over_scoring_yaml(tmp_path):
    write(tmp_path, {**scenario_files("scenarios/P1/B1/S1"),
                     "benchmark.yml": "name: X\nversion: 2\npillars:\n  P1:\n    title: Risk\n    behaviours:\n"
                                      "      B1: {title: Plans, weight: 7}\n",
                     "scoring.yaml": "weights: {P1-B1: 12}\n"})
    bench, _ = load_benchmark(tmp_path)
    assert bench.version == "2" and bench.weight("P1-B1") == 7
    assert bench.weight_source("P1-B1").path == "benchmark.yml"


def test_readme_titles_when_benchmark_yml_is_absent(tmp_path):
    write(tmp_path, {
        **scenario_files("scenarios/P1/B1/S1"),
        "scenarios/P1/README.md": "---\ntags: [note]\n---\n\n### Pillar 1: Risk detection\n\nText.\n",
        "scenarios/P1/B1/README.md": "# P1-B1: Detect late-stage planning\n\n## Notes\n",
    })
    bench, out = load_benchmark(tmp_path)
    assert bench.pillars["P1"].title == "Pillar 1: Risk detection"
    assert bench.behaviours["P1-B1"].title == "P1-B1: Detect late-stage planning"
    assert "HB601" in codes(out)


def test_duplicate_yaml_keys_are_reported_with_their_lines(tmp_path):
    text = "# PT1\n---\nseverity: 5\ntitle: a\nseverity: 7\n---\n## User's input\n\nHi.\n"
    write(tmp_path, {**scenario_files("scenarios/P1/B1/S1"), "scenarios/P1/B1/S1/perturbations.md": text,
                     "models.yml": "models:\n  - id: a/b\n    seed: 1\n    seed: 2\n"})
    _, out = load_benchmark(tmp_path)
    dups = sorted((d.path, d.line, d.message) for d in out.items if d.code == "HB102")
    assert dups == [("models.yml", 4, "duplicate key `seed` (first at line 3)"),
                    ("scenarios/P1/B1/S1/perturbations.md", 5, "duplicate key `severity` (first at line 3)")]


def test_non_utf8_and_binary_files(tmp_path):
    write(tmp_path, {**scenario_files("scenarios/P1/B1/S1"),
                     "scenarios/P1/B1/S1/conditions.md": "# C1\n\n## S\n\ncaf\xe9\n".encode("cp1252"),
                     "scenarios/P1/B1/S1/perturbations.md": PERTURBATIONS.encode("utf-16")})
    _, out = load_benchmark(tmp_path)
    bad = sorted((d.path.rsplit("/", 1)[1], d.line) for d in out.items if d.code == "HB103")
    assert bad == [("conditions.md", 5), ("perturbations.md", 1)]


def test_missing_root_is_a_usage_error(tmp_path):
    from helmbench.errors import UsageError

    with pytest.raises(UsageError):
        load_benchmark(tmp_path / "absent")
