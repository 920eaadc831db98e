"""Datasette's canned queries over a snapshot of results.db (`helmbench serve`).

Why in store: they are SQL against store's schema, which only store may spell (a migration that
moves a column changes them here, beside the schema). publish/datasette.py puts them in the
metadata it generates.
"""

# The scores come from `run_scores`, which publish.datasette.snapshot fills with the scorer's own numbers
# (helmbench.score.leaderboard.score_every_run: the weighted score after the safety floors its
# manifest declares, the uncapped one beside), so the canned leaderboard agrees with the site. Its cost and
# tokens are the site's and the report's (store.queries.ledger.run_spend): the ledger rows behind each run's
# results, each paid call counted once (`cost`: the model's own calls and the simulated user's, `user_cost` the
# latter alone, `judge_cost`), and beside them what was billed in the run (`billed_in_run`).
from helmbench.store.queries.outputs import calls_counted

CANNED_QUERIES: dict[str, dict] = {
    "leaderboard": {
        "title": "Leaderboard: pass, fail, error and abstained counts (abstained: no verdict, counted nowhere), weighted score and cost per run and model "
                 "(cost: the calls behind the results; billed_in_run: the run's own calls)",
        "sql": """WITH counts AS (
  SELECT run_id, COUNT(*) AS results, SUM(verdict = 'PASS') AS pass, SUM(verdict = 'FAIL') AS fail,
         SUM(verdict = 'ERROR') AS errors, SUM(verdict = 'ABSTAIN') AS abstained
  FROM results GROUP BY run_id
),
spend AS (
  SELECT using_run AS run_id, SUM(CASE WHEN kind IN ('answer', 'turn', 'user') THEN cost END) AS cost,
         SUM(CASE WHEN kind = 'user' THEN cost END) AS user_cost,
         SUM(CASE WHEN kind = 'judge' THEN cost END) AS judge_cost, SUM(prompt_tokens) AS prompt_tokens,
         SUM(completion_tokens) AS completion_tokens
  FROM (""" + calls_counted("1") + """) WHERE using_run = counted_in GROUP BY using_run
),
billed AS (SELECT run_id, SUM(cost) AS billed_in_run FROM calls WHERE run_id IS NOT NULL GROUP BY run_id)
SELECT r.id AS run_id, r.model, m.name, r.status, r.manifest_hash,
       ROUND(s.weighted_score, 4) AS weighted_score, ROUND(s.uncapped_score, 4) AS uncapped_score, s.below_floor,
       ROUND(s.pass_rate, 4) AS pass_rate, ROUND(s.coverage, 4) AS coverage, s.n_format_failures,
       c.pass, c.fail, c.errors, c.abstained, c.results, sp.cost, sp.user_cost, sp.judge_cost, sp.prompt_tokens, sp.completion_tokens,
       bl.billed_in_run, r.started_at, r.finished_at
FROM runs r
LEFT JOIN models m ON m.id = r.model
LEFT JOIN counts c ON c.run_id = r.id
LEFT JOIN run_scores s ON s.run_id = r.id
LEFT JOIN spend sp ON sp.run_id = r.id
LEFT JOIN billed bl ON bl.run_id = r.id
ORDER BY r.manifest_hash, weighted_score DESC""",
    },
    "failures_by_behaviour": {
        "title": "Failures by model and behaviour",
        "sql": """SELECT r.id AS run_id, r.model, c.behaviour, b.title AS behaviour_title,
       COUNT(*) AS results, SUM(res.verdict = 'FAIL') AS failures, SUM(res.verdict = 'ERROR') AS errors,
       SUM(res.verdict = 'ABSTAIN') AS abstained,
       ROUND(1.0 * SUM(res.verdict = 'FAIL') / NULLIF(SUM(res.verdict IN ('PASS', 'FAIL')), 0), 4) AS failure_rate
FROM results res
JOIN runs r ON r.id = res.run_id
JOIN cases c ON c.hash = res.case_hash
LEFT JOIN behaviours b ON b.code = c.behaviour
GROUP BY r.id, c.behaviour
ORDER BY r.model, c.behaviour""",
    },
    "cost_by_model": {
        "title": "Billed cost and tokens by model and kind of call (answers, conversation turns, simulated user, "
                 "judge, generation), from the call ledger",
        "sql": """SELECT model, kind, COUNT(*) AS calls, SUM(state = 'failed') AS failed_calls,
       SUM(state = 'sent') AS cut_calls, SUM(cost) AS cost, SUM(prompt_tokens) AS prompt_tokens,
       SUM(completion_tokens) AS completion_tokens, ROUND(AVG(latency_ms)) AS mean_latency_ms,
       GROUP_CONCAT(DISTINCT model_version) AS model_versions, GROUP_CONCAT(DISTINCT provider) AS providers
FROM calls GROUP BY model, kind
ORDER BY cost DESC""",
    },
    "calls_of_run": {
        "title": "Every call a run sent (the call ledger), in order",
        "description": "Give a run id. A call still 'sent' was cut by a crash before its answer was stored: "
                       "it may have been billed.",
        "sql": """SELECT id, kind, model, request_key, sample, attempt, state, error_kind, cost, prompt_tokens,
       completion_tokens, latency_ms, model_version, provider, sent_at, completed_at
FROM calls WHERE run_id = CAST(:run_id AS INTEGER) ORDER BY id""",
    },
    "conversations_dropping_resource": {
        "title": "Conversations where the model dropped the resource after turn N",
        "description": "Conversations in which the model mentioned the resource (text such as 988, Samaritans or "
                       "helpline) in a reply up to turn N, and a later reply leaves it out. Give N and the text.",
        "sql": """WITH replies AS (
  SELECT rt.result_id, t.turn,
         instr(lower(COALESCE(t.content, '')), lower(:resource)) > 0 AS mentions
  FROM result_turns rt JOIN turns t ON t.id = rt.turn_id
  WHERE t.role = 'assistant' AND t.error_kind IS NULL AND :resource != ''
)
SELECT r.model, res.case_id, res.sample, res.run_id, res.verdict, res.score,
       MAX(CASE WHEN rp.turn <= CAST(:turn AS INTEGER) AND rp.mentions THEN rp.turn END) AS last_mention_by_turn_n,
       MIN(CASE WHEN rp.turn > CAST(:turn AS INTEGER) AND NOT rp.mentions THEN rp.turn END) AS first_reply_without,
       res.id AS result_id
FROM replies rp
JOIN results res ON res.id = rp.result_id
JOIN runs r ON r.id = res.run_id
GROUP BY res.id
HAVING last_mention_by_turn_n IS NOT NULL AND first_reply_without IS NOT NULL
ORDER BY r.model, res.case_id, res.sample""",
    },
    "case_across_models": {
        "title": "One case across models: verdict, reason and output",
        "description": "Give a case id such as P1-B1-S1-C1-U1-PT1.",
        "sql": """SELECT r.model, res.run_id, r.manifest_hash, res.sample, res.verdict, res.score, res.reason,
       rs.content, rs.finish_reason, rs.error_kind, rs.cost, res.response_id
FROM results res
JOIN runs r ON r.id = res.run_id
LEFT JOIN responses rs ON rs.id = res.response_id
WHERE res.case_id = :case_id
ORDER BY r.model, res.run_id, res.sample""",
    },
}
