"""Manifests as stored with a run: name, version and case count, the header (catalog), the cases."""

from __future__ import annotations

import json
import sqlite3


def manifest_meta(conn: sqlite3.Connection, manifest_hash: str) -> tuple[str | None, str | None, int]:
    """(benchmark name, version, number of cases); an unregistered manifest counts its linked cases."""
    row = conn.execute("SELECT benchmark_name, benchmark_version, cases FROM manifests WHERE hash = ?",
                       [manifest_hash]).fetchone()
    if row is None:
        n = conn.execute("SELECT COUNT(*) FROM manifest_cases WHERE manifest_hash = ?", [manifest_hash]).fetchone()[0]
        return None, None, n
    return row[0], row[1], row[2]


def manifest_header(conn: sqlite3.Connection, manifest_hash: str) -> dict | None:
    """The manifest's header line as stored (with the full catalog), or None."""
    row = conn.execute("SELECT header_json FROM manifests WHERE hash = ?", [manifest_hash]).fetchone()
    return json.loads(row[0]) if row is not None and row[0] else None


def manifest_case_rows(conn: sqlite3.Connection, manifest_hash: str) -> list[sqlite3.Row]:
    """The `cases` rows of a manifest, in manifest order."""
    cur = conn.execute(
        """SELECT c.* FROM manifest_cases mc JOIN cases c ON c.hash = mc.case_hash
           WHERE mc.manifest_hash = ? ORDER BY mc.position""", [manifest_hash])
    cur.row_factory = sqlite3.Row
    return cur.fetchall()


def cases_in_scenarios(conn: sqlite3.Connection, manifest_hash: str, scenarios: list[str]) -> int:
    """How many of the manifest's cases belong to `scenarios` (what `report --calibrated-only` leaves out)."""
    marks = ",".join("?" * len(scenarios))
    return conn.execute(f"""SELECT COUNT(*) FROM manifest_cases mc JOIN cases c ON c.hash = mc.case_hash
                            WHERE mc.manifest_hash = ? AND c.scenario IN ({marks})""",
                        [manifest_hash, *scenarios]).fetchone()[0]


#: The catalog tables with titles (the only names `titles` accepts: it is not a way to name any table).
TITLED_TABLES = ("pillars", "behaviours", "scenarios")


def titles(conn: sqlite3.Connection, table: str) -> dict[str, str]:
    """code → title of a catalog table, where the title says more than the code ({} on an older database)."""
    if table not in TITLED_TABLES:
        raise ValueError(f"no titles in {table!r}: one of {', '.join(TITLED_TABLES)}")
    try:
        return {r[0]: r[1] for r in conn.execute(f"SELECT code, title FROM {table}") if r[1] and r[1] != r[0]}
    except sqlite3.OperationalError:
        return {}
