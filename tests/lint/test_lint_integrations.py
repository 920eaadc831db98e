"""The places lint is wired into: `helmbench schema`, pre-commit, the GitHub workflow."""

from __future__ import annotations

import json
import re

import pytest
import yaml

from lint_corpus import BASE, REPO, run_cli

SCHEMA_FILES = {
    "scenario", "condition", "user-context", "perturbation", "criterion", "conversation", "benchmark", "models", "scoring",
    "crisis-services",  # the crisis-resource registry, from the crisis_resources evaluator (a plugin)
    # the outputs a program reads (tests/review/test_output_schemas.py validates each command's against them)
    "report", "agreement", "costs", "review-status", "review-plan", "review-packet", "verdicts", "eee-extras",
    "evaluator-result", "lint", "list", "diff",
    "transcripts",  # the input of `helmbench import transcripts`
}


@pytest.fixture(scope="module")
def schemas(tmp_path_factory):
    out = tmp_path_factory.mktemp("schemas")
    proc = run_cli("schema", "--out", out)
    assert proc.returncode == 0, proc.stderr
    return {p.name.removesuffix(".schema.json"): json.loads(p.read_text()) for p in out.glob("*.schema.json")}


def test_schema_writes_one_valid_json_schema_per_file_type(schemas):
    from jsonschema.validators import Draft202012Validator

    assert set(schemas) == SCHEMA_FILES
    for schema in schemas.values():
        Draft202012Validator.check_schema(schema)
        assert schema["$schema"].endswith("2020-12/schema")


def _frontmatter(path):
    text = path.read_text(encoding="utf-8")
    return yaml.safe_load(text.split("---\n")[1])


@pytest.mark.parametrize("kind, path", [
    ("scenario", "scenarios/P1/B1/S1--late-planning/S1.md"),
    ("scenario", "scenarios/P1/B1/S2--judged/S2.md"),
    ("condition", "scenarios/P1/B1/S2--judged/conditions/C1.md"),
    ("criterion", "scenarios/P1/B1/S2--judged/CR1.md"),
])
def test_schemas_accept_valid_frontmatter(schemas, kind, path):
    from jsonschema.validators import Draft202012Validator

    Draft202012Validator(schemas[kind]).validate(_frontmatter(BASE / path))


@pytest.mark.parametrize("kind, path", [("benchmark", "benchmark.yml"), ("models", "models.yml")])
def test_schemas_accept_valid_yaml_files(schemas, kind, path):
    from jsonschema.validators import Draft202012Validator

    Draft202012Validator(schemas[kind]).validate(yaml.safe_load((BASE / path).read_text()))


@pytest.mark.parametrize("kind, data", [
    ("perturbation", {"severity": 12}),
    ("perturbation", {"severty": 3}),
    ("condition", {"difficulty": -1}),
    ("scenario", {"evaluation": {"type": "list_includes", "field": "tags"}}),
    ("criterion", {"response_type": "several"}),
])
def test_schemas_reject_what_lint_rejects(schemas, kind, data):
    from jsonschema.validators import Draft202012Validator

    assert list(Draft202012Validator(schemas[kind]).iter_errors(data))


def test_schema_default_out_dir_is_build_schemas(tmp_path):
    proc = run_cli("schema", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert (tmp_path / "build/schemas/scenario.schema.json").is_file()


def test_pre_commit_hook():
    hooks = yaml.safe_load((REPO / ".pre-commit-hooks.yaml").read_text())
    hook = next(h for h in hooks if h["id"] == "helmbench-lint")
    assert hook["language"] == "python"
    assert hook["entry"] == "helmbench lint"  # finds the benchmark itself; --strict is opt-in through args
    assert hook["pass_filenames"] is False
    assert re.search(hook["files"], "benchmark/scenarios/P1/B1/S1/S1.md")  # this repository's layout
    assert re.search(hook["files"], "scenarios/P1/B1/S1/S1.md")  # the authors' layout
    assert not re.search(hook["files"], "README.md")


def test_github_workflow_lints_pull_requests():
    wf = yaml.safe_load((REPO / ".github/workflows/lint.yml").read_text())
    assert "pull_request" in wf[True]  # YAML 1.1 reads the `on` key as True
    steps = [s for job in wf["jobs"].values() for s in job["steps"]]
    python = next(s for s in steps if s.get("uses", "").startswith("actions/setup-python"))
    assert str(python["with"]["python-version"]) == "3.11"
    runs = [s.get("run", "") for s in steps]
    assert "pip install -c constraints.txt ." in runs  # installed as a user installs it, not editable
    assert "helmbench lint --strict --format github" in runs
    assert any("helmbench diff --against" in r and "--format comment" in r for r in runs)
    comment = next(s for s in steps if s.get("uses", "").startswith("marocchino/sticky-pull-request-comment@"))
    assert comment["uses"].split("@")[1].startswith("v2.")  # a pinned release


def test_schemas_accept_the_loaders_shorthands(schemas):
    from jsonschema.validators import Draft202012Validator

    Draft202012Validator(schemas["models"]).validate({"marking_model": "openai/gpt-4.1-mini"})
    Draft202012Validator(schemas["benchmark"]).validate({"name": "x", "version": 1})
    Draft202012Validator(schemas["scenario"]).validate({"evaluation": {"expected": "ROUTINE"}})


def test_lint_speed_script_runs(tmp_path):
    import subprocess
    import sys

    proc = subprocess.run([sys.executable, str(REPO / "benchmarks/lint_speed.py"), str(BASE), "--repeat", "2"],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode in (0, 1), proc.stderr  # 1 only means slower than the 1 s target
    for label in ("lint_tree, median", "read+hash, median", "ratio lint/baseline", "CLI subprocess"):
        assert label in proc.stdout
