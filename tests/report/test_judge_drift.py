"""Judge drift: a judge whose returned model version changes within a criterion is flagged (leaderboard, report)."""

from __future__ import annotations

import json


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
    assert board.judge_drift == (f"judge {JUDGE} on CR1: model versions changed "
                                 "(test/judge-1-v1 ×12, test/judge-1-v2 ×12)",)
    report = load_report(db, None, None, bootstrap=0)
    assert json.loads(report_render.as_json(report))["judge_drift"] == list(board.judge_drift)
    assert f"⚠ {board.judge_drift[0]}" in report_render.remarks(report)
