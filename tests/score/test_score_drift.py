"""Drift: the model version and provider behind each run, and changes between runs."""

from pathlib import Path

from helmbench.score import summarise  # noqa: E402
from helmbench.score.drift import history, served  # noqa: E402
from helmbench.score.leaderboard import build_leaderboard, scored_results  # noqa: E402
from tests.publish.test_publish_leaderboard import Store  # noqa: E402


def serve(store, run_id, provider, version):
    with store.db.conn as conn:
        conn.execute("""UPDATE responses SET provider = ?, model_version = ?
                        WHERE id IN (SELECT response_id FROM results WHERE run_id = ?)""", [provider, version, run_id])


def test_a_provider_change_between_runs_is_flagged(tmp_path):
    s = Store(tmp_path)
    first = s.run("m/a", ["PASS"] * 6, settings="s", started="2026-01-01T00:00:00+00:00")
    serve(s, first, "ProvA", "m-a-2025-01")
    second = s.run("m/a", ["PASS", "FAIL"] * 3, settings="t", started="2026-02-01T00:00:00+00:00")
    serve(s, second, "ProvB", "m-a-2025-01")
    (row,) = build_leaderboard(s.path).rows
    assert row.run.id == second
    assert row.served.providers == {"ProvB": 6} and row.served.versions == {"m-a-2025-01": 6}
    assert row.drift == ("provider changed: ProvA → ProvB",)
    assert row.to_dict()["drift"] == ["provider changed: ProvA → ProvB"]

    points = history(s.db.conn, "m/a", ("completed",), scored_results, summarise, bootstrap=200)
    assert [p.run_id for p in points] == [first, second]
    assert points[0].score == 1.0 and points[1].score < 1.0
    assert points[1].score_ci[0] <= points[1].score <= points[1].score_ci[1]


def test_a_mix_within_one_run_is_flagged_and_no_change_is_quiet(tmp_path):
    s = Store(tmp_path)
    run = s.run("m/b", ["PASS"] * 6)
    serve(s, run, "ProvA", "v1")
    with s.db.conn as conn:
        conn.execute("UPDATE responses SET provider = 'ProvC' WHERE id = (SELECT MIN(id) FROM responses)")
    got = served(s.db.conn, run)
    assert got.providers == {"ProvA": 5, "ProvC": 1} and got.mixed
    assert build_leaderboard(s.path).rows[0].drift == ("served by 2 providers",)

    quiet = Store(tmp_path / "quiet")
    serve(quiet, quiet.run("m/c", ["PASS"] * 6), "ProvA", "v1")
    assert build_leaderboard(quiet.path).rows[0].drift == ()
