"""Which outputs a run's results use: the one place that says it, for every reader that needs it.

A run's results rest on outputs: the answer a single-turn result points at (`results.response_id`),
the turns a conversation's result was decided on (`result_turns`: the model's replies and the
simulated user's messages), and the judgements any result used (`result_judgements`: an answer's or
a transcript's). Each output is keyed as its calls are in the ledger (kind, model, settings hash,
request key, sample), so "the calls behind the results shown" is a join of this with `calls`
(`store/queries/ledger.behind_results_ledger`): the cost the leaderboard shows.

A model's output is matched only with the calls a run of that same model sent (`tested`): a conversation's
turn keys chain its authored content, so the simulated user's request at turn 3 has the same key in every
model's conversation, and without it each run's results would take every run's payment for it.

A paid call is counted once (`calls_counted`): when the results of several runs of one manifest use one
ledger row (two models gave the same answer, so the judge was asked once), it is counted in the run that
sent it when that run's results use it, else in the lowest-numbered run whose results do; the others show
it as shared. Previews (`run-single`) never take a call from a run: each counts what its own results use.
"""

from __future__ import annotations

#: (run_id, kind, model, settings_hash, request_key, sample, tested) of every output the results of the runs
#: matching `{where}` (a condition on `res`, the results) use, each once. Columns match `calls`; `tested` is the
#: model under test whose output it is (None for a judgement: the judge's request holds the output it judges).
RESULT_OUTPUTS = """
SELECT res.run_id, 'answer' AS kind, rs.model, rs.settings_hash, rs.request_hash AS request_key, rs.sample,
       rs.model AS tested
FROM results res JOIN responses rs ON rs.id = res.response_id WHERE {where}
UNION
SELECT res.run_id, CASE WHEN t.role = 'assistant' THEN 'turn' ELSE 'user' END, COALESCE(t.caller, t.model),
       t.settings_hash, t.turn_key, t.sample, t.model
FROM results res JOIN result_turns rt ON rt.result_id = res.id JOIN turns t ON t.id = rt.turn_id
WHERE t.source IN ('model', 'user_model') AND {where}
UNION
SELECT res.run_id, 'judge', j.judge_model, j.judge_settings_hash, j.judge_request_hash, NULL, NULL
FROM results res JOIN result_judgements rj ON rj.result_id = res.id JOIN judgements j ON j.id = rj.judgement_id
WHERE {where}
"""

#: The ledger rows (any run's, failed attempts at the same requests included) of those outputs, with the
#: run whose results use them: `SELECT … FROM calls c JOIN ({CALLS_BEHIND}) …`. A call is counted once per
#: run using it (the outputs are distinct per run, and a call matches one output key).
CALLS_BEHIND = """
SELECT o.run_id AS using_run, c.* FROM ({outputs}) o JOIN calls c
  ON c.request_key = o.request_key AND c.kind = o.kind AND c.model = o.model
 AND c.settings_hash IS o.settings_hash AND c.sample IS o.sample
 AND (o.tested IS NULL OR o.tested = (SELECT sender.model FROM runs sender WHERE sender.id = c.run_id))
"""


def calls_behind(where: str) -> str:
    """The SELECT of the ledger rows behind the results matching `where` (a condition on `res`)."""
    return CALLS_BEHIND.format(outputs=RESULT_OUTPUTS.format(where=where))


#: The ledger rows behind the results of the (non-preview) runs matching `{scope}` (a condition on `ru`, the
#: runs), one row per (call, run using it), with `counted_in`: the one run of the user's manifest the call is
#: counted in (the sender when its results use the call, else the lowest-numbered user), and `users`: how many
#: runs of that manifest use it.
#: (Materialised: SQLite would otherwise evaluate the union of outputs again under the window's sort, ten
#: times slower.)
CALLS_COUNTED = """
WITH x AS MATERIALIZED ({behind})
SELECT x.*, u.manifest_hash AS scope,
       CASE WHEN max(x.using_run = x.run_id) OVER w THEN x.run_id ELSE min(x.using_run) OVER w END AS counted_in,
       count(*) OVER w AS users
FROM x JOIN runs u ON u.id = x.using_run
WINDOW w AS (PARTITION BY x.id, u.manifest_hash)
"""


def calls_counted(scope: str) -> str:
    """The SELECT of the ledger rows behind the results of the runs matching `scope` (a condition on `ru`),
    with the run each is counted in (`CALLS_COUNTED`); previews are left out (they take no call from a run)."""
    behind = calls_behind(f"res.run_id IN (SELECT ru.id FROM runs ru WHERE ru.status != 'preview' AND ({scope}))")
    return CALLS_COUNTED.format(behind=behind)
