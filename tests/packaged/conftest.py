"""Packaging tests: the fake OpenRouter (the only stand-in) for the end-to-end runs."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
if str(REPO) not in sys.path:  # `tests.fakes` must import however pytest was started
    sys.path.insert(0, str(REPO))

from tests.fakes.openrouter import FakeOpenRouter  # noqa: E402

KEY = "sk-or-v1-PACKAGING-TEST-1a2b3c4d5e6f"


@pytest.fixture
def fake_env():
    """A fake OpenRouter, and the environment variables that point helmbench at it."""
    server = FakeOpenRouter().start()
    try:
        yield {"OPENROUTER_API_BASE": server.api_base, "OPENROUTER_API_KEY": KEY,
               "HELMBENCH_RETRY_BASE_DELAY": "0.01", "HELMBENCH_RETRY_MAX_DELAY": "0.05"}
    finally:
        server.stop()
