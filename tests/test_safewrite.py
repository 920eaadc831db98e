"""The one safe writer, and the writers that go through it: a link planted in a tree, a build
folder or an output path is refused, never written through; a write is whole or absent."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from helmbench import safewrite
from helmbench.errors import HelmbenchError

REPO = Path(__file__).resolve().parents[1]
BASE = REPO / "tests" / "lint" / "base"


def test_a_write_is_atomic_and_leaves_no_temporary_file(tmp_path):
    safewrite.write_text(tmp_path / "a" / "b.txt", "one\n", tmp_path)
    safewrite.write_text(tmp_path / "a" / "b.txt", "two\n", tmp_path)
    assert (tmp_path / "a" / "b.txt").read_text() == "two\n"
    with pytest.raises(RuntimeError):
        with safewrite.atomic(tmp_path / "a" / "b.txt", tmp_path) as f:
            f.write(b"half")
            raise RuntimeError("crash mid-write")
    assert (tmp_path / "a" / "b.txt").read_text() == "two\n"
    assert sorted(p.name for p in (tmp_path / "a").iterdir()) == ["b.txt"]


def _victim_and_link(tmp_path, link: Path) -> Path:
    """A file of the user's, and a link to it planted at `link` (its folders made)."""
    victim = tmp_path / "victim"
    victim.write_text("keep")
    link.parent.mkdir(parents=True, exist_ok=True)
    os.symlink(victim, link)
    return victim


def test_a_link_at_the_target_or_on_the_way_is_refused(tmp_path):
    root = tmp_path / "root"
    victim = _victim_and_link(tmp_path, root / "sub" / "file.txt")
    with pytest.raises(safewrite.UnsafeWrite, match="symbolic link"):
        safewrite.write_text(root / "sub" / "file.txt", "x", root)
    os.symlink(tmp_path, root / "linked")  # a folder on the way
    with pytest.raises(safewrite.UnsafeWrite, match="symbolic link"):
        safewrite.write_text(root / "linked" / "victim", "x", root)
    with pytest.raises(safewrite.UnsafeWrite, match="outside"):
        safewrite.write_text(root / ".." / "victim", "x", root)
    with pytest.raises(safewrite.UnsafeWrite, match="symbolic link"):
        safewrite.make_dir(root / "linked" / "new", root)
    assert victim.read_text() == "keep" and not (tmp_path / "new").exists()


def test_exclusive_never_replaces(tmp_path):
    safewrite.write_text(tmp_path / "f", "first", exclusive=True)
    with pytest.raises(FileExistsError):
        safewrite.write_text(tmp_path / "f", "second", exclusive=True)
    assert (tmp_path / "f").read_text() == "first" and [p.name for p in tmp_path.iterdir()] == ["f"]


def test_compile_refuses_a_committed_link_in_the_build_folder(tmp_path):
    from helmbench.manifest import compile_tree

    tree = tmp_path / "bench"
    shutil.copytree(BASE, tree)
    victim = tmp_path / "victim"
    victim.write_text("keep")
    (tree / "build").mkdir()
    os.symlink(victim, tree / "build" / "manifest.jsonl")
    with pytest.raises(safewrite.UnsafeWrite):
        compile_tree(tree, tree / "build")
    assert victim.read_text() == "keep"
    (tree / "build" / "manifest.jsonl").unlink()
    os.symlink(tmp_path, tree / "build" / "manifests")
    with pytest.raises(safewrite.UnsafeWrite):
        compile_tree(tree, tree / "build")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bench", "victim"]


def test_init_refuses_a_linked_folder_in_the_target(tmp_path):
    from helmbench.cli.init_cmd import scaffold

    target = tmp_path / "repo"
    target.mkdir()
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    os.symlink(elsewhere, target / ".github")
    with pytest.raises(HelmbenchError, match="symbolic link"):
        scaffold(target)
    assert list(elsewhere.iterdir()) == []


def test_review_export_refuses_a_link_at_out(tmp_path):
    from typer.testing import CliRunner

    from helmbench.cli import app
    from helmbench.store import open_db

    db = tmp_path / "results.db"
    open_db(db).conn.close()
    victim = tmp_path / "victim"
    victim.write_text("keep")
    os.symlink(victim, tmp_path / "out.csv")
    result = CliRunner().invoke(app, ["review", "export", "--db", str(db), "--out", str(tmp_path / "out.csv")])
    assert result.exit_code != 0 and "symbolic link" in result.output and "Traceback" not in result.output
    assert victim.read_text() == "keep"
    ok = CliRunner().invoke(app, ["review", "export", "--db", str(db), "--out", str(tmp_path / "real.csv")])
    assert ok.exit_code == 0, ok.output
    assert (tmp_path / "real.csv").read_text().startswith("format,item_hash,")


