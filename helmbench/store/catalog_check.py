"""What `helmbench merge` takes of another database's manifests: only what their hashes vouch for.

Why: the catalog (severities, difficulties, weights, titles) and each case's copy of its measures sit
outside the case hashes, and the leaderboard scores with them. A shard whose catalog rows were edited
(every severity changed, a registration date in the future so that its catalog "follows the newest")
moved two models from 32 % and 19 % to 100 % without touching a result (#36). So an input's manifest is
taken as `helmbench run` takes a manifest file (manifest/reader.py): its header's catalog must hash to
its `catalog_hash`, its ordered case hashes and that catalog hash to the manifest hash it claims (the
manifest's own rules, manifest/emit.py, through the one canonical hash), each case's id and measures
must be what that catalog says, and each case's request and evaluation must hash to its own hashes
(a conversation's scripted turns are not stored in `cases`, so its hashes cannot be recomputed: its
content is compared with OUT's copy instead). The input's catalog tables and case measures must each be
what one of its verified manifests gives. Anything else refuses the whole input, naming the file.

What OUT keeps is then derived, never copied: a manifest OUT does not hold is registered from its
verified header as `run` registers one (store/catalog.py: `register_rows`), at OUT's own clock, and a
manifest OUT holds already changes nothing. An input's `registered_at` orders only its own manifests.
"""

from __future__ import annotations

import json
import sqlite3
from dataclasses import dataclass

from helmbench.errors import HelmbenchError
from helmbench.manifest.canonical import hash_of
from helmbench.manifest.emit import _ManifestHash
from helmbench.manifest.reader import _case_hashes, _expected_cases, _number
from helmbench.store.catalog import CATALOG_TABLES, SCORING, case_row, catalog_rows

#: How many problems one refusal lists.
SHOWN = 10


class EditedInput(HelmbenchError):
    """An input database's manifest or catalog does not hash to what it claims: it was edited."""


@dataclass(frozen=True)
class Verified:
    """One manifest of an input, checked: its header and its case rows (measures from its catalog)."""

    header: dict
    rows: list[dict]  # `catalog.case_row`'s, in manifest order

    @property
    def hash(self) -> str:
        return self.header["manifest_hash"]


def _rows(conn: sqlite3.Connection, sql: str, params=()) -> list[dict]:
    cur = conn.execute(sql, list(params))
    names = [d[0] for d in cur.description]
    return [dict(zip(names, r)) for r in cur.fetchall()]


def _short(value) -> str:
    text = "".join(c if c.isprintable() else "?" for c in str(value))
    return text if len(text) <= 40 else text[:37] + "…"


def _derived_case(stored: dict, expected_id: str, expected: dict, conversation: bool) -> tuple[dict, str | None]:
    """The row registering would write for this case (codes and measures from the catalog), and what is
    wrong with the stored one (None: nothing)."""
    request = {"messages": json.loads(stored["messages_json"], parse_float=_number),
               "response_format": json.loads(stored["response_format_json"] or "null", parse_float=_number)}
    evaluation = json.loads(stored["evaluation_json"], parse_float=_number)
    case = {**expected, "id": expected_id, "hash": stored["hash"], "request_hash": stored["request_hash"],
            "request": request, "evaluation": evaluation}
    row = case_row(case)
    if stored["id"] != expected_id:
        return row, f"case {_short(stored['id'])} is where its catalog puts {expected_id}"
    if not conversation and _case_hashes(case) != (stored["hash"], stored["request_hash"]):
        return row, f"case {expected_id}: its request or evaluation does not match its hash"
    if stored["evaluation_type"] != evaluation.get("type"):
        return row, f"case {expected_id}: evaluation_type is not its evaluation's type"
    return row, None


