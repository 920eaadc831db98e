"""Conversations in the store: every turn as it completes, the transcripts results were decided on, checkpoint verdicts.

Why a table of turns rather than more rows in `responses`: a turn belongs to one conversation
of one model (the simulated user's next message depends on the model's replies), its key is a
chain over the conversation so far (manifest/conversation.turn_keys), and both sides of the
conversation are stored, so a transcript is one indexed read. A turn is keyed by
(`turn_key`, `role`, `model`, `settings_hash`, `sample`); like a response, a successful turn is
never overwritten and an error is replaced in place by a later success.

Tables (migration 4):
- `turns`: one row per user or assistant message. `source` says who wrote it: `opening` (the
  composed turn 1), `script`, `user_model` (the simulated user, with its call's cost) or
  `model` (the model under test). `landmark` is the landmark the simulated user was to reach by
  that turn, shown beside its message; `stop` marks the message that ended the conversation.
- `result_turns`: which turns make the transcript a result was decided on (a transcript is
  read through its result, since an edited conversation shares its first turns with the old one).
- `checkpoint_verdicts`: per result of a conversation case, the verdict of each checkpoint
  (`turn 3`) and each transcript criterion (`CR1`).
- `transcript_judgements` (and migration 8's links): the judge's answers on transcripts, until
  migration 10 moved them into `judgements` (`output = 'transcript'`): one judged output.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Iterable, NamedTuple

if TYPE_CHECKING:  # annotations only: importing sqlite_utils costs ~0.25 s (it loads pandas)
    import sqlite_utils

from helmbench.store.responses import RESULT_COLUMNS, UPSERT_RESULT, upsert_replacing_errors

DDL = """
CREATE TABLE turns (
  id INTEGER PRIMARY KEY,
  turn_key TEXT NOT NULL,
  role TEXT NOT NULL CHECK (role IN ('user', 'assistant')),
  model TEXT NOT NULL,
  settings_hash TEXT NOT NULL,
  sample INTEGER NOT NULL DEFAULT 0,
  turn INTEGER NOT NULL,
  case_id TEXT NOT NULL,
  request_hash TEXT NOT NULL,
  run_id INTEGER REFERENCES runs(id),
  source TEXT NOT NULL,
  caller TEXT,
  content TEXT,
  reasoning TEXT,
  parsed_json TEXT,
  finish_reason TEXT,
  landmark TEXT,
  stop INTEGER NOT NULL DEFAULT 0,
  latency_ms INTEGER,
  prompt_tokens INTEGER,
  completion_tokens INTEGER,
  cost REAL,
  provider TEXT,
  model_version TEXT,
  generation_id TEXT,
  attempts INTEGER NOT NULL DEFAULT 1,
  error_kind TEXT,
  error_message TEXT,
  created_at TEXT NOT NULL,
  UNIQUE (turn_key, role, model, settings_hash, sample)
);
CREATE INDEX idx_turns_case ON turns(case_id, model, sample, turn);
CREATE INDEX idx_turns_request ON turns(request_hash, model, settings_hash, sample);
CREATE INDEX idx_turns_run ON turns(run_id);

CREATE TABLE checkpoint_verdicts (
  result_id INTEGER NOT NULL REFERENCES results(id),
  checkpoint TEXT NOT NULL,
  turn INTEGER,
  title TEXT,
  verdict TEXT NOT NULL CHECK (verdict IN ('PASS', 'FAIL', 'ERROR')),
  score REAL,
  reason TEXT,
  PRIMARY KEY (result_id, checkpoint)
);

CREATE TABLE result_turns (
  result_id INTEGER NOT NULL REFERENCES results(id),
  turn_id INTEGER NOT NULL REFERENCES turns(id),
  PRIMARY KEY (result_id, turn_id)
);
CREATE INDEX idx_result_turns_turn ON result_turns(turn_id);

