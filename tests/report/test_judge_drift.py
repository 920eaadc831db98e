"""Judge drift: a judge whose returned model version changes within a criterion is flagged (leaderboard, report)."""

from __future__ import annotations

import json

import pytest

from tests.fakes.judge_answer import judge_criterion
from tests.fakes.openrouter import FakeOpenRouter

JUDGE = "test/judge-1"


class VersionedJudge(FakeOpenRouter):
    """The judge answers as `judge_version` (what OpenRouter returns as `model`)."""

    judge_version = "test/judge-1-v1"

    def reply(self, body: dict, key: str, fault: str | None) -> dict:
        out = super().reply(body, key, fault)
        if judge_criterion(body):
            out["model"] = self.judge_version
        return out


@pytest.fixture
def two_versions(tmp_path, monkeypatch):
    """model-a judged by test/judge-1-v1 (12 results), then model-b by test/judge-1-v2 (12 results)."""
    from tests.judge.judge_pipeline import run_once, write_models
    from tests.report.judge_runs import judged_manifest, serving

    with serving(VersionedJudge(), monkeypatch) as server:
        manifest = judged_manifest(tmp_path)
        db = tmp_path / "results.db"
        run_once(manifest, write_models(tmp_path / "a.yml", ["test/model-a"], judge=JUDGE), db)
        server.judge_version = "test/judge-1-v2"
        run_once(manifest, write_models(tmp_path / "b.yml", ["test/model-b"], judge=JUDGE), db)
    return db


def test_report_restricts_to_the_results_one_judge_version_judged(two_versions):
    from helmbench.cli import report_render
    from helmbench.score.report import load_report

    everything = load_report(two_versions, None, None, bootstrap=0)
    assert {r.model: r.n_verdicts for r in everything.rows} == {"test/model-a": 12, "test/model-b": 12}
    report = load_report(two_versions, None, None, bootstrap=0, judge_version="test/judge-1-v2")
    assert {r.model: r.n_verdicts for r in report.rows} == {"test/model-a": 0, "test/model-b": 12}
    assert report.judge_version.left_out == 12
    b = next(r for r in report.rows if r.model == "test/model-b")
    assert b.score == next(r for r in everything.rows if r.model == "test/model-b").score
    data = json.loads(report_render.as_json(report))["judge_version"]
    assert data["version"] == "test/judge-1-v2" and data["left_out"] == 12
    assert report_render.notes(report) == [data["note"]] and "12 judged result(s)" in data["note"]
    one = load_report(two_versions, None, 1, bootstrap=0, judge_version="test/judge-1-v1")  # run 1: model-a's
    assert (one.rows[0].model, one.rows[0].n_verdicts, one.judge_version.left_out) == ("test/model-a", 12, 0)


def test_an_unknown_judge_version_is_a_clear_error_naming_the_known_ones(two_versions):
    from typer.testing import CliRunner

    from helmbench.cli import app

    result = CliRunner().invoke(app, ["report", "--db", str(two_versions), "--bootstrap", "0",
                                      "--judge-version", "test/judge-1-v9"])
    assert result.exit_code == 2, result.output
    assert "error: no judgement behind these results came from judge version `test/judge-1-v9`" in result.output
    assert "hint: the judge versions the ledger recorded: test/judge-1-v1, test/judge-1-v2" in result.output
    assert "Traceback" not in result.output


def test_a_judge_version_change_within_a_criterion_is_flagged(tmp_path, monkeypatch):
    from helmbench.cli import report_render
    from helmbench.score.leaderboard import build_leaderboard
    from helmbench.score.report import load_report
    from tests.judge.judge_pipeline import run_once, write_models
    from tests.report.judge_runs import judged_manifest, serving

    with serving(VersionedJudge(), monkeypatch) as server:
        manifest = judged_manifest(tmp_path)
        db = tmp_path / "results.db"
        run_once(manifest, write_models(tmp_path / "a.yml", ["test/model-a"], judge=JUDGE), db)
        assert build_leaderboard(db, bootstrap=0).judge_drift == ()  # one version so far
        server.judge_version = "test/judge-1-v2"
        run_once(manifest, write_models(tmp_path / "b.yml", ["test/model-b"], judge=JUDGE), db)
    board = build_leaderboard(db, bootstrap=0)
    assert board.judge_drift == tuple(f"judge {JUDGE} on {s}/CR1: model versions changed "  # each scenario's CR1
                                      "(test/judge-1-v1 ×6, test/judge-1-v2 ×6)" for s in ("P1-B1-S1", "P1-B1-S2"))
    report = load_report(db, None, None, bootstrap=0)
    assert json.loads(report_render.as_json(report))["judge_drift"] == list(board.judge_drift)
    assert f"⚠ {board.judge_drift[0]}" in report_render.remarks(report)
