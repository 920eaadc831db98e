"""Fixtures for conversation tests: a tree with a scripted and a simulated conversation, the fake
OpenRouter with a programmable simulated user, and the environment pointing at it."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]

from tests.conversation.conv_fake import ConvFake  # noqa: E402
from tests.conversation.conv_trees import conversation_tree  # noqa: E402

FAST = {"HELMBENCH_RETRY_BASE_DELAY": "0.01", "HELMBENCH_RETRY_MAX_DELAY": "0.05", "HELMBENCH_MAX_ATTEMPTS": "3"}


@pytest.fixture
def fake():
    server = ConvFake().start()
    yield server
    server.stop()


@pytest.fixture
def env(fake, monkeypatch):
    values = {"OPENROUTER_API_BASE": fake.api_base, "OPENROUTER_API_KEY": "sk-or-v1-TEST-conv", **FAST}
    for k, v in values.items():
        monkeypatch.setenv(k, v)
    full = dict(os.environ)
    full["PYTHONPATH"] = str(REPO) + os.pathsep + full.get("PYTHONPATH", "")
    return full


@pytest.fixture
def conv_tree(tmp_path):
    return conversation_tree(tmp_path / "bench")
