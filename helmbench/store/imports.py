"""Imported conversations (`helmbench import transcripts`): outputs of a named source, never asked by HELMBench.

Why a table of its own: an imported conversation is stored as the output of a run like any other (its turns
in `turns`, a one-exchange answer in `responses`, judged by the judge phase into `judgements` and `results`),
so every reader, the judge, the ledger and `merge` take it as they take a run's. What only an import has is
kept here: which line of which file brought it, under which key (source, model label, the conversation's
own id), its content hash (a re-import of the same conversation is the same row; a different conversation
under the same key is refused, naming both), and the provenance the file gave (when it happened, a free-text
note). Its run has status `imported` (store.runs.IMPORTED): the leaderboard reads finished statuses only, so
an imported run is never ranked beside live runs unless the publisher asks for it.

Tables (migration 13):
- `imports`: (`source`, `model_label`, `conversation`) PK; `content_hash` (sha256 of the conversation's
  canonical messages, case or scenario and model label); `run_id` → runs; `case_id`, `case_hash` (the case
  it was judged as), `scenario`; `sample` (its place among the run's conversations of that case);
  `output` (`transcript` or `answer`); `opening_json` (its system messages and first user message, as the
  judge was shown them: a page shows them, since the case's own prompt is not what was said); `occurred_at`, `provenance` (as the file gave them); `file`, `line`
  (where it was first read; its file name only); `imported_at`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Iterable, NamedTuple

if TYPE_CHECKING:  # annotations only: importing sqlite_utils costs ~0.25 s (it loads pandas)
    import sqlite_utils

from helmbench.store.responses import RESPONSE_COLUMNS, UPSERT_RESPONSE
from helmbench.store.turns import TURN_COLUMNS, UPSERT_TURN

DDL = """
CREATE TABLE imports (
  source TEXT NOT NULL,
  model_label TEXT NOT NULL,
  conversation TEXT NOT NULL,
  content_hash TEXT NOT NULL,
  run_id INTEGER NOT NULL REFERENCES runs(id),
  case_id TEXT NOT NULL,
  case_hash TEXT NOT NULL,
  scenario TEXT NOT NULL,
  sample INTEGER NOT NULL,
  output TEXT NOT NULL CHECK (output IN ('transcript', 'answer')),
  opening_json TEXT NOT NULL,
  occurred_at TEXT,
  provenance TEXT,
  file TEXT NOT NULL,
  line INTEGER NOT NULL,
  imported_at TEXT NOT NULL,
  PRIMARY KEY (source, model_label, conversation),
  UNIQUE (run_id, case_hash, sample)
);
CREATE INDEX idx_imports_run ON imports(run_id)
"""

#: The model id an imported source's conversations are stored under: `imported:NAME/LABEL`.
PREFIX = "imported:"

IMPORT_COLUMNS = ("source", "model_label", "conversation", "content_hash", "run_id", "case_id", "case_hash",
                  "scenario", "sample", "output", "opening_json", "occurred_at", "provenance", "file", "line", "imported_at")


def apply(db: sqlite_utils.Database) -> None:
    for statement in DDL.split(";"):
        if statement.strip():
            db.conn.execute(statement)


def model_id(source: str, label: str) -> str:
    """The `models.id` (and `runs.model`) of a source's model label."""
    return f"{PREFIX}{source}/{label}"


def is_imported(model: str) -> bool:
    return model.startswith(PREFIX)


def has_imports(conn) -> bool:
    return conn.execute("SELECT 1 FROM sqlite_master WHERE name = 'imports'").fetchone() is not None


def stored_imports(conn, keys: Iterable[tuple[str, str, str]]) -> dict[tuple[str, str, str], dict]:
    """{(source, model label, conversation id): its `imports` row} of the keys already stored."""
    if not has_imports(conn):
        return {}
    cur = conn.execute("SELECT * FROM imports")
    names = [d[0] for d in cur.description]
    wanted = set(keys)
    out = {}
    for row in cur:
        r = dict(zip(names, row))
        key = (r["source"], r["model_label"], r["conversation"])
        if key in wanted:
            out[key] = r
    return out