def _verify_one(src: sqlite3.Connection, m: dict, held: set[tuple[str, str]]) -> tuple[Verified | None, list[str]]:
    where = f"manifest {_short(m['hash'])}"
    header = json.loads(m["header_json"])
    if not isinstance(header, dict) or not isinstance(header.get("catalog"), dict):
        return None, [f"{where}: its header has no catalog"]
    cat = header["catalog"]
    catalog_hash = hash_of(cat)
    if not (catalog_hash == m["catalog_hash"] == header.get("catalog_hash")):
        return None, [f"{where}: its catalog does not hash to its catalog_hash"]
    if header.get("manifest_hash") != m["hash"] or header.get("format") != m["format"]:
        return None, [f"{where}: its header names another manifest"]
    stored = _rows(src, "SELECT mc.position, mc.case_id AS listed_id, c.* FROM manifest_cases mc "
                        "LEFT JOIN cases c ON c.hash = mc.case_hash WHERE mc.manifest_hash = ? ORDER BY mc.position",
                   [m["hash"]])
    mh = _ManifestHash()
    for pos, row in enumerate(stored):
        if row["position"] != pos or row["hash"] is None:
            return None, [f"{where}: its case list has a gap at position {pos}"]
        mh.add(row["hash"])
    if not (mh.count == m["cases"] == header.get("cases")):
        return None, [f"{where}: it says {m['cases']} cases and lists {mh.count}"]
    if mh.manifest_hash(catalog_hash) != m["hash"]:
        # a manifest compiled before its hash covered the catalog (the case hashes alone) is taken only where
        # OUT holds it already with the same catalog: nothing then vouches for the catalog but OUT itself
        if mh.hexdigest() != m["hash"]:
            return None, [f"{where}: its cases and catalog do not hash to the manifest hash it claims"]
        if (m["hash"], m["catalog_hash"]) not in held:
            return None, [f"{where}: compiled before a manifest's hash covered its catalog, so nothing vouches "
                          "for its catalog: run it again with this release, or merge into a database holding it"]
    conversations = {code for code, s in cat.get("scenarios", {}).items() if s.get("conversation")}
    problems: list[str] = []
    rows: list[dict] = []
    expected = _expected_cases(cat)
    for row in stored:
        expected_id, want = next(expected, (None, None))
        if expected_id is None or row["listed_id"] != expected_id:
            return None, [f"{where}: position {row['position']} lists {_short(row['listed_id'])} where its "
                          f"catalog puts {expected_id}"]
        derived, why = _derived_case(row, expected_id, want, row["scenario"] in conversations
                                     or want["scenario"] in conversations)
        if why:
            problems.append(f"{where}: {why}")
        rows.append(derived)
    if next(expected, (None, None))[0] is not None:
        return None, [f"{where}: its catalog has cases its case list lacks"]
    return Verified(header, rows), problems


def verified_manifest(conn: sqlite3.Connection, manifest_hash: str) -> Verified | None:
    """One manifest a database holds, checked as an input's are; None when it does not verify (a manifest
    compiled before its hash covered the catalog is taken as the database holds it)."""
    found = _rows(conn, "SELECT * FROM manifests WHERE hash = ?", [manifest_hash])
    if not found:
        return None
    try:
        one, wrong = _verify_one(conn, found[0], {(found[0]["hash"], found[0]["catalog_hash"])})
    except (ValueError, TypeError, KeyError, AttributeError, RecursionError):
        return None
    return None if wrong else one


def verified_manifests(src: sqlite3.Connection, name: str, held: set[tuple[str, str]]) -> list[Verified]:
    """Every manifest of the input `src`, checked (in the input's order of registration); raises EditedInput
    naming `name` and what does not hash. `held`: the (hash, catalog_hash) pairs OUT holds already."""
    problems: list[str] = []
    verified: list[Verified] = []
    manifests = _rows(src, "SELECT * FROM manifests ORDER BY registered_at IS NULL, registered_at, hash")
    for m in manifests:
        try:
            one, wrong = _verify_one(src, m, held)
        except (ValueError, TypeError, KeyError, AttributeError, RecursionError):
            one, wrong = None, [f"manifest {_short(m.get('hash'))}: its header or its cases are malformed"]
        problems.extend(wrong)
        if one is not None:
            verified.append(one)
    if not problems:
        problems = _stray_catalog(src, verified)
    if problems:
        shown = problems[:SHOWN] + ([f"… and {len(problems) - SHOWN} more"] if len(problems) > SHOWN else [])
        raise EditedInput(
            f"{name}: refused: {len(problems)} part(s) of its benchmark catalog do not hash to the manifest they "
            "belong to (the database was edited, or its manifest is too old to be checked); nothing was written\n  " + "\n  ".join(shown),
            hint="merge the databases the runs wrote, unedited (what a manifest's cases, severities, difficulties "
                 "and weights are is decided by its hash, not by the rows)")
    return verified


def _stray_catalog(src: sqlite3.Connection, verified: list[Verified]) -> list[str]:
    """The input's catalog-table rows and case measures that none of its verified manifests gives."""
    given: dict[str, dict[str, list[dict]]] = {}
    for v in verified:
        for table, row in catalog_rows(v.header["catalog"]):
            given.setdefault(table, {}).setdefault(row["code"], []).append(row)
    problems = []
    present = {r[0] for r in src.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    for table in CATALOG_TABLES:
        if table not in present:
            continue
        for row in _rows(src, f"SELECT * FROM {table} ORDER BY code"):
            options = given.get(table, {}).get(row["code"], [])
            if not any(all(row.get(c) == want[c] for c in want) for want in options):
                problems.append(f"{table} {_short(row['code'])}: not what any of its manifests' catalogs says")
    cases: dict[str, list[dict]] = {}
    for v in verified:
        for row in v.rows:
            cases.setdefault(row["hash"], []).append(row)
    for row in _rows(src, f"SELECT hash, id, {', '.join(SCORING)} FROM cases ORDER BY id, hash"):
        options = cases.get(row["hash"], [])
        if not any(all(row[c] == want[c] for c in SCORING) for want in options):
            problems.append(f"case {_short(row['id'])}: its severities, difficulty, weight or codes are not what "
                            "its manifest's catalog says")
    return problems


__all__ = ["EditedInput", "Verified", "verified_manifests"]
