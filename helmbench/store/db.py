"""Open results.db: WAL, foreign keys, a busy timeout, and every pending migration applied.

WAL lets Datasette and the site read while a run writes; `synchronous=NORMAL` in WAL mode
keeps every committed transaction across a process crash (kill -9), which is what
resumability needs (power loss may lose the last commits, never corrupt the file).

Every opening checks the file first (the SQLite header, then `PRAGMA quick_check`), so a
truncated, garbage or corrupt database is refused with its path before any work starts,
and a run on it can never report "completed". Readers (report, publish, serve, costs) open
it read-only: a results.db on a read-only disk or in a folder they may not write still reads.
"""

from __future__ import annotations

import atexit
import os
import shutil
import sqlite3
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import sqlite_utils

from helmbench.errors import StorageError, corrupt, explain
from helmbench.store.migrations import migrate

DEFAULT_DB = Path("build/results.db")

#: The first 16 bytes of every SQLite 3 database file.
SQLITE_HEADER = b"SQLite format 3\x00"
#: The smallest possible SQLite page; a shorter non-empty file is truncated.
MIN_PAGE = 512


def connect(path: Path | str) -> sqlite_utils.Database:
    """A connection with the pragmas every user of the database needs, without migrating."""
    conn = sqlite3.connect(str(path), timeout=30)
    import sqlite_utils  # here, not at the top: readers of cached data never pay its import (~0.25 s, it loads pandas)

    db = sqlite_utils.Database(conn)
    conn.execute("PRAGMA foreign_keys = ON")
    conn.execute("PRAGMA busy_timeout = 30000")
    conn.execute("PRAGMA synchronous = NORMAL")
    return db


def check_file(path: Path | str, *, allow_empty: bool) -> None:
    """Refuse what cannot be a SQLite database, by its header: cheap, before SQLite sees it.

    An empty file is a valid new database to SQLite; a writer may fill it, a reader has
    nothing to read (`allow_empty=False`).
    """
    p = Path(path)
    if p.is_dir():
        raise StorageError(f"{p} is a folder, not a database file", hint="pass the results.db file with --db")
    try:
        with open(p, "rb") as f:
            head = f.read(MIN_PAGE)
    except OSError as exc:
        raise explain(exc, path=p) from None
    if not head:
        if allow_empty:
            return
        raise StorageError(f"{p} is empty: no results in it yet",
                           hint="run `helmbench run` first, or pass the right file with --db")
    if not head.startswith(SQLITE_HEADER):
        raise StorageError(f"{p} is not a SQLite database (it does not start with the SQLite header)",
                           exit_code=2, hint="check that --db names the results.db written by `helmbench run`; "
                                             "if it does, the file was overwritten: restore it from a backup")
    if len(head) < MIN_PAGE:
        raise corrupt(p, f"the file is truncated ({len(head)} bytes)")


def quick_check(conn: sqlite3.Connection, path: Path | str) -> None:
    """`PRAGMA quick_check`: page structure and record formats, O(size) but no index cross-checks."""
    try:
        rows = [r[0] for r in conn.execute("PRAGMA quick_check(5)")]
    except sqlite3.DatabaseError as exc:
        raise explain(exc, db=path) from None
    if rows != ["ok"]:
        raise corrupt(path, "quick_check found: " + "; ".join(rows))


def integrity_problems(conn: sqlite3.Connection) -> list[str]:
    """What a full `PRAGMA quick_check` finds ([] when the file is sound; a damaged page is a finding too)."""
    try:
        found = [row[0] for row in conn.execute("PRAGMA quick_check").fetchall()]
    except sqlite3.DatabaseError as exc:
        found = [str(exc)]
    return [] if found == ["ok"] else found


def _refuse_foreign(conn: sqlite3.Connection, path: Path | str) -> None:
    """A database with tables but no `migrations` table belongs to something else: never add ours to it."""
    names = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    if names and "migrations" not in names:
        raise StorageError(f"{path} is a SQLite database but not a HELMBench results database "
                           f"(it has {', '.join(sorted(names)[:3])}{', …' if len(names) > 3 else ''} and no migrations)",
                           hint="pass a new file or the results.db written by `helmbench run` with --db")


