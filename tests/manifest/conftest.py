"""Fixtures of the manifest tests: the golden tree, the upstream sample."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from ._util import GOLDEN_TREE, UPSTREAM


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    """A private, writable copy of the golden tree."""
    dest = tmp_path / "tree"
    shutil.copytree(GOLDEN_TREE, dest)
    return dest


@pytest.fixture(scope="session")
def golden_manifest(tmp_path_factory) -> Path:
    """The golden tree compiled once per session (read-only use)."""
    from helmbench.manifest import compile_tree

    out = tmp_path_factory.mktemp("golden-build")
    return compile_tree(GOLDEN_TREE, out).path


@pytest.fixture(scope="session")
def upstream() -> Path:
    if not (UPSTREAM / "scenarios").is_dir():
        pytest.skip(f"upstream sample not present at {UPSTREAM}")
    return UPSTREAM
