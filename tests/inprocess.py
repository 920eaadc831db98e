"""`helmbench ARGS` run in the test's own process, answered as `subprocess.run` would answer.

Why: a fresh interpreter costs a second or more of imports per call (several with litellm), and most
command tests only read the exit status and what was printed; the command line is the same Typer app
either way (`python -m helmbench` is `helmbench.cli.main`, which is `app()`). Tests whose point IS the
separate process (packaging, the entry point, signals and kill -9, two processes at once, read-only
mounts seen by another process) keep `subprocess`.

A crash still shows: an exception that is not a clean exit is written to stderr as the traceback Python
would have printed, so "no traceback" assertions keep their teeth.
"""

from __future__ import annotations

import contextlib
import logging
import os
import subprocess
import traceback
from pathlib import Path

from typer.testing import CliRunner


@contextlib.contextmanager
def _cwd(path: Path | str | None):
    if path is None:
        yield
        return
    before = os.getcwd()
    os.chdir(path)
    try:
        yield
    finally:
        os.chdir(before)


@contextlib.contextmanager
def logging_restored():
    """Drop the logging handlers a command added (mkdocs', say): each holds the stream CliRunner lends it
    for one call, and a later record written to that closed stream prints "--- Logging error ---" with a
    traceback into another test's output. A process of its own would have taken them with it."""
    loggers = [logging.getLogger(), *(lg for lg in logging.Logger.manager.loggerDict.values()
                                      if isinstance(lg, logging.Logger))]
    for lg in loggers:  # one left by anything else, over a stream already closed, can only print that traceback
        for handler in [h for h in lg.handlers if _closed(h) and not _pytests(h)]:
            lg.removeHandler(handler)
    before = {id(lg): list(lg.handlers) for lg in loggers}
    try:
        yield
    finally:
        for lg in [logging.getLogger(), *(lg for lg in logging.Logger.manager.loggerDict.values()
                                          if isinstance(lg, logging.Logger))]:
            kept = before.get(id(lg), [])
            for handler in [h for h in lg.handlers if h not in kept and not _pytests(h)]:
                lg.removeHandler(handler)


def _closed(handler: logging.Handler) -> bool:
    stream = getattr(handler, "stream", None)
    return bool(getattr(stream, "closed", False))


def _pytests(handler: logging.Handler) -> bool:
    """pytest's own capturing handlers, which it adds and removes around each phase of a test itself."""
    return type(handler).__module__.startswith("_pytest")



def helmbench(*args, cwd: Path | str | None = None, env: dict | None = None,
              input: str | None = None) -> subprocess.CompletedProcess:
    """Run `helmbench ARGS` in-process in `cwd` with `env` (a whole environment, as for subprocess: a
    variable it leaves out is unset for the call); returns a CompletedProcess (text stdout/stderr)."""
    from helmbench.cli import app

    argv = [str(a) for a in args]
    overrides = None
    if env is not None:
        overrides = {k: None for k in os.environ if k not in env}
        overrides.update({k: str(v) for k, v in env.items()})
    with _cwd(cwd), logging_restored():
        result = CliRunner().invoke(app, argv, env=overrides, input=input, prog_name="helmbench")
    stderr = result.stderr
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        stderr += "Traceback (most recent call last):\n" + "".join(traceback.format_exception(result.exception))
    return subprocess.CompletedProcess(["helmbench", *argv], result.exit_code, result.stdout, stderr)


# --- a shell whose `helmbench` is this process

#: The `helmbench` a shell finds on PATH: it hands its command line, folder and environment to the process that
#: started the shell and prints what came back. Python without site-packages (-S) imports nothing but the
#: standard library (-I: nor any PYTHON* variable): ~10 ms, where the real entry point's imports cost seconds.
_STAND_IN = """#!{python} -IS
import json, os, socket, sys
s = socket.socket(socket.AF_UNIX)
s.connect({socket!r})
s.sendall(json.dumps({{"argv": sys.argv[1:], "cwd": os.getcwd(), "env": dict(os.environ)}}).encode())
s.shutdown(socket.SHUT_WR)
reply = json.loads(b"".join(iter(lambda: s.recv(1 << 16), b"")))
sys.stdout.buffer.write(reply["stdout"].encode("utf-8", "surrogateescape"))
sys.stderr.buffer.write(reply["stderr"].encode("utf-8", "surrogateescape"))
sys.exit(reply["returncode"])
"""


def bash(script: str, *, cwd: Path | str, env: dict, options: tuple[str, ...] = (), timeout: float = 300,
         calls: list | None = None) -> subprocess.CompletedProcess:
    """`bash OPTIONS -c SCRIPT` in `cwd` with `env`: a real shell (quoting, `&&`, `$VARS`, globs, redirections,
    exit statuses, `-e`), except that each `helmbench ...` it runs is answered by helmbench() above, in this
    process and in this thread, through a stand-in first on PATH. Every other command is what PATH finds.
    `calls` (a list), when given, gets each helmbench command line in the order the script ran them. They run
    one at a time (two at once, in a pipeline or in the background, run in turn), and read no standard input.

    For tests whose point is what a script or a pasted command line does (a workflow's steps, the command
    `init` prints), not the separate interpreter: that costs seconds of imports per command."""
    import json
    import select
    import shutil
    import socket
    import sys
    import tempfile
    import time

    folder = Path(tempfile.mkdtemp(prefix="hb-sh-"))  # short (a socket's path is at most 107 bytes), owner-only
    listener = socket.socket(socket.AF_UNIX)
    try:
        address = str(folder / "s")
        listener.bind(address)
        listener.listen()
        (folder / "bin").mkdir()
        stand_in = folder / "bin" / "helmbench"
        stand_in.write_text(_STAND_IN.format(python=sys.executable, socket=address), encoding="utf-8")
        stand_in.chmod(0o700)
        path = f"{folder / 'bin'}{os.pathsep}{env.get('PATH', os.defpath)}"
        with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
            proc = subprocess.Popen(["bash", *options, "-c", script], cwd=cwd, env={**env, "PATH": path},
                                    stdin=subprocess.DEVNULL, stdout=out, stderr=err)
            exited = os.pidfd_open(proc.pid)
            try:
                deadline = time.monotonic() + timeout
                while True:
                    left = deadline - time.monotonic()
                    ready, _, _ = select.select([listener, exited], [], [], max(left, 0))
                    if listener in ready:
                        conn, _ = listener.accept()
                        with conn:
                            request = json.loads(b"".join(iter(lambda: conn.recv(1 << 16), b"")))
                            if calls is not None:
                                calls.append(request["argv"])
                            done = helmbench(*request["argv"], cwd=request["cwd"], env=request["env"])
                            conn.sendall(json.dumps({"returncode": done.returncode, "stdout": done.stdout,
                                                     "stderr": done.stderr}).encode())
                    elif exited in ready:
                        break
                    elif left <= 0:
                        proc.kill()
                        proc.wait()
                        raise subprocess.TimeoutExpired(["bash", "-c", script], timeout)
            finally:
                os.close(exited)
            proc.wait()
            out.seek(0)
            err.seek(0)
            return subprocess.CompletedProcess(["bash", *options, "-c", script], proc.returncode,
                                               out.read().decode("utf-8", "replace"),
                                               err.read().decode("utf-8", "replace"))
    finally:
        listener.close()
        shutil.rmtree(folder, ignore_errors=True)
