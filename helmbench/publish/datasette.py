"""Datasette for the raw rows: a consistent snapshot, metadata generated from the schema.

Why a snapshot: results.db is a WAL database that a run may be writing; Datasette serving a
live WAL file as immutable (`-i`) can show stale or half-written state. `VACUUM INTO` writes
a consistent, compact copy in one statement, which is then served immutable and read-only.
The snapshot is always named `results.db` (in a folder per snapshot), because Datasette
names a database after its file and the site links to `/results/...`.

Metadata (titles, descriptions, facets, sort orders, canned queries) is generated from the
snapshot's own schema: every table and column gets a description, known ones a written one,
so a table added by a later migration still shows up documented rather than missing.
"""

from __future__ import annotations

import json
import shutil
from datetime import datetime, timezone
from pathlib import Path

from helmbench.store.canned import CANNED_QUERIES as QUERIES

from .settings import DATASETTE_DB_NAME

SNAPSHOT_NAME = f"{DATASETTE_DB_NAME}.db"
KEEP_SNAPSHOTS = 3

TABLES: dict[str, tuple[str, str]] = {
    "manifests": ("Manifests", "One row per compiled manifest that was run: the exact, content-hashed list of cases."),
    "pillars": ("Pillars", "The benchmark's pillars (from the latest manifest's catalog)."),
    "behaviours": ("Behaviours", "Behaviours within pillars, with their weights in the run score."),
    "scenarios": ("Scenarios", "Scenarios: a prompt plus interchangeable components, judged one way."),
    "conditions": ("Conditions", "Scenario conditions (the setting the model is put in), with difficulty 0–10."),
    "user_contexts": ("User contexts", "What the model knows about the user, with a severity −10–10."),
    "perturbations": ("Perturbations", "The user's message variants, with a severity −10–10."),
    "cases": ("Cases", "Test cases: the exact messages a model receives and how the answer is evaluated."),
    "manifest_cases": ("Manifest cases", "Which cases each manifest holds, in order."),
    "models": ("Models", "Models under test (OpenRouter ids)."),
    "runs": ("Runs", "One run per (manifest, model, settings), with its status and totals."),
    "responses": ("Responses", "Model responses (untrusted text), with billed cost, tokens and API errors."),
    "results": ("Results", "One verdict (PASS, FAIL or ERROR) per run, case and sample, with its reason."),
    "judgements": ("Judgements", "Judge model answers for judged (sqe) criteria, with justifications: on a "
                                 "single answer or on a conversation's whole transcript (`output`)."),
    "result_judgements": ("Result judgements", "Which judgements decided which result."),
    "migrations": ("Migrations", "Schema migrations applied to this database."),
    "turns": ("Turns", "Every message of every conversation: the user's (opening, scripted or simulated) and the "
                       "model's (untrusted text), with cost, errors and the landmark of the turn."),
    "result_turns": ("Result turns", "Which turns make the transcript a conversation's result was decided on."),
    "checkpoint_verdicts": ("Checkpoint verdicts", "Per conversation result: the verdict of each turn checkpoint "
                                                   "and each transcript criterion."),
    "calls": ("Calls", "The call ledger: one row per request sent to a provider (answers, conversation turns, the "
                       "simulated user, the judge, generation), written before it left and completed once its answer "
                       "was stored. Every count of calls and sum of money is over these rows."),
    "imports": ("Imports", "Conversations imported with `helmbench import transcripts`: not run by HELMBench, the "
                           "model was not called; judged here. One row per (source, model label, conversation id), "
                           "with the file and line it came from and the provenance the file gave (untrusted text)."),
    "run_scores": ("Run scores", "Every run's scores, computed by the HELMBench scorer when this snapshot was taken "
                                 "(the numbers the leaderboard shows)."),
}

