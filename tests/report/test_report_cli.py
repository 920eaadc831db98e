"""`helmbench report` on a database made by a judged run: the terminal table, and json, csv and
markdown that machines and docs can use, all with the same numbers."""

from __future__ import annotations

import csv
import io
import json
import sys

import pytest
from typer.testing import CliRunner

from helmbench.cli import app, main
from tests.judge.judge_pipeline import MODEL, OTHER


def report(judged_db, *args) -> str:
    result = CliRunner().invoke(app, ["report", "--db", str(judged_db.db), "--manifest", str(judged_db.manifest),
                                      "--bootstrap", "200", *args])
    assert result.exit_code == 0, result.output
    return result.output


def test_text_shows_the_leaderboard_and_breakdowns(judged_db):
    out = report(judged_db)
    for text in (MODEL, OTHER, "score (95 % CI)", "pass rate (95 % CI)", "coverage", "evaluations", "by pillar",
                 "by behaviour", "P1-B1", "Wilson"):
        assert text in out


def test_json_parses_and_keeps_cases_and_evaluations_apart(judged_db):
    data = json.loads(report(judged_db, "--format", "json"))
    rows = {r["model"]: r for r in data["rows"]}
    assert set(rows) == {MODEL, OTHER}
    runs = {r["model"]: r for r in judged_db.runs}
    for model, row in rows.items():
        assert row["n_results"] == runs[model]["n_pass"] + runs[model]["n_fail"] + runs[model]["n_error"]
        assert row["evaluations"]["n_judgements"] == runs[model]["n_judgements"] > 0
        assert row["n_verdicts"] <= row["n_results"] and 0 <= row["score"] <= 1
        assert row["by_pillar"] and row["by_behaviour"] and row["judge_cost"] > 0
        assert row["score_ci"][0] <= row["score"] <= row["score_ci"][1]
    assert rows[OTHER]["n_errors"] > 0 and rows[MODEL]["n_errors"] == 0
    # OTHER has errors, so its coverage is incomplete: it is listed apart, unranked.
    assert [(r["model"], r["rank"], r["complete"]) for r in data["rows"]] == [(MODEL, 1, True), (OTHER, None, False)]


def test_csv_has_a_header_and_one_row_per_model(judged_db):
    out = report(judged_db, "--format", "csv")
    rows = list(csv.DictReader(io.StringIO(out)))
    assert len(rows) == 2 and {r["model"] for r in rows} == {MODEL, OTHER}
    for r in rows:
        assert 0 <= float(r["score"]) <= 1 and int(r["n_judgements"]) > 0 and float(r["judge_cost"]) > 0
        assert any(k.startswith("score_P") for k in r)


def test_markdown_has_tables(judged_db):
    out = report(judged_db, "--format", "markdown")
    assert "## Leaderboard" in out and "| rank | group | model |" in out and "|---|---|" in out
    assert "### By pillar" in out and "### By behaviour" in out
    assert sum(line.startswith(f"| 1 | 1 | {MODEL}") or line.startswith(f"| 1 | 1 | {OTHER}") for line in out.splitlines()) >= 1


def test_run_id_reports_one_run(judged_db):
    run_id = judged_db.runs[0]["id"]
    data = json.loads(report(judged_db, "--format", "json", "--run-id", str(run_id)))
    assert [r["run_id"] for r in data["rows"]] == [run_id]


def test_a_manifest_without_runs_falls_back_to_the_latest_with_a_note(judged_db, tmp_path):
    other = tmp_path / "manifest.jsonl"
    other.write_text(json.dumps({"format": "helmbench-manifest/1", "manifest_hash": "sha256:" + "0" * 64}) + "\n")
    out = CliRunner().invoke(app, ["report", "--db", str(judged_db.db), "--manifest", str(other), "--bootstrap", "0"])
    assert out.exit_code == 0 and "has no finished runs" in out.output


@pytest.mark.parametrize("args, message", [
    (["--db", "nowhere/results.db"], "helmbench run"),
    (["--run-id", "999"], "no run with id 999"),
])
def test_bad_input_gets_a_clear_message(judged_db, monkeypatch, capsys, args, message):
    if "--db" not in args:
        args = ["--db", str(judged_db.db), *args]
    monkeypatch.setattr(sys, "argv", ["helmbench", "report", *args])
    with pytest.raises(SystemExit) as exc:
        main()
    out, err = capsys.readouterr()
    assert exc.value.code != 0 and message in out + err and "Traceback" not in out + err


def test_help_has_examples():
    result = CliRunner().invoke(app, ["report", "--help"])
    assert result.exit_code == 0 and "Example" in result.output and "--format" in result.output


def test_costs_agreement_and_the_site_read_the_manifest_by_reports_rule_and_say_the_same_sentence(judged_db, tmp_path):
    """A manifest recompiled and not run yet: every reader shows the latest finished runs (of the
    other manifest) and says so in `report`'s words; the site says it of the file's name only."""
    from pathlib import Path

    from helmbench import api
    from helmbench.publish.reader import load
    from helmbench.publish.settings import PublishSettings
    from helmbench.score.report import shown_note
    from helmbench.store import open_reader
    from helmbench.store.queries.ledger import run_costs

    lines = judged_db.manifest.read_text(encoding="utf-8").splitlines(keepends=True)
    header = json.loads(lines[0])
    ran = header["manifest_hash"]
    header["manifest_hash"] = "sha256:" + "0" * 64
    other = tmp_path / "manifest.jsonl"
    other.write_text(json.dumps(header) + "\n" + "".join(lines[1:]), encoding="utf-8")
    said = shown_note(other, header["manifest_hash"], ran)
    assert said and ran[:19] in said

    flat = lambda text: " ".join(text.split())  # noqa: E731 (rich wraps long lines)
    report_out = CliRunner().invoke(app, ["report", "--db", str(judged_db.db), "--manifest", str(other),
                                          "--bootstrap", "0"])
    assert flat(said) in flat(report_out.output)
    costs_out = CliRunner().invoke(app, ["costs", "--db", str(judged_db.db), "--manifest", str(other)])
    assert flat(said) in flat(costs_out.output), costs_out.output
    # (its estimate of what is not run yet then refuses this hand-edited manifest, with an error: and a hint)
    assert "Traceback" not in costs_out.output and "other manifests" not in costs_out.output
    assert api.agreement(judged_db.db, other).note == said
    site = load(PublishSettings(db=judged_db.db, manifest=other, datasette_url="http://127.0.0.1:1"))
    assert site.leaderboard.manifest_hash == ran and site.note == shown_note(Path(other.name), header["manifest_hash"],
                                                                            ran)
    # costs lists the runs of the manifest shown, not every run of the database
    reader = open_reader(judged_db.db)
    assert run_costs(reader, manifest_hash=header["manifest_hash"]) == []
    assert {r["run_id"] for r in run_costs(reader, manifest_hash=ran)} == {r["id"] for r in judged_db.runs}
    reader.conn.close()
    # the manifest that was run: no sentence anywhere
    plain = CliRunner().invoke(app, ["costs", "--db", str(judged_db.db), "--manifest", str(judged_db.manifest)])
    assert "has no finished runs" not in plain.output and api.agreement(judged_db.db, judged_db.manifest).note is None
    assert load(PublishSettings(db=judged_db.db, manifest=judged_db.manifest, datasette_url="http://x")).note is None
