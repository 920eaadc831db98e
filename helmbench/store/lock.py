"""One writer per results database: the lock a run holds from its first write to its last.

Why: two `helmbench run` processes on one database both see the same calls as missing and
both pay for them (and both continue "run 1"). SQLite's own locking serialises transactions,
not whole runs, so a run takes this lock before it plans anything.

Why an OS file lock (`flock` on `<db>.lock`) and not a lock row with a heartbeat: the kernel
releases it the moment the holder dies, kill -9 included, so a stale lock is taken over
safely with no clock, no timeout to tune and no guess about whether a process id was reused.
Its scope is one machine, which is also the scope of a WAL database (WAL needs shared
memory, so two hosts must never write one results.db over a network filesystem anyway).
The file records who holds it (process id, host, start time, command) so a second run can
say who is running; the file itself stays in place (deleting a lock file races with the next
taker).
"""

from __future__ import annotations

import errno
import fcntl
import json
import os
import socket
from datetime import datetime, timezone
from pathlib import Path

from helmbench import safewrite
from helmbench.errors import HelmbenchError


class DatabaseBusy(HelmbenchError):
    """Another process is running against this database."""


def lock_path(db_path: Path | str) -> Path:
    return Path(str(db_path) + ".lock")


def _holder(path: Path) -> dict:
    try:
        return json.loads(path.read_text(encoding="utf-8") or "{}")
    except (OSError, ValueError):
        return {}


def describe(holder: dict) -> str:
    if not holder.get("pid"):
        return "another process"
    text = f"process {holder['pid']} on {holder.get('host', '?')}"
    if holder.get("started"):
        text += f", started {holder['started']}"
    if holder.get("command"):
        text += f" ({holder['command']})"
    return text


class RunLock:
    """Exclusive, non-blocking; `acquire` raises DatabaseBusy naming the holder."""

    def __init__(self, db_path: Path | str, command: str = "helmbench run"):
        self.db_path = Path(db_path)
        self.path = lock_path(db_path)
        self.command = command
        self._fd: int | None = None

    def acquire(self) -> "RunLock":
        fd = safewrite.open_in_place(self.path, flags=os.O_RDWR | os.O_CREAT)  # never through a planted link
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as exc:
            os.close(fd)
            if exc.errno not in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES):
                raise HelmbenchError(f"cannot lock {self.path}: {exc.strerror}",
                                     hint="check that the folder is writable") from None
            raise DatabaseBusy(
                f"{self.db_path} is in use by {describe(_holder(self.path))}: a second run on the same database "
                "would pay for the same calls again",
                hint="wait for that run to finish (or stop it with Ctrl-C), then run this command again; "
                     "nothing it stored is asked again") from None
        record = {"pid": os.getpid(), "host": socket.gethostname(),
                  "started": datetime.now(timezone.utc).isoformat(timespec="seconds"), "command": self.command[:300]}
        os.ftruncate(fd, 0)
        os.pwrite(fd, json.dumps(record).encode(), 0)
        self._fd = fd
        return self

    def release(self) -> None:
        if self._fd is not None:
            try:
                os.ftruncate(self._fd, 0)
            except OSError:  # a full disk must not hide the run's own result
                pass
            fcntl.flock(self._fd, fcntl.LOCK_UN)
            os.close(self._fd)
            self._fd = None

    def __enter__(self) -> "RunLock":
        return self.acquire()

    def __exit__(self, *exc) -> None:
        self.release()