def open_db(path: Path | str = DEFAULT_DB) -> sqlite_utils.Database:
    """Open (creating if needed), check and migrate; the caller is the one writer."""
    memory = str(path) == ":memory:"
    db = None
    try:
        if not memory:
            if Path(path).is_symlink():  # SQLite would write (and create its -wal) through it
                from helmbench.safewrite import UnsafeWrite

                raise UnsafeWrite(f"refusing to write {path}: it is a symbolic link; nothing was written",
                                  hint="pass the database file itself with --db")
            Path(path).parent.mkdir(parents=True, exist_ok=True)
            if Path(path).exists():
                check_file(path, allow_empty=True)
        db = connect(path)
        if not memory:
            quick_check(db.conn, path)
            _refuse_foreign(db.conn, path)
            db.conn.execute("PRAGMA journal_mode = WAL")
        migrate(db)
    except BaseException as exc:
        if db is not None:
            db.conn.close()  # a refused file is not held open (nor its folder's file system busy)
        if isinstance(exc, (sqlite3.Error, OSError)):
            raise explain(exc, db=path) from None
        raise
    return db


def open_existing(path: Path | str) -> sqlite_utils.Database | None:
    """For read-mostly commands (dry-run): None when there is no database yet."""
    return open_db(path) if Path(path).exists() else None


_copies: list[str] = []


@atexit.register
def _remove_copies() -> None:
    for d in _copies:
        shutil.rmtree(d, ignore_errors=True)


def _readonly_uri(p: Path) -> str:
    """The URI that reads `p` without writing anything next to it.

    `mode=ro` still needs the WAL index (`-shm`) beside the file, which SQLite creates; in a
    folder nobody may write it cannot, and the open fails. There, with no WAL content
    pending, `immutable=1` reads the main file as it is (nobody can be writing it: a writer
    needs that folder too). With WAL content pending (a writer stopped before checkpointing)
    immutable would silently miss those commits, so the file and its WAL are copied to a
    private folder and read there.
    """
    folder = p.parent
    if os.access(folder, os.W_OK | os.X_OK):
        return f"{p.as_uri()}?mode=ro"
    wal = Path(f"{p}-wal")
    if wal.is_file() and wal.stat().st_size > 0:
        tmp = tempfile.mkdtemp(prefix="helmbench-ro-")
        _copies.append(tmp)
        copy = Path(tmp) / p.name
        shutil.copyfile(p, copy)
        shutil.copyfile(wal, f"{copy}-wal")
        return f"{copy.as_uri()}?mode=ro"
    return f"{p.as_uri()}?mode=ro&immutable=1"


def open_readonly(path: Path | str, *, check: bool = True) -> sqlite3.Connection:
    """A read-only, checked connection for readers; raises StorageError naming the file."""
    p = Path(path)
    if not p.exists():
        raise StorageError(f"no results database at {p}", hint="run `helmbench run` first, or pass --db")
    check_file(p, allow_empty=False)
    conn = None
    try:
        conn = sqlite3.connect(_readonly_uri(p.resolve()), uri=True, timeout=30)
        conn.execute("PRAGMA busy_timeout = 30000")
        if check:
            quick_check(conn, p)
        if not conn.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'runs'").fetchone():
            raise StorageError(f"{p} is a SQLite database but not a HELMBench results database (no runs table)",
                               hint="pass the results.db written by `helmbench run` with --db")
    except BaseException as exc:
        if conn is not None:
            conn.close()
        if isinstance(exc, (sqlite3.Error, OSError)):
            raise explain(exc, db=p) from None
        raise
    return conn


def open_reader(path: Path | str) -> sqlite_utils.Database:
    """`open_readonly` as a sqlite_utils Database, for readers written against that API."""
    import sqlite_utils

    return sqlite_utils.Database(open_readonly(path))