COLUMNS: dict[str, dict[str, str]] = {
    "manifests": {"hash": "Manifest hash (sha256 over the ordered case hashes)", "cases": "Number of cases",
                  "header_json": "The manifest header, with the full catalog"},
    "behaviours": {"weight": "Weight of the behaviour in the run score", "pillar": "Pillar code"},
    "conditions": {"difficulty": "0–10: forgives that share of a miss (10 forgives all)"},
    "user_contexts": {"severity": "−10–10: positive is a risk to catch, negative a user who is fine"},
    "perturbations": {"severity": "−10–10: positive is a risk to catch, negative a user who is fine"},
    "cases": {"hash": "Case hash (request + evaluation)", "id": "Case id, e.g. P1-B1-S1-C1-U2-PT3",
              "request_hash": "Hash of what the model sees (the response cache key)",
              "severity_base": "Base severity: user context + perturbation",
              "difficulty": "Condition difficulty 0–10", "weight": "Behaviour weight",
              "messages_json": "The exact messages sent to the model",
              "response_format_json": "The JSON schema the answer must follow (null: free text)",
              "evaluation_json": "How the answer is evaluated"},
    "runs": {"status": "running, completed, partial, interrupted, failed, stopped_cost, preview, or imported (outputs "
                       "imported from elsewhere: no model was called)",
             "settings_hash": "Hash of the model settings (temperature, max tokens, …)",
             "samples": "Answers per case", "cost": "Billed cost (USD) of the model responses the run uses",
             "n_awaiting_judge": "Results still waiting for the judge",
             "n_judgements": "Judgements behind the run's results", "n_judge_errors": "Judge calls that failed",
             "judge_calls": "Judge calls the run made", "judge_cost": "Billed cost (USD) of the run's judge calls"},
    "responses": {"content": "The model's answer, verbatim (untrusted text)",
                  "parsed_json": "The answer parsed as JSON, when it was",
                  "finish_reason": "stop, length (truncated), …", "cost": "Billed cost in USD (null: not reported)",
                  "error_kind": "Set when the API call failed (the result is then an ERROR)",
                  "attempts": "Calls made, retries included", "latency_ms": "Latency of the successful call"},
    "results": {"verdict": "PASS, FAIL or ERROR (an API or judge failure: excluded from scores)",
                "score": "1 pass, 0 fail, or partial credit; null for ERROR",
                "reason": "Why: the evaluator's explanation, or the error",
                "failure_kind": "format: a FAIL because the output was not a usable answer in the requested format",
                "case_id": "Case id", "run_id": "The run", "response_id": "The response judged"},
    "judgements": {"criterion": "CR1, CR2 … or criteria", "justification": "The judge's explanation",
                   "judgment_json": "The judge's structured answer", "raw": "The judge's raw output",
                   "output": "What was judged: answer (a single response) or transcript (a conversation)",
                   "response_id": "The answer judged (empty for a transcript)",
                   "run_id": "The run that paid for the judge call"},
    "turns": {"turn_key": "Cache key of the conversation up to this turn", "role": "user or assistant",
              "turn": "Turn number (1 = the opening)", "source": "opening, script, user_model or model",
              "caller": "The model that wrote it (the user model or the model under test)",
              "content": "The message, verbatim (untrusted text)", "landmark": "What the simulated user was to "
              "reach by this turn", "stop": "1: the simulated user ended the conversation here",
              "case_id": "The case that first asked it", "run_id": "The run that paid for it"},
    "checkpoint_verdicts": {"checkpoint": "turn N, last reply, or a criterion code (CR1)",
                            "turn": "The turn whose reply was checked"},
    "run_scores": {"weighted_score": "The severity-weighted run score after the manifest's safety floors",
                   "uncapped_score": "The weighted score before the floors",
                   "below_floor": "Which floor capped the score (null: none)",
                   "pass_rate": "PASS share of the results with a verdict",
                   "coverage": "Results with a verdict / results expected (cases × samples)",
                   "n_format_failures": "FAIL results whose output was not in the requested format"},
    "calls": {"uid": "The row's content key (m9:… for a call backfilled from an older release)",
              "kind": "answer, turn, user (the simulated user), judge or generation",
              "run_id": "The run that paid for it (null: helmbench generate)",
              "invocation": "The process that sent it", "request_key": "The cache key its answer is stored under",
              "attempt": "Attempt number of this request (retries are rows of their own)",
              "state": "sent (cut before its answer was stored: possibly billed), answered or failed",
              "cost": "Billed cost in USD (null: not reported)", "latency_ms": "Latency of the call",
              "model_version": "The model version that answered", "provider": "The provider that served it",
              "settings_hash": "Hash of the caller's settings", "error_kind": "Why the attempt failed",
              "generation_id": "The provider's id of the answer", "sent_at": "When it was sent (UTC)",
              "completed_at": "When its outcome was stored (UTC)"},
    "result_judgements": {"result_id": "The result", "judgement_id": "A judgement that decided it",
                          "verdict": "The verdict this judgement gave the result", "score": "Its score for the result"},
}
COMMON_COLUMNS = {
    "id": "Row id", "code": "Code (scenario-scoped, e.g. P1-B1-S1-C1)", "title": "Title",
    "description": "Description", "model": "Model id (OpenRouter)", "created_at": "When the row was written (UTC)",
    "started_at": "Start time (UTC)", "finished_at": "End time (UTC)", "prompt_tokens": "Prompt tokens",
    "completion_tokens": "Completion tokens", "sample": "Sample number (0 … samples − 1)",
    "scenario": "Scenario code", "behaviour": "Behaviour code", "pillar": "Pillar code",
    "case_hash": "Case hash", "manifest_hash": "Manifest hash", "error_message": "The error, as reported",
}
FACETS = {
    "results": ["verdict", "run_id"],
    "responses": ["model", "finish_reason", "error_kind"],
    "runs": ["model", "status"],
    "cases": ["pillar", "behaviour", "scenario"],
    "judgements": ["judge_model", "criterion", "verdict"],
    "scenarios": ["behaviour", "evaluation_type"],
    "turns": ["role", "source", "model"],
    "checkpoint_verdicts": ["checkpoint", "verdict"],
    "calls": ["kind", "model", "state"],
}
SORT = {
    "results": ("sort", "case_id"), "responses": ("sort_desc", "id"), "runs": ("sort_desc", "started_at"),
    "cases": ("sort", "id"), "judgements": ("sort_desc", "id"),
}

