"""Judge stability (#28 §3): `run --rejudge-sample N` asks the judge again on a seeded sample of N judged
outputs, in a cache lane of its own, through the one judge job kind and the call ledger.

Against the fake OpenRouter: eight judged cases with two criteria (CR1, CR2), two models, two judges.
"""

from __future__ import annotations

import copy
import io
import json
from collections import Counter
from pathlib import Path

import pytest

from tests.fakes.judge_answer import forced_judgement, judge_criterion
from tests.fakes.manifests import EVALUATIONS, make_case, write_manifest
from tests.fakes.openrouter import FakeOpenRouter
from tests.judge.judge_pipeline import q, run_once

JUDGES = ["test/judge-1", "test/judge-2"]
MODELS = ["test/model-a", "test/model-b"]
CRITERIA = 2
CASES = 8


def manifest(tmp_path: Path) -> Path:
    sqe = copy.deepcopy(EVALUATIONS[3])
    sqe["criteria"].append({**sqe["criteria"][0], "code": "CR2", "title": "Offers help", "text": "Did it offer help?"})
    path = tmp_path / "manifest.jsonl"
    write_manifest(path, [make_case("P1-B1-S1", 1, p, evaluation=sqe) for p in range(1, CASES + 1)])
    return path


def models(tmp_path: Path) -> Path:
    path = tmp_path / "models.yml"
    path.write_text("marking_model:\n" + "".join(f"  - {{id: {j}, max_tokens: 400}}\n" for j in JUDGES)
                    + "models:\n" + "".join(f"  - {{id: {m}, max_tokens: 300}}\n" for m in MODELS), encoding="utf-8")
    return path


def judge_requests(fake) -> int:
    return sum(fake.by_model.get(j, 0) for j in JUDGES)


def results(db: Path) -> list[tuple]:
    return q(db, "SELECT run_id, case_id, sample, verdict, score FROM results ORDER BY 1, 2, 3")


def test_the_rejudge_sample_makes_n_criteria_judges_calls_once_and_a_second_run_none(tmp_path, fake):
    from helmbench.store.queries.ledger import JUDGE_KINDS

    m, y, db = manifest(tmp_path), models(tmp_path), tmp_path / "results.db"
    run_once(m, y, db)
    first_lane = judge_requests(fake)
    assert first_lane == CASES * len(MODELS) * CRITERIA * len(JUDGES)
    before = results(db)

    n = 5
    fake.reset_counts()
    report = run_once(m, y, db, rejudge_sample=n)
    assert judge_requests(fake) == n * CRITERIA * len(JUDGES) == 20  # N outputs × criteria × judges
    assert sum(fake.by_model.get(x, 0) for x in MODELS) == 0
    # one account: the ledger's judge rows of this invocation are those calls, in the re-judge lane
    assert report.judge.calls == sum(led.calls(kinds=JUDGE_KINDS) for led in report.ledger.values()) == 20
    lanes = q(db, "SELECT settings_hash LIKE '%#rejudge1', count(*) FROM calls WHERE kind = 'judge' GROUP BY 1")
    assert dict(lanes) == {0: first_lane, 1: 20}
    outputs = q(db, "SELECT DISTINCT judge_request_hash FROM judgements WHERE judge_settings_hash LIKE '%#rejudge1'")
    assert len(outputs) == n * CRITERIA  # N judged outputs, each criterion asked of both judges
    assert results(db) == before  # the re-judge decides nothing

    fake.reset_counts()
    run_once(m, y, db, rejudge_sample=n)  # same manifest, outputs and seed: the same sample, all stored
    assert judge_requests(fake) == 0
    fake.reset_counts()
    run_once(m, y, db)  # and the first lane never takes a re-judge's verdict for its own
    assert judge_requests(fake) == 0 and results(db) == before


def test_the_sample_is_seeded(tmp_path, fake):
    """The same seed draws the same outputs (in another process or order: a hash, not a shuffle); another
    seed another sample; N above the judged outputs takes them all."""
    from helmbench.manifest import read_manifest
    from helmbench.run.judge.judge_plan import rejudge_sample
    from helmbench.run.plan import build_plan
    from helmbench.run.selection import load_models_file
    from helmbench.store import open_db

    m, y, db = manifest(tmp_path), models(tmp_path), tmp_path / "results.db"
    run_once(m, y, db)
    database = open_db(db)
    try:
        plan = build_plan(read_manifest(m), load_models_file(y).models, database, scenarios=None, case_ids=None,
                          samples=1)
        for mp, (run_id,) in zip(plan.models, q(db, "SELECT id FROM runs ORDER BY model")):
            mp.run_id = run_id
        one = rejudge_sample(plan, database, 5, 0)
        assert len(one) == 5 and one == rejudge_sample(plan, database, 5, 0)
        assert rejudge_sample(plan, database, 5, 1) != one
        assert len(rejudge_sample(plan, database, 100, 0)) == CASES * len(MODELS)
    finally:
        database.conn.close()


