"""Merge results databases by content (`helmbench merge OUT.db IN.db…`): shards of one run, machines of one team.

Why by content key and not by row id: every id in results.db is local to its file (run 1 of one
shard is not run 1 of another), while every row that matters has a key that says what it is: a
response is (request hash, model, settings, sample), a judgement its judge request, a turn its chain
key, a ledger row its `uid`, a run (manifest, model, settings). Merging is therefore: for every
table, in the order tables point at each other, find each incoming row's key in OUT; absent, insert
it (its references translated to OUT's ids); present with the same content, map onto it (identical
rows are kept once); present with different content, a conflict. Nothing is decided by file order
except which of two equal rows' bookkeeping (latency, created_at) is kept: OUT's, then the inputs'
in the order given.

What is not a conflict, by the store's own rules: a stored error yields to a success for the same
key (responses, turns, judgements, an ERROR result), a judge request answered in two databases keeps
its first answer (shards split the answers, not the judge requests: two models' identical answers
make one judge request; each result keeps the verdict it was decided with), a ledger row `sent`
yields to its completion, a model's display name keeps the first one known. Runs of one key are one
run: their ledger rows, answers and results together, `runs.shard` the union of the parts (NULL once
every part 1..N is there), the status the least finished of them (`completed` when the parts make the
whole and every case has its result), the counts and costs recomputed from the merged rows (billed =
the sum of the shards' own ledger rows, each row once); parts that differ in their settings or
models.yml's `families:` are a conflict. Different manifests or settings stay different runs.

Derived, never trusted (#36): what can be recomputed from content is. An input's manifests are taken only
as their hashes vouch for them (store/catalog_check.py: the catalog hashes to its `catalog_hash`, it and
the ordered case hashes to the manifest hash, each case's measures are its catalog's) or the input is
refused, naming it; a manifest OUT lacks is registered from its verified header as `run` registers one,
so the catalog tables and case measures are never copied and the registration date is OUT's own clock
(an input's dates decide nothing about which catalog is "newest"). Reviews pass the rules and the writer of
`review import` (`review_files.accepted`, `reviews.write_imported`: one reviewer however spelled, a later
verdict replaces an earlier one, a name with control characters, a future date or a key that matches no
judged output refused, each refusal said in `Merged.refused`), with `source` `import:<input file>`. An
input dated in the future anywhere merge keeps a date (`DATED`) is refused. Kept from the inputs as they
are, as bookkeeping that decides nothing: latency, tokens, provider and model version of a row already
compared under its key, a model's display name, `runs.helmbench_version`.

Safety: inputs are read inside one read transaction each (a consistent snapshot) and never written
(an input of an older schema is copied and the copy migrated; a newer one is refused); OUT is built
in a fresh temporary file (a copy of OUT when it exists) and renamed over OUT only when every input
merged without conflict, under OUT's run lock, so a refused merge leaves OUT as it was. Every table
of the schema must be listed in `TABLES` or `DERIVED`: a table a later migration adds is refused
by name until it is (tests/store/test_merge_tables.py checks a fresh database).
"""

from __future__ import annotations

import json
import shutil
import sqlite3
import tempfile
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Callable, Iterable, Sequence

from helmbench import safewrite
from helmbench.errors import HelmbenchError, StorageError, explain
from helmbench.store.catalog import CATALOG_TABLES, apply_catalog, register_rows
from helmbench.store.catalog_check import EditedInput, verified_manifest, verified_manifests
from helmbench.store.queries.runs import FINISHED_STATUSES, choose_manifest
from helmbench.store.db import check_file, connect, open_db, open_readonly
from helmbench.store.lock import RunLock
from helmbench.store.migrations import MIGRATIONS
from helmbench.store.review_files import CLOCK_SKEW
from helmbench.store.schema_shard import union


class MergeConflict(HelmbenchError):
    """Two databases hold different content under one key: which one is right is not for merge to guess."""


