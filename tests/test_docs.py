"""The README documents commands that exist, and every command explains itself with --help."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
README = (REPO / "README.md").read_text(encoding="utf-8")


def _documented_commands() -> list[str]:
    return sorted(set(re.findall(r"`helmbench ([a-z][a-z-]*)", README)))


def _registered_commands() -> set[str]:
    from helmbench.cli import app
    from typer.main import get_command

    return set(get_command(app).commands)


def test_readme_names_at_least_the_pipeline():
    assert {"lint", "compile", "run", "publish", "serve", "report"} <= set(_documented_commands())


@pytest.mark.parametrize("command", _documented_commands())
def test_documented_command_exists(command):
    assert command in _registered_commands(), f"README documents `helmbench {command}`, which does not exist"


@pytest.mark.parametrize("command", sorted(_registered_commands()))
def test_every_command_has_help_with_an_example(command):
    proc = subprocess.run([sys.executable, "-m", "helmbench", command, "--help"], capture_output=True, text=True,
                          env={"COLUMNS": "200", "PATH": "/usr/bin:/bin", "TERM": "dumb"})
    assert proc.returncode == 0, proc.stderr
    assert "example" in proc.stdout.lower(), f"`helmbench {command} --help` shows no example"


def test_readme_set_up_commands_are_make_targets():
    makefile = (REPO / "Makefile").read_text()
    for target in ("run", "test"):
        assert f"make {target}" in README
        assert re.search(rf"^{target}:", makefile, re.M), target
    assert "make test" in (REPO / ".ci" / "run").read_text()
