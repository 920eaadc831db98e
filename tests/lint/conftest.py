"""Fixtures for the lint tests; the corpus helpers live in lint_corpus.py."""

from __future__ import annotations

import pytest

from lint_corpus import BASE, build


@pytest.fixture
def clean_tree(tmp_path):
    """A fresh copy of the valid base tree, safe to modify."""
    import shutil

    return shutil.copytree(BASE, tmp_path / "bench")


@pytest.fixture
def broken_tree(tmp_path):
    def make(name: str):
        return build(name, tmp_path / name)

    return make