@dataclass(frozen=True)
class Table:
    """How one table merges.

    `key`: the columns that say what a row is (after `refs` are translated). `refs`: integer columns
    holding another table's local id (translated to OUT's id of the same key). `compare`: the columns
    whose difference under one key is a conflict; every other column is bookkeeping (kept from the row
    already in OUT). `yields`: given (stored, incoming) rows whose `compare` columns differ, "replace"
    (the incoming row supersedes: an error replaced by a success), "keep" (the stored one stands), or
    None (a conflict). `local_id`: the table's own integer id, if any (not copied)."""

    name: str
    key: tuple[str, ...]
    compare: tuple[str, ...]
    refs: dict[str, str] = field(default_factory=dict)
    yields: Callable[[dict, dict], str | None] | None = None
    local_id: str | None = "id"


def _error_yields(stored: dict, incoming: dict) -> str | None:
    """The store's rule for responses, turns and judgements: a success replaces an error, never the reverse."""
    if stored.get("error_kind") is not None and incoming.get("error_kind") is None:
        return "replace"
    if stored.get("error_kind") is None and incoming.get("error_kind") is not None:
        return "keep"
    if stored.get("error_kind") is not None and incoming.get("error_kind") is not None:
        return "keep"  # two failed attempts at the same request: the request is still unanswered either way
    return None


def _judgement_yields(stored: dict, incoming: dict) -> str | None:
    """A judge request can be asked in two databases: shards split (case, model) pairs, and two models that
    gave the same answer to one case make one judge request (the judge never sees which model answered), so
    two shards may each pay for it. Both answers are the judge's to one question: the first is kept (as one
    run keeps the one it paid for, every result judged on it linked to it), and each result keeps the verdict
    it was decided with (`result_judgements.verdict`). Errors yield as everywhere."""
    return _error_yields(stored, incoming) or "twice"


def _sent_yields(stored: dict, incoming: dict) -> str | None:
    """A ledger row is written `sent` before its request leaves and completed after: the completion wins."""
    if stored["state"] == "sent" and incoming["state"] != "sent":
        return "replace"
    if incoming["state"] == "sent" and stored["state"] != "sent":
        return "keep"
    return None


def _keep(stored: dict, incoming: dict) -> str | None:
    return "keep"


def _result_yields(stored: dict, incoming: dict) -> str | None:
    """An ERROR result is retried by the next run, which replaces it: a verdict replaces an ERROR."""
    if stored["verdict"] == "ERROR" and incoming["verdict"] != "ERROR":
        return "replace"
    if stored["verdict"] != "ERROR" and incoming["verdict"] == "ERROR":
        return "keep"
    if stored["verdict"] == incoming["verdict"] == "ERROR":
        return "keep"
    return None



#: A case's own content (what its hashes cover, and its id): two databases differing in it under one hash conflict.
CASE_CONTENT = ("id", "request_hash", "scenario", "evaluation_type", "messages_json", "response_format_json",
                "evaluation_json")
#: Tables `_merge_manifests` fills from the verified manifests of an input.
FROM_MANIFESTS = ("manifests", *CATALOG_TABLES, "cases", "manifest_cases")


