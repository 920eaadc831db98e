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
