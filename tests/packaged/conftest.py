"""Packaging tests: the fake OpenRouter (the only stand-in) for the end-to-end runs."""

from __future__ import annotations

import pytest

KEY = "sk-or-v1-PACKAGING-TEST-1a2b3c4d5e6f"


@pytest.fixture
def fake_env(fake):
    """The session's fake OpenRouter, and the environment variables that point helmbench at it."""
    return {"OPENROUTER_API_BASE": fake.api_base, "OPENROUTER_API_KEY": KEY,
            "HELMBENCH_RETRY_BASE_DELAY": "0.01", "HELMBENCH_RETRY_MAX_DELAY": "0.05"}