#: Every table of results.db, in the order they point at each other (a table after those it references).
TABLES: tuple[Table, ...] = (
    # the manifests and what they bring (catalog tables, cases, their lists): verified against their hashes and
    # registered from the header by `_merge_manifests` (store/catalog_check.py), never copied row by row
    Table("manifests", ("hash",), ("format", "cases", "catalog_hash"), local_id=None),
    *(Table(name, ("code",), (), local_id=None) for name in CATALOG_TABLES),
    Table("cases", ("hash",), CASE_CONTENT, local_id=None),
    Table("manifest_cases", ("manifest_hash", "case_hash"), ("position", "case_id"), local_id=None),
    Table("models", ("id",), (), yields=_keep, local_id=None),
    # runs: merged by `_merge_runs` (one run of several parts), listed here for the table check
    Table("runs", ("manifest_hash", "model", "settings_hash"), ("settings_json", "families_json")),
    Table("responses", ("request_hash", "model", "settings_hash", "sample"),
          ("content", "reasoning", "parsed_json", "finish_reason", "error_kind"), refs={"run_id": "runs"},
          yields=_error_yields),
    Table("turns", ("turn_key", "role", "model", "settings_hash", "sample"),
          ("turn", "case_id", "request_hash", "source", "caller", "content", "reasoning", "parsed_json",
           "finish_reason", "landmark", "stop", "error_kind"), refs={"run_id": "runs"}, yields=_error_yields),
    Table("judgements", ("judge_request_hash", "judge_model", "judge_settings_hash"),
          ("output", "criterion", "verdict", "score", "judgment_json", "justification", "raw", "finish_reason",
           "error_kind"), refs={"run_id": "runs", "response_id": "responses"}, yields=_judgement_yields),
    # results with their links (result_judgements, result_turns, checkpoint_verdicts) compared as one
    Table("results", ("run_id", "case_hash", "sample"),
          ("case_id", "response_id", "verdict", "score", "reason", "failure_kind"),
          refs={"run_id": "runs", "response_id": "responses"}, yields=_result_yields),
    Table("result_judgements", ("result_id", "judgement_id"), ("verdict", "score"),
          refs={"result_id": "results", "judgement_id": "judgements"}, local_id=None),
    Table("result_turns", ("result_id", "turn_id"), (), refs={"result_id": "results", "turn_id": "turns"},
          local_id=None),
    Table("checkpoint_verdicts", ("result_id", "checkpoint"), ("turn", "title", "verdict", "score", "reason"),
          refs={"result_id": "results"}, local_id=None),
    Table("calls", ("uid",), ("kind", "run_id", "invocation", "model", "settings_hash", "request_key", "sample",
                              "attempt", "state", "error_kind", "prompt_tokens", "completion_tokens", "cost",
                              "model_version", "provider", "generation_id", "sent_at"),
          refs={"run_id": "runs"}, yields=_sent_yields),
    Table("generations", ("prompt_hash",), ("purpose", "model", "settings_json", "content", "finish_reason"),
          local_id=None),
    Table("reviews", ("item_hash", "reviewer"), ("case_id", "scenario", "criterion", "criterion_text",
                                                 "judgment_json", "confidence", "note")),
    # imported conversations (store/imports.py): keyed by the source's own key, the same content or a conflict;
    # two databases that gave one sample of a case to different conversations conflict on its results first
    Table("imports", ("source", "model_label", "conversation"),
          ("content_hash", "case_id", "case_hash", "scenario", "sample", "output", "opening_json"),
          refs={"run_id": "runs"}, local_id=None),
)
_BY_NAME = {t.name: t for t in TABLES}
#: A result's links: replaced with their result, compared as part of it.
LINKS = ("result_judgements", "result_turns", "checkpoint_verdicts")

#: Tables that are not merged row by row: the schema's own record (OUT's, at the current version), the
#: full-text index of responses (kept by triggers as responses are inserted) and a snapshot's scores
#: (recomputed whenever a snapshot is taken).
DERIVED = ("migrations", "run_scores")
DERIVED_PREFIXES = ("responses_fts", "sqlite_")

#: How many conflicts one refusal lists (the count of the rest follows).
SHOWN = 10


@dataclass
class Merged:
    """What a merge did: per table, rows added and rows that superseded a stored one; the runs it touched."""

    out: Path
    inputs: list[Path]
    added: dict[str, int] = field(default_factory=dict)
    replaced: dict[str, int] = field(default_factory=dict)
    runs: list[dict] = field(default_factory=list)
    migrated: list[Path] = field(default_factory=list)
    twice: dict[str, int] = field(default_factory=dict)  # the same request answered differently in two files, the first kept
    itself: list[Path] = field(default_factory=list)  # inputs that are OUT itself (skipped: nothing to add)
    still_running: list[Path] = field(default_factory=list)  # inputs holding a run marked `running` (merged as interrupted)
    refused: list[str] = field(default_factory=list)  # rows left out by the rules `review import` applies, `where: why`

    @property
    def changed(self) -> bool:
        return any(self.added.values()) or any(self.replaced.values())


