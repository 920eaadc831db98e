"""Fixtures for the judge tests: one fake OpenRouter per module (reset per test), the environment
pointing at it, and a small synthetic manifest with one judged (sqe) scenario."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
if str(REPO) not in sys.path:  # `tests.fakes` must import however pytest was started
    sys.path.insert(0, str(REPO))

from tests.fakes.manifests import synthetic_cases, write_manifest  # noqa: E402
from tests.fakes.openrouter import FakeOpenRouter  # noqa: E402
from tests.judge.judge_pipeline import MODEL, write_models  # noqa: E402


@pytest.fixture(scope="module")
def fake_server():
    server = FakeOpenRouter().start()
    yield server
    server.stop()


@pytest.fixture
def fake(fake_server, monkeypatch):
    """The module's fake, counters reset and default behaviour restored; OPENROUTER_* point at it."""
    fake_server.reset_counts()
    fake_server.rules = []
    fake_server.judge_answers = {}
    fake_server.cost = 0.0001
    fake_server.keep_bodies = False
    monkeypatch.setenv("OPENROUTER_API_BASE", fake_server.api_base)
    monkeypatch.setenv("OPENROUTER_API_KEY", "sk-or-v1-judge-tests")
    return fake_server


@pytest.fixture
def small(tmp_path):
    """40 synthetic cases (10 of them sqe with one criterion, CR1) and one model judged by test/judge-1."""
    manifest = tmp_path / "build" / "manifest.jsonl"
    write_manifest(manifest, list(synthetic_cases(40)))
    models = write_models(tmp_path / "models.yml", [MODEL])
    return {"manifest": manifest, "models": models, "db": tmp_path / "build" / "results.db", "root": tmp_path}
