"""Agreement numbers against published worked examples, then on the real pipeline's judged items."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from helmbench.cli import app
from helmbench.run.judge.judge import majority
from helmbench.score.calibration import (
    FAIL, PASS, Threshold, cohen_kappa, consensus, krippendorff_alpha, load_calibration)
from helmbench.score.detection import Rate
from helmbench.score.review_items import judged_items
from helmbench.store import open_db
from helmbench.store.reviews import save_review


def test_cohens_kappa_equals_the_worked_example():
    # Wikipedia, "Cohen's kappa", worked example: 50 grant proposals read by A and B;
    # both yes 20, A yes / B no 5, A no / B yes 10, both no 15 → p_o 0.70, p_e 0.50, κ = 0.40.
    pairs = [(PASS, PASS)] * 20 + [(PASS, FAIL)] * 5 + [(FAIL, PASS)] * 10 + [(FAIL, FAIL)] * 15
    k = cohen_kappa(pairs)
    assert k.value == pytest.approx(0.40)
    assert k.ci[0] < 0.40 < k.ci[1] and k.ci[1] - k.ci[0] < 0.6
    assert cohen_kappa([(PASS, PASS)] * 5 + [(FAIL, FAIL)] * 3).value == pytest.approx(1.0)
    assert cohen_kappa([(PASS, PASS)] * 8) is None, "one class on both sides: κ is undefined, not 1"
    assert cohen_kappa([]) is None



@pytest.mark.parametrize("table", [[[0, 0], [1, 2]], [[1, 2], [0, 0]], [[0, 3], [0, 2]], [[20, 1], [0, 0]],
                                   [[0, 0], [1, 5]], [[5, 0], [0, 3]]])
def test_a_kappa_interval_without_a_positive_variance_is_absent_never_a_fake_one(table, recwarn):
    """statsmodels' asymptotic variance of κ comes out negative (sqrt of it: NaN, which clamping
    to [-1, 1] turned into a 'whole range' interval), zero, or rounding noise when one side used
    a single class or the agreement is perfect: no interval is honest there, so none is shown."""
    from helmbench.cli.report_render import calibration_rows
    from helmbench.cli.agreement_cmd import agreement_lines
    from helmbench.score.calibration import Calibration, Kappa

    pairs = ([(PASS, PASS)] * table[0][0] + [(PASS, FAIL)] * table[0][1] + [(FAIL, PASS)] * table[1][0]
             + [(FAIL, FAIL)] * table[1][1])
    k = cohen_kappa(pairs)
    assert isinstance(k, Kappa) and k.ci is None, k
    assert not [w for w in recwarn if "invalid value" in str(w.message)]
    cal = Calibration("S1", "c1", Threshold(), kappa=k, sensitivity=Rate(1, 2), specificity=Rate(1, 1))
    assert cal.to_dict()["kappa"] == {"value": k.value, "ci": None}

    class Report:  # what the two renderers read
        criteria = [cal]
        overall = cal
        threshold = Threshold()
        calibration = None
        manifest_hash = None
        note = None  # the sentence for "another manifest than the one asked for" (none here)

    Report.calibration = Report
    text = "\n".join(agreement_lines(Report)) + repr(calibration_rows(Report))
    from helmbench.publish.render import render

    class Data:  # what the calibration partial reads of the site's data: the table, and a scenario's cases
        calibration = Report  # (for the criterion's title; none here)

        @staticmethod
        def scenario_cases(scenario):
            return []

    text += render("_calibration.html.j2", {"data": Data, "rows": [cal], "link_scenarios": False})
    assert "-1.00" not in text and "nan" not in text.lower() and "[0.00, 0.00]" not in text and "[1.00, 1.00]" not in text
    assert f"{k.value:.2f}" in text

def test_sensitivity_and_specificity_equal_the_worked_example():
    # Altman & Bland, "Diagnostic tests 1: sensitivity and specificity", BMJ 1994;308:1552 (liver
    # scan against pathology, 344 patients): 231 of the 258 abnormal found → sensitivity 0.90;
    # 54 of the 86 normal cleared → specificity 0.63. Here "abnormal" is the clinicians' FAIL.
    sens, spec = Rate(231, 258), Rate(54, 86)
    assert round(sens.value, 2) == 0.90 and round(spec.value, 2) == 0.63
    # Wilson intervals as tabulated by Newcombe, Stat Med 1998;17:857 (Table I, method 3):
    # 81/263 → 0.2553–0.3662, 15/148 → 0.0624–0.1605, 0/20 → 0–0.1611, 1/29 → 0.0061–0.1718.
    for (k, n), (lo, hi) in {(81, 263): (0.2553, 0.3662), (15, 148): (0.0624, 0.1605), (0, 20): (0.0, 0.1611),
                             (1, 29): (0.0061, 0.1718)}.items():
        ci = Rate(k, n).interval
        assert (round(ci[0], 4), round(ci[1], 4)) == (lo, hi)


def test_krippendorffs_alpha_equals_the_published_examples():
    # Krippendorff (2011), "Computing Krippendorff's Alpha-Reliability", section C: four observers,
    # twelve units, values 1–5, missing data → nominal α = 0.743. Units given as the labels present.
    observers = ["1 2 3 3 2 1 4 1 2 . . .", "1 2 3 3 2 2 4 1 2 5 . 3", ". 3 3 3 2 3 4 2 2 5 1 .",
                 "1 2 3 3 2 4 4 1 2 5 1 ."]
    rows = [o.split() for o in observers]
    units = [[r[u] for r in rows if r[u] != "."] for u in range(12)]
    assert round(krippendorff_alpha(units), 3) == 0.743
    # Section A: two observers, ten units, binary data → α = 0.095.
    a, b = "0 1 0 0 0 0 0 0 1 0".split(), "1 1 1 0 0 1 0 0 0 0".split()
    assert round(krippendorff_alpha([[x, y] for x, y in zip(a, b)]), 3) == 0.095
    assert krippendorff_alpha([["PASS", "PASS"], ["PASS", "PASS"]]) is None, "no variation: undefined"


def test_consensus_and_ensemble_rules():
    assert consensus([PASS, PASS, FAIL]) == PASS and consensus([FAIL]) == FAIL
    assert consensus([PASS, FAIL]) is None, "an even split has no consensus"
    assert majority([PASS, PASS, FAIL]) == PASS and majority([FAIL, FAIL, PASS]) == FAIL
    assert majority([PASS, FAIL]) == FAIL, "a tie is the stricter verdict"


def _review_all(db, items, reviewer, flip=frozenset()):
    """`reviewer` gives every item the judge's option, except the items in `flip` (the other class)."""
    for item in items.values():
        (judgment, verdict), = item.judges.values()
        if item.hash in flip:
            judgment = "FAIL" if verdict == PASS else "PASS"
        save_review(db, {"item_hash": item.hash, "reviewer": reviewer, "case_id": item.case_id,
                         "scenario": item.scenario, "criterion": item.criterion["code"],
                         "criterion_text": item.criterion["text"], "judgment": judgment})