CREATE TABLE transcript_judgements (
  id INTEGER PRIMARY KEY,
  judge_request_hash TEXT NOT NULL,
  judge_model TEXT NOT NULL,
  judge_settings_hash TEXT NOT NULL,
  run_id INTEGER REFERENCES runs(id),
  criterion TEXT NOT NULL,
  content TEXT,
  finish_reason TEXT,
  cost REAL,
  latency_ms INTEGER,
  prompt_tokens INTEGER,
  completion_tokens INTEGER,
  attempts INTEGER NOT NULL DEFAULT 1,
  error_kind TEXT,
  error_message TEXT,
  created_at TEXT NOT NULL,
  UNIQUE (judge_request_hash, judge_model, judge_settings_hash)
)
"""


def apply(db: sqlite_utils.Database) -> None:
    for statement in DDL.split(";"):
        if statement.strip():
            db.conn.execute(statement)


TURN_COLUMNS = (
    "turn_key", "role", "model", "settings_hash", "sample", "turn", "case_id", "request_hash", "run_id", "source",
    "caller", "content", "reasoning", "parsed_json", "finish_reason", "landmark", "stop", "latency_ms", "prompt_tokens",
    "completion_tokens", "cost", "provider", "model_version", "generation_id", "attempts", "error_kind",
    "error_message", "created_at",
)
_TURN_KEY = ("turn_key", "role", "model", "settings_hash", "sample")
UPSERT_TURN = upsert_replacing_errors("turns", TURN_COLUMNS, _TURN_KEY)

CHECKPOINT_COLUMNS = ("result_id", "checkpoint", "turn", "title", "verdict", "score", "reason")


class TurnWrite(NamedTuple):
    """One turn to commit."""

    turn: dict


class Transcript(NamedTuple):
    """What a conversation's result was decided on: the verdict of each of its checkpoints and
    criteria, and its turns ((turn_key, role) of `model`/`settings_hash`)."""

    checkpoints: list[dict]
    turns: list[tuple[str, str]]
    model: str
    settings_hash: str
    sample: int | None = None  # the sample its turns are stored under (None: the result's own sample)


class SessionRestart(NamedTuple):
    """A conversation with a stateful service that was cut mid-way starts again: the service's session is
    gone, so its stored turns cannot be continued. They are marked (error_kind `session_restarted`, their
    text kept until the new turn takes its place) so the conversation's new turns may replace them."""

    keys: list[str]
    model: str
    settings_hash: str
    sample: int


RESTARTED = "session_restarted"
RESTART_MESSAGE = ("the stateful service's session was lost when the run stopped mid-conversation: the conversation "
                   "started again")


class VerdictWrite(NamedTuple):
    """A conversation case's result decided without the judge, and its transcript, committed together
    (a judged one is written by the judge phase: `store.judgements.JudgedCase`)."""

    result: dict
    transcript: Transcript


def link_transcript(conn, result_id: int, sample: int, t: Transcript) -> None:
    """Replace a result's checkpoint verdicts and the turns it was decided on."""
    conn.execute("DELETE FROM checkpoint_verdicts WHERE result_id = ?", [result_id])
    conn.executemany(
        f"INSERT INTO checkpoint_verdicts ({', '.join(CHECKPOINT_COLUMNS)}) VALUES "
        f"({', '.join('?' * len(CHECKPOINT_COLUMNS))})",
        [[result_id, *(cp.get(c) for c in CHECKPOINT_COLUMNS[1:])] for cp in t.checkpoints])
    conn.execute("DELETE FROM result_turns WHERE result_id = ?", [result_id])
    if t.sample is not None:  # a conversation played by several simulated users: see manifest.conversation.played
        sample = t.sample
    for key, role in t.turns:
        conn.execute("INSERT OR IGNORE INTO result_turns SELECT ?, id FROM turns WHERE turn_key = ? "
                     "AND role = ? AND model = ? AND settings_hash = ? AND sample = ?",
                     [result_id, key, role, t.model, t.settings_hash, sample])


def write_conversation_batch(db: sqlite_utils.Database, writes: Iterable) -> int:
    """Commit turns and verdicts in one transaction; returns how many were written."""
    conn = db.conn
    n = 0
    with conn:
        for w in writes:
            if isinstance(w, TurnWrite):
                turn = {"stop": 0, "attempts": 1, **{k: v for k, v in w.turn.items() if v is not None}}
                conn.execute(UPSERT_TURN, [turn.get(c) for c in TURN_COLUMNS]).fetchall()
            elif isinstance(w, SessionRestart):
                conn.execute(
                    "UPDATE turns SET error_kind = ?, error_message = ? WHERE model = ? AND settings_hash = ? "
                    f"AND sample = ? AND error_kind IS NULL AND turn_key IN ({', '.join('?' * len(w.keys))})",
                    [RESTARTED, RESTART_MESSAGE, w.model, w.settings_hash, w.sample, *w.keys])
            else:
                res = w.result
                rid = conn.execute(UPSERT_RESULT + " RETURNING id", [res.get(c) for c in RESULT_COLUMNS]).fetchone()[0]
                conn.execute("DELETE FROM result_judgements WHERE result_id = ?", [rid])  # judged before, not now
                link_transcript(conn, rid, res["sample"], w.transcript)
            n += 1
    return n


