"""Which outputs a run's results use: the one place that says it, for every reader that needs it.

A run's results rest on outputs: the answer a single-turn result points at (`results.response_id`),
the turns a conversation's result was decided on (`result_turns`: the model's replies and the
simulated user's messages), and the judgements any result used (`result_judgements`: an answer's or
a transcript's). Each output is keyed as its calls are in the ledger (kind, model, settings hash,
request key, sample), so "the calls behind the results shown" is a join of this with `calls`
(`store/queries/ledger.calls_behind_results`): the cost the leaderboard shows.
"""

from __future__ import annotations

#: (run_id, kind, model, settings_hash, request_key, sample) of every output the results of the runs
#: matching `{where}` (a condition on `res`, the results) use, each once. Columns match `calls`.
RESULT_OUTPUTS = """
SELECT res.run_id, 'answer' AS kind, rs.model, rs.settings_hash, rs.request_hash AS request_key, rs.sample
FROM results res JOIN responses rs ON rs.id = res.response_id WHERE {where}
UNION
SELECT res.run_id, CASE WHEN t.role = 'assistant' THEN 'turn' ELSE 'user' END, COALESCE(t.caller, t.model),
       t.settings_hash, t.turn_key, t.sample
FROM results res JOIN result_turns rt ON rt.result_id = res.id JOIN turns t ON t.id = rt.turn_id
WHERE t.source IN ('model', 'user_model') AND {where}
UNION
SELECT res.run_id, 'judge', j.judge_model, j.judge_settings_hash, j.judge_request_hash, NULL
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
"""


def calls_behind(where: str) -> str:
    """The SELECT of the ledger rows behind the results matching `where` (a condition on `res`)."""
    return CALLS_BEHIND.format(outputs=RESULT_OUTPUTS.format(where=where))
