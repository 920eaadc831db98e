"""helmbench.score.leaderboard on small hand-made databases (the store's own write paths)."""

from __future__ import annotations

from pathlib import Path

import pytest

from helmbench.score import summarise  # noqa: E402
from helmbench.score.leaderboard import (  # noqa: E402
    build_leaderboard,
    scored_results,
    severity_bucket,
)
from helmbench.store import open_db  # noqa: E402
from helmbench.store.catalog import register_manifest, upsert_models  # noqa: E402
from helmbench.store.runs import finish_run, start_run  # noqa: E402
from tests.fakes.manifests import EVALUATIONS, SCHEMA, make_case, write_manifest  # noqa: E402

NOW = "2026-01-01T00:00:00+00:00"


def _cases(n_perturbations: int = 6) -> list[dict]:
    return [make_case("P1-B1-S1", 1, p, evaluation=EVALUATIONS[0]) for p in range(1, n_perturbations + 1)]


class Store:
    """A results DB with one manifest, where a test writes runs and results directly."""

    def __init__(self, tmp: Path, cases: list[dict] | None = None):
        self.cases = cases or _cases()
        self.path = tmp / "results.db"
        self.header = write_manifest(tmp / "manifest.jsonl", self.cases)
        self.db = open_db(self.path)
        register_manifest(self.db, self.header, self.cases)
        self.n_responses = 0

    @property
    def manifest_hash(self) -> str:
        return self.header["manifest_hash"]

    def run(self, model: str, verdicts: list[str | None], *, status: str = "completed", cost: float | None = 0.01,
            reasons: list[str] | None = None, settings: str = "s", started: str = NOW) -> int:
        """A run of `model`: verdicts[i] for case i (None: no result yet)."""
        upsert_models(self.db, [(model, model.title())])
        run_id = start_run(self.db, manifest_hash=self.manifest_hash, model=model, settings={"s": settings},
                           settings_hash=f"sha256:{settings}", samples=1, n_cases=len(self.cases), version="t")
        conn = self.db.conn
        with conn:
            conn.execute("UPDATE runs SET started_at = ? WHERE id = ?", [started, run_id])
            for i, (case, verdict) in enumerate(zip(self.cases, verdicts)):
                if verdict is None:
                    continue
                self.n_responses += 1
                error = verdict == "ERROR"
                rid = conn.execute(
                    """INSERT INTO responses (request_hash, model, settings_hash, sample, content, finish_reason, cost,
                       prompt_tokens, completion_tokens, error_kind, created_at)
                       VALUES (?, ?, ?, 0, ?, 'stop', ?, 100, 10, ?, ?)""",
                    [case["request_hash"], model, f"sha256:{settings}", "{}", None if error else cost,
                     "server_error" if error else None, NOW]).lastrowid
                conn.execute(  # its call, as the engine records it in the ledger (every cost is read there)
                    """INSERT INTO calls (uid, kind, run_id, model, settings_hash, request_key, sample, state,
                       error_kind, prompt_tokens, completion_tokens, cost, sent_at, completed_at)
                       VALUES (?, 'answer', ?, ?, ?, ?, 0, ?, ?, 100, 10, ?, ?, ?)""",
                    [f"t:{run_id}:{i}", run_id, model, f"sha256:{settings}", case["request_hash"],
                     "failed" if error else "answered", "server_error" if error else None,
                     None if error else cost, NOW, NOW])
                reason = (reasons[i] if reasons else None) or ("server_error" if error else verdict.lower())
                conn.execute(
                    """INSERT INTO results (run_id, case_id, case_hash, sample, response_id, verdict, score, reason,
                       created_at) VALUES (?, ?, ?, 0, ?, ?, ?, ?, ?)""",
                    [run_id, case["id"], case["hash"], rid, verdict,
                     None if error else float(verdict == "PASS"), reason, NOW])
        finish_run(self.db, run_id, status)
        return run_id


def test_rows_match_summarise_and_rank_best_first(tmp_path):
    s = Store(tmp_path)
    s.run("a/good", ["PASS"] * 6)
    s.run("b/bad", ["FAIL"] * 6)
    s.run("c/mixed", ["PASS", "FAIL", "PASS", "FAIL", "PASS", "ERROR"])
    board = build_leaderboard(s.path)
    # c/mixed has an ERROR, so its coverage is incomplete: listed apart, after the ranked runs.
    assert [r.model for r in board.rows] == ["a/good", "b/bad", "c/mixed"]
    assert [r.rank for r in board.rows] == [1, 2, None]
    assert [r.model for r in board.unranked] == ["c/mixed"] and not board.rows[2].complete
    assert board.manifest_hash == s.manifest_hash and board.n_cases == 6 and board.pillars == ["P1"]
    mixed = board.rows[2]
    expected = summarise(scored_results(s.db.conn, mixed.run.id), bootstrap=1000, seed=0)
    assert mixed.score == expected.score and mixed.score_ci == expected.score_ci
    assert mixed.pass_rate == pytest.approx(3 / 5) and mixed.pass_rate_ci == expected.pass_rate_ci
    assert mixed.n_errors == 1 and mixed.coverage == pytest.approx(5 / 6)
    assert mixed.model_cost == pytest.approx(0.05) and mixed.judge_cost is None and mixed.cost == pytest.approx(0.05)
    assert mixed.prompt_tokens == 600 and mixed.tokens == 660
    assert mixed.pillar_scores == {"P1": expected.score}
    assert mixed.to_dict()["score_ci"] == list(expected.score_ci)


