"""The shipped benchmark keeps the properties issue 7 promises, so they cannot silently regress."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from tests import forked

REPO = Path(__file__).resolve().parents[2]
BENCH = REPO / "benchmark"


def helmbench(*args: str) -> subprocess.CompletedProcess:
    """The command, a process of its own forked from this one (tests/forked.py)."""
    return forked.run(*args, cwd=REPO, timeout=300)


@pytest.fixture(scope="module")
def listing() -> dict:
    proc = helmbench("list", str(BENCH), "--format", "json")
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def test_lint_strict_is_clean():
    proc = helmbench("lint", "--strict", str(BENCH))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "Traceback" not in proc.stderr


def test_at_least_eight_scenarios_in_all_four_pillars(listing):
    scenarios = listing["scenarios"]
    assert len(scenarios) >= 8
    assert {s["pillar"] for s in scenarios} >= {"P1", "P2", "P3", "P4"}


def test_every_evaluation_type_and_a_multi_criteria_scenario(listing):
    types = {s["evaluation"] for s in listing["scenarios"]}
    assert types >= {"category_match", "list_includes", "tag_threshold", "sqe"}
    assert any(s["evaluation"] == "sqe" and s["criteria"] >= 2 for s in listing["scenarios"])


def test_at_least_500_cases(listing):
    assert listing["cases"] >= 500
    assert listing["cases"] == sum(s["cases"] for s in listing["scenarios"])


def test_every_scenario_has_a_title_and_a_readable_slug(listing):
    for s in listing["scenarios"]:
        assert s["title"], s["scenario"]
    for folder in BENCH.glob("scenarios/P*/B*/S*"):
        assert "--" in folder.name, f"{folder} has no readable --slug"


def test_severity_spans_neutral_to_catastrophic_and_false_positive_controls():
    from helmbench.spec import load_benchmark

    bench, _ = load_benchmark(BENCH)
    severities = {c.severity for sc in bench.scenarios for c in sc.user_contexts}
    assert 0 in severities and 10 in severities
    assert min(severities) < 0, "false-positive controls need negative-severity user contexts"
    p4 = [sc for sc in bench.scenarios if sc.pillar == "P4"]
    assert p4 and all(c.severity <= 0 for sc in p4 for c in sc.user_contexts + sc.perturbations)


def test_conditions_cover_the_four_kinds_with_difficulties():
    from helmbench.spec import load_benchmark

    bench, _ = load_benchmark(BENCH)
    difficulties = {c.difficulty for sc in bench.scenarios for c in sc.conditions}
    assert 0 in difficulties and max(difficulties) >= 5
    for sc in bench.scenarios:
        assert len(sc.conditions) >= 4, sc.key
        assert all(c.title for c in sc.conditions + sc.user_contexts + sc.perturbations), sc.key


def test_models_file_has_a_judge_that_is_not_under_test():
    from helmbench.spec import load_benchmark

    bench, _ = load_benchmark(BENCH)
    assert bench.models and bench.models.marking_model
    ids = [m.id for m in bench.models.models]
    assert len(ids) >= 4 and len({i.split("/")[0] for i in ids}) >= 4
    assert bench.models.marking_model.id not in ids


def test_every_behaviour_has_title_description_compliance_and_weight():
    from helmbench.spec import load_benchmark

    bench, _ = load_benchmark(BENCH)
    assert bench.declared and bench.version == "0.1"
    for b in bench.behaviours.values():
        assert b.title and b.description and b.compliance and b.weight, b.key


def test_the_handoff_scenarios_check_real_and_local_resources(tmp_path):
    """P2-B1's scenarios check the crisis contacts with crisis_resources against the shipped registry, for the
    user context's country; tone and priorities stay with the judge. Every user context says its country."""
    from helmbench.manifest import compile_tree

    manifest = compile_tree(BENCH, tmp_path).path
    header, *cases = [json.loads(line) for line in manifest.read_text(encoding="utf-8").splitlines()]
    handoff = [c for c in cases if c["behaviour"] == "P2-B1"]
    assert handoff and all(c["evaluation"]["type"] == "sqe" for c in handoff)
    for c in handoff:
        (check,) = c["evaluation"]["checks"]
        assert check["evaluation"]["type"] == "crisis_resources" and check["evaluation"]["country"] in \
            {"AU", "GB", "US", "NZ"}
        assert c["evaluation"]["criteria"], "the judge keeps tone and priorities"
    assert "crisis_resources" in header["catalog"]["evaluators"]
    countries = set(header["catalog"]["evaluators"]["crisis_resources"]["crisis-services.yml"]["countries"])
    used = {line.split(":", 1)[1].strip() for p in BENCH.rglob("user-contexts.md")
            for line in p.read_text(encoding="utf-8").splitlines() if line.startswith("country:")}
    assert used <= countries and len(used) == 6
    contexts = sum(p.read_text(encoding="utf-8").count("\n# U") + p.read_text(encoding="utf-8").startswith("# U")
                   for p in BENCH.rglob("user-contexts.md"))
    assert contexts == sum(p.read_text(encoding="utf-8").count("\ncountry: ") for p in BENCH.rglob("user-contexts.md"))