@dataclass(frozen=True)
class Conflict:
    table: str
    key: dict
    columns: tuple[str, ...]
    stored_in: str
    incoming: str

    def __str__(self) -> str:
        key = ", ".join(f"{k}={_short(v)}" for k, v in self.key.items())
        return (f"{self.table} ({key}): {self.stored_in} and {self.incoming} differ in "
                f"{', '.join(self.columns)}")


def _short(value) -> str:
    text = repr(value) if not isinstance(value, str) else value
    text = "".join(c if c.isprintable() else "?" for c in text)
    return text if len(text) <= 24 else text[:21] + "…"


def unhandled_tables(names: Iterable[str]) -> list[str]:
    """The tables among `names` that merge does not know (neither in TABLES nor derived)."""
    return sorted(n for n in names if n not in _BY_NAME and n not in DERIVED and not n.startswith(DERIVED_PREFIXES))


def _tables(conn) -> list[str]:
    return [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]


def _columns(conn, table: str) -> list[str]:
    return [r[1] for r in conn.execute(f'PRAGMA table_info("{table}")')]


def _rows(conn, sql: str, params: Sequence = ()) -> list[dict]:
    cur = conn.execute(sql, list(params))
    names = [d[0] for d in cur.description]
    return [dict(zip(names, r)) for r in cur.fetchall()]


# ---------------------------------------------------------------------------------------------------
# Inputs: checked, read-only, migrated through a copy when older


def _versions(conn) -> set[int]:
    if not conn.execute("SELECT 1 FROM sqlite_master WHERE name = 'migrations'").fetchone():
        return set()
    return {r[0] for r in conn.execute("SELECT version FROM migrations")}


def _open_input(path: Path, work: Path, merged: Merged) -> sqlite3.Connection:
    """A read connection on `path` at the current schema (a migrated copy in `work` if it is older)."""
    conn = open_readonly(path)
    known = {m.version for m in MIGRATIONS}
    have = _versions(conn)
    newer = sorted(have - known)
    if newer:
        conn.close()
        raise StorageError(f"{path} was written by a newer HELMBench (schema migration {newer[-1]}; this one "
                           f"knows up to {max(known)}): nothing was merged",
                           hint="upgrade HELMBench (pip install -U helmbench) and merge again")
    if have == known:
        return conn
    copy = work / f"in-{len(merged.migrated)}.db"
    try:
        target = sqlite3.connect(str(copy))
        conn.backup(target)
        target.close()
    finally:
        conn.close()
    open_db(copy).conn.close()  # every pending migration, on the copy only
    merged.migrated.append(path)
    return open_readonly(copy)


# ---------------------------------------------------------------------------------------------------
# The merge proper


class _Merger:
    def __init__(self, out: sqlite3.Connection, out_name: str, merged: Merged):
        self.out = out
        self.out_name = out_name
        self.merged = merged
        self.conflicts: list[Conflict] = []
        self.origin: dict[tuple[str, tuple], str] = {}  # where a row this merge added came from
        self.touched_runs: set[int] = set()
        self.before: dict[int, dict] = {}  # a run already in OUT as it was before this merge
        self.columns = {t.name: _columns(out, t.name) for t in TABLES}

    def _where(self, table: Table) -> str:
        return " AND ".join(f"{k} IS ?" for k in table.key)

    def _stored(self, table: Table, key: tuple) -> dict | None:
        rows = _rows(self.out, f"SELECT * FROM {table.name} WHERE {self._where(table)}", key)
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
        unknown = unhandled_tables(_tables(src))
        if unknown:
            raise StorageError(f"{name} has table(s) merge does not know: {', '.join(unknown)}; nothing was merged",
                               hint="merge with the HELMBench release that wrote it")
        _refuse_future(src, name)
        ids: dict[str, dict[int, int]] = {}
        present = set(_tables(src))
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
        for row in _rows(src, "SELECT * FROM reviews ORDER BY created_at, id"):
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
            table = _BY_NAME["manifests"]
            stored = self._stored(table, (manifest.hash,))
            cases = _BY_NAME["cases"]
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
        for row in _rows(src, f"SELECT * FROM {table.name}{order}"):
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
        table = _BY_NAME["runs"]
        mapping: dict[int, int] = {}
        for row in _rows(src, "SELECT * FROM runs ORDER BY id"):
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
        table = _BY_NAME["results"]
        mapping: dict[int, int] = {}
        has_links = {t for t in LINKS if t in _tables(src)} == set(LINKS)
        for row in _rows(src, "SELECT * FROM results ORDER BY id"):
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


