"""tests/shared.py's lock, and its choice of what to build while another worker builds (tests/conftest.py asks).

Why: build_once's waiting worker used to block on the lock while the other built the shipped site or the
statistics pipeline (~40 s of one core idle in a suite run); now it builds another artifact the session needs.
These check that the wait still ends holding the lock, what is built meanwhile, and what is never chosen."""

from __future__ import annotations

import fcntl
import threading

import pytest

from tests import shared


@pytest.fixture
def held(tmp_path, monkeypatch):
    """A lock file held by another open file (as another worker would: flock locks per open file)."""
    path = tmp_path / "a.lock"
    other = open(path, "w")
    fcntl.flock(other, fcntl.LOCK_EX)
    monkeypatch.setattr(shared, "while_waiting", None)
    yield path, other
    other.close()


def _holds(f) -> bool:
    with open(f.name, "w") as probe:
        try:
            fcntl.flock(probe, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return True
    return False


def test_the_waiting_worker_builds_what_is_offered_until_the_lock_is_free(held, monkeypatch):
    path, other = held
    calls = []

    def offer():
        calls.append(1)
        if len(calls) == 3:
            other.close()  # the other worker's build ends while this one builds its third
        return True

    monkeypatch.setattr(shared, "while_waiting", offer)
    fallback = threading.Timer(5, other.close)  # a _lock that ignored the offer would wait for ever: fail instead
    fallback.start()
    with open(path, "w") as mine:
        shared._lock(mine)
        assert _holds(mine)
    fallback.cancel()
    assert len(calls) == 3


def test_with_nothing_to_offer_it_waits_for_the_lock(held, monkeypatch):
    path, other = held
    calls = []
    monkeypatch.setattr(shared, "while_waiting", lambda: calls.append(1) or False)
    threading.Timer(0.2, other.close).start()
    with open(path, "w") as mine:
        shared._lock(mine)
        assert _holds(mine)
    assert calls == [1]


def test_a_free_lock_is_taken_without_building_anything(tmp_path, monkeypatch):
    calls = []
    monkeypatch.setattr(shared, "while_waiting", lambda: calls.append(1) or True)
    with open(tmp_path / "b.lock", "w") as mine:
        shared._lock(mine)
        assert _holds(mine)
    assert calls == []


SITE, PIPELINE = ("tests/publish", "site"), ("tests/publish", "pipeline")
STATS, STATS_SITE = ("tests", "stats_floored"), ("tests/publish", "stats_site")
PLUGIN = ("tests/plugins", "regex_site")
ARTIFACTS = {SITE: {SITE, PIPELINE}, PIPELINE: {PIPELINE}, STATS: {STATS}, STATS_SITE: {STATS_SITE, STATS},
             PLUGIN: {PLUGIN}}


@pytest.mark.parametrize("where, set_up, busy, chosen", [
    # waiting for the site's pipeline: not the site (it needs the pipeline), the statistics pipeline
    ("tests/publish/test_a.py", set(), {PIPELINE}, STATS),
    # what this worker already has is never built again
    ("tests/publish/test_a.py", {STATS}, {PIPELINE}, STATS_SITE),
    # a fixture of tests/publish is not visible from tests/report; tests/plugins' never from tests/publish
    ("tests/report/test_a.py", {STATS}, {PIPELINE}, None),
    ("tests/publish/test_a.py", {STATS, STATS_SITE}, {PIPELINE}, None),
    # waiting for the statistics pipeline: the site first (the order the session asks), with its pipeline
    ("tests/publish/test_a.py", set(), {STATS}, SITE),
])
def test_the_artifact_built_ahead(where, set_up, busy, chosen):
    needed = [SITE, PIPELINE, STATS, STATS_SITE, PLUGIN]
    assert shared.ahead_candidate(needed, set_up, where, busy, ARTIFACTS.__getitem__) == chosen
