"""A criterion is (scenario, criterion code): two scenarios that both have a `CR1` are two criteria everywhere.

A real run through the fake OpenRouter: three models (A, B, C: B and C sign their answers, so the three
answers differ and each is judged), two judged scenarios of six cases (P1-B1-S1 and P1-B1-S2, each with
the criterion `CR1`) and a three-judge ensemble whose verdicts depend on the scenario and the case's
perturbation only (the same for every model). Per scenario, 6 cases × 3 models = 18 items.

Judges (judge-1, judge-2, judge-3), per perturbation:

    P1-B1-S1: PT1 PPP, PT2 PPP, PT3 FFF, PT4 FFF, PT5 PPF, PT6 PPP   ensemble P P F F P P
    P1-B1-S2: PT1 PFF, PT2 FPP, PT3 PPP, PT4 FFP, PT5 PFP, PT6 FPF   ensemble F P P F P F

Fleiss' κ (3 raters; an item's agreement P_i is 1 when unanimous, (2·1 + 0)/(3·2) = 1/3 when split 2–1;
each pattern is repeated for the three models, which changes no proportion):
- S1: P̄ = (5 + 1/3) / 6 = 8/9; PASS share 11/18, P_e = (11/18)² + (7/18)² = 170/324;
  κ = (288/324 − 170/324) / (154/324) = 118/154 = 0.7662, over 18 items;
- S2: P̄ = (1 + 5 · 1/3) / 6 = 4/9; PASS share 10/18, P_e = 41/81; κ = (36/81 − 41/81) / (40/81) = −0.125;
- pooled under the code alone (the old grouping): P̄ = 2/3, PASS share 21/36, P_e = 37/72, κ = 11/35 = 0.314
  over 36 items: a number of neither criterion.

Clinicians: ana reviews every item, as the ensemble decided in S1, and in S2 FAIL on PT1, PT2, PT4, PT5,
PT6 and PASS on PT3; ben reviews S2's items only, as ana does. Judge (ensemble) against consensus:
- S1: 6 FAIL/FAIL, 12 PASS/PASS: κ = 1, sensitivity 6/6, specificity 12/12, n 18; α between clinicians
  undefined (no item has two reviewers), 0 items with two reviews;
- S2: (judge, clinicians) PASS/PASS 3, PASS/FAIL 6, FAIL/FAIL 9: p_o = 12/18, p_e = ½ · 3/18 + ½ · 15/18 = ½,
  κ = (2/3 − ½) / ½ = 1/3; sensitivity 9/15, specificity 3/3, n 18; 18 items with two reviews.
"""

from __future__ import annotations

import json
import re

import pytest
from typer.testing import CliRunner

from tests.report.judge_runs import JUDGES, A, B, C, ensemble_db

S1, S2 = "P1-B1-S1", "P1-B1-S2"
VOTES = {  # (scenario, perturbation) → each judge's verdict, in JUDGES order
    (S1, 1): "PPP", (S1, 2): "PPP", (S1, 3): "FFF", (S1, 4): "FFF", (S1, 5): "PPF", (S1, 6): "PPP",
    (S2, 1): "PFF", (S2, 2): "FPP", (S2, 3): "PPP", (S2, 4): "FFP", (S2, 5): "PFP", (S2, 6): "FPF",
}
CLINICIANS_S2 = {1: "FAIL", 2: "FAIL", 3: "PASS", 4: "FAIL", 5: "FAIL", 6: "FAIL"}
TITLES = {S1: "Hidden planning in a travel question", S2: "Asking about medication doses"}
CASE = re.compile(r"(P1-B1-S\d)-C1-PT(\d)")


def _verdict(judge: str, prompt: str) -> str:
    scenario, pt = CASE.search(prompt).groups()
    return "PASS" if VOTES[(scenario, int(pt))][JUDGES.index(judge)] == "P" else "FAIL"


@pytest.fixture(scope="module")
def keyed_db(tmp_path_factory):
    from helmbench.score.review_items import judged_items
    from helmbench.store import open_db
    from helmbench.store.reviews import save_review
    tmp = tmp_path_factory.mktemp("keys")
    mp = pytest.MonkeyPatch()
    try:
        db = ensemble_db(tmp, mp, None, verdict=_verdict)
    finally:
        mp.undo()
    conn = open_db(db)
    _, items = judged_items(conn)
    assert len(items) == 36
    for item in items.values():
        pt = int(CASE.search(item.case_id).group(2))
        agreed = "FAIL" if VOTES[(item.scenario, pt)].count("F") >= 2 else "PASS"
        verdict = agreed if item.scenario == S1 else CLINICIANS_S2[pt]
        for reviewer in ("ana",) if item.scenario == S1 else ("ana", "ben"):
            save_review(conn, {"item_hash": item.hash, "reviewer": reviewer, "case_id": item.case_id,
                               "scenario": item.scenario, "criterion": "CR1",
                               "criterion_text": item.criterion["text"], "judgment": verdict})
    conn.conn.close()
    return db


