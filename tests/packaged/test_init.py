"""`helmbench init`: a new benchmark repository that lints clean with --strict and runs end to end."""

from __future__ import annotations

import json
import sqlite3

import pytest

from packaged_helpers import helmbench


@pytest.mark.slow
def test_init_output_is_strict_clean_and_runs_against_the_fake_server(tmp_path, fake_env):
    made = helmbench("init", "bench", cwd=tmp_path)
    assert made.returncode == 0, made.stderr
    repo = tmp_path / "bench"
    for name in ("benchmark.yml", "models.yml", ".pre-commit-config.yaml", ".github/workflows/helmbench.yml",
                 "README.md", ".gitignore", "scenarios/P2/B2/S1--no-diagnosis/criteria.md"):
        assert (repo / name).is_file(), name

    lint = helmbench("lint", "--strict", cwd=repo)
    assert lint.returncode == 0, lint.stdout + lint.stderr
    listed = json.loads(helmbench("list", "--format", "json", cwd=repo).stdout)
    assert sorted(r["evaluation"] for r in listed["scenarios"]) == ["category_match", "list_includes", "sqe",
                                                                   "tag_threshold"]
    assert [r["criteria"] for r in listed["scenarios"] if r["evaluation"] == "sqe"] == [1]

    assert helmbench("compile", cwd=repo).returncode == 0
    run = helmbench("run", cwd=repo, env=fake_env)
    assert run.returncode == 0, run.stdout + run.stderr
    conn = sqlite3.connect(repo / "build" / "results.db")
    try:
        answered = conn.execute("SELECT COUNT(*) FROM responses WHERE error_kind IS NULL").fetchone()[0]
        judged = conn.execute("SELECT COUNT(*) FROM judgements").fetchone()[0]
    finally:
        conn.close()
    assert answered == listed["cases"] * 2  # two models
    assert judged >= 16  # the sqe scenario's 8 cases × 2 models, one criterion each
    report = helmbench("report", "--format", "json", cwd=repo)
    assert report.returncode == 0, report.stderr
    assert {r["model"] for r in json.loads(report.stdout)["rows"]} == {"openai/gpt-4.1-mini", "google/gemini-2.5-flash"}


def test_init_never_overwrites_and_adds_no_example_to_an_existing_benchmark(tmp_path):
    (tmp_path / "scenarios").mkdir()
    (tmp_path / "README.md").write_text("mine\n", encoding="utf-8")
    (tmp_path / "models.yml").write_text("models: []\n", encoding="utf-8")
    out = helmbench("init", ".", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert (tmp_path / "README.md").read_text(encoding="utf-8") == "mine\n"
    assert (tmp_path / "models.yml").read_text(encoding="utf-8") == "models: []\n"
    assert "kept" in out.stdout and "README.md" in out.stdout
    assert (tmp_path / ".pre-commit-config.yaml").is_file() and (tmp_path / ".github/workflows/helmbench.yml").is_file()
    assert not (tmp_path / "benchmark.yml").exists() and not any((tmp_path / "scenarios").iterdir())


def test_init_into_a_file_is_a_clear_error(tmp_path):
    (tmp_path / "f").write_text("x", encoding="utf-8")
    out = helmbench("init", "f", cwd=tmp_path)
    assert out.returncode == 2 and "Traceback" not in out.stderr and "not a folder" in out.stderr


def test_init_workflow_and_hook_config_gate_pull_requests(tmp_path):
    import yaml

    from helmbench import __version__
    from packaged_helpers import scaffold

    repo = scaffold(tmp_path / "r")
    wf = yaml.safe_load((repo / ".github/workflows/helmbench.yml").read_text(encoding="utf-8"))
    assert "pull_request" in wf[True] and wf["permissions"]["pull-requests"] == "write"
    steps = [s for job in wf["jobs"].values() for s in job["steps"]]
    runs = [s.get("run", "") for s in steps]
    assert f'pip install "helmbench=={__version__}"' in runs
    assert any(r.startswith("helmbench lint") and "--format github" in r for r in runs)
    assert any('helmbench diff --against "origin/$BASE_REF" --format comment' in r for r in runs)
    comment = next(s for s in steps if s.get("uses", "").startswith("marocchino/sticky-pull-request-comment@v2."))
    assert comment["with"] == {"header": "helmbench", "path": "build/pr-comment.md"}
    hooks = yaml.safe_load((repo / ".pre-commit-config.yaml").read_text(encoding="utf-8"))["repos"][0]
    assert hooks["rev"] == f"v{__version__}" and hooks["hooks"][0]["id"] == "helmbench-lint"
