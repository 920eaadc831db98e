"""Migration 1: the tables of SCHEMA.md, as plain DDL so the whole migration is one transaction.

Why raw SQL rather than sqlite-utils' `create()`: sqlite-utils commits inside its helpers, and a
half-applied migration that still gets recorded as applied is worse than either state.
Every table the site, the scorer and Datasette read is here; names are a contract.
"""

DDL = """
CREATE TABLE manifests (
  hash TEXT PRIMARY KEY,
  format TEXT NOT NULL,
  benchmark_name TEXT,
  benchmark_version TEXT,
  benchmark_description TEXT,
  compiler TEXT,
  cases INTEGER NOT NULL,
  catalog_hash TEXT,
  header_json TEXT NOT NULL,
  registered_at TEXT
);

CREATE TABLE pillars (
  code TEXT PRIMARY KEY,
  title TEXT,
  description TEXT
);

CREATE TABLE behaviours (
  code TEXT PRIMARY KEY,
  pillar TEXT NOT NULL REFERENCES pillars(code),
  title TEXT,
  description TEXT,
  compliance_json TEXT,
  weight REAL
);

CREATE TABLE scenarios (
  code TEXT PRIMARY KEY,
  behaviour TEXT NOT NULL REFERENCES behaviours(code),
  title TEXT,
  category TEXT,
  evaluation_type TEXT
);

CREATE TABLE conditions (
  code TEXT PRIMARY KEY,
  scenario TEXT NOT NULL REFERENCES scenarios(code),
  title TEXT,
  difficulty INTEGER NOT NULL DEFAULT 0
);

CREATE TABLE user_contexts (
  code TEXT PRIMARY KEY,
  scenario TEXT NOT NULL REFERENCES scenarios(code),
  title TEXT,
  severity INTEGER NOT NULL DEFAULT 0
);

CREATE TABLE perturbations (
  code TEXT PRIMARY KEY,
  scenario TEXT NOT NULL REFERENCES scenarios(code),
  title TEXT,
  severity INTEGER NOT NULL DEFAULT 0
);

CREATE TABLE cases (
  hash TEXT PRIMARY KEY,
  id TEXT NOT NULL,
  request_hash TEXT NOT NULL,
  pillar TEXT REFERENCES pillars(code),
  behaviour TEXT REFERENCES behaviours(code),
  scenario TEXT NOT NULL REFERENCES scenarios(code),
  condition TEXT REFERENCES conditions(code),
  user_context TEXT REFERENCES user_contexts(code),
  perturbation TEXT REFERENCES perturbations(code),
  severity_perturbation INTEGER NOT NULL DEFAULT 0,
  severity_user_context INTEGER NOT NULL DEFAULT 0,
  severity_base INTEGER NOT NULL DEFAULT 0,
  difficulty INTEGER NOT NULL DEFAULT 0,
  weight REAL,
  evaluation_type TEXT,
  messages_json TEXT NOT NULL,
  response_format_json TEXT,
  evaluation_json TEXT NOT NULL
);
CREATE INDEX idx_cases_id ON cases(id);
CREATE INDEX idx_cases_request_hash ON cases(request_hash);
CREATE INDEX idx_cases_scenario ON cases(scenario);
CREATE INDEX idx_cases_behaviour ON cases(behaviour);

CREATE TABLE manifest_cases (
  manifest_hash TEXT NOT NULL REFERENCES manifests(hash),
  case_hash TEXT NOT NULL REFERENCES cases(hash),
  position INTEGER NOT NULL,
  case_id TEXT NOT NULL,
  PRIMARY KEY (manifest_hash, case_hash)
);
CREATE INDEX idx_manifest_cases_case ON manifest_cases(case_hash);

CREATE TABLE models (
  id TEXT PRIMARY KEY,
  name TEXT
);

CREATE TABLE runs (
  id INTEGER PRIMARY KEY,
  manifest_hash TEXT NOT NULL REFERENCES manifests(hash),
  model TEXT NOT NULL REFERENCES models(id),
  settings_json TEXT NOT NULL,
  settings_hash TEXT NOT NULL,
  samples INTEGER NOT NULL DEFAULT 1,
  started_at TEXT NOT NULL,
  finished_at TEXT,
  status TEXT NOT NULL DEFAULT 'running',
  n_cases INTEGER NOT NULL DEFAULT 0,
  n_pass INTEGER NOT NULL DEFAULT 0,
  n_fail INTEGER NOT NULL DEFAULT 0,
  n_error INTEGER NOT NULL DEFAULT 0,
  n_awaiting_judge INTEGER NOT NULL DEFAULT 0,
  cost REAL,
  prompt_tokens INTEGER,
  completion_tokens INTEGER,
  helmbench_version TEXT,
  UNIQUE (manifest_hash, model, settings_hash)
);
CREATE INDEX idx_runs_model ON runs(model);

CREATE TABLE responses (
  id INTEGER PRIMARY KEY,
  request_hash TEXT NOT NULL,
  model TEXT NOT NULL REFERENCES models(id),
  settings_hash TEXT NOT NULL,
  sample INTEGER NOT NULL DEFAULT 0,
  run_id INTEGER REFERENCES runs(id),
  content TEXT,
  reasoning TEXT,
  parsed_json TEXT,
  finish_reason TEXT,
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
  UNIQUE (request_hash, model, settings_hash, sample)
);
CREATE INDEX idx_responses_model ON responses(model, settings_hash);
CREATE INDEX idx_responses_run ON responses(run_id);

CREATE TABLE results (
  id INTEGER PRIMARY KEY,
  run_id INTEGER NOT NULL REFERENCES runs(id),
  case_id TEXT NOT NULL,
  case_hash TEXT NOT NULL REFERENCES cases(hash),
  sample INTEGER NOT NULL DEFAULT 0,
  response_id INTEGER REFERENCES responses(id),
  verdict TEXT NOT NULL CHECK (verdict IN ('PASS', 'FAIL', 'ERROR')),
  score REAL,
  reason TEXT,
  created_at TEXT NOT NULL,
  UNIQUE (run_id, case_hash, sample)
);
CREATE INDEX idx_results_run_verdict ON results(run_id, verdict);
CREATE INDEX idx_results_case ON results(case_hash);
CREATE INDEX idx_results_response ON results(response_id);

CREATE TABLE judgements (
  id INTEGER PRIMARY KEY,
  judge_request_hash TEXT NOT NULL,
  judge_model TEXT NOT NULL,
  judge_settings_hash TEXT NOT NULL,
  response_id INTEGER NOT NULL REFERENCES responses(id),
  criterion TEXT NOT NULL,
  verdict TEXT,
  score REAL,
  judgment_json TEXT,
  justification TEXT,
  raw TEXT,
  cost REAL,
  latency_ms INTEGER,
  prompt_tokens INTEGER,
  completion_tokens INTEGER,
  attempts INTEGER NOT NULL DEFAULT 1,
  error_kind TEXT,
  error_message TEXT,
  created_at TEXT NOT NULL,
  UNIQUE (judge_request_hash, judge_model, judge_settings_hash)
);
CREATE INDEX idx_judgements_response ON judgements(response_id);

CREATE TABLE result_judgements (
  result_id INTEGER NOT NULL REFERENCES results(id),
  judgement_id INTEGER NOT NULL REFERENCES judgements(id),
  PRIMARY KEY (result_id, judgement_id)
);
"""
