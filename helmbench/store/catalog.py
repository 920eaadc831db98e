"""Register a manifest and its catalog (pillars … perturbations, cases) in results.db.

Cases are content-addressed (keyed by `hash`), so registering a manifest that shares cases
with an earlier one adds only the new ones; the catalog's titles follow the latest manifest.
A manifest is registered once: `manifests.registered_at` is set in the same transaction as
its cases, so a crash mid-way simply registers it again next time.
"""

from __future__ import annotations

import json
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Iterable

if TYPE_CHECKING:  # annotations only: importing sqlite_utils costs ~0.25 s (it loads pandas)
    import sqlite_utils

BATCH = 500


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


def _json(value) -> str | None:
    return None if value is None else json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def is_registered(db: sqlite_utils.Database, manifest_hash: str) -> bool:
    row = db.execute("SELECT registered_at FROM manifests WHERE hash = ?", [manifest_hash]).fetchone()
    return bool(row and row[0])


def _upsert(conn, table: str, key: str, row: dict) -> None:
    cols = list(row)
    updates = ", ".join(f"{c} = excluded.{c}" for c in cols if c != key)
    changed = " OR ".join(f"{c} IS NOT excluded.{c}" for c in cols if c != key)
    conn.execute(  # a row that would not change is not written (a merge that changes nothing writes nothing)
        f"INSERT INTO {table} ({', '.join(cols)}) VALUES ({', '.join('?' * len(cols))}) "
        f"ON CONFLICT({key}) DO UPDATE SET {updates} WHERE {changed}",
        [row[c] for c in cols],
    )


def catalog_rows(catalog: dict) -> Iterable[tuple[str, dict]]:
    """(table, row) of every catalog table row a manifest's catalog gives: what registering writes, and what
    `helmbench merge` compares an input's catalog tables with (store/catalog_check.py)."""
    for code, p in catalog.get("pillars", {}).items():
        yield "pillars", {"code": code, "title": p.get("title"), "description": p.get("description")}
    for code, b in catalog.get("behaviours", {}).items():
        yield "behaviours", {
            "code": code, "pillar": b.get("pillar") or code.split("-")[0], "title": b.get("title"),
            "description": b.get("description"), "compliance_json": _json(b.get("compliance")), "weight": b.get("weight"),
        }
    for code, s in catalog.get("scenarios", {}).items():
        yield "scenarios", {
            "code": code, "behaviour": s.get("behaviour") or code.rsplit("-", 1)[0], "title": s.get("title"),
            "category": s.get("category"), "evaluation_type": s.get("evaluation_type"),
        }
    for code, c in catalog.get("components", {}).items():
        table, measure = COMPONENT_TABLES[c["kind"]]
        yield table, {"code": code, "scenario": c["scenario"], "title": c.get("title"), measure: c.get(measure) or 0}


#: A component's kind → its table and the measure it carries.
COMPONENT_TABLES = {"condition": ("conditions", "difficulty"), "user_context": ("user_contexts", "severity"),
                    "perturbation": ("perturbations", "severity")}
#: The catalog's tables, filled from a manifest's catalog only (never copied from another database).
CATALOG_TABLES = ("pillars", "behaviours", "scenarios", "conditions", "user_contexts", "perturbations")


def _catalog(conn, catalog: dict) -> None:
    for table, row in catalog_rows(catalog):
        _upsert(conn, table, "code", row)


def case_row(case: dict) -> dict:
    sev = case.get("severity") or {}
    request = case["request"]
    return {
        "hash": case["hash"], "id": case["id"], "request_hash": case["request_hash"],
        "pillar": case.get("pillar"), "behaviour": case.get("behaviour"), "scenario": case["scenario"],
        "condition": case.get("condition"), "user_context": case.get("user_context"),
        "perturbation": case.get("perturbation"),
        "severity_perturbation": sev.get("perturbation", 0), "severity_user_context": sev.get("user_context", 0),
        "severity_base": sev.get("base", 0), "difficulty": case.get("difficulty", 0), "weight": case.get("weight"),
        "evaluation_type": case["evaluation"].get("type"),
        "messages_json": _json(request["messages"]), "response_format_json": _json(request.get("response_format")),
        "evaluation_json": _json(case["evaluation"]),
    }


