"""The packaged site: publish works with no mkdocs.yml or site/ in the folder, a repository's own
mkdocs.yml and pages override or extend the defaults, and "no run yet" says it was a dry run."""

from __future__ import annotations

import os

import pytest

from helmbench.errors import HelmbenchError
from helmbench.publish import PublishSettings, build_site
from packaged_helpers import authors_layout, helmbench


def _settings(build):
    return PublishSettings(db=build / "results.db", manifest=build / "manifest.jsonl", datasette_url="http://x")


@pytest.mark.slow
def test_publish_with_packaged_defaults_and_no_run_says_dry_run_only(tmp_path):
    repo = authors_layout(tmp_path / "repo")
    assert helmbench("compile", cwd=repo).returncode == 0
    dry = helmbench("run", cwd=repo)
    assert dry.returncode == 0 and "Dry run" in dry.stdout and "est. cost" in dry.stdout, dry.stderr
    report = helmbench("report", cwd=repo)
    assert report.returncode == 2 and "Traceback" not in report.stderr
    assert "no run has been made yet (dry run only)" in report.stderr and "OPENROUTER_API_KEY" in report.stderr
    published = helmbench("publish", cwd=repo / "scenarios")
    assert published.returncode == 0, published.stderr
    index = (repo / "build" / "site" / "index.html").read_text(encoding="utf-8")
    assert "No run has been made yet: dry run only." in index and "export OPENROUTER_API_KEY" in index
    assert "run `helmbench run` first" not in index
    assert (repo / "build" / "site" / "authors-guide" / "index.html").is_file()
    assert (repo / "build" / "site" / "scenarios" / "P1-B1-S1" / "index.html").is_file()


def test_publish_output_escapes_control_characters_in_the_site_path(tmp_path):
    """The site path publish prints is the user's folder: an escape sequence or a newline in it is
    shown escaped, never sent to the terminal."""
    repo = authors_layout(tmp_path / "repo\x1b[31m\nx")
    assert helmbench("compile", cwd=repo).returncode == 0
    published = helmbench("publish", cwd=repo)
    assert published.returncode == 0, published.stderr
    assert (repo / "build" / "site" / "index.html").is_file()
    assert "\x1b" not in published.stdout and len(published.stdout.splitlines()) == 1, repr(published.stdout)
    assert "repo\\x1b[31m\\nx/build/site" in published.stdout


def test_repository_mkdocs_yml_and_pages_override_and_extend_the_defaults(tmp_path):
    repo = authors_layout(tmp_path / "repo")
    (repo / "mkdocs.yml").write_text(
        "site_name: Our benchmark\n"
        "theme:\n  palette:\n    primary: teal\n"
        "nav:\n  - Leaderboard: index.md\n  - About us: about.md\n  - Authors' guide: authors-guide.md\n",
        encoding="utf-8")
    pages = repo / "site"
    pages.mkdir()
    (pages / "about.md").write_text("# About us\n\nWe wrote this benchmark.\n", encoding="utf-8")
    (pages / "authors-guide.md").write_text("# Our guide\n\nHow we write scenarios.\n", encoding="utf-8")
    secret = tmp_path / "secret.md"
    secret.write_text("# secret\n", encoding="utf-8")
    os.symlink(secret, pages / "leak.md")

    out = build_site(_settings(repo / "build"), site_dir=repo / "build" / "site", project_dir=repo)
    about = (out / "about" / "index.html").read_text(encoding="utf-8")
    assert "We wrote this benchmark." in about and "<title>About us - Our benchmark</title>" in about
    guide = (out / "authors-guide" / "index.html").read_text(encoding="utf-8")
    assert "How we write scenarios." in guide
    assert 'data-md-color-primary="teal"' in about
    assert "fonts.googleapis" not in about  # the packaged `font: false` survives the merged theme
    assert not (out / "leak").exists()  # a symbolic link out of site/ is not followed
    assert (out / "javascripts" / "tables.js").is_file()


def test_missing_explicit_config_is_a_clear_error(tmp_path):
    repo = authors_layout(tmp_path / "repo")
    proc = helmbench("publish", "-f", "nope.yml", cwd=repo)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr and "nope.yml" in proc.stderr


HOSTILE_MKDOCS = """\
site_name: !!python/object/apply:os.system ["touch {marker}-python"]
site_description: !ENV OPENROUTER_API_KEY
copyright: !ENV [OPENROUTER_API_KEY, none]
hooks:
  - evil_hook.py
plugins:
  - search
theme:
  custom_dir: overrides
  palette:
    primary: teal
extra_javascript:
  - evil.js
markdown_extensions:
  - pymdownx.snippets:
      base_path: ["/"]
  - footnotes
"""
EVIL_HOOK = ("import pathlib, os\npathlib.Path({marker!r} + '-hook').write_text(os.environ.get('OPENROUTER_API_KEY', 'no key'))\n"
             "pathlib.Path({marker!r} + '-environ').write_bytes(pathlib.Path('/proc/self/environ').read_bytes())\n")
