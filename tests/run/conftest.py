"""Fixtures for executor tests: small manifests (the fake OpenRouter, the environment pointing at it and
fast retry timings are `fake` and `env` in tests/conftest.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.fakes.manifests import synthetic_cases, write_manifest, write_models


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
