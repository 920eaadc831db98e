"""Errors a user can act on.

Anything raised as a `HelmbenchError` is printed as one clear message by the CLI with its
exit code, never as a traceback: bad input is the author's to fix, not a crash.
"""


class HelmbenchError(Exception):
    """A failure with a message meant for the user, and the exit code to leave with."""

    exit_code = 1

    def __init__(self, message: str, *, exit_code: int | None = None, hint: str | None = None):
        super().__init__(message)
        self.message = message
        self.hint = hint
        if exit_code is not None:
            self.exit_code = exit_code


class UsageError(HelmbenchError):
    """The command line itself is wrong (missing path, bad option value)."""

    exit_code = 2
