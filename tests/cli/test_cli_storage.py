"""Storage failures through the real commands: a read-only file system and a full disk.

Read-only is a read-only bind mount (EROFS for every process, root included: the tests run
as root, which chmod would not stop); full is a small tmpfs filled to the brim (ENOSPC).
"""

from __future__ import annotations

import json
import shutil
import sqlite3
from contextlib import closing
from pathlib import Path

import pytest

from tests.cli.conftest import MODEL, checkpointed_copy, fill, read_only_mount, tiny_disk
from tests.cli.test_cli_bad_args import REPO, TREE, invoke

WAL_ONLY_NAME = "Only In The WAL"


def _pending_wal(clean: Path, folder: Path) -> None:
    """results.db plus a -wal holding a commit not yet checkpointed: what a writer killed mid-run leaves."""
    work = folder.parent / f"{folder.name}-writer"
    work.mkdir()
    db = checkpointed_copy(clean, work / "results.db")
    writer = sqlite3.connect(db)
    writer.execute("PRAGMA journal_mode = WAL")
    writer.execute("PRAGMA wal_autocheckpoint = 0")
    writer.execute("UPDATE models SET name = ? WHERE id = ?", [WAL_ONLY_NAME, MODEL])
    writer.commit()
    assert Path(f"{db}-wal").stat().st_size > 0
    shutil.copyfile(db, folder / "results.db")  # copied while the writer is open: the commit is only in the WAL
    shutil.copyfile(f"{db}-wal", folder / "results.db-wal")
    writer.close()


@pytest.fixture(params=["checkpointed", "pending_wal"])
def ro_folder(request, pipeline, tmp_path):
    """A read-only folder holding results.db (alone, or with an un-checkpointed WAL), the manifest and a tree."""
    folder = tmp_path / "ro"
    folder.mkdir()
    if request.param == "checkpointed":
        checkpointed_copy(pipeline.db, folder / "results.db")
    else:
        _pending_wal(pipeline.db, folder)
    shutil.copyfile(pipeline.manifest, folder / "manifest.jsonl")
    shutil.copytree(TREE, folder / "tree")
    before = sorted(p.name for p in folder.iterdir())
    with read_only_mount(folder):
        yield folder, request.param
    assert sorted(p.name for p in folder.iterdir()) == before  # nothing was written beside it


def _ok(result) -> str:
    assert result.exit_code == 0, result.stdout + result.stderr
    return result.stdout


def test_read_commands_work_on_a_read_only_file_system(ro_folder, tmp_path):
    folder, kind = ro_folder
    db, manifest = str(folder / "results.db"), str(folder / "manifest.jsonl")
    report = json.loads(_ok(invoke(["report", "--db", db, "--manifest", manifest, "--format", "json",
                                    "--bootstrap", "0"])))
    names = json.dumps(report)
    assert MODEL in names
    assert (WAL_ONLY_NAME in names) == (kind == "pending_wal")  # the WAL's commit is read, not silently missed
    assert MODEL in _ok(invoke(["costs", "--db", db]))
    # with a manifest, costs also estimates what is not run yet: that read must not write either
    estimated = _ok(invoke(["costs", "--db", db, "--manifest", manifest, "--models-file", str(folder / "tree" / "models.yml")]))
    assert "Not run yet" in estimated
    _ok(invoke(["serve", "--db", db, "--publish", str(tmp_path / "snap")]))
    with closing(sqlite3.connect(tmp_path / "snap" / "results.db")) as snap:
        names = [r[0] for r in snap.execute("SELECT name FROM models")]
    assert (WAL_ONLY_NAME in names) == (kind == "pending_wal")
    assert "P1-B1-S1-C1-PT1" in _ok(invoke(["show", "P1-B1-S1-C1-PT1", "--manifest", manifest, "--json"]))
    assert "P1-B1-S1" in _ok(invoke(["list", str(folder / "tree"), "--format", "json"]))
    _ok(invoke(["lint", str(folder / "tree")]))


@pytest.mark.slow
def test_publish_works_on_a_read_only_file_system(ro_folder, tmp_path):
    folder, kind = ro_folder
    site = tmp_path / "site"
    _ok(invoke(["publish", "--db", str(folder / "results.db"), "--manifest", str(folder / "manifest.jsonl"),
                "--config-file", str(REPO / "mkdocs.yml"), "--site-dir", str(site)]))
    pages = " ".join(p.read_text(encoding="utf-8", errors="replace") for p in site.rglob("*.html"))
    assert MODEL in pages
    assert (WAL_ONLY_NAME in pages) == (kind == "pending_wal")