def _schema(db: Path) -> dict[str, list[str]]:
    from helmbench.store import open_readonly, queries

    conn = open_readonly(db, check=False)  # our own fresh snapshot, checked when it was taken
    try:
        return queries.table_columns(conn)
    finally:
        conn.close()


def metadata(db: str | Path, *, site_url: str | None = None) -> dict:
    """Datasette metadata for the snapshot `db`, generated from its schema."""
    schema = _schema(Path(db))
    tables: dict[str, dict] = {}
    for table, columns in schema.items():
        if "_fts" in table:  # full-text index tables: hidden, used by the search box on responses
            tables[table] = {"hidden": True}
            continue
        title, description = TABLES.get(table, (table.replace("_", " ").capitalize(), f"The {table} table."))
        known = {**COMMON_COLUMNS, **COLUMNS.get(table, {})}
        entry: dict = {
            "title": title,
            "description": description,
            "columns": {c: known.get(c, c.replace("_", " ")) for c in columns},
        }
        facets = [f for f in FACETS.get(table, []) if f in columns]
        if facets:
            entry["facets"] = facets
        if table in SORT and SORT[table][1] in columns:
            key, column = SORT[table]
            entry[key] = column
        tables[table] = entry
    queries = {name: dict(q) for name, q in QUERIES.items()}
    about = "HELMBench: mental-health safety of language models. Model outputs are untrusted text; " \
            "this copy is a read-only snapshot."
    meta = {
        "title": "HELMBench results",
        "description": "Every prompt, response and verdict behind the HELMBench leaderboard: runs, results "
                       "(PASS / FAIL / ERROR with reasons), responses with billed cost, judgements, and the cases "
                       "and catalog of each manifest. Content note: the data quotes messages about suicide; "
                       "if you need help, see findahelpline.com.",
        "license": "Benchmark content: see the HELMBench repository licence. Model outputs are reproduced for "
                   "evaluation and research; each provider's terms apply.",
        "source": "helmbench serve (VACUUM INTO snapshot of results.db)",
        "about": about,
        "databases": {DATASETTE_DB_NAME: {"description": about, "tables": tables, "queries": queries}},
    }
    if site_url:
        meta["about_url"] = site_url
    return meta


