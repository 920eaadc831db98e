"""tests/forked.py: a child forked from the worker looks, to a test, like a fresh interpreter (what it
inherits that a fresh one would not have is dropped), and its handle answers as subprocess's does."""

from __future__ import annotations

import json
import logging
import os
import signal
import subprocess
import sys
import threading
import time

from tests import forked

#: The state a test could see, printed as JSON: run by a fresh `python -c` and by a forked child alike.
STATE = r'''
import asyncio, faulthandler, json, logging, os, signal, stat, sys, threading, warnings

def disposition(sig):
    h = signal.getsignal(sig)
    return {signal.SIG_DFL: "dfl", signal.SIG_IGN: "ign", signal.default_int_handler: "int"}.get(h, repr(h))

def stream(s):
    return None if s is None else [s.fileno(), s.encoding, s.errors, s.line_buffering, s.write_through]

def pipes():
    out = []
    for name in os.listdir("/proc/self/fd"):
        try:
            mode = os.fstat(int(name)).st_mode
        except OSError:
            continue
        if int(name) > 2 and (stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode)):
            out.append(int(name))
    return out

print(json.dumps({
    "signals": {s.name: disposition(s) for s in signal.valid_signals()
                if isinstance(s, signal.Signals) and s not in (signal.SIGKILL, signal.SIGSTOP)},
    "wakeup_fd": signal.set_wakeup_fd(-1),
    "warnings": [[a, getattr(m, "pattern", m), c.__name__, getattr(mod, "pattern", mod), ln]
                 for a, m, c, mod, ln in warnings.filters],
    "root_handlers": [type(h).__name__ for h in logging.getLogger().handlers],
    "other_handlers": sorted({type(h).__name__ for lg in logging.Logger.manager.loggerDict.values()
                              if isinstance(lg, logging.Logger) for h in lg.handlers} - {"LevelRoutingStreamHandler"}),
    "cwd": os.getcwd(), "path0": sys.path[0], "env": dict(os.environ),
    "streams": [stream(sys.stdin), stream(sys.stdout), stream(sys.stderr)],
    "dunder_streams": [sys.stdin is sys.__stdin__, sys.stdout is sys.__stdout__, sys.stderr is sys.__stderr__],
    "hooks": [sys.excepthook is sys.__excepthook__, sys.unraisablehook is sys.__unraisablehook__,
              threading.excepthook is threading.__excepthook__],
    "faulthandler": faulthandler.is_enabled(),
    "threads": threading.active_count(),
    "running_loop": asyncio.events._get_running_loop() is not None,
    "pipes_and_sockets": pipes(),
    "pgid_is_pid": os.getpgid(0) == os.getpid(),
}))
'''


def _state_in_child():
    exec(STATE, {"__name__": "__main__"})
    return 0


def _without_coverage(env: dict) -> dict:
    """The fresh interpreter's state with coverage's start-up left out (a .pth starts it where the worker's
    own environment asks; the forked child restarts it its own way)."""
    return {k: v for k, v in env.items() if not k.startswith(("COVERAGE_", "COV_CORE_"))}


def test_a_forked_child_has_a_fresh_interpreters_signals_streams_hooks_and_nothing_of_pytests(tmp_path):
    # what a worker has that a fresh process must not: a Python SIGALRM handler, an ignored SIGPIPE left at
    # default, a logging handler, a thread, an "error" warning filter, pytest's capture and hooks
    previous = signal.signal(signal.SIGALRM, lambda *a: None)
    stop = threading.Event()
    busy = threading.Thread(target=stop.wait, daemon=True)
    busy.start()
    handler = logging.StreamHandler(sys.stderr)
    logging.getLogger().addHandler(handler)
    import warnings

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            env = _without_coverage({**os.environ, "HELMBENCH_FORK_CHECK": "1"})
            (tmp_path / "state_probe.py").write_text(STATE, encoding="utf-8")  # run as `python -m`, as helmbench is
            fresh = subprocess.run([sys.executable, "-m", "state_probe"], cwd=tmp_path, env=env, capture_output=True,
                                   text=True, timeout=60)
            child = forked.Forked([], env=env, target=_state_in_child, cwd=tmp_path, stdout=forked.PIPE,
                                  stderr=forked.PIPE, text=True)
            out, err = child.communicate(timeout=60)
    finally:
        logging.getLogger().removeHandler(handler)
        stop.set()
        signal.signal(signal.SIGALRM, previous)
    assert fresh.returncode == 0, fresh.stderr
    assert child.returncode == 0 and err == "", err
    want, got = json.loads(fresh.stdout), json.loads(out)
    for state in (want, got):  # under pytest-cov, coverage's start-up in each process sets variables of its own
        state["env"] = _without_coverage(state["env"])
    assert got == want


def test_exit_codes_and_signals_are_a_processes(tmp_path):
    def sleeps():
        print("ready", flush=True)
        time.sleep(60)

    proc = forked.Forked([], env=None, target=sleeps, stdout=forked.PIPE, stderr=forked.PIPE, text=True,
                         start_new_session=True)
    assert proc.stdout.readline() == "ready\n" and proc.poll() is None
    assert os.getsid(proc.pid) == proc.pid != os.getsid(0)
    proc.kill()
    assert proc.wait(timeout=10) == -signal.SIGKILL
    proc = forked.Forked([], env=None, target=sleeps, stdout=forked.PIPE, stderr=forked.PIPE, text=True)
    assert proc.stdout.readline() == "ready\n"  # in time.sleep: SIGINT raises KeyboardInterrupt there, uncaught
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=10)
    assert proc.returncode == -signal.SIGINT and "KeyboardInterrupt" in err  # as Python exits on one

    def fails():
        raise ValueError("planted")

    proc = forked.Forked([], env=None, target=fails, stdout=forked.PIPE, stderr=forked.PIPE, text=True)
    out, err = proc.communicate(timeout=10)
    assert proc.returncode == 1 and "Traceback (most recent call last)" in err and "ValueError: planted" in err
    done = forked.run("rules", cwd=tmp_path, timeout=60)
    assert done.returncode == 0 and done.stdout.strip() and done.stderr == ""
    bad = forked.run("no-such-command", cwd=tmp_path, timeout=60)
    assert bad.returncode == 2 and "`python -m helmbench --help`" in bad.stderr  # the program name of `python -m`


def test_the_child_draws_its_own_ledger_uids_not_its_parents_next_ones():
    """A child and the in-process run its test makes next must not name their calls alike (the ledger's uids
    come from a module-level generator seeded once, at import: the parent's seed is the child's too)."""
    from helmbench.store.ledger import new_uid

    def draws():
        print(new_uid(), new_uid())

    proc = forked.Forked([], env=None, target=draws, stdout=forked.PIPE, stderr=forked.PIPE, text=True)
    out, err = proc.communicate(timeout=30)
    assert proc.returncode == 0, err
    assert not set(out.split()) & {new_uid(), new_uid()}