#: The dates merge keeps from an input (a run's start and end, when an answer, a verdict or a call was made):
#: one after this machine's clock (as `review import` allows for another machine's drift) refuses the input,
#: since "latest" decides which run the leaderboard shows and which manifest review opens on.
DATED = (("runs", "started_at"), ("runs", "finished_at"), ("responses", "created_at"), ("turns", "created_at"),
         ("judgements", "created_at"), ("results", "created_at"), ("calls", "sent_at"), ("calls", "completed_at"),
         ("generations", "created_at"))


#: An ISO date and time as the store writes them (`2026-11-27T21:31:54+00:00`; older releases wrote a space).
_ISO = "[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9][T ][0-9][0-9]:[0-9][0-9]:[0-9][0-9]*"


def _refuse_future(src, name: str) -> None:
    """Every date merge keeps must be text in the store's ISO form and not after this machine's clock. A date
    of another type (a BLOB sorts above every text in SQLite) or shape would win "latest" as surely as 2099."""
    limit = (datetime.now(timezone.utc) + CLOCK_SKEW).strftime("%Y-%m-%dT%H:%M:%S")
    future, odd = [], []
    for table, col in DATED:
        if table not in _tables(src) or col not in _columns(src, table):
            continue
        n = src.execute(f"SELECT count(*) FROM {table} WHERE typeof({col}) = 'text' AND {col} GLOB ? "
                        f"AND substr({col}, 1, 19) > ?", [_ISO, limit]).fetchone()[0]
        if n:
            future.append(f"{table}.{col} of {n} row(s)")
        n = src.execute(f"SELECT count(*) FROM {table} WHERE {col} IS NOT NULL AND "
                        f"(typeof({col}) != 'text' OR {col} NOT GLOB ?)", [_ISO]).fetchone()[0]
        if n:
            odd.append(f"{table}.{col} of {n} row(s)")
    why = ([f"dated in the future (after {limit} UTC): {', '.join(future)}"] if future else []) + \
          ([f"dated with a value that is not an ISO date: {', '.join(odd)}"] if odd else [])
    if why:
        raise EditedInput(f"{name}: refused: {'; '.join(why)}; nothing was written",
                          hint="a database a run wrote has no such dates: merge the unedited one "
                               "(or fix this machine's clock)")


class _Db:
    """The `.conn`/`.execute` of a sqlite_utils Database over a plain connection, for the store's writers."""

    def __init__(self, conn):
        self.conn = conn

    def execute(self, sql, params=()):
        return self.conn.execute(sql, params)


#: Run statuses from the most finished to the least: two parts of a run are as finished as the lesser.
_FINISHED_ORDER = ("completed", "partial", "stopped_cost", "interrupted", "running", "failed")


def least_finished(a: str, b: str) -> str:
    if a == b or "preview" in (a, b):
        return a
    return max(a, b, key=lambda s: _FINISHED_ORDER.index(s) if s in _FINISHED_ORDER else len(_FINISHED_ORDER))


def completed_if_whole(conn, run: dict) -> str:
    """`completed` for a run whose parts make the whole (`shard` NULL, every part finished) and whose every
    case of the manifest has a result for every sample; `partial` for finished parts that do not."""
    if run["status"] not in ("completed", "partial"):
        return run["status"]
    have = conn.execute("SELECT count(*) FROM results WHERE run_id = ?", [run["id"]]).fetchone()[0]
    expected = conn.execute("SELECT count(*) FROM manifest_cases WHERE manifest_hash = ?",
                            [run["manifest_hash"]]).fetchone()[0] * (run["samples"] or 1)
    whole = run.get("shard") is None and have >= expected and not run["n_awaiting_judge"]
    return "completed" if whole else "partial"


