"""tests/shared.py's lock, and its choice of what to build while another worker builds (tests/conftest.py asks).

Why: build_once's waiting worker used to block on the lock while the other built the shipped site or the
statistics pipeline (~40 s of one core idle in a suite run); now it builds another artifact the session needs.
These check that the wait still ends holding the lock, what is built meanwhile, and what is never chosen."""

from __future__ import annotations

import fcntl
import json
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


# --- what a build hands the other workers ------------------------------------------------------------------


class _Factory:
    """The one method of pytest's TempPathFactory that build_once uses."""

    def __init__(self, base):
        self.base = base

    def getbasetemp(self):
        return self.base


def test_every_caller_gets_the_build_s_result_back_from_json_and_the_build_runs_once(tmp_path, monkeypatch):
    from tests.judge.judge_pipeline import JudgedPipeline

    monkeypatch.delenv("PYTEST_XDIST_WORKER", raising=False)
    monkeypatch.setattr(shared, "while_waiting", None)
    runs = []

    def build(folder):
        runs.append(folder)
        return {"pipeline": JudgedPipeline(folder, folder / "m.jsonl", folder / "r.db", [{"id": 1}]), "ids": ("a", "b")}

    first = shared.build_once(_Factory(tmp_path), "thing", build)
    second = shared.build_once(_Factory(tmp_path), "thing", build)
    assert first == second == {"pipeline": JudgedPipeline(runs[0], runs[0] / "m.jsonl", runs[0] / "r.db", [{"id": 1}]),
                               "ids": ("a", "b")}
    assert len(runs) == 1
    assert (tmp_path / "shared" / "thing.json").read_bytes().startswith(b"{")  # data, not a pickle


def test_a_planted_result_naming_another_class_is_refused_and_makes_nothing(tmp_path, monkeypatch):
    from helmbench.publish.codec import DecodeError

    monkeypatch.delenv("PYTEST_XDIST_WORKER", raising=False)
    monkeypatch.setattr(shared, "while_waiting", None)
    (tmp_path / "shared").mkdir()
    (tmp_path / "shared" / "planted.json").write_text('{"\\u0000": "subprocess:Popen", "v": [["touch", "x"]]}')
    with pytest.raises(DecodeError, match="subprocess:Popen"):
        shared.build_once(_Factory(tmp_path), "planted", lambda folder: pytest.fail("the shared file was there"))


def test_a_build_returning_what_json_cannot_hold_fails_naming_it(tmp_path, monkeypatch):
    monkeypatch.delenv("PYTEST_XDIST_WORKER", raising=False)
    monkeypatch.setattr(shared, "while_waiting", None)
    with pytest.raises(TypeError, match="cannot encode lock"):
        shared.build_once(_Factory(tmp_path), "odd", lambda folder: threading.Lock())
    assert not (tmp_path / "shared" / "odd.json").exists()


def test_a_file_of_a_shared_artifact_written_or_removed_after_its_build_is_reported(tmp_path):
    """tests/conftest.py fails the session with what `touched` returns: a test that wrote into a shared artifact
    changes what other workers' tests read while they run. Files added later (a site built into its pipeline's
    folder) and SQLite's side files are not counts of it."""
    art = tmp_path / "shared" / "pipeline"
    (art / "build").mkdir(parents=True)
    for name in ("manifest.jsonl", "results.db", "models.yml"):
        (art / "build" / name).write_text("built\n")
    (tmp_path / "shared" / "pipeline.files.json").write_text(json.dumps(shared._files(art)))
    assert shared.touched(tmp_path) == []
    (art / "site").mkdir()
    (art / "site" / "index.html").write_text("<p>a site built into the pipeline's folder</p>")
    (art / "build" / "results.db-wal").write_text("a reader's side file")
    assert shared.touched(tmp_path) == []
    (art / "build" / "manifest.jsonl").write_text("recompiled by a test\n")
    (art / "build" / "models.yml").unlink()
    assert shared.touched(tmp_path) == ["pipeline/build/manifest.jsonl: written (size 6 → 21 bytes)",
                                        "pipeline/build/models.yml: removed"]
