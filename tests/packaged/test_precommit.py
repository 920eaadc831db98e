"""The pre-commit hook, run by the real `pre-commit try-repo`, in both repository layouts.

The hook repository is a temporary git repository holding this checkout's .pre-commit-hooks.yaml.
The `helmbench-lint-system` hook is used: it runs the helmbench on PATH (this test environment's),
because `language: python` hooks make pre-commit pip-install the hook repository and its
dependencies from a package index, which tests do not reach. Both hooks share entry and files
(checked below), so what is tested here — which changes fire the hook, and that the hook finds
the benchmark from the repository root — holds for both.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from packaged_helpers import REPO, authors_layout, break_scenario, git, scaffold

pytestmark = [pytest.mark.slow, pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")]

HOOK = "helmbench-lint-system"
SCENARIO = "scenarios/P1/B1/S1--risk-rating/S1.md"


def _hooks() -> dict[str, dict]:
    return {h["id"]: h for h in yaml.safe_load((REPO / ".pre-commit-hooks.yaml").read_text(encoding="utf-8"))}


def test_python_and_system_hooks_check_the_same_files_the_same_way():
    hooks = _hooks()
    py, system = hooks["helmbench-lint"], hooks[HOOK]
    assert py["language"] == "python" and system["language"] == "system"
    for key in ("entry", "files", "pass_filenames"):
        assert py[key] == system[key], key
    assert "benchmark/" not in py["files"]  # no fixed layout


@pytest.fixture(scope="module")
def hook_repo(tmp_path_factory) -> Path:
    repo = tmp_path_factory.mktemp("hookrepo")
    git(repo, "init", "-q")
    shutil.copyfile(REPO / ".pre-commit-hooks.yaml", repo / ".pre-commit-hooks.yaml")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "hooks")
    return repo


def _try_repo(hook_repo: Path, repo: Path, *args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PRE_COMMIT_HOME": str(repo.parent / "pre-commit-home"), "HOME": str(repo.parent),
           "PATH": f"{Path(sys.executable).parent}{os.pathsep}/usr/bin:/bin", "NO_COLOR": "1",
           "GIT_AUTHOR_NAME": "Test", "GIT_AUTHOR_EMAIL": "t@example.invalid",
           "GIT_COMMITTER_NAME": "Test", "GIT_COMMITTER_EMAIL": "t@example.invalid"}
    env.pop("VIRTUAL_ENV", None)
    return subprocess.run([sys.executable, "-m", "pre_commit", "try-repo", str(hook_repo), HOOK, *args],
                          cwd=repo, capture_output=True, text=True, env=env, timeout=300)


def _committed(repo: Path) -> Path:
    git(repo, "init", "-q")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "benchmark")
    return repo


@pytest.mark.parametrize("layout", ["authors", "subfolder"])
def test_hook_passes_a_clean_benchmark_and_fails_a_broken_one(hook_repo, tmp_path, layout):
    repo = tmp_path / "repo"
    if layout == "authors":
        authors_layout(repo)
        bench = repo
    else:
        repo.mkdir()
        bench = scaffold(repo / "benchmark")
        (repo / "README.md").write_text("# a project with its benchmark under benchmark/\n", encoding="utf-8")
    _committed(repo)

    clean = _try_repo(hook_repo, repo, "--all-files")
    assert clean.returncode == 0, clean.stdout + clean.stderr
    assert "Passed" in clean.stdout and "Skipped" not in clean.stdout

    # a change outside the benchmark does not run it; a change to a scenario does
    outside = _try_repo(hook_repo, repo, "--files", "README.md" if layout == "subfolder" else ".gitignore")
    assert outside.returncode == 0 and "Skipped" in outside.stdout, outside.stdout

    break_scenario(bench / SCENARIO)
    rel = (bench / SCENARIO).relative_to(repo).as_posix()
    git(repo, "add", "-A")
    broken = _try_repo(hook_repo, repo, "--files", rel)
    assert broken.returncode == 1, broken.stdout + broken.stderr
    assert "Failed" in broken.stdout and "HB101" in broken.stdout and "S1.md" in broken.stdout