@pytest.mark.parametrize("args", [
    ["run", "--db", "{ro}/results.db"],
    ["run", "--db", "{ro}/new/results.db"],
    ["compile", str(TREE), "--out", "{ro}/build"],
    ["schema", "--out", "{ro}"],
    ["serve", "--db", "{good}", "--serve-dir", "{ro}/serve"],
    ["serve", "--db", "{good}", "--publish", "{ro}"],
    ["publish", "--config-file", str(REPO / "mkdocs.yml"), "--site-dir", "{ro}/site"],
], ids=["run-db", "run-db-new-folder", "compile-out", "schema-out", "serve-dir", "serve-publish", "publish-site"])
def test_writers_refuse_a_read_only_folder_before_any_work(pipeline, tmp_path, args):
    folder = tmp_path / "ro"
    folder.mkdir()
    checkpointed_copy(pipeline.db, folder / "results.db")
    with read_only_mount(folder):
        argv = [a.format(ro=folder, good=pipeline.db) for a in args]
        if argv[0] == "run":
            argv += ["--manifest", str(pipeline.manifest), "--models-file", str(pipeline.models)]
        result = invoke(argv)
    assert result.exit_code == 2, result.stdout + result.stderr
    first = result.stderr.splitlines()[0]
    assert first.startswith("error: ") and str(folder) in first and "read-only" in first, result.stderr
    assert "Traceback" not in result.stdout + result.stderr


# --- a full disk -------------------------------------------------------------------------------


def test_compile_on_a_full_disk(tmp_path):
    with tiny_disk(tmp_path / "disk") as disk:
        fill(disk)
        result = invoke(["compile", str(TREE), "--out", str(disk / "build")])
        leftovers = sorted(p.name for p in (disk / "build").rglob("*")) if (disk / "build").exists() else []
    assert result.exit_code == 1, result.stdout + result.stderr
    assert result.stderr.startswith(f"error: the disk is full while writing {disk / 'build'}"), result.stderr
    assert "free some space and run the same command again" in result.stderr
    assert "Traceback" not in result.stdout + result.stderr
    assert leftovers == []  # no half-written manifest a later run could trust, no temporaries eating space


def test_serve_snapshot_on_a_full_disk_names_the_snapshot(pipeline, tmp_path):
    with tiny_disk(tmp_path / "disk") as disk:
        fill(disk)
        result = invoke(["serve", "--db", str(pipeline.db), "--publish", str(disk / "snap")])
    assert result.exit_code == 1, result.stdout + result.stderr
    assert result.stderr.startswith(f"error: the disk is full while writing {disk / 'snap'}"), result.stderr
    assert "Traceback" not in result.stdout + result.stderr


def test_run_on_a_full_disk_keeps_what_was_stored(pipeline, tmp_path, monkeypatch, fake):
    """The disk holding results.db is full when a run starts (SQLite cannot even grow its WAL
    index): a clear error naming the database, never "completed", and every answer stored before
    is still there and the file passes its check. (A disk filling mid-run is the writer's.)"""
    from tests.cli.conftest import write_models

    size = pipeline.db.stat().st_size
    with tiny_disk(tmp_path / "disk", size=f"{(size // 1024) + 96}k") as disk:
        db = checkpointed_copy(pipeline.db, disk / "results.db")
        with closing(sqlite3.connect(db)) as conn:
            stored = conn.execute("SELECT count(*) FROM responses").fetchone()[0]
        fill(disk)
        models = write_models(tmp_path / "models.yml", [MODEL, "test/model-b", "test/model-c"], judge=None)
        monkeypatch.setenv("OPENROUTER_API_BASE", fake.api_base)
        monkeypatch.setenv("OPENROUTER_API_KEY", "sk-or-v1-cli-tests")
        result = invoke(["run", "--db", str(db), "--manifest", str(pipeline.manifest), "--models-file", str(models)])
        (disk / "filler").unlink()
        with closing(sqlite3.connect(db)) as conn:
            assert conn.execute("PRAGMA quick_check").fetchone()[0] == "ok"
            assert conn.execute("SELECT count(*) FROM responses").fetchone()[0] >= stored
    shown = result.stdout + result.stderr
    assert result.exit_code != 0, shown
    assert "Traceback" not in shown and "completed" not in shown
    assert "disk is full" in shown, shown
