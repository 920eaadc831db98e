"""Fixtures for the judge tests: the session's fake OpenRouter (restored per test), the environment
pointing at it, and a small synthetic manifest with one judged (sqe) scenario."""

from __future__ import annotations

import pytest

from tests.fakes.manifests import synthetic_cases, write_manifest  # noqa: E402
from tests.judge.judge_pipeline import MODEL, write_models  # noqa: E402


@pytest.fixture
def fake(fake, monkeypatch):
    """The session's fake (restored for this test); OPENROUTER_* point at it."""
    monkeypatch.setenv("OPENROUTER_API_BASE", fake.api_base)
    monkeypatch.setenv("OPENROUTER_API_KEY", "sk-or-v1-judge-tests")
    return fake


@pytest.fixture
def small(tmp_path):
    """40 synthetic cases (10 of them sqe with one criterion, CR1) and one model judged by test/judge-1."""
    manifest = tmp_path / "build" / "manifest.jsonl"
    write_manifest(manifest, list(synthetic_cases(40)))
    models = write_models(tmp_path / "models.yml", [MODEL])
    return {"manifest": manifest, "models": models, "db": tmp_path / "build" / "results.db", "root": tmp_path}
