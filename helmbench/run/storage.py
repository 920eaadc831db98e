"""Storage failures during a run, as messages a user can act on.

Why here and not in the CLI: only the run knows what it saved before the failure and what it
received but could not save (answers already paid for, which a resumed run asks again), and
that is the first thing a user with a full disk needs to know.
"""

from __future__ import annotations

import sqlite3
from contextlib import contextmanager

from helmbench.errors import HelmbenchError


class StorageError(HelmbenchError):
    """The results database could not be read or written."""


def _is_corrupt(exc: BaseException) -> bool:
    text = str(exc).lower()
    return "malformed" in text or "not a database" in text or "corrupt" in text


def _recover_hint(path) -> str:
    return (f"restore {path} from a backup, or recover what it holds with "
            f"`sqlite3 {path} .recover | sqlite3 recovered.db` and run with --db recovered.db")


def storage_error(path, exc: BaseException, command: str, *, written: int | None = None,
                  unsaved: int | None = None) -> StorageError:
    text = str(exc)
    lower = text.lower()
    saved = ""
    if written is not None:
        saved = f" {written} result(s) from this run were saved before it stopped"
        saved += (f"; {unsaved} answer(s) received after that could not be saved and will be asked again"
                  if unsaved else "; nothing received was lost") + "."
    if "full" in lower:
        return StorageError(f"{path}: the disk (or the database's size limit) is full: {text}.{saved}",
                            hint=f"free disk space, then resume with: {command}")
    if _is_corrupt(exc):
        return StorageError(f"{path} is damaged ({text}): the run was stopped and is not complete.{saved}",
                            hint=_recover_hint(path))
    if "readonly" in lower or "unable to open" in lower or "permission" in lower:
        return StorageError(f"cannot write to {path}: {text}.{saved}",
                            hint="check the permissions of the file and its folder, or pass --db to another path")
    return StorageError(f"the results database {path} failed: {text}.{saved}",
                        hint=f"fix the cause, then resume with: {command}")


@contextmanager
def storage_guard(path, command: str):
    """Turn SQLite errors (and a failed writer) inside the block into one clear StorageError."""
    try:
        yield
    except sqlite3.Error as exc:  # from the writer thread, the counts of what it did and did not commit
        raise storage_error(path, exc, command, written=getattr(exc, "helmbench_written", None),
                            unsaved=getattr(exc, "helmbench_unsaved", None)) from None


def check_integrity(db, path) -> None:
    """`PRAGMA quick_check` before a run calls itself complete: a damaged page the run never
    touched must not hide behind a "completed" status."""
    try:
        found = [row[0] for row in db.execute("PRAGMA quick_check").fetchall()]
    except sqlite3.DatabaseError as exc:
        found = [str(exc)]
    if found != ["ok"]:
        raise StorageError(f"{path} is damaged (integrity check: {'; '.join(found)[:300]}): the run is not complete",
                           hint=_recover_hint(path))
