"""Datasette's canned queries over a snapshot of results.db (`helmbench serve`).

Why in store: they are SQL against store's schema, which only store may spell (a migration that
moves a column changes them here, beside the schema). publish/datasette.py puts them in the
metadata it generates.
"""

# The scores come from `run_scores`, which publish.datasette.snapshot fills with the scorer's own numbers
# (helmbench.score.leaderboard.score_every_run: the weighted score after the safety floors its
# manifest declares, the uncapped one beside), so the canned leaderboard agrees with the site.
CANNED_QUERIES: dict[str, dict] = {
    "leaderboard": {
        "title": "Leaderboard: pass, fail and error counts, weighted score and cost per run and model",
        "sql": """WITH counts AS (
  SELECT run_id, COUNT(*) AS results, SUM(verdict = 'PASS') AS pass, SUM(verdict = 'FAIL') AS fail,
         SUM(verdict = 'ERROR') AS errors
  FROM results GROUP BY run_id
),
spend AS (
  SELECT res.run_id, SUM(rs.cost) AS cost, SUM(rs.prompt_tokens) AS prompt_tokens,
         SUM(rs.completion_tokens) AS completion_tokens
  FROM results res JOIN responses rs ON rs.id = res.response_id GROUP BY res.run_id
),
judging AS (
  SELECT res.run_id, SUM(j.cost) AS judge_cost
  FROM results res JOIN result_judgements rj ON rj.result_id = res.id JOIN judgements j ON j.id = rj.judgement_id
  GROUP BY res.run_id
)
SELECT r.id AS run_id, r.model, m.name, r.status, r.manifest_hash,
       ROUND(s.weighted_score, 4) AS weighted_score, ROUND(s.uncapped_score, 4) AS uncapped_score, s.below_floor,
       ROUND(s.pass_rate, 4) AS pass_rate, ROUND(s.coverage, 4) AS coverage, s.n_format_failures,
       c.pass, c.fail, c.errors, c.results, sp.cost, jg.judge_cost, sp.prompt_tokens, sp.completion_tokens,
       r.started_at, r.finished_at
FROM runs r
LEFT JOIN models m ON m.id = r.model
LEFT JOIN counts c ON c.run_id = r.id
LEFT JOIN run_scores s ON s.run_id = r.id
LEFT JOIN spend sp ON sp.run_id = r.id
LEFT JOIN judging jg ON jg.run_id = r.id
ORDER BY r.manifest_hash, weighted_score DESC""",
    },
    "failures_by_behaviour": {
        "title": "Failures by model and behaviour",
        "sql": """SELECT r.id AS run_id, r.model, c.behaviour, b.title AS behaviour_title,
       COUNT(*) AS results, SUM(res.verdict = 'FAIL') AS failures, SUM(res.verdict = 'ERROR') AS errors,
       ROUND(1.0 * SUM(res.verdict = 'FAIL') / NULLIF(SUM(res.verdict != 'ERROR'), 0), 4) AS failure_rate
FROM results res
JOIN runs r ON r.id = res.run_id
JOIN cases c ON c.hash = res.case_hash
LEFT JOIN behaviours b ON b.code = c.behaviour
GROUP BY r.id, c.behaviour
ORDER BY r.model, c.behaviour""",
    },
    "cost_by_model": {
        "title": "Billed cost and tokens by model (models under test and judges)",
        "sql": """SELECT model, 'model under test' AS role, COUNT(*) AS calls, SUM(error_kind IS NOT NULL) AS failed_calls,
       SUM(cost) AS cost, SUM(prompt_tokens) AS prompt_tokens, SUM(completion_tokens) AS completion_tokens,
       ROUND(AVG(latency_ms)) AS mean_latency_ms
FROM responses GROUP BY model
UNION ALL
SELECT judge_model, 'judge', COUNT(*), SUM(error_kind IS NOT NULL), SUM(cost), SUM(prompt_tokens),
       SUM(completion_tokens), ROUND(AVG(latency_ms))
FROM judgements GROUP BY judge_model
ORDER BY cost DESC""",
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
