"""Named queries over the call ledger (store/ledger.py): every count of calls and every sum of money.

Why here and nowhere else: the run's summary, its progress, `costs`, the API and Datasette used to
count calls each from their own tables, and a kind of call one of them forgot (a simulated user's
turn, a judgement of a transcript) made them disagree. A call is one row of `calls`; these queries
group those rows, so a number shown anywhere is a sum of rows one can list.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import NamedTuple, Sequence

from helmbench.store.queries.outputs import calls_behind, calls_counted

_SUMS = """kind, model, count(*), coalesce(sum(state = 'answered'), 0), coalesce(sum(state = 'failed'), 0),
       coalesce(sum(state = 'sent'), 0), sum(cost), coalesce(sum(cost IS NULL AND state = 'answered'), 0),
       coalesce(sum(prompt_tokens), 0), coalesce(sum(completion_tokens), 0)"""
_TOTALS = "SELECT " + _SUMS + " FROM calls WHERE {where} GROUP BY kind, model ORDER BY kind, model"


@dataclass(frozen=True, slots=True)
class CallTotals:
    """Ledger rows of one kind and model, summed. `unknown`: sent, never completed (a crash cut them;
    possibly billed). `cost` is None when no row of them was priced."""

    kind: str
    model: str
    calls: int
    answered: int
    failed: int
    unknown: int
    cost: float | None
    unpriced: int
    prompt_tokens: int
    completion_tokens: int


@dataclass
class Ledger:
    """The totals of a selection of ledger rows, by kind and model."""

    rows: list[CallTotals] = field(default_factory=list)

    def select(self, *, kinds: Sequence[str] | None = None, model: str | None = None) -> list[CallTotals]:
        return [r for r in self.rows if (kinds is None or r.kind in kinds) and (model is None or r.model == model)]

    def calls(self, **where) -> int:
        return sum(r.calls for r in self.select(**where))

    def failed(self, **where) -> int:
        return sum(r.failed for r in self.select(**where))

    def unknown(self, **where) -> int:
        return sum(r.unknown for r in self.select(**where))

    def unpriced(self, **where) -> int:
        return sum(r.unpriced for r in self.select(**where))

    def cost(self, **where) -> float | None:
        priced = [r.cost for r in self.select(**where) if r.cost is not None]
        return sum(priced) if priced else None

    def tokens(self, **where) -> tuple[int, int]:
        rows = self.select(**where)
        return sum(r.prompt_tokens for r in rows), sum(r.completion_tokens for r in rows)


def _ledger(conn, where: str, params: list | dict) -> Ledger:
    conn = getattr(conn, "conn", conn)  # a sqlite_utils Database or a plain connection
    if not conn.execute("SELECT 1 FROM sqlite_master WHERE name = 'calls'").fetchone():
        return Ledger()  # a database not migrated yet (a read-only reader of an old file)
    return Ledger([CallTotals(*row) for row in conn.execute(_TOTALS.format(where=where), params).fetchall()])


def invocation_ledger(conn, invocation: str, run_id: int | None = None) -> Ledger:
    """The calls one invocation sent (optionally only a run's): what it billed now."""
    if run_id is None:
        return _ledger(conn, "invocation = ?", [invocation])
    return _ledger(conn, "invocation = ? AND run_id = ?", [invocation, run_id])


def invocation_rejudge_calls(conn, invocation: str) -> int:
    """Of the judge calls one invocation sent, those of a re-judge lane (`run --rejudge-sample`; its settings
    hash carries store.judgements.REJUDGE_MARK): the same ledger rows, told apart for the run's summary."""
    from helmbench.store.judgements import REJUDGE_MARK

    conn = getattr(conn, "conn", conn)
    return conn.execute("SELECT count(*) FROM calls WHERE invocation = ? AND kind = 'judge' AND instr(settings_hash, ?)",
                        [invocation, REJUDGE_MARK]).fetchone()[0]


def unattached_ledger(conn) -> Ledger:
    """Calls that belong to no run (`helmbench generate`)."""
    return _ledger(conn, "run_id IS NULL", [])


#: The kinds a model under test (or its simulated user) is called for, and the judge's. `OWN_KINDS`: the model's
#: own calls (its answers and its conversation turns); `USER_KINDS`: the simulated user playing the person.
MODEL_KINDS = ("answer", "turn", "user")
OWN_KINDS = ("answer", "turn")
USER_KINDS = ("user",)
JUDGE_KINDS = ("judge",)


def run_ledger(conn, run_id: int) -> Ledger:
    """Every call a run sent, over all the invocations that continued it: what was billed in this run."""
    return _ledger(conn, "run_id = :run", {"run": run_id})


#: The runs a run's calls are counted among: those of its manifest (outputs.calls_counted).
_SAME_MANIFEST = "ru.manifest_hash = (SELECT m.manifest_hash FROM runs m WHERE m.id = :run)"


def _is_preview(conn, run_id: int) -> bool:
    conn = getattr(conn, "conn", conn)
    row = conn.execute("SELECT status FROM runs WHERE id = ?", [run_id]).fetchone()
    return bool(row) and row[0] == "preview"


def _counted_all(conn, manifest_hash: str) -> dict[int, tuple[Ledger, Ledger, tuple[int, ...]]]:
    """Per (non-preview) run of the manifest: (the calls behind its results it counts, those another run counts,
    those runs), in one pass over `outputs.calls_counted` for the whole manifest."""
    conn = getattr(conn, "conn", conn)
    if not conn.execute("SELECT 1 FROM sqlite_master WHERE name = 'calls'").fetchone():
        return {}
    counted = calls_counted("ru.manifest_hash = :manifest")
    out: dict[int, tuple[Ledger, Ledger, set]] = {}
    for row in conn.execute(f"SELECT using_run, counted_in = using_run, group_concat(DISTINCT counted_in), {_SUMS} "
                            f"FROM ({counted}) GROUP BY 1, 2, kind, model ORDER BY 1, kind, model",
                            {"manifest": manifest_hash}):
        mine, shared, others = out.setdefault(row[0], (Ledger(), Ledger(), set()))
        (mine if row[1] else shared).rows.append(CallTotals(*row[3:]))
        if not row[1]:
            others.update(int(r) for r in str(row[2]).split(","))
    return {run: (mine, shared, tuple(sorted(others))) for run, (mine, shared, others) in out.items()}


def _counted(conn, run_id: int) -> tuple[Ledger, Ledger, tuple[int, ...]]:
    raw = getattr(conn, "conn", conn)
    row = raw.execute("SELECT manifest_hash FROM runs WHERE id = ?", [run_id]).fetchone()
    return _counted_all(conn, row[0]).get(run_id, (Ledger(), Ledger(), ())) if row else (Ledger(), Ledger(), ())


def behind_results_ledger(conn, run_id: int) -> Ledger:
    """The calls behind a run's results (`queries.outputs`), each paid call counted once: every ledger row,
    whichever run sent it, whose request is an output or a judgement the results use, failed attempts at it
    included, less the rows that another run of the manifest, whose results use them too, counts
    (`outputs.calls_counted`: the sender, else the lowest-numbered user; `shared_ledger` has them). A preview
    counts every row its own results use."""
    if _is_preview(conn, run_id):
        return _ledger(conn, f"id IN (SELECT id FROM ({calls_behind('res.run_id = :run')}))", {"run": run_id})
    return _counted(conn, run_id)[0]


def shared_ledger(conn, run_id: int) -> tuple[Ledger, tuple[int, ...]]:
    """(the calls behind a run's results that another run of its manifest counts, the runs that count them):
    what the site and `costs` name as shared. Empty for a preview."""
    if _is_preview(conn, run_id):
        return Ledger(), ()
    return _counted(conn, run_id)[1:]


class Spend(NamedTuple):
    """A run's cost and tokens, from the call ledger, in its two meanings, split three ways: the model's own
    calls (its answers and conversation turns), the simulated user's and the judge's. `None`: unknown (no
    ledger row priced, e.g. a database from before the ledger), never 0 by default.

    - `model_cost`, `user_cost`, `judge_cost`, tokens: the calls behind the results shown (whichever run paid
      for them), each paid call counted once (`behind_results_ledger`): the leaderboard's cost, the same for
      a run that reused stored answers of another manifest's run as for the one that paid for them.
    - `shared_calls`, `shared_cost`, `shared_with`: the calls its results use that another run of the manifest
      counts (a judge asked once about two models' identical answers), and which runs count them.
    - `billed_model`, `billed_user`, `billed_judge`: billed in this run (its own ledger rows, every invocation
      that continued it): what running it cost.
    """

    model_cost: float | None
    judge_cost: float | None
    prompt_tokens: int  # the model's, the simulated user's and the judge's calls behind the results together
    completion_tokens: int
    billed_model: float | None = None
    billed_judge: float | None = None
    user_cost: float | None = None
    billed_user: float | None = None
    shared_calls: int = 0
    shared_cost: float | None = None
    shared_with: tuple[int, ...] = ()

    @property
    def cost(self) -> float | None:
        """The calls behind the results, model, simulated user and judge together (None: none priced)."""
        return _total(self.model_cost, self.user_cost, self.judge_cost)


def _total(*costs: float | None) -> float | None:
    known = [c for c in costs if c is not None]
    return sum(known) if known else None


def manifest_spends(conn, manifest_hash: str) -> dict[int, Spend]:
    """`run_spend` of every run of a manifest, the calls behind the results counted in one pass (a leaderboard
    reads them all: one query instead of one per run)."""
    raw = getattr(conn, "conn", conn)
    counted = _counted_all(conn, manifest_hash)
    return {run_id: run_spend(conn, run_id, counted.get(run_id, (Ledger(), Ledger(), ())))
            for run_id, in raw.execute("SELECT id FROM runs WHERE manifest_hash = ?", [manifest_hash])}


def run_spend(conn, run_id: int, counted: tuple[Ledger, Ledger, tuple[int, ...]] | None = None) -> Spend:
    """The report's, the site's, `costs`' and the API's cost of a run (see `Spend`); `counted`: its part of
    `_counted_all`, when already read for its manifest."""
    own = run_ledger(conn, run_id)
    if _is_preview(conn, run_id):
        behind, shared, shared_with = behind_results_ledger(conn, run_id), Ledger(), ()
    else:
        behind, shared, shared_with = counted if counted is not None else _counted(conn, run_id)
    return Spend(behind.cost(kinds=OWN_KINDS), behind.cost(kinds=JUDGE_KINDS),
                 *behind.tokens(kinds=MODEL_KINDS + JUDGE_KINDS), own.cost(kinds=OWN_KINDS),
                 own.cost(kinds=JUDGE_KINDS), behind.cost(kinds=USER_KINDS), own.cost(kinds=USER_KINDS),
                 shared.calls(), shared.cost(), shared_with)

_COSTS = """
SELECT runs.id AS run_id, runs.model, runs.status, runs.started_at,
  coalesce(sum(c.kind IN ('answer', 'turn', 'user')), 0) AS calls,
  coalesce(sum(c.kind IN ('answer', 'turn', 'user') AND c.state = 'failed'), 0) AS errors,
  coalesce(sum(c.state = 'sent'), 0) AS unknown,
  coalesce(sum(c.kind IN ('answer', 'turn', 'user') AND c.cost IS NULL AND c.state = 'answered'), 0) AS unpriced,
  sum(CASE WHEN c.kind IN ('answer', 'turn', 'user') THEN c.prompt_tokens END) AS prompt_tokens,
  sum(CASE WHEN c.kind IN ('answer', 'turn', 'user') THEN c.completion_tokens END) AS completion_tokens,
  sum(CASE WHEN c.kind IN ('answer', 'turn', 'user') THEN c.cost END) AS paid,
  coalesce(sum(c.kind = 'judge'), 0) AS judge_calls,
  sum(CASE WHEN c.kind = 'judge' THEN c.cost END) AS judge_paid
FROM runs LEFT JOIN calls c ON c.run_id = runs.id
WHERE (:run IS NULL OR runs.id = :run) AND (:model IS NULL OR runs.model = :model)
  AND (:manifest IS NULL OR runs.manifest_hash = :manifest)
GROUP BY runs.id ORDER BY runs.id
"""


def run_costs(conn, run_id: int | None = None, model: str | None = None,
              manifest_hash: str | None = None) -> list[dict]:
    """Per run (`helmbench costs`): the calls billed in this run, from the ledger, models' and judge's apart,
    with `unknown` the calls a crash cut (possibly billed); beside them `behind_results`, the cost of the
    calls behind its results whichever run paid, each paid call counted once (the leaderboard's cost:
    `run_spend`), split as `behind_model` (the model's own calls), `behind_user` (the simulated user's) and
    `behind_judge`, with `shared_calls`/`shared_cost`/`shared_with`: calls its results use that another run
    counts.
    `manifest_hash`: only the runs of that manifest (every run, whatever its status: all were paid)."""
    conn = getattr(conn, "conn", conn)
    if not conn.execute("SELECT 1 FROM sqlite_master WHERE name = 'calls'").fetchone():
        from helmbench.errors import StorageError

        raise StorageError("this results database predates the call ledger that `costs` reads",
                           hint="upgrade it in place once, sending nothing: helmbench run --dry-run --db <it>")
    cur = conn.execute(_COSTS, {"run": run_id, "model": model, "manifest": manifest_hash})
    cols = [d[0] for d in cur.description]
    rows = [dict(zip(cols, row)) for row in cur.fetchall()]
    manifests = dict(conn.execute("SELECT id, manifest_hash FROM runs"))
    spends: dict[str, dict[int, Spend]] = {}
    for row in rows:
        of = manifests[row["run_id"]]
        behind = (spends[of] if of in spends else spends.setdefault(of, manifest_spends(conn, of)))[row["run_id"]]
        row.update(behind_results=behind.cost, behind_model=behind.model_cost, behind_user=behind.user_cost,
                   behind_judge=behind.judge_cost, shared_calls=behind.shared_calls, shared_cost=behind.shared_cost,
                   shared_with=list(behind.shared_with))
    return rows
