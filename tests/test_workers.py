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


class _Item:
    def __init__(self, nodeid: str, *groups: str):
        self.nodeid, self._marks = nodeid, [pytest.mark.xdist_group(g).mark for g in groups]

    def iter_markers(self, name: str):
        return iter(m for m in self._marks if m.name == name)


def test_a_group_that_never_reached_the_node_id_is_reported():
    """A pytest whose node ids ignore pytest-xdist's suffix (9.2, pytest-xdist#1386) loses every group without a word:
    `ungrouped` names the tests whose group never reached their node id."""
    from tests.conftest import ungrouped

    kept = [_Item("tests/a.py::test_x@browser", "browser"), _Item("tests/b.py::test_y"),
            _Item("tests/c.py::test_z@one_two", "two", "one")]
    assert ungrouped(kept) == []
    assert ungrouped([_Item("tests/a.py::test_x", "browser"), *kept]) == ["tests/a.py::test_x"]


def test_this_session_s_groups_reached_their_node_ids(request):
    """The suite's own tests, as collected here: under --dist loadgroup (`make test`) each grouped test's node id carries
    its group (the browser tests' is "browser"); this test itself is in none."""
    from tests.conftest import ungrouped

    if not getattr(request.config.option, "loadgroup", False):
        pytest.skip("not run under --dist loadgroup: no group is sent to a worker")
    grouped = [item for item in request.session.items if any(item.iter_markers("xdist_group"))]
    if not grouped:
        pytest.skip("no test of a group was collected in this session")
    assert ungrouped(grouped) == []
    assert "@" not in request.node.nodeid
