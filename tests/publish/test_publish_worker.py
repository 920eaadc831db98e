"""The chart worker never leaves a waiter hanging once its process is gone."""

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
