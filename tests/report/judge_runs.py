"""Shared by the judge tests of tests/report: a fake OpenRouter subclass served on an OS-chosen port,
and a manifest of the judged cases only (so every score is decided by the judges)."""

from __future__ import annotations

from contextlib import contextmanager
from pathlib import Path


@contextmanager
def serving(server, monkeypatch):
    """Start `server` (port 0: the OS chooses), point OPENROUTER_* at it, stop it afterwards."""
    server.start()
    monkeypatch.setenv("OPENROUTER_API_BASE", server.api_base)
    monkeypatch.setenv("OPENROUTER_API_KEY", "sk-or-v1-judge-report-tests")
    try:
        yield server
    finally:
        server.stop()


def judged_manifest(tmp_path: Path) -> Path:
    from tests.fakes.manifests import write_manifest
    from tests.review.review_pipeline import cases

    manifest = tmp_path / "manifest.jsonl"
    write_manifest(manifest, [c for c in cases() if c["evaluation"]["type"] == "sqe"])
    return manifest
