"""The copy itself: every incoming row found by its content key in OUT, inserted (its references translated to
OUT's ids), mapped onto an identical row, yielding by its table's rule, or recorded as a conflict; manifests
registered from their verified headers, runs of one key made one run, results compared with their links,
reviews passed through `review import`'s rules.

Why a module: this is the one place rows move between databases; what each table's key and rule are
(store/merge_tables.py), which inputs may be read (store/merge_inputs.py) and how OUT is built and put in place
(store/merge.py) are decided elsewhere.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Iterable

from helmbench.errors import StorageError
from helmbench.store.catalog import apply_catalog, register_rows
from helmbench.store.catalog_check import verified_manifest, verified_manifests
from helmbench.store.merge_inputs import refuse_future
from helmbench.store.merge_report import Conflict, Merged
from helmbench.store.merge_runs import completed_if_whole, least_finished
from helmbench.store.merge_tables import (
    BY_NAME,
    FROM_MANIFESTS,
    LINKS,
    TABLES,
    Table,
    column_names,
    select_rows,
    table_names,
    unhandled_tables,
)
from helmbench.store.queries.runs import FINISHED_STATUSES, choose_manifest
from helmbench.store.schema_shard import union



class Merger:
    def __init__(self, out: sqlite3.Connection, out_name: str, merged: Merged):
        self.out = out
        self.out_name = out_name
        self.merged = merged
        self.conflicts: list[Conflict] = []
        self.origin: dict[tuple[str, tuple], str] = {}  # where a row this merge added came from
        self.touched_runs: set[int] = set()
        self.before: dict[int, dict] = {}  # a run already in OUT as it was before this merge
        self.columns = {t.name: column_names(out, t.name) for t in TABLES}

    def _where(self, table: Table) -> str:
        return " AND ".join(f"{k} IS ?" for k in table.key)

    def _stored(self, table: Table, key: tuple) -> dict | None:
        rows = select_rows(self.out, f"SELECT * FROM {table.name} WHERE {self._where(table)}", key)
        return rows[0] if rows else None

    def _conflict(self, table: Table, key: tuple, columns: Iterable[str], source: str) -> None:
        self.conflicts.append(Conflict(table.name, dict(zip(table.key, self._shown_key(table, key))),
                                       tuple(columns), self.origin.get((table.name, key), self.out_name), source))

    def _shown_key(self, table: Table, key: tuple) -> tuple:
        """The key as a reader can find it: a run by its model, not by OUT's id."""
        shown = []
        for col, value in zip(table.key, key):
            if table.refs.get(col) == "runs":
                row = self.out.execute("SELECT model FROM runs WHERE id = ?", [value]).fetchone()
                value = row[0] if row else value
            shown.append(value)
        return tuple(shown)

    def _insert(self, table: Table, row: dict) -> int | None:
        cols = [c for c in self.columns[table.name] if c != table.local_id and c in row]
        cur = self.out.execute(f"INSERT INTO {table.name} ({', '.join(cols)}) VALUES ({', '.join('?' * len(cols))})",
                               [row[c] for c in cols])
        self.merged.added[table.name] = self.merged.added.get(table.name, 0) + 1
        return cur.lastrowid if table.local_id else None

    def _replace(self, table: Table, stored: dict, row: dict) -> None:
        cols = [c for c in self.columns[table.name] if c != table.local_id and c not in table.key and c in row
                and stored.get(c) != row[c]]
        if not cols:
            return
        self.out.execute(f"UPDATE {table.name} SET {', '.join(f'{c} = ?' for c in cols)} WHERE {self._where(table)}",
                         [row[c] for c in cols] + [stored[k] for k in table.key])
        self.merged.replaced[table.name] = self.merged.replaced.get(table.name, 0) + 1

    def merge_input(self, src: sqlite3.Connection, name: str) -> None:
        unknown = unhandled_tables(table_names(src))
        if unknown:
            raise StorageError(f"{name} has table(s) merge does not know: {', '.join(unknown)}; nothing was merged",
                               hint="merge with the HELMBench release that wrote it")
        refuse_future(src, name)
        ids: dict[str, dict[int, int]] = {}
        present = set(table_names(src))
        for table in TABLES:
            if table.name not in present or table.name in LINKS:
                continue
            if table.name in FROM_MANIFESTS and table.name != "manifests":
                continue  # registered with their manifest by `_merge_manifests`
            if table.name == "manifests":
                self._merge_manifests(src, name)
            elif table.name == "runs":
                ids["runs"] = self._merge_runs(src, name)
            elif table.name == "results":
                ids["results"] = self._merge_results(src, name, ids)
            elif table.name == "reviews":
                self._merge_reviews(src, name)
            else:
                ids[table.name] = self._merge_table(table, src, name, ids)

    # -- reviews: `review import`'s rules and writer, each refusal said

    def _merge_reviews(self, src, name: str) -> None:
        """An input's reviews pass the rules a review file passes (`review_files.accepted`: names normalised,
        control characters, future dates and keys that match no judged output refused, against OUT with this
        input's judgements merged) and are written as `review import` writes them; a refused row is left out,
        said and counted (`Merged.refused`), never merged."""
        from helmbench.store.review_files import FIELDS, accepted, review_rules
        from helmbench.store.reviews import write_imported

        records: list[tuple[str, dict | str]] = []
        for row in select_rows(src, "SELECT * FROM reviews ORDER BY created_at, id"):
            where = f"{name}: reviews row {row.get('id')}"
            try:
                judgment = json.loads(row["judgment_json"]) if isinstance(row["judgment_json"], str) else None
            except (ValueError, RecursionError):
                records.append((where, "`judgment_json` is not JSON"))
                continue
            records.append((where, {**{k: row.get(k) for k in FIELDS if k != "judgment"}, "judgment": judgment}))
        if not records:
            return
        options, known = review_rules(self.out)
        rows, refused = accepted(records, options, known, f"import:{Path(name).name}")
        self.merged.refused.extend(refused)
        added, replaced = write_imported(self.out, rows)
        for counts, n in ((self.merged.added, added), (self.merged.replaced, replaced)):
            if n:
                counts["reviews"] = counts.get("reviews", 0) + n

    # -- manifests: taken only as their hashes vouch for them, registered here as `run` registers one

    def _merge_manifests(self, src, name: str) -> None:
        held = {(h, c) for h, c in self.out.execute("SELECT hash, catalog_hash FROM manifests")}
        for manifest in verified_manifests(src, name, held):
            table = BY_NAME["manifests"]
            stored = self._stored(table, (manifest.hash,))
            cases = BY_NAME["cases"]
            new_cases = 0
            for row in manifest.rows:
                there = self._stored(cases, (row["hash"],))
                if there is None:
                    new_cases += 1
                    self.origin[("cases", (row["hash"],))] = name
                elif differ := [c for c in cases.compare if there[c] != row[c]]:
                    self._conflict(cases, (row["hash"],), differ, name)
            if stored is not None:
                if differ := [c for c in table.compare if stored[c] != manifest.header.get(c)]:
                    self._conflict(table, (manifest.hash,), differ, name)
                continue  # OUT's registration (its date, and the catalog it set) stands
            register_rows(self.out, manifest.header, manifest.rows)
            self.origin[("manifests", (manifest.hash,))] = name
            for table_name, n in (("manifests", 1), ("cases", new_cases), ("manifest_cases", len(manifest.rows))):
                if n:
                    self.merged.added[table_name] = self.merged.added.get(table_name, 0) + n

    def _translate(self, table: Table, row: dict, ids: dict[str, dict[int, int]]) -> dict:
        for col, parent in table.refs.items():
            if row.get(col) is not None:
                row[col] = ids[parent][row[col]]
        return row

    def _merge_table(self, table: Table, src, name: str, ids) -> dict[int, int]:
        mapping: dict[int, int] = {}
        order = f" ORDER BY {table.local_id}" if table.local_id else ""
        for row in select_rows(src, f"SELECT * FROM {table.name}{order}"):
            local = row.get(table.local_id) if table.local_id else None
            row = self._translate(table, row, ids)
            key = tuple(row[k] for k in table.key)
            stored = self._stored(table, key)
            if stored is None:
                new = self._insert(table, row)
                self.origin[(table.name, key)] = name
                if local is not None:
                    mapping[local] = new
                continue
            if local is not None:
                mapping[local] = stored[table.local_id]
            differ = [c for c in table.compare if c in row and stored.get(c) != row[c]]
            if not differ:
                if table.name == "models" and stored["name"] is None and row["name"] is not None:
                    self._replace(table, stored, {"name": row["name"]})
                continue
            verdict = table.yields(stored, row) if table.yields else None
            if verdict == "replace":
                self._replace(table, stored, row)
            elif verdict == "twice":
                self.merged.twice[table.name] = self.merged.twice.get(table.name, 0) + 1
            elif verdict != "keep":
                self._conflict(table, key, differ, name)
        return mapping

    # -- runs: one run of several parts

    def _merge_runs(self, src, name: str) -> dict[int, int]:
        table = BY_NAME["runs"]
        mapping: dict[int, int] = {}
        for row in select_rows(src, "SELECT * FROM runs ORDER BY id"):
            key = tuple(row[k] for k in table.key)
            if row["status"] == "running":
                # a snapshot of a run in progress (or of one whose process died): nothing runs OUT's copy
                # of it, and `running` would hide it from report and publish; it is as far as it got
                row["status"] = "interrupted"
                if Path(name) not in self.merged.still_running:
                    self.merged.still_running.append(Path(name))
            stored = self._stored(table, key)
            if stored is None:
                mapping[row["id"]] = self._insert(table, row)
                self.origin[("runs", key)] = name
            elif differ := tuple(c for c in ("settings_json", "families_json") if stored.get(c) != row.get(c)):
                # families_json: models.yml's `families:`, which decides the run's judge conflicts (migration 12)
                mapping[row["id"]] = stored["id"]  # so that the rest of the file is still compared
                self._conflict(table, key, differ, name)
                continue
            else:
                mapping[row["id"]] = stored["id"]
                combined = {
                    "started_at": min(stored["started_at"], row["started_at"]),
                    "finished_at": None if None in (stored["finished_at"], row["finished_at"])
                    else max(stored["finished_at"], row["finished_at"]),
                    "samples": max(stored["samples"], row["samples"]),
                    "n_cases": max(stored["n_cases"], row["n_cases"]),
                    "status": least_finished(stored["status"], row["status"]),
                    "shard": union([stored.get("shard"), row.get("shard")]),
                }
                if ("runs", key) not in self.origin:  # in OUT before this merge
                    self.before.setdefault(stored["id"], stored)
                self.out.execute(f"UPDATE runs SET {', '.join(f'{c} = ?' for c in combined)} WHERE id = ?",
                                 [*combined.values(), stored["id"]])
            self.touched_runs.add(mapping[row["id"]])
        return mapping

    # -- results, with the links that make them what they are

    def _links(self, conn, result_id: int, ids=None) -> tuple:
        """A result's judgements (with the verdict each gave it), transcript and checkpoints, comparable
        across files (ids translated to OUT's when `ids` is given)."""
        def tr(parent: str, value):
            return ids[parent][value] if ids is not None else value

        judged = sorted((tr("judgements", j), v, s) for j, v, s in conn.execute(
            "SELECT judgement_id, verdict, score FROM result_judgements WHERE result_id = ?", [result_id]))
        turns = sorted(tr("turns", t) for (t,) in conn.execute(
            "SELECT turn_id FROM result_turns WHERE result_id = ?", [result_id]))
        checkpoints = sorted(tuple(r) for r in conn.execute(
            "SELECT checkpoint, turn, title, verdict, score, reason FROM checkpoint_verdicts WHERE result_id = ?",
            [result_id]))
        return judged, turns, checkpoints

    def _write_links(self, result_id: int, links: tuple) -> None:
        judged, turns, checkpoints = links
        for table in LINKS:
            self.out.execute(f"DELETE FROM {table} WHERE result_id = ?", [result_id])
        self.out.executemany("INSERT INTO result_judgements (result_id, judgement_id, verdict, score) "
                             "VALUES (?, ?, ?, ?)", [(result_id, *j) for j in judged])
        self.out.executemany("INSERT INTO result_turns (result_id, turn_id) VALUES (?, ?)",
                             [(result_id, t) for t in turns])
        self.out.executemany("INSERT INTO checkpoint_verdicts (result_id, checkpoint, turn, title, verdict, score, "
                             "reason) VALUES (?, ?, ?, ?, ?, ?, ?)", [(result_id, *c) for c in checkpoints])
        for table, rows in zip(LINKS, links):
            if rows:
                self.merged.added[table] = self.merged.added.get(table, 0) + len(rows)

    def _merge_results(self, src, name: str, ids) -> dict[int, int]:
        table = BY_NAME["results"]
        mapping: dict[int, int] = {}
        has_links = {t for t in LINKS if t in table_names(src)} == set(LINKS)
        for row in select_rows(src, "SELECT * FROM results ORDER BY id"):
            local = row["id"]
            links = self._links(src, local, ids) if has_links else ([], [], [])
            row = self._translate(table, row, ids)
            key = tuple(row[k] for k in table.key)
            stored = self._stored(table, key)
            if stored is None:
                new = mapping[local] = self._insert(table, row)
                self._write_links(new, links)
                self.origin[("results", key)] = name
                continue
            mapping[local] = stored["id"]
            differ = [c for c in table.compare if stored.get(c) != row.get(c)]
            if self._links(self.out, stored["id"]) != links:
                differ.append("its judgements, transcript or checkpoints")
            if not differ:
                continue
            verdict = table.yields(stored, row)
            if verdict == "replace":
                self._replace(table, stored, row)
                self._write_links(stored["id"], links)
            elif verdict != "keep":
                self._conflict(table, key, differ, name)
        return mapping

    def settle_catalog(self) -> None:
        """The catalog and case measures of the manifest the leaderboard shows (its latest finished run's), set
        last: two manifests share catalog rows by code and case rows by hash, so without this the input merged
        last decided the current leaderboard's severities (a genuine older database merged into a newer one
        rescored it, and the order of the inputs changed the ranking)."""
        chosen = choose_manifest(self.out, None, FINISHED_STATUSES)
        verified = verified_manifest(self.out, chosen) if chosen else None
        if verified is not None:
            apply_catalog(self.out, verified.header, verified.rows)

    def refresh_runs(self) -> None:
        """Counts, costs and status of every run this merge touched, from the merged rows."""
        from helmbench.store.judgements import record_judge_totals
        from helmbench.store.runs import refresh_counts

        for run_id in sorted(self.touched_runs):
            row = refresh_counts(self.out, run_id)
            status = completed_if_whole(self.out, row)
            if status != row["status"]:
                self.out.execute("UPDATE runs SET status = ? WHERE id = ?", [status, run_id])
            final = record_judge_totals(_Db(self.out), run_id)
            self.merged.runs.append(final)
            before = self.before.get(run_id)
            if before is not None and any(before[c] != final[c] for c in before):
                self.merged.replaced["runs"] = self.merged.replaced.get("runs", 0) + 1



class _Db:
    """The `.conn`/`.execute` of a sqlite_utils Database over a plain connection, for the store's writers."""

    def __init__(self, conn):
        self.conn = conn

    def execute(self, sql, params=()):
        return self.conn.execute(sql, params)
