"""One writer per results database: two real `helmbench run` processes pay each call once, and
a lock left by a killed process is taken over."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pytest

from helmbench.store.lock import DatabaseBusy, RunLock, lock_path
from run_helpers import rows, run_inprocess
from test_run_cli import start_run
from tests.fakes.manifests import synthetic_cases, write_manifest


@pytest.mark.slow  # separate processes and real signals
def test_two_concurrent_runs_on_one_database_pay_each_call_once(env, fake, small):
    write_manifest(small["manifest"], synthetic_cases(120))
    fake.latency = 0.2  # a run of several seconds: the second starts while the first holds the lock
    first = start_run(small, env, "--concurrency", "4")
    second = start_run(small, env, "--concurrency", "4")
    out1, err1 = first.communicate(timeout=120)
    out2, err2 = second.communicate(timeout=120)
    codes = sorted([first.returncode, second.returncode])
    assert codes == [0, 1], (err1, err2)
    loser_err = err1 if first.returncode else err2
    winner = second if first.returncode else first
    assert "Traceback" not in loser_err
    assert f"is in use by process {winner.pid} on " in loser_err and "helmbench run" in loser_err
    assert "pay for the same calls" in loser_err
    assert fake.total > 0 and max(fake.by_key.values()) == 1, "a call was paid for twice"
    assert rows(small["db"], "SELECT count(*), min(status) FROM runs") == [(1, "completed")]
    before = fake.total
    again = run_inprocess(small)  # the lock was released: a later run proceeds (and has nothing to pay)
    assert again.status == "completed" and fake.total == before


def test_a_second_lock_in_the_same_process_is_refused_naming_the_holder(tmp_path):
    db = tmp_path / "results.db"
    with RunLock(db, "helmbench run --models a/b"):
        with pytest.raises(DatabaseBusy) as err:
            RunLock(db).acquire()
        assert f"process {os.getpid()}" in err.value.message and "helmbench run --models a/b" in err.value.message
        assert err.value.hint and "Ctrl-C" in err.value.hint
    with RunLock(db):  # released on exit
        pass


HOLD = """
import sys, time
from helmbench.store.lock import RunLock
RunLock(sys.argv[1], "holder").acquire()
print("locked", flush=True)
time.sleep(600)
"""


def test_a_lock_left_by_a_killed_process_is_taken_over(env, tmp_path):
    db = tmp_path / "results.db"
    holder = subprocess.Popen([sys.executable, "-c", HOLD, str(db)], env=env, stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "locked"
        with pytest.raises(DatabaseBusy, match=f"process {holder.pid}"):
            RunLock(db).acquire()
        holder.send_signal(signal.SIGKILL)
        holder.wait(10)
        assert str(holder.pid) in lock_path(db).read_text()  # the dead holder's record is still there...
        deadline = time.monotonic() + 5
        lock = RunLock(db)
        lock.acquire()  # ...but the kernel released its lock with the process
        assert f'"pid": {os.getpid()}' in lock_path(db).read_text()
        lock.release()
        assert time.monotonic() < deadline
    finally:
        if holder.poll() is None:
            holder.kill()
            holder.wait()