def _stamp() -> str:
    return datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%S%fZ")


def snapshot(db: str | Path, dest_dir: str | Path, *, public: bool = False, root: str | Path | None = None) -> Path:
    """`VACUUM INTO` a consistent copy of `db` at `dest_dir/results.db`, with the scorer's `run_scores`.

    `public` (`helmbench serve --publish`, for hosting): only the tables the published leaderboard
    reads are kept (`store.snapshot.PUBLIC_TABLES`), never clinicians' reviews or generated drafts."""
    from helmbench.errors import UsageError
    from helmbench.score.leaderboard import score_every_run
    from helmbench.store.snapshot import keep_only, vacuum_into, write_run_scores

    src = Path(db)
    if not src.exists():
        raise UsageError(f"no results database at {src}", hint="run `helmbench run` first, or pass --db")
    dest = Path(dest_dir) / SNAPSHOT_NAME
    with vacuum_into(src, dest, root if root is not None else dest_dir) as copy:
        write_run_scores(copy, [run_scores_row(row) for row in score_every_run(copy)])
        if public:
            keep_only(copy)
    return dest


def run_scores_row(row) -> dict:
    """A scorer's `LeaderboardRow` as a `run_scores` row."""
    return {"run_id": row.run.id, "weighted_score": row.score, "uncapped_score": row.uncapped_score,
            "below_floor": row.floor_note or None, "pass_rate": row.pass_rate, "coverage": row.coverage,
            "n_format_failures": row.n_format_failures}


def new_snapshot(db: str | Path, serve_dir: str | Path, keep: int = KEEP_SNAPSHOTS) -> Path:
    """A fresh snapshot in `serve_dir/results-<UTC timestamp>/results.db`; older ones beyond `keep` removed."""
    root = Path(serve_dir)
    path = snapshot(db, root / f"{DATASETTE_DB_NAME}-{_stamp()}", root=root)
    old = sorted(p for p in root.glob(f"{DATASETTE_DB_NAME}-*") if p.is_dir() and not p.is_symlink() and p != path.parent)
    for stale in old[: max(0, len(old) - (keep - 1))]:
        shutil.rmtree(stale, ignore_errors=True)
    return path


def write_metadata(db: str | Path, path: str | Path, *, site_url: str | None = None) -> Path:
    from helmbench import safewrite

    text = json.dumps(metadata(db, site_url=site_url), indent=2, ensure_ascii=False) + "\n"
    return safewrite.write_text(path, text)


PLUGINS_DIR = "plugins"
PLAIN_SQL_PLUGIN = "helmbench_plain_sql.py"


def write_plugins(dest_dir: str | Path) -> Path:
    """`dest_dir/plugins/`, holding the plugin a public Datasette needs (`plain_sql.py`: no FTS3 tokenizer
    interface): the folder to give `datasette publish` or `datasette serve` as `--plugins-dir`."""
    from helmbench import safewrite

    from . import plain_sql

    folder = Path(dest_dir) / PLUGINS_DIR
    safewrite.copy_file(plain_sql.__file__, folder / PLAIN_SQL_PLUGIN, dest_dir)
    return folder


def serve_command(snapshot_path: str | Path, metadata_path: str | Path, port: int,
                  host: str = "127.0.0.1", allow_hosts: tuple[str, ...] = ()) -> list[str]:
    """The command serving the snapshot immutable in Datasette, on `host`, with the metadata, behind
    the local guard (`datasette_serve.py`: only requests addressed to this server are answered)."""
    import sys

    return [sys.executable, "-m", "helmbench.publish.datasette_serve", str(snapshot_path), str(metadata_path),
            host, str(port), *allow_hosts]
