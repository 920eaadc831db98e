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
def _logging_restored():
    """Drop the logging handlers a command added (mkdocs', say): each holds the stream CliRunner lends it
    for one call, and a later record written to that closed stream prints "--- Logging error ---" with a
    traceback into another test's output. A process of its own would have taken them with it."""
    loggers = [logging.getLogger(), *(lg for lg in logging.Logger.manager.loggerDict.values()
                                      if isinstance(lg, logging.Logger))]
    before = {id(lg): list(lg.handlers) for lg in loggers}
    try:
        yield
    finally:
        for lg in [logging.getLogger(), *(lg for lg in logging.Logger.manager.loggerDict.values()
                                          if isinstance(lg, logging.Logger))]:
            kept = before.get(id(lg), [])
            for handler in [h for h in lg.handlers if h not in kept]:
                lg.removeHandler(handler)


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
    with _cwd(cwd), _logging_restored():
        result = CliRunner().invoke(app, argv, env=overrides, input=input, prog_name="helmbench")
    stderr = result.stderr
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        stderr += "Traceback (most recent call last):\n" + "".join(traceback.format_exception(result.exception))
    return subprocess.CompletedProcess(["helmbench", *argv], result.exit_code, result.stdout, stderr)
