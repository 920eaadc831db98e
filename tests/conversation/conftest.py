"""Fixtures for conversation tests: a tree with a scripted and a simulated conversation."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
if str(REPO) not in sys.path:  # `tests.fakes` must import however pytest was started
    sys.path.insert(0, str(REPO))

from conv_trees import conversation_tree  # noqa: E402


@pytest.fixture
def conv_tree(tmp_path):
    return conversation_tree(tmp_path / "bench")