#: A case row's measures: from the catalog, outside the case's hash, so the manifest registered last sets them.
MEASURES = ("severity_perturbation", "severity_user_context", "severity_base", "difficulty", "weight")
#: Every column of a case row the catalog decides (its codes and its measures).
SCORING = ("pillar", "behaviour", "scenario", "condition", "user_context", "perturbation", *MEASURES)


def _insert_cases(conn, manifest_hash: str, rows: list[tuple[int, dict]]) -> None:
    if not rows:
        return
    cols = list(rows[0][1])
    # A case hash covers request and evaluation only; severities, difficulty and weight come
    # from the catalog, so the manifest registered last (the one being run) sets them.
    conn.executemany(
        f"INSERT INTO cases ({', '.join(cols)}) VALUES ({', '.join('?' * len(cols))}) "
        f"ON CONFLICT(hash) DO UPDATE SET {', '.join(f'{c} = excluded.{c}' for c in MEASURES)}",
        [[r[c] for c in cols] for _, r in rows],
    )
    conn.executemany(
        "INSERT OR IGNORE INTO manifest_cases (manifest_hash, case_hash, position, case_id) VALUES (?, ?, ?, ?)",
        [(manifest_hash, r["hash"], pos, r["id"]) for pos, r in rows],
    )


def apply_catalog(conn, header: dict, rows: Iterable[dict]) -> None:
    """Set the catalog tables and the case measures to what this manifest says (`rows`: its `case_row`s).

    Why: the catalog rows are keyed by code and a case's measures by its hash, so two manifests that share
    codes or cases share those rows, and the manifest registered last sets them. `helmbench merge` calls
    this once at its end for the manifest the leaderboard shows (the one of the latest finished run), so
    that what the merged database scores with does not depend on which input came last."""
    _catalog(conn, header.get("catalog") or {})
    changed = " OR ".join(f"{c} IS NOT ?" for c in MEASURES)
    conn.executemany(
        f"UPDATE cases SET {', '.join(f'{c} = ?' for c in MEASURES)} WHERE hash = ? AND ({changed})",
        [[*(r[c] for c in MEASURES), r["hash"], *(r[c] for c in MEASURES)] for r in rows],
    )


def register_manifest(db: sqlite_utils.Database, header: dict, cases: Iterable[dict]) -> int:
    """Store the header, catalog and every case (streamed, in one transaction); returns the count."""
    with db.conn as conn:
        return register_rows(conn, header, (case_row(case) for case in cases))


def register_rows(conn, header: dict, rows: Iterable[dict]) -> int:
    """The header, its catalog and the case rows (`case_row`'s, in manifest order) written in the caller's
    transaction, `registered_at` this database's clock: `register_manifest`, and `helmbench merge` for a
    manifest it verified in an input (store/catalog_check.py) and OUT did not hold yet."""
    bench = header.get("benchmark") or {}
    n = 0
    _upsert(conn, "manifests", "hash", {
        "hash": header["manifest_hash"], "format": header["format"], "benchmark_name": bench.get("name"),
        "benchmark_version": bench.get("version"), "benchmark_description": bench.get("description"),
        "compiler": header.get("compiler"), "cases": header.get("cases", 0),
        "catalog_hash": header.get("catalog_hash"), "header_json": _json(header), "registered_at": None,
    })
    _catalog(conn, header.get("catalog") or {})
    batch: list[tuple[int, dict]] = []
    for pos, row in enumerate(rows):
        batch.append((pos, row))
        n += 1
        if len(batch) >= BATCH:
            _insert_cases(conn, header["manifest_hash"], batch)
            batch = []
    _insert_cases(conn, header["manifest_hash"], batch)
    conn.execute("UPDATE manifests SET registered_at = ? WHERE hash = ?", [_now(), header["manifest_hash"]])
    return n


def upsert_models(db: sqlite_utils.Database, models: Iterable[tuple[str, str | None]]) -> None:
    with db.conn as conn:
        for model_id, name in models:
            conn.execute(
                "INSERT INTO models (id, name) VALUES (?, ?) ON CONFLICT(id) DO UPDATE SET name = coalesce(excluded.name, name)",
                [model_id, name],
            )
