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


@pytest.fixture(scope="module")
def shipped(tmp_path_factory):
    """The shipped conversation scenarios' database (tests/review/shipped_conversations.py), built once."""
    import os

    from tests.review.shipped_conversations import LifelineFake, build

    fake = LifelineFake().start()
    values = {"OPENROUTER_API_BASE": fake.api_base, "OPENROUTER_API_KEY": "sk-or-v1-TEST-shipped",
              "HELMBENCH_RETRY_BASE_DELAY": "0.01", "HELMBENCH_RETRY_MAX_DELAY": "0.05"}
    saved = {k: os.environ.get(k) for k in values}
    os.environ.update(values)
    try:
        yield build_once(tmp_path_factory, "review-shipped-conversations", build)
    finally:
        fake.stop()
        for k, v in saved.items():
            os.environ.pop(k, None) if v is None else os.environ.__setitem__(k, v)
