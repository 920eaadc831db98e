"""A consistent copy of results.db (`VACUUM INTO`), for serving while a run may be writing the original."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from helmbench.errors import explain
from helmbench.store.db import open_readonly


def vacuum_into(src: Path | str, dest: Path | str) -> Path:
    """Write a compact, consistent copy of `src` at `dest` (replaced if present).

    The source is opened (and checked) read-only first, so a corrupt file is refused before
    anything is written; a failure while writing (a full disk) names the copy's folder, not the
    source, and leaves no half-written copy behind.
    """
    dest = Path(dest)
    conn = open_readonly(src)
    try:
        dest.parent.mkdir(parents=True, exist_ok=True)
        if dest.exists():
            dest.unlink()
        conn.execute("VACUUM INTO ?", [str(dest)])
    except sqlite3.Error as exc:
        dest.unlink(missing_ok=True)
        raise explain(exc, db=dest.parent) from None
    finally:
        conn.close()
    return dest
