"""Errors a user can act on, and the one translation of storage failures into such errors.

Anything raised as a `HelmbenchError` is printed as one clear message by the CLI with its
exit code, never as a traceback: bad input is the author's to fix, not a crash. Failures of
the machine rather than of the input (a full disk, a read-only folder, a corrupt database)
arrive as `sqlite3.Error` or `OSError` from deep inside a stage; `explain` turns them into a
`StorageError` naming the file and what to do, so no stage needs its own try/except.

This module imports `sqlite3` only to recognise SQLite's exception classes (it never opens a
database); the layer test (tests/test_layers.py) allows that one import outside store, because
the CLI's catch-all guard, which sits above every stage, needs the same translation as store.
"""

from __future__ import annotations

import errno
import shutil
import sqlite3
from pathlib import Path


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


class StorageError(HelmbenchError):
    """A file could not be read or written: full disk, read-only folder, corrupt database."""


#: What to say after a full disk: SQLite commits are atomic, so nothing committed is lost.
DISK_FULL_HINT = ("free some space and run the same command again: everything written before the disk filled "
                  "is kept (each SQLite commit is all-or-nothing), and nothing already stored is asked for again")
CORRUPT_HINT = ("restore it from a backup, or move it aside (e.g. `mv {path} {path}.corrupt`) and run "
                "`helmbench run` to start a new database; `sqlite3 {path} .recover` may rescue rows")


def corrupt(path: str | Path, detail: str) -> StorageError:
    return StorageError(f"{path} is not a usable SQLite database: {detail}", hint=CORRUPT_HINT.format(path=path))


def disk_full(path: str | Path | None, *, database: bool) -> StorageError:
    where = f" while writing {path}" if path else ""
    return StorageError(f"the disk is full{where}", hint=DISK_FULL_HINT if database else
                        "free some space and run the same command again (files are replaced only once written whole)")


def read_only(path: str | Path | None, detail: str = "read-only") -> StorageError:
    where = f"{path} is" if path else "a file is"
    return StorageError(f"{where} {detail}: cannot write to it",
                        hint="pass a path in a writable folder, or make the folder writable")


def _nearly_full(path: Path) -> bool:
    """Whether the file system holding `path` has (almost) no space left."""
    folder = path if path.is_dir() else path.parent
    try:
        return shutil.disk_usage(folder).free < 1 << 20
    except OSError:
        return False


def _sqlite(exc: sqlite3.Error, db: str | Path | None) -> StorageError:
    text = str(exc)
    low = text.lower()
    name = db or "the database"
    if "disk is full" in low or getattr(exc, "sqlite_errorcode", None) == 13:  # SQLITE_FULL
        return disk_full(db, database=True)
    if "disk i/o error" in low and db is not None and _nearly_full(Path(db)):
        return disk_full(db, database=True)  # the WAL index (-shm) could not grow: SQLite says IOERR, not FULL
    if "readonly" in low or "read-only" in low:
        return read_only(db, "read-only (or in a read-only folder)")
    if "not a database" in low or "malformed" in low or "corrupt" in low:
        return corrupt(name, text)
    if "no such table" in low or "no such column" in low:
        return StorageError(f"{name} is not a HELMBench results database, or is from another version ({text})",
                            hint="pass the results.db written by `helmbench run` with --db")
    if "locked" in low or "busy" in low:
        return StorageError(f"{name} is locked by another process ({text})",
                            hint="wait for the other `helmbench run` to finish, then try again")
    if "unable to open" in low:
        return StorageError(f"cannot open {name} ({text})",
                            hint="check that the path is a file in a folder you can read")
    if "disk i/o error" in low:
        return StorageError(f"{name}: the disk reported an I/O error ({text})",
                            hint="check the disk (free space, `dmesg`), then run the same command again: "
                                 "what was committed before is kept")
    return StorageError(f"{name}: SQLite error: {text}", hint="check the database file and the disk it is on")


def _os(exc: OSError, path: str | Path | None) -> StorageError:
    name = exc.filename or path
    if exc.errno in (errno.ENOSPC, errno.EDQUOT):
        return disk_full(name, database=False)
    if exc.errno == errno.EROFS:
        return read_only(name, "on a read-only file system")
    if exc.errno in (errno.EACCES, errno.EPERM):
        return StorageError(f"{name}: permission denied",
                            hint="pass a path you can read and write, or fix the permissions")
    if exc.errno == errno.ENOENT:
        return StorageError(f"{name}: no such file or folder", hint="check the path")
    if exc.errno in (errno.ENOTDIR, errno.EEXIST, errno.EISDIR):
        kind = "a folder" if exc.errno == errno.EISDIR else "a file"
        return StorageError(f"{name} is {kind}, which is not what is needed here ({exc.strerror})",
                            hint="pass a file where a file is expected and a folder where a folder is expected")
    return StorageError(f"{name}: {exc.strerror or exc}", hint="check the path and the disk it is on")


def explain(exc: BaseException, *, db: str | Path | None = None, path: str | Path | None = None) -> HelmbenchError | None:
    """A user-facing error for a storage failure (None when `exc` is not one).

    `db` is the database the command works on (named in SQLite errors, which carry no path);
    `path` is a file named when the exception does not say which one.
    """
    if isinstance(exc, HelmbenchError):
        return exc
    if isinstance(exc, sqlite3.Error):
        return _sqlite(exc, db)
    if isinstance(exc, OSError):
        return _os(exc, path)
    if isinstance(exc, UnicodeDecodeError):
        where = f"{path} is" if path else "a file is"
        return StorageError(f"{where} not UTF-8 text (byte {exc.object[exc.start:exc.start + 1]!r} at offset "
                            f"{exc.start})", hint="save the file as UTF-8, or pass the right file")
    return None
