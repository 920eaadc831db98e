"""Fixtures for the CLI's failure paths: a real results.db made by the real pipeline against the
fake OpenRouter, broken copies of it, and genuinely read-only or full file systems.

Tests run as root, and root ignores file permissions, so "read-only" here is a read-only bind
mount (the kernel refuses every write with EROFS, for root too) and "full" is a small tmpfs
(ENOSPC). Both need mount privileges; where the machine has none they skip with that reason,
and `test_store_open.py` still exercises the same code paths through SQLite itself
(`PRAGMA max_page_count`, `mode=ro`).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import sqlite3
import subprocess
from pathlib import Path
from types import SimpleNamespace

import pytest

from tests.fakes.manifests import synthetic_cases, write_manifest, write_models  # noqa: E402

MODEL = "test/model-a"


@pytest.fixture(scope="session")
def pipeline(tmp_path_factory, fake_server):
    """manifest.jsonl, models.yml and a results.db with one finished run (9 cases, one model)."""
    from helmbench.run.config import RetryPolicy, RunOptions
    from helmbench.run.session import run
    from rich.console import Console

    root = tmp_path_factory.mktemp("cli")
    manifest = root / "build" / "manifest.jsonl"
    write_manifest(manifest, synthetic_cases(9, scenarios=3))  # the 4th scenario would need a judge
    models = write_models(root / "models.yml", [MODEL], judge=None)
    db = root / "build" / "results.db"
    fake = fake_server.restore()
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("OPENROUTER_API_BASE", fake.api_base)
        mp.setenv("OPENROUTER_API_KEY", "sk-or-v1-cli-tests")
        opts = RunOptions(manifest=str(manifest), models_file=str(models), db=str(db),
                          logs_dir=str(root / "build" / "logs"),
                          retry=RetryPolicy(base_delay=0.01, max_delay=0.05, max_attempts=3))
        result = run(opts, Console(stderr=True, width=160), live=False)
    assert result.status == "completed", result.status
    clean = root / "clean.db"
    checkpointed_copy(db, clean)
    return SimpleNamespace(root=root, manifest=manifest, models=models, db=clean)


def checkpointed_copy(src: Path, dst: Path) -> Path:
    """A copy with everything in the main file (no -wal beside it), via SQLite's backup API."""
    with contextlib.closing(sqlite3.connect(src)) as s, contextlib.closing(sqlite3.connect(dst)) as d:
        s.backup(d)
    return dst


def broken_databases(src: Path, folder: Path) -> dict[str, Path]:
    """Copies of the clean database `src`, each broken one way a disk or a person breaks them."""
    folder.mkdir(parents=True, exist_ok=True)
    data = src.read_bytes()
    page = int.from_bytes(data[16:18], "big") or 65536
    out = {}

    def put(name: str, content: bytes) -> None:
        out[name] = folder / f"{name}.db"
        out[name].write_bytes(content)

    put("empty", b"")
    put("garbage", os.urandom(8192))
    put("text", b"model,score\nA,0.9\n" * 50)
    put("truncated_header", data[:100])
    put("truncated", data[: page * (len(data) // page // 2)])
    with contextlib.closing(sqlite3.connect(src)) as conn:
        root = conn.execute("SELECT rootpage FROM sqlite_master WHERE name = 'results'").fetchone()[0]
    hit = bytearray(data)
    hit[(root - 1) * page: root * page] = b"\xab" * page  # one b-tree page overwritten; page 1 (the header) intact
    put("corrupt_page", bytes(hit))
    other = folder / "not_results.db"
    with contextlib.closing(sqlite3.connect(other)) as conn:
        conn.execute("CREATE TABLE t (a)")
        conn.commit()
    out["not_results"] = other
    return out


@pytest.fixture(scope="session")
def broken(pipeline, tmp_path_factory):
    return broken_databases(pipeline.db, tmp_path_factory.mktemp("broken"))


def _can_mount() -> str | None:
    if os.geteuid() != 0 or shutil.which("mount") is None:
        return "needs root and mount(8) for a real read-only or full file system"
    return None


def _sh(*cmd: str) -> None:
    subprocess.run(cmd, check=True, capture_output=True, timeout=30)


@contextlib.contextmanager
def read_only_mount(folder: Path):
    """`folder` as a read-only bind mount over itself: every write fails with EROFS, even for root."""
    reason = _can_mount()
    if reason:
        pytest.skip(reason)
    try:
        _sh("mount", "--bind", str(folder), str(folder))
    except subprocess.CalledProcessError as exc:
        pytest.skip(f"bind mount refused here: {exc.stderr.decode(errors='replace').strip()}")
    try:
        _sh("mount", "-o", "remount,bind,ro", str(folder), str(folder))
        probe = folder / ".probe"
        with pytest.raises(OSError):
            probe.write_text("x")
        yield folder
    finally:
        # A file the in-process commands opened may still wait for the garbage collector (seen once in
        # CI: umount exit 32, target busy): then collect it and try again, and fall back to a lazy unmount
        # rather than fail a test whose checks have all run. Only then: a full collection in a test process
        # that has imported litellm is ~0.5 s of CPU, and most unmounts find nothing open.
        try:
            _sh("umount", str(folder))
        except subprocess.CalledProcessError:
            import gc

            gc.collect()
            try:
                _sh("umount", str(folder))
            except subprocess.CalledProcessError:
                _sh("umount", "--lazy", str(folder))


@contextlib.contextmanager
def tiny_disk(folder: Path, size: str = "256k"):
    """A tmpfs of `size` at `folder`: writes past it fail with ENOSPC, like a full disk."""
    reason = _can_mount()
    if reason:
        pytest.skip(reason)
    folder.mkdir(parents=True, exist_ok=True)
    try:
        _sh("mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(folder))
    except subprocess.CalledProcessError as exc:
        pytest.skip(f"tmpfs mount refused here: {exc.stderr.decode(errors='replace').strip()}")
    try:
        yield folder
    finally:
        _sh("umount", "--lazy", str(folder))  # lazy: a connection the failed run left open must not fail the test


def fill(folder: Path) -> None:
    """Fill the file system under `folder` until the kernel says it is full."""
    with open(folder / "filler", "wb") as f:
        try:
            while True:
                f.write(b"\0" * 65536)
                f.flush()
        except OSError:
            pass
