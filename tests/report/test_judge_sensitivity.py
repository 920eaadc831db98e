"""Rank sensitivity to the judge: each judge's own leaderboard from the stored per-judge verdicts.

A real run through the fake OpenRouter with a three-judge ensemble. Three models answer 12 judged
cases each. Every judge fails model C; judge-3 also fails model B; the rest pass. Hand computation:

- ensemble (majority): A = 1.0, B = 1.0 (2 of 3 pass), C = 0.0; tie groups A, B → 1 and C → 2
  (12 cases differ all one way: the exact sign-flip test is significant);
- judge-1 and judge-2 alone give the same board: τ-b = 1, no group changes;
- judge-3 alone: A = 1.0, B = 0.0, C = 0.0; groups A → 1, B and C → 2, so B's group changes.
  τ-b of (1, 1, 0) against (1, 0, 0): one concordant pair (A, C), no discordant one, one pair
  tied only in the ensemble (A, B) and one tied only under judge-3 (B, C):
  τ-b = (1 − 0) / √((3 − 1)(3 − 1)) = 0.5;
- the top group {A, B} becomes {A} under judge-3: it depends on the judge;
- Fleiss κ on each scenario's CR1 (P1-B1-S1/CR1 and P1-B1-S2/CR1: two criteria) over its 18 items rated by 3
  judges: 6 × [3 PASS], 6 × [2 PASS, 1 FAIL], 6 × [3 FAIL]:
  P̄ = (6 + 6 · 1/3 + 6) / 18 = 7/9, P_e = (5/9)² + (4/9)² = 41/81, κ = (7/9 − 41/81) / (40/81) = 0.55.
"""

from __future__ import annotations

import io
import json

import pytest


from tests.report.judge_runs import JUDGES, A, B, C, ensemble_db


@pytest.fixture
def judged_db(tmp_path, monkeypatch):
    """Every judge fails C's answers; judge-3 also fails B's."""
    return ensemble_db(tmp_path, monkeypatch, {j: (C,) for j in JUDGES[:2]} | {JUDGES[2]: (B, C)})


def test_per_judge_leaderboards_match_the_hand_computation(judged_db):
    from helmbench.score.judges import judge_sensitivity
    from helmbench.score.leaderboard import build_leaderboard
    from helmbench.store import open_readonly

    conn = open_readonly(judged_db)
    try:
        board = build_leaderboard(conn)
        assert {r.model: (r.score, r.group) for r in board.rows} == {A: (1.0, 1), B: (1.0, 1), C: (0.0, 2)}
        found = judge_sensitivity(conn, board)
    finally:
        conn.close()
    assert found.judges == tuple(JUDGES)
    views = {v.judge: v for v in found.views}
    for judge in JUDGES[:2]:
        assert views[judge].tau_b == pytest.approx(1.0) and views[judge].changed == ()
    three = views[JUDGES[2]]
    assert {r.model: (r.score, r.group) for r in three.board.rows} == {A: (1.0, 1), B: (0.0, 2), C: (0.0, 2)}
    assert three.tau_b == pytest.approx(0.5)
    assert three.changed == (B,)
    assert found.top_depends
    assert found.n_items == {("P1-B1-S1", "CR1"): 18, ("P1-B1-S2", "CR1"): 18}
    assert found.kappa == pytest.approx({("P1-B1-S1", "CR1"): 0.55, ("P1-B1-S2", "CR1"): 0.55})


def test_kendall_tau_b_matches_a_hand_computation():
    from helmbench.score.judges import kendall_tau_b

    assert kendall_tau_b([1, 1, 0], [1, 0, 0]) == pytest.approx(0.5)
    assert kendall_tau_b([1, 2, 3], [3, 2, 1]) == pytest.approx(-1.0)
    assert kendall_tau_b([1, 1], [1, 0]) is None  # one side constant: undefined
    assert kendall_tau_b([1], [1]) is None


def test_report_shows_the_judges_section_in_text_json_and_markdown(judged_db):
    from rich.console import Console

    from helmbench.cli import report_render
    from helmbench.score.report import load_report

    report = load_report(judged_db, None, None, bootstrap=200)  # 0 would skip the tie-group tests
    data = json.loads(report_render.as_json(report))["judges"]
    assert data["judges"] == JUDGES and data["top_depends_on_judge"] is True
    assert data["kappa"]["P1-B1-S1/CR1"] == {"scenario": "P1-B1-S1", "criterion": "CR1", "kappa": pytest.approx(0.55),
                                             "n_items": 18}
    three = next(v for v in data["views"] if v["judge"] == JUDGES[2])
    assert three["tau_b"] == pytest.approx(0.5) and three["changed_groups"] == [B]
    out = io.StringIO()
    report_render.text(report, Console(file=out, width=250))
    shown = out.getvalue()
    assert "rank sensitivity to the judge" in shown and "judges' agreement on P1-B1-S2/CR1: Fleiss κ 0.55 over 18 items" in shown
    assert "the top tie group depends on the judge" in shown
    assert "Rank sensitivity to the judge" in report_render.as_markdown(report)


def test_the_judges_page_shows_each_judge_escaped(judged_db):
    """The site's judges page (its template, rendered as the site renders it) from the same data;
    a judge id with markup in it shows as text."""
    from dataclasses import replace
    from types import SimpleNamespace

    from helmbench.publish.pages import Links
    from helmbench.publish.render import render
    from helmbench.score.judges import judge_sensitivity
    from helmbench.score.leaderboard import build_leaderboard
    from helmbench.store import open_readonly

    conn = open_readonly(judged_db)
    try:
        found = judge_sensitivity(conn, build_leaderboard(conn))
    finally:
        conn.close()
    link = Links("judges/", "http://127.0.0.1:8001")
    html = str(render("judges.html.j2", {"data": SimpleNamespace(judges=found, catalog={}), "link": link}))
    assert "The top group depends on the judge" in html
    assert html.count("<tr>") == 2 + 3  # two header rows, three judges
    assert html.count("<tr data-criterion=") == 2  # each scenario's CR1
    assert "<td class=\"hb-num\">0.50</td>" in html and "<td class=\"hb-num\">0.55</td>" in html
    hostile = replace(found, views=(replace(found.views[0], judge="x/<img src=x onerror=alert(1)>"),))
    html = str(render("judges.html.j2", {"data": SimpleNamespace(judges=hostile, catalog={}), "link": link}))
    assert "<img" not in html and "&lt;img src=x" in html
    empty = str(render("judges.html.j2", {"data": SimpleNamespace(judges=None, catalog={}), "link": link}))
    assert "nothing to compare yet" in empty and "<table" not in empty
