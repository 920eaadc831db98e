"""Fixtures for the clinician-review tests: one judged results.db per session (real run, fake provider),
copied for every test that writes to it."""

from __future__ import annotations

import pytest

from tests.review.review_pipeline import XssFake, build, copy_of  # noqa: E402
from tests.shared import build_once


@pytest.fixture(scope="session")
def fake_server():
    server = XssFake().start()
    yield server
    server.stop()


@pytest.fixture(scope="session")
def judged(tmp_path_factory, fake_server):
    """The pipeline's judged database (read it; copy it with `judged_db` to write)."""
    mp = pytest.MonkeyPatch()
    mp.setenv("OPENROUTER_API_BASE", fake_server.api_base)
    mp.setenv("OPENROUTER_API_KEY", "sk-or-v1-review-tests")
    try:
        yield build_once(tmp_path_factory, "review-judged", build)  # read-only: shared by the workers
    finally:
        mp.undo()


@pytest.fixture
def judged_db(judged, tmp_path):
    """A private copy of the judged database, with the rest of the pipeline's paths."""
    return {**judged, "db": copy_of(judged["db"], tmp_path / "results.db")}


@pytest.fixture
def env(fake_server, monkeypatch):
    monkeypatch.setenv("OPENROUTER_API_BASE", fake_server.api_base)
    monkeypatch.setenv("OPENROUTER_API_KEY", "sk-or-v1-review-tests")
    return fake_server
