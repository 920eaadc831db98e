"""Calibration in the report: badges per judged criterion, and `--calibrated-only` saying what it left out."""

from __future__ import annotations

import json

from typer.testing import CliRunner

from helmbench.cli import app
from helmbench.score.calibration import Threshold, load_calibration, uncalibrated_scenarios
from helmbench.score.review_items import judged_items
from helmbench.store import open_db
from helmbench.store.reviews import save_review
from tests.review.review_pipeline import PLAIN, SCENARIOS


def _agree_on(db_path, scenario: str) -> int:
    """A clinician who agrees with the judge on every item of `scenario`; returns how many items."""
    db = open_db(db_path)
    _, items = judged_items(db)
    mine = [i for i in items.values() if i.scenario == scenario]
    for item in mine:
        (judgment, _), = item.judges.values()
        save_review(db, {"item_hash": item.hash, "reviewer": "ana", "case_id": item.case_id, "scenario": scenario,
                         "criterion": "CR1", "criterion_text": item.criterion["text"], "judgment": judgment})
    db.conn.close()
    return len(mine)


def test_calibrated_only_leaves_uncalibrated_judged_scenarios_out_and_says_so(judged_db):
    db = judged_db["db"]
    assert _agree_on(db, SCENARIOS[1]) == 12
    runner = CliRunner()
    full = json.loads(runner.invoke(app, ["report", "--db", str(db), "--format", "json", "--bootstrap", "0"]).output)
    assert full["calibrated_only"] is None
    badges = {c["key"]: c for c in full["calibration"]["criteria"]}
    assert badges["P1-B1-S2/CR1"]["n"] == 12 and not badges["P1-B1-S2/CR1"]["calibrated"], "n 12 < 30 (the default)"
    assert badges["P1-B1-S1/CR1"]["n_reviewed"] == 0

    r = runner.invoke(app, ["report", "--db", str(db), "--format", "json", "--bootstrap", "0", "--calibrated-only"])
    assert r.exit_code == 0, r.output
    only = json.loads(r.output)
    assert list(only["calibrated_only"]["left_out"]) == list(SCENARIOS)  # in scenario order
    assert "P1-B1-S1 (CR1 κ —, n 0)" in only["calibrated_only"]["note"]
    for row_full, row in zip(full["rows"], only["rows"]):
        assert row["n_expected"] == 6 and row_full["n_expected"] == 18, "only the unjudged scenario is left"
        assert set(row["by_behaviour"]) == {"P1-B1"}

    text = runner.invoke(app, ["report", "--db", str(db), "--calibrated-only", "--bootstrap", "0"])
    assert text.exit_code == 0 and "--calibrated-only: the headline leaves out 2 judged scenario(s)" in text.output
    assert "judge calibration against clinicians" in text.output and "uncalibrated (κ 1.00, n 12" in text.output
    md = runner.invoke(app, ["report", "--db", str(db), "--format", "markdown", "--bootstrap", "0"]).output
    assert "### Judge calibration" in md

    # with a lower bar the reviewed scenario counts as calibrated and stays in
    report = load_calibration(open_db(db), threshold=Threshold(min_kappa=0.6, min_n=10))
    assert set(uncalibrated_scenarios(report)) == {SCENARIOS[0]}
    assert report.of(SCENARIOS[1], "CR1").badge().startswith("κ 1.00 (n 12, ")
    assert PLAIN not in {c.scenario for c in report.criteria}


def test_calibrated_only_with_one_run_is_a_usage_error(judged_db):
    r = CliRunner().invoke(app, ["report", "--db", str(judged_db["db"]), "--run-id", "1", "--calibrated-only"])
    assert r.exit_code == 2 and "--calibrated-only" in r.output


def test_agreement_and_report_say_the_same_when_the_manifest_asked_for_has_no_runs(judged_db, tmp_path):
    """After a recompile that reworded a criterion and before any run: `agreement`, like `report` (and
    `publish`, and the review page), shows the latest runs and says so in the same words, never silently
    another manifest's calibration."""
    from helmbench import api
    from tests.fakes.manifests import write_manifest
    from tests.review.review_pipeline import cases

    recompiled = tmp_path / "new" / "manifest.jsonl"
    header = write_manifest(recompiled, cases("A reworded criterion, not run yet."))
    assert header["manifest_hash"] != judged_db["manifest_hash"]
    calibration = api.agreement(judged_db["db"], recompiled)
    report = api.report_data(judged_db["db"], recompiled, bootstrap=0)
    assert calibration.manifest_hash == report.board.manifest_hash == judged_db["manifest_hash"]
    from helmbench.score.report import manifest_note

    assert calibration.note and calibration.note == report.note == manifest_note(judged_db["db"], recompiled)  # publish
    assert header["manifest_hash"][:19] in calibration.note and str(recompiled) in calibration.note
    assert api.agreement(judged_db["db"], judged_db["manifest"]).note is None  # its own manifest: nothing to say
