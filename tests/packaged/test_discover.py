"""Root discovery: commands find the benchmark from any folder inside it, and build/ lands beside it."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from helmbench.errors import UsageError
from helmbench.spec import discover
from packaged_helpers import authors_layout, git, helmbench, scaffold


@pytest.fixture
def chdir(monkeypatch):
    return monkeypatch.chdir


def test_authors_layout_found_from_a_nested_folder(tmp_path, chdir):
    repo = authors_layout(tmp_path / "repo")
    chdir(repo / "scenarios" / "P1" / "B1" / "S1--risk-rating")
    found = discover.find_layout()
    assert found.root == repo and found.project == repo and found.build == repo / "build"
    assert Path(discover.benchmark_root(None)).resolve() == repo.resolve()
    assert Path(discover.build_dir()).resolve() == (repo / "build").resolve()


def test_subfolder_layout_found_from_inside_and_from_above(tmp_path, chdir):
    project = tmp_path / "project"
    project.mkdir()
    bench = scaffold(project / "benchmark")
    for start in (bench / "scenarios" / "P2", bench, project):
        chdir(start)
        found = discover.find_layout()
        assert (found.root, found.project) == (bench, project), start
        assert Path(discover.build_dir()).resolve() == (project / "build").resolve()
        assert Path(discover.models_file()).resolve() == (bench / "models.yml").resolve()


def test_a_repository_named_benchmark_keeps_build_inside_it(tmp_path, chdir):
    repo = authors_layout(tmp_path / "benchmark")
    git(repo, "init", "-q")
    chdir(repo / "scenarios")
    assert discover.find_layout().project == repo


def test_explicit_folder_wins_and_its_benchmark_subfolder_is_used(tmp_path, chdir):
    project = tmp_path / "p"
    project.mkdir()
    bench = scaffold(project / "benchmark")
    chdir(tmp_path)
    assert discover.benchmark_root(project) == bench
    assert discover.benchmark_root(tmp_path / "elsewhere") == tmp_path / "elsewhere"  # lint reports it


def test_nowhere_is_a_clear_error(tmp_path, chdir):
    chdir(tmp_path)
    with pytest.raises(UsageError, match="no benchmark found") as exc:
        discover.benchmark_root(None)
    assert "helmbench init" in exc.value.hint
    assert discover.build_dir() == Path("build")


@pytest.mark.slow
def test_commands_from_a_nested_folder_write_build_beside_the_benchmark(tmp_path):
    repo = authors_layout(tmp_path / "repo")
    deep = repo / "scenarios" / "P2" / "B2"
    lint = helmbench("lint", cwd=deep)
    assert lint.returncode == 0, lint.stdout + lint.stderr
    compiled = helmbench("compile", cwd=deep)
    assert compiled.returncode == 0, compiled.stderr
    assert (repo / "build" / "manifest.jsonl").is_file() and not (deep / "build").exists()
    dry = helmbench("run", cwd=deep)
    assert dry.returncode == 0 and "Dry run" in dry.stdout, dry.stderr
    assert not os.path.exists(repo / "build" / "results.db")


def test_compile_of_a_benchmark_elsewhere_writes_build_beside_that_benchmark(tmp_path):
    repo = authors_layout(tmp_path / "repo")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    compiled = helmbench("compile", str(repo), cwd=elsewhere)
    assert compiled.returncode == 0, compiled.stderr
    assert (repo / "build" / "manifest.jsonl").is_file()
    assert not (elsewhere / "build").exists()


def test_defaults_land_in_one_build_folder_and_given_paths_win(tmp_path, chdir):
    repo = authors_layout(tmp_path / "repo")
    chdir(repo / "scenarios")
    manifest, db, site = discover.in_build(manifest=None, db=Path("mine.db"), site_dir=None)
    assert db == Path("mine.db")
    assert manifest.resolve() == repo / "build" / "manifest.jsonl"
    assert site.resolve() == repo / "build" / "site"
