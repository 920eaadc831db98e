"""Storage failures during a run, as messages a user can act on.

Why here and not in the CLI: only the run knows what it saved before the failure and what it
received but could not save (answers already paid for, which a resumed run asks again), and
that is the first thing a user with a full disk needs to know.
"""

from __future__ import annotations

from contextlib import contextmanager

from helmbench.errors import StorageError, corrupt, explain
from helmbench.store import DatabaseError
from helmbench.store.db import integrity_problems


def storage_error(path, exc: BaseException, command: str, *, written: int | None = None,
                  unsaved: int | None = None) -> StorageError:
    """The general explanation of the failure (helmbench.errors), plus what this run saved and how to resume."""
    base = explain(exc, db=path)
    if not isinstance(base, StorageError):
        base = StorageError(f"the results database {path} failed: {exc}", hint="fix the cause, then resume")
    saved = ""
    if written is not None:
        saved = f" {written} result(s) from this run were saved before it stopped"
        saved += (f"; {unsaved} answer(s) received after that could not be saved and will be asked again"
                  if unsaved else "; nothing received was lost") + "."
    hint = base.hint
    if "disk is full" in base.message:
        hint = f"free disk space, then resume with: {command} (nothing stored is asked for again)"
    return StorageError(f"{base.message}; the run was stopped and is not complete.{saved}", hint=hint)


@contextmanager
def storage_guard(path, command: str):
    """Turn SQLite errors (and a failed writer) inside the block into one clear StorageError."""
    try:
        yield
    except DatabaseError as exc:  # from the writer thread, the counts of what it did and did not commit
        raise storage_error(path, exc, command, written=getattr(exc, "helmbench_written", None),
                            unsaved=getattr(exc, "helmbench_unsaved", None)) from None


def check_integrity(db, path) -> None:
    """`PRAGMA quick_check` before a run calls itself complete: a damaged page the run never
    touched must not hide behind a "completed" status."""
    found = integrity_problems(db.conn)
    if found:
        raise corrupt(path, f"integrity check: {'; '.join(found)[:300]}; the run is not complete")