def test_a_run_log_or_lock_file_planted_as_a_link_is_refused(tmp_path):
    from helmbench.run.logs import RunFile
    from helmbench.store.lock import RunLock

    build = tmp_path / "build"
    victim = _victim_and_link(tmp_path, build / "logs" / "run-1.log")
    with pytest.raises(safewrite.UnsafeWrite):
        RunFile(build / "logs" / "run-1.log")
    fine = RunFile(build / "logs" / "run-2.log")
    fine.stream.write("line\n")
    fine.close()
    assert (build / "logs" / "run-2.log").read_text() == "line\n"
    lock = RunLock(build / "results.db")
    os.symlink(victim, lock.path)
    with pytest.raises(safewrite.UnsafeWrite):
        lock.acquire()
    assert victim.read_text() == "keep"


def test_compile_refuses_a_build_folder_committed_as_a_link_inside_the_tree(tmp_path):
    from helmbench.manifest import compile_tree

    tree = tmp_path / "bench"
    shutil.copytree(BASE, tree)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    os.symlink(elsewhere, tree / "build")
    with pytest.raises(safewrite.UnsafeWrite, match="symbolic link"):
        compile_tree(tree, tree / "build")
    assert list(elsewhere.iterdir()) == []
    os.unlink(tree / "build")
    assert compile_tree(tree, tree / "build").path == tree / "build" / "manifest.jsonl"


def test_a_results_database_planted_as_a_link_is_not_written_through(tmp_path):
    from helmbench.store import open_db

    (tmp_path / "build").mkdir()
    os.symlink(tmp_path / "elsewhere.db", tmp_path / "build" / "results.db")  # dangling: SQLite would create it
    with pytest.raises(safewrite.UnsafeWrite, match="symbolic link"):
        open_db(tmp_path / "build" / "results.db")
    assert not (tmp_path / "elsewhere.db").exists()


def test_a_default_build_folder_that_is_a_link_is_refused_unless_named(tmp_path, monkeypatch):
    """With the `benchmark/` layout build/ sits beside the tree, in the repository a pull request
    changes: a committed `build` link must not carry compile's, run's or publish's writes away. A
    path the user names on the command line is trusted as named."""
    from typer.testing import CliRunner

    from helmbench.cli import app

    project = tmp_path / "project"
    shutil.copytree(BASE, project / "benchmark")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    os.symlink(elsewhere, project / "build")
    monkeypatch.chdir(project)
    runner = CliRunner()
    for command in (["compile"], ["publish"], ["run"], ["report"], ["serve", "--publish", str(tmp_path / "pub")]):
        result = runner.invoke(app, command)
        assert result.exit_code == 2, (command, result.output)
        assert "build folder build: it is a symbolic link" in result.output and "Traceback" not in result.output
        assert "hint:" in result.output
    assert list(elsewhere.iterdir()) == []
    named = runner.invoke(app, ["compile", "--out", "build"])  # the user's own link, named: taken
    assert named.exit_code == 0, named.output
    assert (elsewhere / "manifest.jsonl").is_file()


def test_a_default_path_in_the_build_folder_that_is_a_link_is_refused(tmp_path, monkeypatch):
    """build/serve -> elsewhere would have `serve` write snapshots there and remove old
    `results-*` folders there; every default path in build/ is refused when it is a link."""
    from typer.testing import CliRunner

    from helmbench.cli import app
    from helmbench.store import open_db

    project = tmp_path / "project"
    shutil.copytree(BASE, project / "benchmark")
    (project / "build").mkdir()
    open_db(project / "build" / "results.db").conn.close()
    elsewhere = tmp_path / "elsewhere"
    (elsewhere / "results-keep").mkdir(parents=True)
    os.symlink(elsewhere, project / "build" / "serve")
    monkeypatch.chdir(project)
    from helmbench.spec import discover

    with pytest.raises(safewrite.UnsafeWrite, match="build/serve: it is a symbolic link") as refused:
        discover.in_build(db=None, serve_dir=None)
    assert "--serve-dir" in refused.value.hint
    result = CliRunner().invoke(app, ["serve", "--port", "0"])
    assert result.exit_code == 2 and "symbolic link" in result.output and "Traceback" not in result.output, result.output
    assert [p.name for p in elsewhere.iterdir()] == ["results-keep"]