def _rows(cur) -> list[dict]:
    names = [d[0] for d in cur.description]
    return [dict(zip(names, row)) for row in cur.fetchall()]


def stored_turns(db: sqlite_utils.Database, keys: list[str], model: str, settings_hash: str,
                 sample: int) -> dict[tuple[str, str], dict]:
    """{(turn_key, role): row} of the stored turns among `keys` for one model and sample."""
    if not keys:
        return {}
    cur = db.execute(
        f"SELECT * FROM turns WHERE model = ? AND settings_hash = ? AND sample = ? "
        f"AND turn_key IN ({', '.join('?' * len(keys))})", [model, settings_hash, sample, *keys])
    return {(r["turn_key"], r["role"]): r for r in _rows(cur)}


def result_transcript(db: sqlite_utils.Database, result_id: int) -> list[dict]:
    """The turns a result was decided on, in order (the user before the assistant within a turn)."""
    cur = db.execute("SELECT t.* FROM result_turns rt JOIN turns t ON t.id = rt.turn_id WHERE rt.result_id = ? "
                     "ORDER BY t.turn, t.role = 'assistant'", [result_id])
    return _rows(cur)


def checkpoint_verdicts(db: sqlite_utils.Database, result_id: int) -> list[dict]:
    cur = db.execute("SELECT * FROM checkpoint_verdicts WHERE result_id = ? ORDER BY turn IS NULL, turn, checkpoint",
                     [result_id])
    return _rows(cur)


def conversation_details(conn, run_ids: list[int]) -> dict[int, tuple[list[dict], list[dict]]]:
    """{result_id: (transcript, checkpoint verdicts)} of the conversation results of `run_ids`,
    in two queries (a site shows every result of the latest runs)."""
    out: dict[int, tuple[list[dict], list[dict]]] = {}
    if not run_ids or not conn.execute("SELECT 1 FROM sqlite_master WHERE name = 'result_turns'").fetchone():
        return out  # a database from before conversations
    marks = ",".join("?" * len(run_ids))
    cur = conn.execute(
        f"""SELECT rt.result_id, t.turn, t.role, t.source, t.caller, t.content, t.landmark, t.stop, t.finish_reason,
                   t.error_kind, t.error_message, t.cost
            FROM result_turns rt JOIN turns t ON t.id = rt.turn_id JOIN results res ON res.id = rt.result_id
            WHERE res.run_id IN ({marks}) ORDER BY rt.result_id, t.turn, t.role = 'assistant'""", run_ids)
    for row in _rows(cur):
        out.setdefault(row.pop("result_id"), ([], []))[0].append(row)
    cur = conn.execute(
        f"""SELECT cv.* FROM checkpoint_verdicts cv JOIN results res ON res.id = cv.result_id
            WHERE res.run_id IN ({marks}) ORDER BY cv.result_id, cv.turn IS NULL, cv.turn, cv.checkpoint""", run_ids)
    for row in _rows(cur):
        out.setdefault(row.pop("result_id"), ([], []))[1].append(row)
    return out


SERVED = """
SELECT t.model_version, t.provider, COUNT(*) FROM results r
JOIN result_turns rt ON rt.result_id = r.id JOIN turns t ON t.id = rt.turn_id
WHERE r.run_id = ? AND t.role = 'assistant' AND t.error_kind IS NULL
  AND t.turn = (SELECT MAX(t2.turn) FROM result_turns rt2 JOIN turns t2 ON t2.id = rt2.turn_id
                WHERE rt2.result_id = r.id AND t2.role = 'assistant' AND t2.error_kind IS NULL)
GROUP BY t.model_version, t.provider
"""


def served_conversations(conn, run_id: int) -> list[tuple]:
    """(model version, provider, results) of a run's conversation results, by the model's last reply:
    what served them, counted once per result like a single answer."""
    if not conn.execute("SELECT 1 FROM sqlite_master WHERE name = 'result_turns'").fetchone():
        return []
    return [tuple(r) for r in conn.execute(SERVED, [run_id]).fetchall()]