def test_agreement_on_the_pipelines_items_and_the_cli(judged_db):
    db = open_db(judged_db["db"])
    _, items = judged_items(db)
    _review_all(db, items, "ana")
    passes = [h for h, i in items.items() if next(iter(i.judges.values()))[1] == PASS]
    _review_all(db, items, "ben", flip={passes[0]})  # ben disagrees with the judge (and ana) once
    report = load_calibration(db, threshold=Threshold(min_kappa=0.6, min_n=10))
    db.conn.close()
    overall = report.overall
    assert overall.n_reviewed == len(items) == 24 and overall.reviewers == 2
    assert overall.n_split == 1 and overall.n == 23, "the split item has no consensus"
    assert overall.kappa.value == pytest.approx(1.0) and overall.sensitivity.value == 1.0
    assert overall.alpha is not None and overall.alpha < 1.0 and overall.n_alpha == 24
    assert len(report.criteria) == 2 and all(c.calibrated for c in report.criteria)
    assert not load_calibration(open_db(judged_db["db"]), threshold=Threshold(0.6, 30)).criteria[0].calibrated

    result = CliRunner().invoke(app, ["agreement", "--db", str(judged_db["db"]), "--format", "json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert data["overall"]["n"] == 23 and data["overall"]["kappa"]["value"] == pytest.approx(1.0)
    assert {c["key"] for c in data["criteria"]} == {"P1-B1-S1/CR1", "P1-B1-S2/CR1"}
    text = CliRunner().invoke(app, ["agreement", "--db", str(judged_db["db"])])
    assert text.exit_code == 0 and "P1-B1-S1/CR1" in text.output and "overall" in text.output
    lines = text.output.splitlines()  # a note (another manifest than build/'s) may come first, from the working folder
    head = next(i for i, line in enumerate(lines) if "κ [95% CI]" in line)
    table = lines[head:head + 4]  # header, two criteria, overall
    assert table[-1].startswith("overall")
    for column in ("κ [95% CI]", "sensitivity FAIL", "specificity", "α clinicians", "status"):
        # every row's cell starts where its header does, however long the intervals before it
        start = table[0].index(column)
        assert all(row[start - 1] == " " and row[start] != " " for row in table), (column, table)


def test_agreement_without_a_database_names_it(tmp_path):
    result = CliRunner().invoke(app, ["agreement", "--db", str(tmp_path / "missing.db")])
    assert result.exit_code != 0 and "missing.db" in result.output and "Traceback" not in result.output
