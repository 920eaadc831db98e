"""Shared by the packaging tests: scaffold benchmarks with the real `helmbench init`, run git quietly."""

from __future__ import annotations

import subprocess
from pathlib import Path

from tests import inprocess

REPO = Path(__file__).resolve().parents[2]

GIT_ENV = {"GIT_AUTHOR_NAME": "Test", "GIT_AUTHOR_EMAIL": "test@example.invalid", "GIT_COMMITTER_NAME": "Test",
           "GIT_COMMITTER_EMAIL": "test@example.invalid", "GIT_CONFIG_NOSYSTEM": "1"}


def git(repo: Path, *args: str) -> None:
    subprocess.run(["git", "-c", "commit.gpgsign=false", "-c", "core.autocrlf=false", "-c", "init.defaultBranch=main",
                    *args], cwd=repo, check=True, capture_output=True, env={**GIT_ENV, "PATH": "/usr/bin:/bin",
                                                                             "HOME": str(repo)})


def scaffold(target: Path) -> Path:
    """The example benchmark `helmbench init` writes, in `target`."""
    from helmbench.cli.init_cmd import scaffold as write

    created, skipped = write(target)
    assert created and not skipped
    return target


def authors_layout(target: Path) -> Path:
    """The authors' layout: scenarios/ and models.yml at the root, scoring.yaml, no benchmark.yml."""
    scaffold(target)
    (target / "benchmark.yml").unlink()
    (target / "scoring.yaml").write_text("weights:\n  P1-B1: 12\n  P1-B2: 10\n  P2-B1: 8\n  P2-B2: 6\n", encoding="utf-8")
    return target


def break_scenario(scenario_md: Path) -> None:
    """Make a scenario's frontmatter invalid YAML (a lint error)."""
    text = scenario_md.read_text(encoding="utf-8")
    scenario_md.write_text(text.replace("evaluation:\n", "evaluation: [unclosed\n", 1), encoding="utf-8")


def helmbench(*args: str, cwd: Path, env: dict | None = None, exe: list[str] | None = None,
              timeout: float = 300, fresh: bool = False) -> subprocess.CompletedProcess:
    """Run the CLI as a user does, from `cwd`: in a fresh interpreter when `fresh` or given `exe` (code the
    command might run, the installed wheel), else the same command line in this process (tests/inprocess.py;
    a fresh interpreter adds only seconds of imports)."""
    import os
    import sys

    base = {k: v for k, v in os.environ.items() if k != "OPENROUTER_API_KEY"}  # a key only when given
    base.update({"COLUMNS": "200", "NO_COLOR": "1", **(env or {})})
    if exe is None and not fresh:
        return inprocess.helmbench(*args, cwd=cwd, env=base)
    if exe is None:  # this checkout's helmbench (the venv's may be another checkout's, installed editable)
        base["PYTHONPATH"] = os.pathsep.join([str(REPO), *filter(None, [base.get("PYTHONPATH")])])
    command = (exe or [sys.executable, "-m", "helmbench"]) + list(args)
    return subprocess.run(command, cwd=cwd, capture_output=True, text=True, env=base, timeout=timeout)
