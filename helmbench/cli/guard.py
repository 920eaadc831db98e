"""The one place where failures become `error: …` / `hint: …` on stderr and an exit code.

Every command runs inside `GuardedGroup.invoke`: a `HelmbenchError` is printed as it is; a
storage failure from deep inside a stage (`sqlite3.Error`, `OSError`, a file that is not
UTF-8) is translated by `helmbench.errors.explain`, naming the paths the command validated
(`helmbench.cli.validate` records them); a bad option value from Click gets the same two
lines and exit 2. Anything else is a bug in helmbench: it is reported in one line too, and
`HELMBENCH_TRACEBACK=1` shows the traceback for the bug report.
"""

from __future__ import annotations

import errno
import os
import sys

import typer
from typer._click import exceptions as click  # Typer's own copy of Click (it no longer uses `click`)
from typer.core import TyperGroup

from helmbench.errors import HelmbenchError, UsageError, explain
from helmbench.terminal import escaped

#: ctx.meta keys (ctx.meta is shared by a command's context and its group's).
META_DB = "helmbench.db"
META_PATHS = "helmbench.paths"

def render(err: HelmbenchError) -> None:
    print(f"error: {escaped(err.message)}", file=sys.stderr)
    if err.hint:
        print(f"  hint: {escaped(err.hint)}", file=sys.stderr)
    sys.stderr.flush()


def _named(exc: BaseException, paths: dict) -> str | None:
    """Which of the command's paths an error without a file name is about: what it writes
    when writing failed, what it reads when decoding failed."""
    writing = isinstance(exc, OSError) and exc.errno in (errno.ENOSPC, errno.EDQUOT, errno.EROFS)
    chosen = [str(p) for p, role in paths.items() if role == ("out" if writing else "in")] or list(map(str, paths))
    if not chosen:
        return None
    return chosen[0] if len(chosen) == 1 else "one of " + ", ".join(chosen)


def _translate(exc: BaseException, meta: dict) -> HelmbenchError:
    if isinstance(exc, click.UsageError):
        where = exc.ctx.command_path if exc.ctx is not None else "helmbench"
        return UsageError(exc.format_message(), hint=f"`{where} --help` shows the arguments and options")
    if isinstance(exc, click.ClickException):
        return HelmbenchError(exc.format_message(), exit_code=exc.exit_code)
    err = explain(exc, db=meta.get(META_DB), path=_named(exc, meta.get(META_PATHS, {})))
    if err is not None:
        return err
    return HelmbenchError(f"unexpected {type(exc).__name__}: {exc}",
                          hint="this is a bug in helmbench: run again with HELMBENCH_TRACEBACK=1 and report "
                               "the traceback")


class GuardedGroup(TyperGroup):
    """The helmbench command group: runs a command and renders its failure, whatever raised it."""

    def invoke(self, ctx: typer.Context):
        try:
            return super().invoke(ctx)
        except (typer.Exit, typer.Abort):
            raise
        except KeyboardInterrupt:
            print("interrupted", file=sys.stderr)
            raise typer.Exit(130) from None
        except Exception as exc:  # noqa: BLE001  (the one guard; see the module docstring)
            if isinstance(exc, OSError) and exc.errno == errno.EPIPE:
                raise  # `helmbench report | head`: Typer exits quietly
            if os.environ.get("HELMBENCH_TRACEBACK") and not isinstance(exc, (HelmbenchError, click.UsageError)):
                raise
            err = _translate(exc, ctx.meta)
            if not err.hint:  # every failure says what to do next, at least where the options are
                sub = ctx.invoked_subcommand
                err.hint = f"`helmbench {sub + ' ' if sub else ''}--help` shows the arguments, options and examples"
            render(err)
            raise typer.Exit(err.exit_code) from None
