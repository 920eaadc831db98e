"""Migration "judge totals": what the judge stage adds to an existing results.db.

Why a migration and not an edit of migration 1: databases made before the judge existed hold
paid-for responses; they are upgraded in place. Adds which run paid for each judgement
(`judgements.run_id`, for cost accounting), the verdict and score each judgement gave the
case it is linked to (`result_judgements.verdict/score`: a reused judgement is re-decided
under the case's current pass_values and scores), and the run's evaluation counts, kept apart from
its case counts (`runs.n_judgements` … `runs.judge_completion_tokens`).
"""

DDL = """
ALTER TABLE judgements ADD COLUMN run_id INTEGER REFERENCES runs(id);
CREATE INDEX idx_judgements_run ON judgements(run_id);
CREATE INDEX idx_result_judgements_judgement ON result_judgements(judgement_id);
ALTER TABLE result_judgements ADD COLUMN verdict TEXT;
ALTER TABLE result_judgements ADD COLUMN score REAL;
ALTER TABLE runs ADD COLUMN n_judgements INTEGER NOT NULL DEFAULT 0;
ALTER TABLE runs ADD COLUMN n_judge_errors INTEGER NOT NULL DEFAULT 0;
ALTER TABLE runs ADD COLUMN judge_calls INTEGER NOT NULL DEFAULT 0;
ALTER TABLE runs ADD COLUMN judge_cost REAL;
ALTER TABLE runs ADD COLUMN judge_prompt_tokens INTEGER;
ALTER TABLE runs ADD COLUMN judge_completion_tokens INTEGER
"""


def apply(db) -> None:
    for statement in DDL.split(";"):
        if statement.strip():
            db.conn.execute(statement)
