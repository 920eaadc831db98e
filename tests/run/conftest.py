"""Fixtures for executor tests: a fake OpenRouter per test, the environment pointing at it,
fast retry timings, and small manifests."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
if str(REPO) not in sys.path:  # `tests.fakes` must import however pytest was started
    sys.path.insert(0, str(REPO))

from tests.fakes.manifests import synthetic_cases, write_manifest, write_models  # noqa: E402
from tests.fakes.openrouter import FakeOpenRouter  # noqa: E402

SENTINEL_KEY = "sk-or-v1-SENTINEL-0f9e8d7c6b5a4f3e2d1c"
FAST_RETRIES = {"HELMBENCH_RETRY_BASE_DELAY": "0.01", "HELMBENCH_RETRY_MAX_DELAY": "0.05", "HELMBENCH_MAX_ATTEMPTS": "12"}


@pytest.fixture
def fake():
    server = FakeOpenRouter().start()
    yield server
    server.stop()


@pytest.fixture
def env(fake, monkeypatch):
    """OPENROUTER_* pointing at the fake, tiny backoff delays; returns a dict for subprocesses."""
    values = {"OPENROUTER_API_BASE": fake.api_base, "OPENROUTER_API_KEY": SENTINEL_KEY, **FAST_RETRIES}
    for k, v in values.items():
        monkeypatch.setenv(k, v)
    full = dict(os.environ)
    full["PYTHONPATH"] = str(REPO) + os.pathsep + full.get("PYTHONPATH", "")
    return full


@pytest.fixture
def small(tmp_path):
    """A 40-case synthetic manifest (10 per evaluation type, one sqe scenario) and a one-model models.yml."""
    manifest = tmp_path / "build" / "manifest.jsonl"
    write_manifest(manifest, list(synthetic_cases(40)))
    models = write_models(tmp_path / "models.yml", ["test/model-a"], temperature=0, max_tokens=200)
    return {"manifest": manifest, "models": models, "db": tmp_path / "build" / "results.db", "root": tmp_path}


def pytest_collection_modifyitems(items):
    """Cancelling litellm calls (401, Ctrl-C tests) can leave an unstarted coroutine for the GC to warn about."""
    here = str(Path(__file__).parent)
    for item in items:
        if str(item.fspath).startswith(here):
            item.add_marker(pytest.mark.filterwarnings("ignore:coroutine .* was never awaited:RuntimeWarning"))
