"""The chart worker: it never leaves a waiter hanging once its process is gone, and its charts are byte for byte
the ones drawn in-process (the suite draws in-process everywhere else: HELMBENCH_INLINE_CHARTS, tests/conftest.py)."""

from __future__ import annotations

import pytest

from helmbench.publish.worker import ChartWorker, WorkerError


def test_a_task_submitted_after_the_worker_died_fails_at_once():
    worker = ChartWorker()
    try:
        worker.proc.kill()
        worker.proc.wait()
        worker.reader.join(timeout=10)
        assert not worker.reader.is_alive()
        future = worker.submit("ready")
        with pytest.raises(WorkerError):
            future.result(timeout=5)
    finally:
        worker.shutdown(wait=True)


def test_shutdown_closes_the_pipe_it_read_results_from():
    """An unclosed pipe shows up as a ResourceWarning at interpreter exit of every `publish`."""
    worker = ChartWorker()
    assert worker.submit("ready").result(timeout=60) is not False
    worker.shutdown(wait=True)
    assert worker.proc.stdout.closed and worker.proc.stdin.closed


@pytest.mark.parametrize("cpus, inline", [(1, None), (8, "1")])
def test_charts_are_drawn_in_process_on_one_cpu_or_when_asked(monkeypatch, cpus, inline):
    """No worker process where it cannot run beside the build (one CPU) or where HELMBENCH_INLINE_CHARTS asks
    (a full test run reached this only when a rebuild test found its cache stale, depending on the order)."""
    import os

    import helmbench.publish.site as site_mod

    monkeypatch.setattr(os, "cpu_count", lambda: cpus)
    if inline:
        monkeypatch.setenv("HELMBENCH_INLINE_CHARTS", inline)
    else:
        monkeypatch.delenv("HELMBENCH_INLINE_CHARTS", raising=False)
    executor = site_mod._executor()
    assert isinstance(executor, site_mod._Inline)
    assert executor.submit("ready").exception(timeout=60) is None  # run here, at once


def test_an_unknown_chart_task_is_a_key_error_not_a_recursion():
    from helmbench.publish.worker import TASKS

    with pytest.raises(KeyError, match="no chart task 'nope'"):
        TASKS["nope"]
    assert callable(TASKS["model"])


def test_the_worker_draws_the_same_bytes_and_intervals_as_the_build_process(tmp_path, monkeypatch):
    """The rest of the suite draws its charts in-process (tests/conftest.py sets HELMBENCH_INLINE_CHARTS), so the
    worker's part is proven here: both chart tasks, through the real worker process and in-process, give the same
    files and return values."""
    import os

    import helmbench.publish.site as site_mod
    from helmbench.publish.charts import Bar, ModelChartJob

    bars = [Bar("a/model", 0.8125, (0.7, 0.9), "n=64"), Bar("b/model", None, None, "n=0"), Bar("c", 0.25, None, "")]
    severity = [Bar("low", 0.5, None, "n=4"), Bar("high", 1.0, None, "n=2", strong=True)]

    def tasks(folder):
        folder.mkdir()
        job = ModelChartJob(name="a/model", pillars=[("P1", "Pillar one", 0.75, 12)],
                            behaviours=[("B1", "P1", "Behaviour one", 0.5, 6), ("B2", "P1", "Behaviour two", None, 0)],
                            severity=severity, scored=[], path=str(folder / "model.svg"), bootstrap=0,
                            detection=[Bar("level 3", 0.5, None, "n=2")], history=[Bar("run 1", 0.7, None, "")])
        return [("leaderboard", bars, str(folder / "leaderboard.svg")), ("model", job)]

    monkeypatch.setattr(os, "cpu_count", lambda: 2)
    monkeypatch.delenv("HELMBENCH_INLINE_CHARTS")
    worker = site_mod._executor()
    assert isinstance(worker, ChartWorker)
    try:
        by_worker = [worker.submit(*task).result(timeout=60) for task in tasks(tmp_path / "worker")]
    finally:
        worker.shutdown(wait=True)
    monkeypatch.setenv("HELMBENCH_INLINE_CHARTS", "1")
    inline = site_mod._executor()
    assert isinstance(inline, site_mod._Inline)
    here = [inline.submit(*task).result(timeout=60) for task in tasks(tmp_path / "inline")]
    assert by_worker == here
    for name in ("leaderboard.svg", "model.svg"):
        drawn = (tmp_path / "worker" / name).read_bytes()
        assert drawn.startswith(b"<?xml") and drawn == (tmp_path / "inline" / name).read_bytes(), name