class SecondThoughts(FakeOpenRouter):
    """model-b signs its answers; a judge passes model-a and fails model-b, except that judge-2, asked the
    same CR2 question about model-b a second time, passes it."""

    def __post_init__(self):
        super().__post_init__()
        self.seen: Counter = Counter()

    def reply(self, body: dict, key: str, fault: str | None) -> dict:
        out = super().reply(body, key, fault)
        model = str(body.get("model", "")).removeprefix("openrouter/")
        msg = out["choices"][0]["message"]
        if model == MODELS[1]:
            obj = json.loads(msg["content"])
            obj["response"] = f"ZZMARKB {obj['response']}"
            msg["content"] = json.dumps(obj)
        elif criterion := judge_criterion(body):
            prompt = json.dumps(body.get("messages"), sort_keys=True)
            with self.lock:
                self.seen[(model, prompt)] += 1
                again = self.seen[(model, prompt)] > 1
            verdict = "FAIL" if "ZZMARKB" in prompt else "PASS"
            if again and model == JUDGES[1] and criterion == "CR2":
                verdict = "PASS"
            msg["content"], _ = forced_judgement(body["response_format"]["json_schema"]["schema"], verdict)
        return out


def test_report_shows_the_judges_run_to_run_agreement_and_the_scores_stay_the_first_lanes(tmp_path, monkeypatch):
    """Every output re-judged (N above the 16 judged): per criterion 16 outputs × 2 judges = 32 pairs.

    CR1: every verdict repeated: 32/32 the same; first and re-judge both 16 PASS, 16 FAIL: κ = 1.
    CR2: judge-1 repeats itself; judge-2 turns its 8 FAILs of model-b into PASSes. Pairs: 16 (PASS, PASS),
    8 (FAIL, FAIL), 8 (FAIL, PASS). p_o = 24/32 = 0.75; first 16 PASS / 16 FAIL, re-judge 24 PASS / 8 FAIL:
    p_e = 0.5 · 0.75 + 0.5 · 0.25 = 0.5; κ = (0.75 − 0.5) / (1 − 0.5) = 0.5.
    """
    from rich.console import Console

    from helmbench.cli import report_render
    from helmbench.score.leaderboard import build_leaderboard
    from helmbench.score.report import load_report
    from tests.report.judge_runs import serving

    m, y, db = manifest(tmp_path), models(tmp_path), tmp_path / "results.db"
    with serving(SecondThoughts(), monkeypatch):
        run_once(m, y, db)
        before, board = results(db), build_leaderboard(db, bootstrap=0)
        assert load_report(db, None, None, bootstrap=0).stability == ()  # nothing re-judged yet
        run_once(m, y, db, rejudge_sample=100)
    assert results(db) == before
    assert [(r.model, r.score) for r in build_leaderboard(db, bootstrap=0).rows] == [
        (r.model, r.score) for r in board.rows] == [(MODELS[0], 1.0), (MODELS[1], 0.0)]

    report = load_report(db, None, None, bootstrap=0)
    cr1, cr2 = report.stability
    assert (cr1.criterion, cr1.n, cr1.agree, cr1.kappa.value) == ("CR1", 32, 32, pytest.approx(1.0))
    assert cr1.kappa.ci is None  # perfect agreement: no asymptotic variance, no interval claimed
    assert (cr2.criterion, cr2.n, cr2.agree, cr2.kappa.value) == ("CR2", 32, 24, pytest.approx(0.5))
    low, high = cr2.kappa.ci
    assert -1 <= low < 0.5 < high <= 1 and high - low > 0.3  # 32 pairs: a wide interval

    data = json.loads(report_render.as_json(report))["judge_stability"]
    assert data[1] == {"key": "P1-B1-S1/CR2", "scenario": "P1-B1-S1", "criterion": "CR2", "n_pairs": 32, "agree": 24, "kappa": pytest.approx(0.5),
                       "kappa_ci": [pytest.approx(low), pytest.approx(high)], "enough_items": True, "min_pairs": 20}
    out = io.StringIO()
    report_render.text(report, Console(file=out, width=250))
    shown = out.getvalue()
    assert "judge stability: first vs re-judged verdicts" in shown
    assert f"P1-B1-S1/CR2: 24/32 re-judged verdicts the same; Cohen's κ 0.50 [{low:.2f}, {high:.2f}] (asymptotic 95 %)" in shown
    assert "Judge stability" in report_render.as_markdown(report)

    # the methodology page of the site shows the same numbers beside the clinician calibration
    from helmbench.publish import PublishSettings
    from helmbench.publish.reader import load
    from helmbench.publish.pages import Links, plan
    from helmbench.publish.render import render_sections

    data = load(PublishSettings(db=db, manifest=m, datasette_url="http://127.0.0.1:8001"))
    spec = next(p for p in plan(data).pages if p.src_uri == "methodology.md")
    _, sections = render_sections(spec.template, {**spec.context, "data": data,
                                                  "link": Links("methodology/", "http://127.0.0.1:8001")})
    html = dict(sections)["Judge calibration"]
    assert html.index('id="judge-calibration"') < html.index('id="judge-stability"')
    assert html.count('<tr data-criterion="P1-B1-S1/CR') == 2
    assert (f'<td class="hb-num">0.50 <small class="hb-ci">[{low:.2f}, {high:.2f}]</small></td>' in html)


