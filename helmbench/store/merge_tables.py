"""How each table of results.db merges: its content key, the columns compared under it, the rule by which one row
yields to another, and the order tables point at each other (`TABLES`); which tables are derived and not merged.

Why a module: this catalogue is the contract between the schema and `helmbench merge` (store/merge.py): every
table a migration adds must be named here or in `DERIVED` (tests/store/test_store_merge.py checks a fresh
database), and the copy (store/merge_rows.py) and the input checks (store/merge_inputs.py) read it, never the
other way round.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Iterable, Sequence

from helmbench.store.catalog import CATALOG_TABLES


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
BY_NAME = {t.name: t for t in TABLES}
#: A result's links: replaced with their result, compared as part of it.
LINKS = ("result_judgements", "result_turns", "checkpoint_verdicts")

#: Tables that are not merged row by row: the schema's own record (OUT's, at the current version), the
#: full-text index of responses (kept by triggers as responses are inserted) and a snapshot's scores
#: (recomputed whenever a snapshot is taken).
DERIVED = ("migrations", "run_scores")
DERIVED_PREFIXES = ("responses_fts", "sqlite_")


def unhandled_tables(names: Iterable[str]) -> list[str]:
    """The tables among `names` that merge does not know (neither in TABLES nor derived)."""
    return sorted(n for n in names if n not in BY_NAME and n not in DERIVED and not n.startswith(DERIVED_PREFIXES))


def table_names(conn) -> list[str]:
    return [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]


def column_names(conn, table: str) -> list[str]:
    return [r[1] for r in conn.execute(f'PRAGMA table_info("{table}")')]


def select_rows(conn, sql: str, params: Sequence = ()) -> list[dict]:
    cur = conn.execute(sql, list(params))
    names = [d[0] for d in cur.description]
    return [dict(zip(names, r)) for r in cur.fetchall()]