KEY = "sk-or-v1-SITE-CONFIG-SENTINEL-0123456789"
#: Other credentials a maintainer's environment holds (CI tokens, cloud keys): never in the build's environment.
OTHER_SECRETS = {"GITHUB_TOKEN": "ghp_SITE-CONFIG-SENTINEL", "AWS_SECRET_ACCESS_KEY": "aws-SITE-CONFIG-SENTINEL",
                 "DEPLOY_KEY": "deploy-SITE-CONFIG-SENTINEL", "PYPI_PASSWORD": "pypi-SITE-CONFIG-SENTINEL"}


def _hostile_repo(tmp_path):
    repo = authors_layout(tmp_path / "repo")
    marker = str(tmp_path / "pwned")
    (repo / "mkdocs.yml").write_text(HOSTILE_MKDOCS.format(marker=marker), encoding="utf-8")
    (repo / "evil_hook.py").write_text(EVIL_HOOK.format(marker=marker), encoding="utf-8")
    (repo / "overrides").mkdir()
    (repo / "overrides" / "main.html").write_text("{{ config.site_description }} custom-template-ran", encoding="utf-8")
    return repo, tmp_path / "pwned"


def _files_holding(root, needle: str) -> list[str]:
    return [str(p) for p in root.rglob("*") if p.is_file() and needle.encode() in p.read_bytes()]


@pytest.mark.slow
def test_a_hostile_mkdocs_yml_is_read_as_data_and_runs_nothing(tmp_path):
    """`!!python/object/apply`, `!ENV OPENROUTER_API_KEY`, `hooks:`, a custom template folder and a
    file-including extension: the site is built, none of them runs, and the key is in no file."""
    repo, marker = _hostile_repo(tmp_path)
    assert helmbench("compile", cwd=repo).returncode == 0
    # In this process (tests/inprocess.py): whatever of it ran would leave its marker in tmp_path, or the key in a
    # file, either way failing below.
    published = helmbench("publish", cwd=repo, env={"OPENROUTER_API_KEY": KEY})
    assert published.returncode == 0, published.stderr
    assert "Traceback" not in published.stderr
    for what in ("!ENV", "python/object/apply", "`hooks` is ignored", "theme.custom_dir", "pymdownx.snippets",
                 "extra_javascript"):
        assert what in published.stderr, what
    index = (repo / "build" / "site" / "index.html").read_text(encoding="utf-8")
    assert 'data-md-color-primary="teal"' in index  # the data in it is taken
    assert "custom-template-ran" not in index and "evil.js" not in index
    assert list(tmp_path.glob("pwned*")) == []
    assert _files_holding(tmp_path, KEY) == []

    # the maintainer's explicit choice: the hook runs (so the refusal above is the allow-list's
    # doing), yet the build runs where the keys are absent (a child process with a scrubbed environment:
    # not in os.environ, nor in the process's own /proc/self/environ) and a tagged value still reads as nothing.
    # A fresh process: a hook run by mistake in the parent would find no secret in the test process's
    # /proc/self/environ (set in os.environ after it started), and the check below would lose its teeth.
    trusted = helmbench("publish", "--allow-site-code", cwd=repo, fresh=True,
                        env={"OPENROUTER_API_KEY": KEY, "HELMBENCH_VISIBLE": "visible-sentinel", **OTHER_SECRETS})
    assert trusted.returncode == 0, trusted.stderr
    assert (tmp_path / "pwned-hook").read_text() == "no key"
    environ = (tmp_path / "pwned-environ").read_bytes()
    assert b"visible-sentinel" in environ  # the hook did read its process's environment
    assert not [name for name, value in OTHER_SECRETS.items() if value.encode() in environ or name.encode() in environ]
    assert not (tmp_path / "pwned-python").exists()
    assert _files_holding(tmp_path, KEY) == []


def test_a_site_folder_that_is_or_holds_a_link_is_refused(tmp_path):
    repo = authors_layout(tmp_path / "repo")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (repo / "build" / "site").mkdir(parents=True)
    os.symlink(elsewhere, repo / "build" / "site" / "assets")
    with pytest.raises(HelmbenchError, match="symbolic link"):
        build_site(_settings(repo / "build"), site_dir=repo / "build" / "site", project_dir=repo)
    os.unlink(repo / "build" / "site" / "assets")
    os.rmdir(repo / "build" / "site")
    os.symlink(elsewhere, repo / "build" / "site")
    with pytest.raises(HelmbenchError, match="symbolic link"):
        build_site(_settings(repo / "build"), site_dir=repo / "build" / "site", project_dir=repo)
    assert list(elsewhere.iterdir()) == []
    os.unlink(repo / "build" / "site")
    out = build_site(_settings(repo / "build"), site_dir=repo / "build" / "site", project_dir=repo)
    assert (out / "index.html").is_file() and not out.is_symlink()
    assert sorted(p.name for p in (repo / "build").iterdir() if p.name.startswith(".")) == []