# ---------------------------------------------------------------------------------------------------
# OUT: built in a temporary copy, renamed into place


def _copy_out(out: Path, dest: Path) -> None:
    """OUT's content into `dest` (OUT's WAL checkpointed first, so that nothing of it is left beside the
    file the rename replaces)."""
    check_file(out, allow_empty=True)
    conn = connect(out)
    try:
        conn.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        target = sqlite3.connect(str(dest))
        conn.conn.backup(target)
        target.close()
    finally:
        conn.conn.close()


def _still_open(out: Path) -> bool:
    return any(Path(f"{out}{suffix}").exists() for suffix in ("-wal", "-shm"))


def merge(out: Path | str, inputs: Sequence[Path | str]) -> Merged:
    """Merge `inputs` into `out` (created when absent); raises MergeConflict (nothing written) on a conflict."""
    out = Path(out)
    inputs = [Path(p) for p in inputs]
    if out.is_symlink():
        raise safewrite.UnsafeWrite(f"refusing to write {out}: it is a symbolic link; nothing was written",
                                    hint="name the database file itself")
    # OUT given as an input too is merged into itself already (merging is idempotent): skipped, as opening
    # it read-only beside the merge would leave its -wal/-shm for the merge to blame on "another process"
    itself = [p for p in inputs if out.exists() and p.exists() and p.samefile(out)]
    inputs = [p for p in inputs if p not in itself]
    merged = Merged(out=out, inputs=inputs, itself=itself)
    safewrite.make_dir(out.parent)
    with RunLock(out, "helmbench merge"):
        work = safewrite.fresh_dir(out.parent, ".merge-")
        scratch = Path(tempfile.mkdtemp(prefix="helmbench-merge-"))
        try:
            target = work / out.name
            if out.exists() and out.stat().st_size:
                _copy_out(out, target)
            db = open_db(target)
            conn = db.conn
            merger = _Merger(conn, str(out), merged)
            try:
                for path in inputs:
                    src = _open_input(path, scratch, merged)
                    try:
                        src.execute("BEGIN")  # one consistent snapshot, even if a run writes it meanwhile
                        with conn:
                            merger.merge_input(src, str(path))
                    finally:
                        src.close()
                if merger.conflicts:
                    raise _refusal(merger.conflicts)
                merger.refresh_runs()
                with conn:
                    merger.settle_catalog()
                conn.execute("PRAGMA journal_mode = DELETE")  # the finished file stands alone
            finally:
                conn.close()
            if out.exists() and _still_open(out):
                raise StorageError(f"{out} is open in another process (its -wal/-shm files are there): nothing was "
                                   "written", hint="stop the process reading it (`helmbench serve`, a report) and "
                                                   "merge again")
            safewrite.place(target, out)
        except sqlite3.Error as exc:
            raise explain(exc, db=out) from None
        finally:
            shutil.rmtree(work, ignore_errors=True)
            shutil.rmtree(scratch, ignore_errors=True)
    return merged


def _refusal(conflicts: list[Conflict]) -> MergeConflict:
    lines = [str(c) for c in conflicts[:SHOWN]]
    if len(conflicts) > SHOWN:
        lines.append(f"… and {len(conflicts) - SHOWN} more")
    return MergeConflict(
        f"cannot merge: {len(conflicts)} row(s) have the same key but different content; nothing was written\n  "
        + "\n  ".join(lines),
        hint="these databases answered the same requests differently (two unsharded runs of one model, or a "
             "shard run twice with a changed judge): merge only one of them, or run the missing parts with "
             "--shard K/N into separate databases")


__all__ = ["Conflict", "DERIVED", "Merged", "MergeConflict", "TABLES", "merge", "unhandled_tables"]