def used_samples(conn, run_id: int, case_hash: str) -> set[int]:
    if not has_imports(conn):
        return set()
    return {r[0] for r in conn.execute("SELECT sample FROM imports WHERE run_id = ? AND case_hash = ?",
                                       [run_id, case_hash])}


def import_rows(conn, run_ids: list[int]) -> dict[tuple[int, str, int], dict]:
    """{(run id, case id, sample): its `imports` row} of `run_ids` (the site marks each imported result)."""
    if not run_ids or not has_imports(conn):
        return {}
    cur = conn.execute(f"SELECT * FROM imports WHERE run_id IN ({','.join('?' * len(run_ids))})", run_ids)
    names = [d[0] for d in cur.description]
    return {(r["run_id"], r["case_id"], r["sample"]): r for r in (dict(zip(names, row)) for row in cur)}


class ImportRun(NamedTuple):
    """The run row an imported source's model label is stored under (status `imported`)."""

    manifest_hash: str
    model: str
    settings_json: str
    settings_hash: str
    n_cases: int
    version: str
    started_at: str


class Imported(NamedTuple):
    """One conversation to store: its `imports` row (without `run_id`), and its turns or its answer."""

    row: dict
    run: ImportRun
    turns: list[dict]  # turns rows (without run_id) for a transcript
    response: dict | None  # a responses row (without run_id) for a one-exchange answer


def _run_id(conn, run: ImportRun) -> int:
    row = conn.execute(
        "INSERT INTO runs (manifest_hash, model, settings_json, settings_hash, samples, started_at, finished_at, "
        "status, n_cases, helmbench_version) VALUES (?, ?, ?, ?, 1, ?, ?, 'imported', ?, ?) "
        "ON CONFLICT(manifest_hash, model, settings_hash) DO UPDATE SET finished_at = excluded.finished_at "
        "RETURNING id",
        [run.manifest_hash, run.model, run.settings_json, run.settings_hash, run.started_at, run.started_at,
         run.n_cases, run.version]).fetchone()
    return row[0]


def write_imports(db: sqlite_utils.Database, items: list[Imported]) -> dict[str, int]:
    """Store every conversation of one file in one transaction (nothing half-imported); returns
    {model id: run id}. Rows already stored under the same content are left as they are."""
    conn = db.conn
    runs: dict[str, int] = {}
    with conn:
        for item in items:
            if item.run.model not in runs:
                runs[item.run.model] = _run_id(conn, item.run)
            run_id = runs[item.run.model]
            for turn in item.turns:
                values = {"stop": 0, "attempts": 1, **turn, "run_id": run_id}
                conn.execute(UPSERT_TURN, [values.get(c) for c in TURN_COLUMNS]).fetchall()
            if item.response is not None:
                values = {"attempts": 1, **item.response, "run_id": run_id}
                conn.execute(UPSERT_RESPONSE, [values.get(c) for c in RESPONSE_COLUMNS]).fetchall()
            row = {**item.row, "run_id": run_id}
            conn.execute(f"INSERT OR IGNORE INTO imports ({', '.join(IMPORT_COLUMNS)}) VALUES "
                         f"({', '.join('?' * len(IMPORT_COLUMNS))})", [row.get(c) for c in IMPORT_COLUMNS])
        for run_id in runs.values():
            # samples = the most conversations stored of one case: coverage (results over cases x samples) must
            # not count a case's several conversations as other cases measured (40 of one case: not 40 of 4)
            conn.execute("UPDATE runs SET samples = max(samples, (SELECT coalesce(max(sample), 0) + 1 FROM imports "
                         "WHERE run_id = ?)) WHERE id = ?", [run_id, run_id])
    return runs
