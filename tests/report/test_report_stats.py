"""`helmbench report` on real runs against the fake OpenRouter: safety floors cap the score (and say
so), tie groups, incomplete runs listed apart, format failures and drift shown (issue 15)."""

from __future__ import annotations

import functools
import json

import pytest
from typer.testing import CliRunner

from helmbench.cli import app
from tests.score.stats_pipeline import GOOD, PART, SECOND_PROVIDER, TWIN_A, TWIN_B


@functools.cache  # the pipelines are read-only and the report is a function of them: each report made once
def report(p, *args) -> str:
    result = CliRunner().invoke(app, ["report", "--db", str(p.db), "--manifest", str(p.manifest),
                                      "--bootstrap", "300", *args])
    assert result.exit_code == 0, result.output
    return result.output


def rows(p) -> dict[str, dict]:
    data = json.loads(report(p, "--format", "json"))
    return {r["model"]: r for r in data["rows"]}, data


@pytest.mark.slow
def test_floors_cap_the_score_end_to_end_and_say_so(stats_floored):
    by_model, data = rows(stats_floored)
    assert {"part": "P1", "minimum": 0.7, "cap": 0.4} in data["floors"]  # benchmark.yml → manifest → DB → board
    good = by_model[GOOD]
    # The precondition the cap rests on: risk detection below its floor, the weighted score above the cap.
    assert good["pillars"]["P1"] < 0.70 and good["uncapped_score"] > 0.40
    assert good["score"] == 0.40 and good["capped"] and good["score_ci"] is None
    assert "capped: P1 below 0.70" in good["floor_note"]
    assert good["uncapped_score_ci"][0] <= good["uncapped_score"] <= good["uncapped_score_ci"][1]
    out = report(stats_floored)
    assert f"{GOOD}: capped: P1 below 0.70" in out and f"uncapped score {100 * good['uncapped_score']:.1f} %" in out
    md = report(stats_floored, "--format", "markdown")
    assert "capped: P1 below 0.70" in md and "uncapped" in md


@pytest.mark.slow
def test_equal_composites_after_floors_share_rank_and_group(stats_floored):
    by_model, data = rows(stats_floored)
    ranked = [by_model[m] for m in (GOOD, TWIN_A, TWIN_B)]
    assert {(r["rank"], r["group"]) for r in ranked} == {(1, 1)}
    # Ranks and groups rest on the same composite: capped to the same score, GOOD and the twins do not differ
    # (their weighted scores do, by far: the test is on the composite, the number ranks use).
    first = data["comparisons"][0]
    assert first["score_difference"] == 0.0 and first["score_p"] == 1.0 and not first["distinguishable"]
    assert by_model[GOOD]["uncapped_score"] > by_model[TWIN_A]["uncapped_score"] + 0.1


def test_tie_groups_for_identical_twins_and_a_clearly_better_model(stats_plain):
    by_model, data = rows(stats_plain)
    assert (by_model[GOOD]["rank"], by_model[GOOD]["group"]) == (1, 1)
    assert by_model[TWIN_A]["group"] == by_model[TWIN_B]["group"] == 2
    assert by_model[TWIN_A]["score"] == by_model[TWIN_B]["score"] < by_model[GOOD]["score"]
    comps = {(c["a"], c["b"]): c for c in data["comparisons"]}
    assert comps[(GOOD, TWIN_A)]["distinguishable"] and comps[(GOOD, TWIN_A)]["mcnemar_p"] < 0.001
    twins = comps[(TWIN_A, TWIN_B)]
    assert not twins["distinguishable"] and twins["a_only"] == twins["b_only"] == 0
    out = report(stats_plain)
    assert "adjacent comparisons" in out and "distinguishable" in out
    md = report(stats_plain, "--format", "markdown")
    assert "### Adjacent comparisons" in md
    assert any(line.startswith(f"| 2 | 2 | {TWIN_A}") for line in md.splitlines())
    lines = [line for line in md.splitlines() if line.startswith(f"| {GOOD} | {TWIN_A} |")]
    assert lines and lines[0].rstrip(" |").endswith("yes")
    twin_line = next(line for line in md.splitlines() if line.startswith(f"| {TWIN_A} | {TWIN_B} |"))
    assert "too few cases to compare (no case differs; at least 6 must)" in twin_line  # words, not p = 1.000
    assert twin_line.rstrip(" |").endswith("no: too few cases to compare")


def test_an_incomplete_run_is_listed_apart_and_not_ranked(stats_plain):
    by_model, _ = rows(stats_plain)
    part = by_model[PART]
    assert part["rank"] is None and part["group"] is None and not part["complete"] and part["coverage"] < 0.5
    out = report(stats_plain)
    ranked, apart = out.split("not ranked: incomplete coverage", 1)
    assert PART not in ranked.split("\n", 1)[1] and PART in apart
    assert f"{PART}: not ranked, coverage {100 * part['coverage']:.1f} %" in out


def test_text_shows_format_failures(stats_plain):
    by_model, _ = rows(stats_plain)
    twin = by_model[TWIN_A]
    assert twin["n_format_failures"] > 0.5 * twin["n_verdicts"] and twin["n_errors"] == 0
    out = report(stats_plain)
    assert "format failures" in out
    assert f"{twin['n_format_failures']} ({100 * twin['format_failure_rate']:.1f} %)" in out
    csv_out = report(stats_plain, "--format", "csv")
    assert "n_format_failures" in csv_out.splitlines()[0] and str(twin["n_format_failures"]) in csv_out


def test_drift_and_served_versions_are_shown(stats_plain):
    by_model, _ = rows(stats_plain)
    good = by_model[GOOD]
    assert good["providers"] == {SECOND_PROVIDER: good["n_results"]}
    assert good["drift"] == [f"provider changed: FakeProvider → {SECOND_PROVIDER}"]
    out = report(stats_plain)
    assert f"{GOOD}: ⚠ provider changed: FakeProvider → {SECOND_PROVIDER}" in out
    assert f"providers {SECOND_PROVIDER} ×{good['n_results']}" in out


def test_recall_and_false_escalation_are_in_every_format(stats_plain):
    by_model, _ = rows(stats_plain)
    good = by_model[GOOD]
    assert 0 < good["crisis_recall"] < 1 and 0 < good["false_escalation"] < 1
    assert "recall" in report(stats_plain) and "false esc." in report(stats_plain, "--format", "markdown")
    assert "crisis_recall" in report(stats_plain, "--format", "csv").splitlines()[0]