def test_ties_share_a_rank_and_unscored_models_come_last(tmp_path):
    s = Store(tmp_path)
    s.run("a/one", ["PASS", "FAIL"] * 3)
    s.run("b/two", ["PASS", "FAIL"] * 3)
    s.run("c/none", ["ERROR"] * 6)
    s.run("d/top", ["PASS"] * 6)
    board = build_leaderboard(s.path)
    assert [(r.model, r.rank) for r in board.rows] == [("d/top", 1), ("a/one", 2), ("b/two", 2), ("c/none", None)]
    assert board.rows[-1].score is None and board.rows[-1].coverage == 0
    # Identical results share a tie group; the unranked row has none.
    groups = [r.group for r in board.rows]
    assert groups[0] == 1 and groups[1] == groups[2] and groups[3] is None
    assert [(c.a, c.b) for c in board.comparisons] == [("d/top", "a/one"), ("a/one", "b/two")]


def test_partial_runs_show_their_coverage_and_unknown_cost_stays_unknown(tmp_path):
    s = Store(tmp_path)
    s.run("a/partial", ["PASS", "PASS", None, None, None, None], status="interrupted", cost=None)
    row = build_leaderboard(s.path).rows[0]
    assert row.n_expected == 6 and row.n_missing == 4 and row.coverage == pytest.approx(2 / 6)
    assert row.cost is None and row.model_cost is None


def test_latest_finished_run_per_model_and_unfinished_runs_left_out(tmp_path):
    s = Store(tmp_path)
    s.run("a/model", ["FAIL"] * 6, settings="old", started="2026-01-01T00:00:00+00:00")
    s.run("a/model", ["PASS"] * 6, settings="new", started="2026-02-01T00:00:00+00:00")
    s.run("b/model", ["PASS"] * 6, status="failed")
    s.run("c/model", ["PASS"] * 6)
    s.db.conn.execute("UPDATE runs SET status = 'running' WHERE model = 'c/model'")
    s.db.conn.commit()
    board = build_leaderboard(s.path)
    assert [r.model for r in board.rows] == ["a/model"]
    assert board.rows[0].run.settings_hash == "sha256:new" and board.rows[0].score == 1.0


def test_manifest_without_runs_falls_back_to_the_latest_run(tmp_path):
    s = Store(tmp_path)
    s.run("a/model", ["PASS"] * 6)
    board = build_leaderboard(s.path, "sha256:not-run")
    assert board.manifest_hash == s.manifest_hash and board.requested_manifest == "sha256:not-run"
    empty = Store(tmp_path / "empty")
    assert build_leaderboard(empty.path).empty
    with pytest.raises(FileNotFoundError):
        build_leaderboard(tmp_path / "missing.db")


def test_reading_never_writes(tmp_path):
    s = Store(tmp_path)
    s.run("a/model", ["PASS"] * 6)
    s.db.conn.close()
    s.path.chmod(0o444)
    try:
        assert build_leaderboard(s.path).rows[0].score == 1.0
    finally:
        s.path.chmod(0o644)


def _outcome(evaluation: dict, content: str, finish: str = "stop", response_format="schema"):
    from helmbench.run.evaluate import outcome_for

    case = make_case("P1-B1-S1", 1, 1, evaluation=evaluation, response_format=response_format)
    return outcome_for(case, {"content": content, "finish_reason": finish, "error_kind": None})


@pytest.mark.parametrize("content,finish,response_format", [
    ('{"response": "hi", "tags": ["CHIT', "length", "schema"),  # truncated
    ("", "stop", "schema"),  # empty
    ("   ", "stop", None),  # empty
    ('{"response": "hi", oops', "stop", "schema"),  # invalid JSON
    ('{"response": "hi", "tags": "x", "category": "REFERRAL"}', "stop", "schema"),  # schema violation
    ('["SAFETY_CONCERN"]', "stop", None),  # not an object
    ('{"response": "hi"}', "stop", None),  # missing field
    ('{"tags": "SAFETY_CONCERN"}', "stop", None),  # not a list
])
def test_format_failures_are_marked_by_the_evaluator_and_match_the_old_reasons(content, finish, response_format):
    from helmbench.store.schema_failure_kind import legacy_failure_kind

    out = _outcome(EVALUATIONS[0], content, finish, response_format)
    assert out.verdict == "FAIL" and out.failure_kind == "format", out
    # migration 4 backfills older rows from their reasons: it must classify today's reasons the same way
    assert legacy_failure_kind(out.verdict, out.reason) == "format", out.reason


def test_a_wrong_answer_is_not_a_format_failure():
    from helmbench.store.schema_failure_kind import legacy_failure_kind

    wrong = _outcome(EVALUATIONS[0], '{"response": "hi", "tags": ["CHIT_CHAT"], "category": "REFERRAL"}')
    assert wrong.verdict == "FAIL" and wrong.failure_kind is None
    assert legacy_failure_kind(wrong.verdict, wrong.reason) is None
    right = _outcome(EVALUATIONS[0], '{"response": "hi", "tags": ["SAFETY_CONCERN"], "category": "REFERRAL"}')
    assert right.verdict == "PASS" and right.failure_kind is None
    assert legacy_failure_kind("ERROR", "invalid JSON") is None
    assert SCHEMA["required"]  # the fake schema really constrains the answer


@pytest.mark.parametrize("base,bucket", [(-3, "user is fine (< 0)"), (0, "none (0)"), (1, "mild (1–3)"),
                                         (6, "moderate (4–6)"), (9, "severe (7–9)"), (16, "catastrophic (≥ 10)")])
def test_severity_buckets(base, bucket):
    assert severity_bucket(base) == bucket
