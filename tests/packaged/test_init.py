"""`helmbench init`: a new benchmark repository that lints clean with --strict and runs end to end."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
from pathlib import Path

import pytest

from packaged_helpers import authors_layout, helmbench
from tests import inprocess


@pytest.mark.slow
def test_init_output_is_strict_clean_and_runs_against_the_fake_server(tmp_path, fake_env):
    made = helmbench("init", "bench", cwd=tmp_path)
    assert made.returncode == 0, made.stderr
    repo = tmp_path / "bench"
    for name in ("benchmark.yml", "models.yml", ".pre-commit-config.yaml", ".github/workflows/helmbench.yml",
                 "README.md", ".gitignore", "scenarios/P2/B2/S1--no-diagnosis/CR1.md"):
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


def test_init_criterion_keeps_its_options_and_the_sectioned_form_is_an_error_at_its_heading(tmp_path):
    """The example's criterion is one file (CR1.md, frontmatter at the top): lint reads its PARTIAL option. The
    same criterion rewritten as `# CR1` / `# CR2` sections in one criteria.md (the form conditions.md uses)
    is HB511 at the first heading, with the files to write instead."""
    from helmbench import api

    assert helmbench("init", "bench", cwd=tmp_path).returncode == 0
    folder = tmp_path / "bench" / "scenarios" / "P2" / "B2" / "S1--no-diagnosis"
    assert [d for d in api.lint(tmp_path / "bench") if d.severity != "note"] == []
    criterion = (folder / "CR1.md").read_text(encoding="utf-8")
    assert "  - PARTIAL" in criterion and criterion.startswith("---\n")

    (folder / "CR1.md").unlink()
    second = "---\ntitle: Suggests a professional\n---\n## Evaluation criteria\n\nPASS when it suggests a GP.\n"
    (folder / "criteria.md").write_text(f"\n# CR1\n{criterion}\n# CR2\n{second}", encoding="utf-8")
    [found] = [d for d in api.lint(tmp_path / "bench") if d.code == "HB511"]
    assert (found.path, found.line) == ("scenarios/P2/B2/S1--no-diagnosis/criteria.md", 2)
    assert "CR1, CR2" in found.message and "CR1.md, CR2.md" in found.hint


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


def _run_next_line(stdout: str, cwd: Path) -> subprocess.CompletedProcess:
    """The `next:` command init prints, pasted into a shell as a user would (dry run: no key). A real bash reads
    it (its quoting, `cd`, `&&`); the `helmbench` commands in it run in this process (tests/inprocess.bash)."""
    line = next(s for s in stdout.splitlines() if s.startswith("next: "))[len("next: "):]
    env = {k: v for k, v in os.environ.items() if k != "OPENROUTER_API_KEY"}
    calls: list[list[str]] = []
    done = inprocess.bash(line, cwd=cwd, env=env, calls=calls)
    assert done.returncode == 0, done.stdout + done.stderr
    assert [c[0] for c in calls] == ["lint", "compile", "run"], (line, calls)  # each one ran, in order
    return done


@pytest.mark.slow
def test_init_next_command_works_in_the_authors_existing_benchmark(tmp_path):
    """`helmbench init .` in the authors' repository (no benchmark.yml: HB601 is always a warning
    there) suggests a command that passes as printed: no `--strict`, no `cd .`."""
    repo = authors_layout(tmp_path / "repo")
    out = helmbench("init", ".", cwd=repo)
    assert out.returncode == 0, out.stderr
    assert "next: helmbench lint && " in out.stdout, out.stdout
    done = _run_next_line(out.stdout, repo)
    assert done.returncode == 0, done.stdout + done.stderr


@pytest.mark.slow
def test_init_next_command_works_for_a_folder_name_with_a_space(tmp_path):
    out = helmbench("init", "my bench", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert "next: cd 'my bench' && helmbench lint --strict" in out.stdout, out.stdout
    done = _run_next_line(out.stdout, tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr


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
    assert "pull_request" in wf[True] and wf["jobs"]["lint"]["permissions"]["pull-requests"] == "write"
    steps = wf["jobs"]["lint"]["steps"]
    runs = [s.get("run", "") for s in steps]
    assert f'pip install "helmbench=={__version__}"' in runs
    assert any(r.startswith("helmbench lint") and "--format github" in r for r in runs)
    assert any('helmbench diff --against "origin/$BASE_REF" --format comment' in r for r in runs)
    comment = next(s for s in steps if s.get("uses", "").startswith("marocchino/sticky-pull-request-comment@v2."))
    assert "github.event_name == 'pull_request'" in comment["if"]
    assert comment["with"] == {"header": "helmbench", "path": "build/pr-comment.md"}
    hooks = yaml.safe_load((repo / ".pre-commit-config.yaml").read_text(encoding="utf-8"))["repos"][0]
    assert hooks["rev"] == f"v{__version__}" and hooks["hooks"][0]["id"] == "helmbench-lint"
