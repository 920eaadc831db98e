"""Logging for a run: console (rich on a terminal), one file per run, and redaction of the key.

A line per call is debug detail (`--verbose`): every call is in the database's ledger already, and
formatting, redacting and writing a line per answer cost a measurable share of a fast run's CPU. The
file and the console get warnings, errors, progress and the summary; `--verbose` adds the debug lines
to both.

Every handler carries a filter that replaces the API key with `***`, so even an exception
message that quoted a header could not put the key in a log. Records tagged with a `run_id`
go only to that run's file (build/logs/run-<id>.log); untagged records go to every file.
"""

from __future__ import annotations

import logging
import time
from contextlib import contextmanager
from pathlib import Path

from rich.console import Console

from helmbench.terminal import escaped

FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"


class Redact(logging.Filter):
    """A record as it may be written: the key replaced with `***`, control characters (from a model
    id, a case id or a provider's message: an escape sequence would be obeyed by a terminal or a
    log viewer) written as `\\xNN`."""

    def __init__(self, secrets: list[str]):
        super().__init__()
        self.secrets = [s for s in secrets if s and len(s) >= 4]

    def filter(self, record: logging.LogRecord) -> bool:
        if not getattr(record, "_redacted", False):
            message = record.getMessage()
            for s in self.secrets:
                message = message.replace(s, "***")
            # Formatted once: every other handler (and the formatter) reuses the text instead of
            # formatting the record again, and checking it again.
            record.msg, record.args, record._redacted = escaped(message), None, True
        return True


class RunFile(logging.FileHandler):
    """A run's log file, flushed at most once a second: a flush per record costs more than the call
    it describes at high throughput. Closing flushes everything."""

    def __init__(self, path: Path):
        super().__init__(path, encoding="utf-8", delay=True)
        self._flushed = time.monotonic()
        self.stream = self._open()

    def _open(self):
        """Appended to in place, never through a link planted at the log's name (safewrite)."""
        from helmbench import safewrite

        return open(safewrite.open_in_place(self.baseFilename), "a", encoding=self.encoding)

    def flush(self) -> None:
        now = time.monotonic()
        if now - self._flushed >= 1.0:
            self._flushed = now
            super().flush()

    def close(self) -> None:
        logging.StreamHandler.flush(self)
        super().close()


class OnlyRun(logging.Filter):
    def __init__(self, run_id: int):
        super().__init__()
        self.run_id = run_id

    def filter(self, record: logging.LogRecord) -> bool:
        return getattr(record, "run_id", self.run_id) == self.run_id


@contextmanager
def run_logging(console: Console, *, verbose: bool, live: bool, secrets: list[str], logs_dir: Path | None = None,
                run_ids: list[int] = ()):
    """Attach console and per-run file handlers to the `helmbench` logger for the block's duration."""
    logger = logging.getLogger("helmbench")
    redact = Redact(secrets)
    handlers: list[logging.Handler] = []
    if live:
        from rich.logging import RichHandler

        console_handler: logging.Handler = RichHandler(console=console, show_path=False, markup=False,
                                                       rich_tracebacks=False, log_time_format="%H:%M:%S")
    else:
        console_handler = logging.StreamHandler(console.file)
        console_handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(message)s", "%H:%M:%S"))
    console_handler.setLevel(logging.DEBUG if verbose else logging.INFO)
    handlers.append(console_handler)
    if logs_dir is not None:
        for run_id in run_ids:
            fh = RunFile(logs_dir / f"run-{run_id}.log")
            fh.setLevel(logging.DEBUG if verbose else logging.INFO)
            fh.setFormatter(logging.Formatter(FORMAT))
            fh.addFilter(OnlyRun(run_id))
            handlers.append(fh)
    old_level = logger.level
    logger.setLevel(logging.DEBUG if verbose else logging.INFO)  # a debug record is not even made unless asked
    for h in handlers:
        h.addFilter(redact)
        logger.addHandler(h)
    try:
        yield
    finally:
        for h in handlers:
            logger.removeHandler(h)
            h.close()
        logger.setLevel(old_level)