def test_a_small_rejudge_sample_claims_no_kappa(tmp_path, fake):
    from helmbench.score.report import load_report

    m, y, db = manifest(tmp_path), models(tmp_path), tmp_path / "results.db"
    run_once(m, y, db, rejudge_sample=3)
    lines = [s.describe() for s in load_report(db, None, None, bootstrap=0).stability]
    assert lines == [f"P1-B1-S1/CR{i}: 6/6 re-judged verdicts the same; not enough items for a κ (n = 6, at least 20 pairs)"
                     for i in (1, 2)]
    from helmbench.publish import PublishSettings
    from helmbench.publish.reader import load

    data = load(PublishSettings(db=db, manifest=m, datasette_url="http://127.0.0.1:8001"))
    assert [(s.criterion, s.n, s.kappa) for s in data.stability] == [("CR1", 6, None), ("CR2", 6, None)]


def test_the_command_line_option_reaches_the_run(tmp_path, fake):
    """`helmbench run --rejudge-sample 2 --rejudge-seed 7` (in-process, through the CLI's own path)."""
    from typer.testing import CliRunner

    from helmbench.cli import app

    m, y, db = manifest(tmp_path), models(tmp_path), tmp_path / "results.db"
    args = ["run", "--manifest", str(m), "--models-file", str(y), "--db", str(db)]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    fake.reset_counts()
    result = CliRunner().invoke(app, [*args, "--rejudge-sample", "2", "--rejudge-seed", "7"])
    assert result.exit_code == 0, result.output
    assert judge_requests(fake) == 2 * CRITERIA * len(JUDGES)
    bad = CliRunner().invoke(app, [*args, "--rejudge-sample", "-1"])
    assert bad.exit_code == 2 and "Traceback" not in bad.output


def test_the_dry_run_counts_the_rejudge_calls_the_run_then_makes(tmp_path, fake):
    from rich.console import Console

    from helmbench.cli.run_render import render_dry_run, render_summary

    m, y, db = manifest(tmp_path), models(tmp_path), tmp_path / "results.db"
    run_once(m, y, db)
    n = 3
    dry = run_once(m, y, db, rejudge_sample=n, dry_run=True)
    assert (dry.judge.rejudge_wanted, dry.judge.rejudge_outputs) == (n, n)
    assert dry.judge.rejudge_calls == n * CRITERIA * len(JUDGES)
    out = io.StringIO()
    render_dry_run(dry.judge, Console(file=out, width=200))
    assert f"Re-judge (--rejudge-sample {n}): {n * CRITERIA * len(JUDGES)} call(s) for {n} judged output(s)" \
        in out.getvalue()
    fake.reset_counts()
    done = run_once(m, y, db, rejudge_sample=n)
    assert judge_requests(fake) == dry.judge.rejudge_calls  # the estimate is what the run asks
    assert done.judge.rejudge == done.judge.calls == dry.judge.rejudge_calls  # the summary tells them apart
    out = io.StringIO()
    render_summary(done.judge, done.runs, Console(file=out, width=200))
    assert f"{n * CRITERIA * len(JUDGES)} call(s) now ({n * CRITERIA * len(JUDGES)} of them re-judge calls" \
        in out.getvalue()
    too_many = run_once(m, y, db, rejudge_sample=1000, dry_run=True).judge
    assert (too_many.rejudge_outputs, too_many.rejudge_calls) == (CASES * len(MODELS), (CASES * len(MODELS) - n)
                                                                  * CRITERIA * len(JUDGES))


def test_a_rejudge_sample_without_a_judge_is_refused_not_silently_ignored(tmp_path):
    from helmbench.errors import UsageError

    m = manifest(tmp_path)
    y = tmp_path / "no-judge.yml"
    y.write_text("models:\n" + "".join(f"  - {{id: {x}, max_tokens: 300}}\n" for x in MODELS), encoding="utf-8")
    with pytest.raises(UsageError, match="names no judge"):
        run_once(m, y, tmp_path / "results.db", rejudge_sample=3, dry_run=True)
    assert not (tmp_path / "results.db").exists()
