"""With an ensemble, a model judged by its own family is also scored without that judge (#28 §1).

A real run through the fake OpenRouter: three judges, three models answering 12 judged cases each
(one criterion, CR1). models.yml's `families:` makes test/model-b a relative of test/judge-3.
Every judge passes A and fails C; on B, judge-1 fails, judge-2 and judge-3 (B's relative) pass.
Hand computation:

- the ensemble: A = 1.0, B = 1.0 (2 of 3 pass every case), C = 0.0;
- B without judge-3: judge-1 FAIL and judge-2 PASS on every case, an even split, which the
  judge step decides as a FAIL (a tie fails): B = 0.0, ranked beside C below A, so its tie
  group is 2 (12 cases all one way: the paired test separates it from A);
- A and C have no relative among the judges: no such line for them.
"""

from __future__ import annotations

import io
import json

import pytest

from tests.report.judge_runs import JUDGES, A, B, C, ensemble_db


@pytest.fixture
def kin_db(tmp_path, monkeypatch):
    """Every judge fails C's answers; judge-1 also fails B's; B and judge-3 are one family."""
    return ensemble_db(tmp_path, monkeypatch, {JUDGES[0]: (B, C), JUDGES[1]: (C,), JUDGES[2]: (C,)},
                       f"families: {{{B}: test/kin, {JUDGES[2]}: test/kin}}\n")


def test_a_conflicted_model_is_scored_without_its_familys_judge(kin_db):
    from rich.console import Console

    from helmbench.cli import report_render
    from helmbench.score.report import load_report

    report = load_report(kin_db, None, None, bootstrap=200)  # 0 would skip the tie-group tests
    assert {r.model: (r.score, r.judge_conflicts) for r in report.rows} == {
        A: (1.0, ()), B: (1.0, (JUDGES[2],)), C: (0.0, ())}
    (w,) = report.judges.without_kin
    assert (w.model, w.kin, w.others, w.ensemble_score) == (B, (JUDGES[2],), tuple(JUDGES[:2]), 1.0)
    assert (w.row.score, w.row.group) == (0.0, 2)

    data = json.loads(report_render.as_json(report))["judges"]["without_own_family"]
    assert [(d["model"], d["left_out"], d["judges"], d["ensemble_score"], d["score"], d["group"]) for d in data] == [
        (B, [JUDGES[2]], JUDGES[:2], 1.0, 0.0, 2)]
    out = io.StringIO()
    report_render.text(report, Console(file=out, width=300))
    shown = out.getvalue()
    assert (f"{B}: without its own family's judge ({JUDGES[2]}), judged by {JUDGES[0]}, {JUDGES[1]}: 0.0 %"
            in shown)
    assert "with the whole ensemble 100.0 %" in shown
    assert f"{A}: without" not in shown and f"{C}: without" not in shown
    assert "without its own family" in report_render.as_markdown(report)


def test_the_judges_page_shows_the_score_without_the_familys_judge_escaped(kin_db):
    from dataclasses import replace
    from types import SimpleNamespace

    from helmbench.publish.pages import Links
    from helmbench.publish.render import render
    from helmbench.score.judges import judge_sensitivity
    from helmbench.score.leaderboard import build_leaderboard
    from helmbench.store import open_readonly

    conn = open_readonly(kin_db)
    try:
        found = judge_sensitivity(conn, build_leaderboard(conn, bootstrap=200), bootstrap=200)
    finally:
        conn.close()
    link = Links("judges/", "http://127.0.0.1:8001")
    html = str(render("judges.html.j2", {"data": SimpleNamespace(judges=found), "link": link}))
    table = html[html.index('id="without-kin-table"'):]
    assert (f"<tr><td>{B}</td><td>{JUDGES[2]}</td><td>{JUDGES[0]}, {JUDGES[1]}</td>" in table
            and '<td class="hb-num">2</td></tr>' in table)
    hostile = replace(found, without_kin=(replace(found.without_kin[0], model="x/<img src=x onerror=alert(1)>"),))
    html = str(render("judges.html.j2", {"data": SimpleNamespace(judges=hostile), "link": link}))
    assert "<img" not in html and "&lt;img src=x" in html
    plain = replace(found, without_kin=())
    assert "without-kin-table" not in str(render("judges.html.j2", {"data": SimpleNamespace(judges=plain),
                                                                     "link": link}))
