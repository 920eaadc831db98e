"""How many workers `-n auto` starts (tests/conftest.py: pytest_xdist_auto_num_workers): one more than the cores
only when the `slow` tests, the ones that wait, are selected."""

from __future__ import annotations

import pytest

from tests.conftest import selects_slow_tests


@pytest.mark.parametrize(("markexpr", "expected"), [
    ("", True),  # make test
    ("not slow and not browser", False),  # make test-fast
    ("slow", True),
    ("browser", False),
    ("not browser", True),
    ("slow or browser", True),
])
def test_the_extra_worker_comes_with_the_slow_tests(markexpr, expected):
    assert selects_slow_tests(markexpr) is expected
