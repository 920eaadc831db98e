"""The README documents commands that exist, and every command explains itself with --help."""

from __future__ import annotations

import re
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.inprocess import helmbench

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
    proc = helmbench(command, "--help", env={"COLUMNS": "200", "PATH": "/usr/bin:/bin", "TERM": "dumb"})
    assert proc.returncode == 0, proc.stderr
    assert "example" in proc.stdout.lower(), f"`helmbench {command} --help` shows no example"


def test_help_through_the_real_entry_point():
    """`python -m helmbench --help` in a fresh interpreter (the per-command help above runs in-process)."""
    bytecode = {k: os.environ[k] for k in ("PYTHONPYCACHEPREFIX", "PYTHONDONTWRITEBYTECODE") if k in os.environ}
    proc = subprocess.run([sys.executable, "-m", "helmbench", "--help"], capture_output=True, text=True,
                          env={"COLUMNS": "200", "PATH": "/usr/bin:/bin", "TERM": "dumb", **bytecode})  # none beside the sources
    assert proc.returncode == 0, proc.stderr
    assert all(command in proc.stdout for command in _registered_commands())


def test_readme_set_up_commands_are_make_targets():
    makefile = (REPO / "Makefile").read_text()
    for target in ("run", "test"):
        assert f"make {target}" in README
        assert re.search(rf"^{target}:", makefile, re.M), target
    assert "make test" in (REPO / ".ci" / "run").read_text()


def test_the_readme_and_the_makefile_agree_on_the_test_command():
    """`make test` runs the suite on every core (pytest-xdist), and the README says so."""
    recipe = re.search(r"^test:.*\n((?:\t.*\n)+)", (REPO / "Makefile").read_text(), re.M).group(1)
    assert "pytest -n auto" in recipe, recipe
    assert re.search(r"^make test .*pytest -n auto", README, re.M)


def _command_table() -> set[str]:
    """Commands named in the first column of the README's command table (`| `helmbench X …` | … |`)."""
    rows = re.findall(r"^\| (`helmbench (?:[^|\\]|\\.)*) \|", README, re.M)  # a cell may hold escaped pipes
    return {name for row in rows for name in re.findall(r"`helmbench ([a-z][a-z-]*)", row)}


@pytest.mark.parametrize("command", sorted(_registered_commands()))
def test_every_registered_command_is_in_the_readme_command_table(command):
    assert command in _command_table(), f"`helmbench {command}` is registered but not in the README's command table"


def test_the_committed_cli_reference_is_the_generated_one():
    from helmbench.cli.reference import COMMAND, PAGE, reference_markdown

    committed = (REPO / PAGE).read_text(encoding="utf-8")
    assert committed == reference_markdown(), f"{PAGE} is stale: run `{COMMAND}`"


def test_the_cli_reference_documents_every_command_and_option():
    from helmbench.cli import app
    from helmbench.cli.reference import reference_markdown
    from typer.main import get_command

    page = reference_markdown()
    for name, command in get_command(app).commands.items():
        assert f"\n## helmbench {name}\n" in page
        section = page.split(f"\n## helmbench {name}\n", 1)[1].split("\n## helmbench ", 1)[0]
        for param in command.params:
            if param.param_type_name == "option" and not param.hidden:
                assert f"`{param.opts[0]}`" in section, (name, param.opts)


def test_the_generated_pages_are_in_the_site_navigation():
    nav = (REPO / "helmbench" / "publish" / "mkdocs.yml").read_text(encoding="utf-8")
    for page in ("cli.md", "lint-rules.md", "api.md"):
        assert re.search(rf"^\s+- [^:\n]+: {re.escape(page)}$", nav, re.M), page


#: Text files the package ships or shows (docstrings, messages, templates, pages, styles).
_SHOWN = ("*.py", "*.md", "*.j2", "*.css", "*.js", "*.yml", "*.yaml", "*.html", "*.json")


def _shown_files():
    pkg = REPO / "helmbench"
    for pattern in _SHOWN:
        for path in sorted(pkg.rglob(pattern)):
            if "vendor" not in path.parts and "__pycache__" not in path.parts:
                yield path
    yield REPO / "README.md"
    yield REPO / "ARCHITECTURE.md"


def test_nothing_shown_refers_to_a_file_that_is_not_in_the_repository():
    """Design notes and issue trackers are not shipped: a reader cannot open "DESIGN.md §5" or "issue 5".
    Documents are cited by upper-case name (FORMAT.md, SCHEMA.md); each cited one must exist."""
    names = {p.name for p in REPO.rglob("*.md") if ".venv" not in p.parts and ".git" not in p.parts}
    bad = []
    for path in _shown_files():
        text = path.read_text(encoding="utf-8", errors="replace")
        for match in re.finditer(r"\bDESIGN\b|\bissue \d+\b|\bissues? #\d+|§", text):
            bad.append(f"{path.relative_to(REPO)}: {match.group(0)!r}")
        for match in re.finditer(r"\b([A-Z][A-Z_-]+\.md)\b", text):
            if match.group(1) not in names:
                bad.append(f"{path.relative_to(REPO)}: {match.group(1)}")
    assert not bad, "references to files that are not in the repository:\n" + "\n".join(bad)


#: Folders of helmbench/ that are not stages: the plugin machinery, and a plugin that ships with HELMBench.
BESIDE_THE_STAGES = ("plugins", "crisis")


def test_architecture_names_every_stage_folder_and_the_extension_points():
    text = (REPO / "ARCHITECTURE.md").read_text(encoding="utf-8")
    from tests.test_layers import LAYERS

    # the order the layer test enforces, as the page must draw it (stage folders and the API)
    chain = [name for name, _ in sorted(LAYERS.items(), key=lambda kv: kv[1])
             if (REPO / "helmbench" / name).is_dir() and name not in BESIDE_THE_STAGES or name == "api"]
    assert " → ".join(chain) in text, chain
    stages = [name for name in chain if name != "api"]
    for stage in stages:
        assert (REPO / "helmbench" / stage).is_dir(), stage
        assert f"`helmbench/{stage}/`" in text, stage
    for point in ("pluggy", "entry point", "Evaluators", "Lint rules", "migration", "phase engine"):
        assert point in text, point
    assert "ARCHITECTURE.md" in README


def test_the_plugin_page_is_a_whole_plugin_with_its_imports():
    """The page's code blocks are the plugin the suite installs (tests/plugins/conftest.py: page_package),
    so they must hold a pyproject and a module that imports everything it uses from the public module."""
    page = (REPO / "helmbench" / "publish" / "site_default" / "plugins.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```(\w+)\n(.*?)```", page, flags=re.S)
    assert [lang for lang, _ in blocks].count("toml") == 1 and "[project.entry-points.helmbench]" in blocks[0][1]
    module = "\n".join(text for lang, text in blocks if lang == "python")
    assert "from helmbench.plugin_api import (" in module
    imported = set(re.findall(r"^    (\w+),$", module.split("from helmbench.plugin_api import (")[1].split(")")[0], re.M))
    import helmbench.plugin_api as api

    assert imported <= set(api.__all__), imported - set(api.__all__)
    assert not re.search(r"^from helmbench\.(?!plugin_api)", module, re.M), "a plugin imports only helmbench.plugin_api"
