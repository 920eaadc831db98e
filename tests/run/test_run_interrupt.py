"""Ctrl-C drains: the calls in flight when it comes are paid for already, so the run waits for
them and stores them, and the resumed run pays for none of them again. Counted at the fake
server, against a real `helmbench run` process."""

from __future__ import annotations

import signal
import time

import pytest

from run_helpers import rows, run_inprocess
from test_run_cli import start_run, wait_for_responses
from tests.fakes.manifests import synthetic_cases, write_manifest


def _wait_in_flight(fake, n: int, proc, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            pytest.fail(f"run ended early ({proc.returncode}): {proc.stderr.read()}")
        if fake.in_flight == n:
            return
        time.sleep(0.005)
    pytest.fail(f"never {n} calls in flight")


@pytest.mark.slow  # separate processes and real signals
def test_ctrl_c_with_8_calls_in_flight_stores_them_and_the_resume_repays_none(env, fake, small):
    write_manifest(small["manifest"], synthetic_cases(200, scenarios=3))
    fake.latency = 1.0
    proc = start_run(small, env, "--concurrency", "8")
    wait_for_responses(small["db"], 8, proc)
    _wait_in_flight(fake, 8, proc)
    sent = fake.total
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    assert "Traceback" not in err
    assert "waiting up to 30 s for the 8 in flight" in err and "Resume with:" in err
    # a call ending in the instant between counting and the signal may let one more start
    assert fake.total - sent <= 2, "calls were started after Ctrl-C"
    stored = rows(small["db"], "SELECT count(*) FROM responses WHERE error_kind IS NULL")[0][0]
    assert stored == fake.total, "a call that was in flight at Ctrl-C was not stored"
    fake.latency = 0
    report = run_inprocess(small, concurrency=8)
    assert report.status == "completed"
    assert max(fake.by_key.values()) == 1, "the resumed run paid again for a call made before Ctrl-C"


@pytest.mark.slow  # separate processes and real signals
def test_a_second_ctrl_c_stops_at_once(env, fake, small):
    write_manifest(small["manifest"], synthetic_cases(60, scenarios=3))
    fake.latency = 30.0
    proc = start_run(small, env, "--concurrency", "4")
    _wait_in_flight(fake, 4, proc)
    proc.send_signal(signal.SIGINT)
    time.sleep(0.5)
    start = time.monotonic()
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=20)
    assert time.monotonic() - start < 15  # not the 30 s of latency
    assert proc.returncode == 130 and "Traceback" not in err
    assert "cancelling 4 model calls still in flight" in err and "Resume with:" in err
    assert rows(small["db"], "SELECT status FROM runs") == [("interrupted",)]


@pytest.mark.slow  # separate processes and real signals
def test_the_drain_is_bounded(env, fake, small):
    write_manifest(small["manifest"], synthetic_cases(60, scenarios=3))
    fake.latency = 30.0
    proc = start_run(small, {**env, "HELMBENCH_DRAIN_SECONDS": "1"}, "--concurrency", "2")
    _wait_in_flight(fake, 2, proc)
    start = time.monotonic()
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=20)
    assert time.monotonic() - start < 15
    assert proc.returncode == 130
    assert "waiting up to 1 s" in err and "still waiting after 1 s: cancelling 2 model calls" in err
