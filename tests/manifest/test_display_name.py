"""A tree without benchmark.yml is named for display and export by its README's first `# ` heading,
else by its folder: never "untitled", never part of the manifest hash, and shown only as text."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from helmbench.manifest.emit import compile_tree
from helmbench.spec.loader import MAX_NAME, display_name

from ._util import GOLDEN_TREE, REPO, UPSTREAM, read_lines

#: the authors' sample beside the repository, or beside the folder of worktrees holding it
AUTHORS = next((p for p in (UPSTREAM, REPO.parents[1] / "shared" / "fixtures" / "upstream-sample") if p.is_dir()),
               UPSTREAM)

HOSTILE = "Safe <script>alert(1)</script> *bench* [x](javascript:alert(1))\u202e\x1b[31m"


def _undeclared(tmp_path: Path, folder: str, readme: str | None) -> Path:
    tree = tmp_path / folder
    shutil.copytree(GOLDEN_TREE, tree)
    (tree / "benchmark.yml").unlink()
    if readme is not None:
        (tree / "README.md").write_text(readme, encoding="utf-8")
    return tree


def _header(tree: Path, out: Path) -> dict:
    return compile_tree(tree, out).header


def test_readme_title_names_the_tree_outside_the_hash(tmp_path):
    a = _header(_undeclared(tmp_path / "1", "alpha", "Intro line\n\n## Not this\n\n# The real title\n\n# Later\n"),
                tmp_path / "out1")
    b = _header(_undeclared(tmp_path / "2", "beta", None), tmp_path / "out2")
    assert a["benchmark"]["name"] == "The real title"  # the first `# `, not the first heading
    assert b["benchmark"]["name"] == "beta"  # no README: the folder
    assert a["benchmark"]["version"] is None and "untitled" not in json.dumps(a)
    # the name is display only: the same files in another folder, with another title, hash the same
    assert a["manifest_hash"] == b["manifest_hash"] and a["catalog_hash"] == b["catalog_hash"]


def test_benchmark_yml_still_wins(tmp_path):
    tree = tmp_path / "t"
    shutil.copytree(GOLDEN_TREE, tree)
    (tree / "README.md").write_text("# Something else\n", encoding="utf-8")
    assert _header(tree, tmp_path / "out")["benchmark"]["name"] == "HELMBench golden"


def test_display_name_drops_control_characters_and_is_bounded():
    assert display_name("a\x1b[31m b\u202e\tc", "folder") == "a[31m b c"
    assert display_name("  \u200b ", "my-folder") == "my-folder"
    assert display_name(None, "") == "untitled"
    long = display_name("x" * 500, "f")
    assert len(long) == MAX_NAME and long.endswith("…")


def test_a_hostile_title_is_text_in_every_report(tmp_path):
    """The name reaches the report's terminal and Markdown renderings escaped (the site's templates
    autoescape it like a benchmark.yml name: tests/publish/test_publish_xss.py)."""
    import markdown

    from helmbench.cli.report_render import _title
    from helmbench.score.board import Leaderboard
    from helmbench.score.report import Report

    header = _header(_undeclared(tmp_path, "t", f"# {HOSTILE}\n"), tmp_path / "out")
    name = header["benchmark"]["name"]
    assert "\u202e" not in name and "\x1b" not in name and "<script>" in name
    board = Leaderboard(manifest_hash=header["manifest_hash"], requested_manifest=None, benchmark_name=name,
                        benchmark_version=None, n_cases=14, pillars=[], rows=[], comparisons=[])
    title = _title(Report(board))
    assert title.startswith("Safe <script>") and " v" not in title.split("·")[0]
    from helmbench.cli.report_render import md_text

    html = markdown.markdown(md_text(title))
    assert "<script>" not in html and "&lt;script&gt;" in html and "<a " not in html


@pytest.mark.skipif(not AUTHORS.is_dir(), reason="the authors' sample is not on this machine")
def test_the_authors_repository_is_not_untitled(tmp_path):
    compile_tree(AUTHORS, tmp_path)
    header = read_lines(tmp_path / "manifest.jsonl")[0]
    assert header["benchmark"]["name"] == "Upstream sample"
