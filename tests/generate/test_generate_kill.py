"""kill -9 during `helmbench generate`: every request the provider saw is in the call ledger (completed,
or still `sent`: cut, possibly billed), and the next invocation pays no completed call again.

The process is a real one, forked from the test's (tests/forked.py; a SIGKILL cannot be sent to the test's own
process); every wait is on a condition (ledger rows, requests at the fake), bounded, so the test holds on a
loaded machine.
"""

from __future__ import annotations

import os
import signal
import sqlite3
import time
from pathlib import Path

import pytest

from tests import forked
from tests.generate.conftest import KEY, REPO, cli

AXES = ["--axis", "age=teen,older,adult", "--axis", "country=UK,India"]  # six generation calls


def _rows(db: Path, sql: str) -> list[tuple]:
    conn = sqlite3.connect(db, timeout=10)
    try:
        return conn.execute(sql).fetchall()
    finally:
        conn.close()


def _wait_in_flight(db: Path, fake, proc, timeout: float = 90) -> None:
    """Until a generation call is answered and stored while others are in flight, and every `sent` row's
    request has reached the fake (a row is committed just before its request leaves: a kill in between
    would over-count, by design)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        assert proc.poll() is None, proc.communicate()
        try:
            ((done, sent),) = _rows(db, "SELECT count(*) FILTER (WHERE state != 'sent'), count(*) FILTER "
                                        "(WHERE state = 'sent') FROM calls WHERE kind = 'generation'")
        except sqlite3.Error:  # not created yet, or mid-migration
            done = sent = 0
        if done and sent and sent == fake.in_flight:
            return
        time.sleep(0.005)
    raise AssertionError("no generation call was ever in flight")


@pytest.mark.slow
def test_kill_9_during_generate_leaves_each_request_the_server_saw_in_the_ledger(tree, env, fake):
    db = tree / "build/results.db"
    # each call waits 0.3 s plus up to 20 s (a fixed fraction per request): some are answered early while
    # the others are still in flight
    fake.latency, fake.latency_spread = 0.3, 20
    env_vars = {**os.environ, "OPENROUTER_API_BASE": fake.api_base, "OPENROUTER_API_KEY": KEY,
                "PYTHONPATH": str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    proc = forked.start("generate", "variants", "P1-B1-S1-PT1", tree, *AXES, "--db", db, cwd=tree, env=env_vars)
    try:
        _wait_in_flight(db, fake, proc)
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait(10)
    ((completed, cut),) = _rows(db, "SELECT count(*) FILTER (WHERE state != 'sent'), "
                                    "count(*) FILTER (WHERE state = 'sent') FROM calls WHERE kind = 'generation'")
    assert cut >= 1
    assert fake.wait_total(completed + cut) == completed + cut  # each request the provider counted is one row
    answered = {k for (k,) in _rows(db, "SELECT request_key FROM calls WHERE state = 'answered'")}
    seen = dict(fake.by_key)
    fake.latency = fake.latency_spread = 0
    result = cli("generate", "variants", "P1-B1-S1-PT1", tree, *AXES, "--db", db)
    assert result.exit_code == 0, result.output
    # the re-run asks again only what was not answered, and each of those once
    assert fake.total - (completed + cut) == 6 - len(answered)
    assert all(n <= 2 for n in fake.by_key.values()) and fake.by_key.keys() >= seen.keys()
    again = _rows(db, "SELECT request_key FROM calls WHERE invocation = "
                      "(SELECT invocation FROM calls ORDER BY id DESC LIMIT 1)")
    assert not answered & {k for (k,) in again}  # no completed call paid again
    ((still_cut,),) = _rows(db, "SELECT count(*) FROM calls WHERE state = 'sent'")
    assert still_cut == cut  # a cut call stays visible: it may have been billed
    ((rows,),) = _rows(db, "SELECT count(*) FROM calls")
    assert rows == fake.total