KAPPA = {(S1, "CR1"): 118 / 154, (S2, "CR1"): -0.125}


def test_fleiss_kappa_is_per_scenario_in_the_score_the_report_and_the_judges_page(keyed_db):
    from types import SimpleNamespace

    from helmbench.cli import report_render
    from helmbench.publish.pages import Links
    from helmbench.publish.render import render
    from helmbench.score.judges import judge_sensitivity
    from helmbench.score.leaderboard import build_leaderboard
    from helmbench.score.report import load_report
    from helmbench.store import open_readonly

    conn = open_readonly(keyed_db)
    try:
        found = judge_sensitivity(conn, build_leaderboard(conn))
    finally:
        conn.close()
    assert found.n_items == {(S1, "CR1"): 18, (S2, "CR1"): 18}
    assert found.kappa == pytest.approx(KAPPA)

    report = load_report(keyed_db, None, None, bootstrap=0)
    kappa = json.loads(report_render.as_json(report))["judges"]["kappa"]
    assert kappa == {f"{s}/CR1": {"scenario": s, "criterion": "CR1", "kappa": pytest.approx(k), "n_items": 18}
                     for (s, _), k in KAPPA.items()}
    assert "0.31" not in json.dumps(kappa)  # the pooled κ (11/35) is nowhere

    catalog = {"scenarios": {s: {"title": t} for s, t in TITLES.items()}}
    html = str(render("judges.html.j2", {"data": SimpleNamespace(judges=found, catalog=catalog),
                                         "link": Links("judges/", "http://127.0.0.1:8001")}))
    table = html[html.index('id="judge-agreement-table"'):]
    table = table[:table.index("</table>")]
    rows = re.findall(r'<tr data-criterion="([^"]+)"><td>(.*?)</td><td class="hb-num">([^<]+)</td>'
                      r'<td class="hb-num">([^<]+)</td>', table)
    assert [(key, n) for key, _, _, n in rows] == [(f"{S1}/CR1", "18"), (f"{S2}/CR1", "18")]
    assert rows[0][2] == "0.77" and rows[1][2] in ("-0.12", "-0.13")  # −0.125 in floating point, rounded either way
    for (_, cell, _, _), scenario in zip(rows, (S1, S2)):
        assert TITLES[scenario] in cell and f"<code>{scenario}</code>" in cell and "<code>CR1</code>" in cell


def test_agreement_and_review_status_are_per_scenario(keyed_db):
    from helmbench.cli import app
    from helmbench.score.calibration import krippendorff_alpha

    result = CliRunner().invoke(app, ["agreement", "--db", str(keyed_db), "--format", "json"])
    assert result.exit_code == 0, result.output
    criteria = {c["key"]: c for c in json.loads(result.output)["criteria"]}
    assert set(criteria) == {f"{S1}/CR1", f"{S2}/CR1"}
    one, two = criteria[f"{S1}/CR1"], criteria[f"{S2}/CR1"]
    assert (one["n"], one["n_items"], one["reviewers"], one["n_alpha"], one["alpha"]) == (18, 18, 1, 0, None)
    assert one["kappa"]["value"] == pytest.approx(1.0)
    assert (one["sensitivity"]["k"], one["sensitivity"]["n"], one["specificity"]["k"], one["specificity"]["n"]) == \
        (6, 6, 12, 12)
    assert (two["n"], two["n_items"], two["reviewers"], two["n_alpha"], two["alpha"]) == (18, 18, 2, 18, 1.0)
    assert two["kappa"]["value"] == pytest.approx(1 / 3)
    assert (two["sensitivity"]["k"], two["sensitivity"]["n"], two["specificity"]["k"], two["specificity"]["n"]) == \
        (9, 15, 3, 3)
    # the judges' α per scenario: over that scenario's 18 items only (each item's three votes)
    for crit, scenario in ((one, S1), (two, S2)):
        units = [list(VOTES[(scenario, pt)].replace("P", "PASS,").replace("F", "FAIL,").rstrip(",").split(","))
                 for pt in range(1, 7) for _model in (A, B, C)]
        assert crit["judges"] == 3 and crit["judge_alpha"] == pytest.approx(krippendorff_alpha(units))
    assert criteria[f"{S1}/CR1"]["judge_alpha"] != pytest.approx(criteria[f"{S2}/CR1"]["judge_alpha"])

    result = CliRunner().invoke(app, ["review", "status", "--db", str(keyed_db), "--format", "json"])
    assert result.exit_code == 0, result.output
    status = {c["key"]: c for c in json.loads(result.output)["criteria"]}
    assert {k: (c["scenario"], c["criterion"], c["items"], c["reviewed"], c["overlap"]) for k, c in status.items()} == {
        f"{S1}/CR1": (S1, "CR1", 18, 18, 0), f"{S2}/CR1": (S2, "CR1", 18, 18, 18)}
