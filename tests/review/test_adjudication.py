"""Adjudication (#40 §2): clinicians' verdicts deciding the items enough of them reviewed, on the real pipeline's
judged database (`judged_db`: two models, one judge, one criterion per judged case, all in behaviour P1-B1)."""

from __future__ import annotations

import json
import sqlite3

import pytest

from helmbench.score.adjudication import adjudication_of, consensus
from helmbench.score.leaderboard import build_leaderboard
from helmbench.score.review_items import judged_items
from helmbench.store import open_db
from helmbench.store.reviews import save_review

MODEL = "test/model-a"


def declare(db_path, min_reviews: int | None) -> None:
    """benchmark.yml's `adjudication:` as a tree declaring it compiles into the manifest's catalog (None: absent)."""
    conn = sqlite3.connect(db_path)
    header = json.loads(conn.execute("SELECT header_json FROM manifests").fetchone()[0])
    header["catalog"].pop("adjudication", None)
    if min_reviews is not None:
        header["catalog"]["adjudication"] = {"min_reviews": min_reviews}
    with conn:
        conn.execute("UPDATE manifests SET header_json = ?", [json.dumps(header)])
    conn.close()


def review(db_path, item, reviewer: str, judgment: str) -> None:
    db = open_db(db_path)
    save_review(db, {"item_hash": item.hash, "reviewer": reviewer, "case_id": item.case_id, "scenario": item.scenario,
                     "criterion": item.criterion["code"], "criterion_text": item.criterion["text"],
                     "judgment": judgment})
    db.conn.close()


def unreview(db_path, item, reviewer: str) -> None:
    conn = sqlite3.connect(db_path)
    with conn:
        conn.execute("DELETE FROM reviews WHERE item_hash = ? AND reviewer = ?", [item.hash, reviewer])
    conn.close()


def overturned(db_path, k: int = 2):
    """Adjudication declared with `k`, and a judged PASS that k clinicians FAIL; returns the item."""
    item = passed_item(db_path)
    declare(db_path, k)
    for reviewer in ("ana", "ben", "cleo")[:k]:
        review(db_path, item, reviewer, "FAIL")
    return item


def passed_item(db_path):
    """A judged item the judge PASSed, the output of exactly one result of MODEL (sample 0)."""
    db = open_db(db_path)
    _, items = judged_items(db)
    db.conn.close()
    return next(i for i in items.values() if i.models == {MODEL} and len(i.results) == 1 and not i.checked
                and next(iter(i.judges.values()))[1] == "PASS")


def board(db_path):
    return build_leaderboard(db_path, bootstrap=200, seed=0)


def row_of(b, model=MODEL):
    return next(r for r in b.rows if r.model == model)


def case_costs(db_path, run_id: int, case_id: str) -> tuple[float, float]:
    """(the run's maximum cost, the item's case's maximum cost × difficulty scale), by the formula of
    score/cost.py written out: maximum Σ|base| over verdicts with base ≠ 0; a full miss costs |base|×(1 − d/10)."""
    conn = sqlite3.connect(db_path)
    rows = conn.execute(
        """SELECT res.case_id, c.severity_perturbation + c.severity_user_context, c.difficulty FROM results res
           JOIN cases c ON c.hash = res.case_hash WHERE res.run_id = ? AND res.verdict IN ('PASS', 'FAIL')""",
        [run_id]).fetchall()
    conn.close()
    maximum = sum(abs(base) for _, base, _ in rows if base)
    (base, difficulty), = [(b, d) for c, b, d in rows if c == case_id]
    return maximum, abs(base) * (1 - difficulty / 10)


def test_the_rule_a_strict_majority_of_at_least_k_reviews():
    assert consensus([("FAIL", 0.0), ("FAIL", 0.0)], 2) == ("FAIL", 0.0)
    assert consensus([("FAIL", 0.0)], 2) is None, "below k the judge's verdict stands"
    assert consensus([("FAIL", 0.0), ("PASS", 1.0)], 2) is None, "an even split is left to the judge"
    assert consensus([("PASS", 1.0), ("PASS", 0.5), ("FAIL", 0.0)], 3) == ("PASS", 0.75), "the majority's mean score"


def test_k_clinicians_failing_a_judged_pass_change_the_score_by_the_hand_computed_amount(judged_db):
    db = judged_db["db"]
    before = board(db)
    item = passed_item(db)
    declare(db, 2)
    assert row_of(board(db)).score == row_of(before).score and row_of(board(db)).adjudicated == (0, 0)
    review(db, item, "ana", "FAIL")
    assert row_of(board(db)).score == row_of(before).score, "one review of two needed: the judge's verdict stands"
    review(db, item, "ben", "FAIL")
    after = board(db)
    (_, run_id, _), = item.results
    maximum, miss = case_costs(db, run_id, item.case_id)
    assert miss > 0
    assert row_of(after).score == pytest.approx(row_of(before).score - miss / maximum, abs=1e-12)
    assert row_of(after).adjudicated == (1, 1), "one result adjudicated, overturned"
    assert row_of(after, "test/model-b").score == row_of(before, "test/model-b").score
    assert row_of(after, "test/model-b").adjudicated == (0, 0)
    assert row_of(after).summary.n_pass == row_of(before).summary.n_pass - 1

    unreview(db, item, "ben")  # below k again: the judge's PASS is back
    restored = board(db)
    assert row_of(restored).score == row_of(before).score and row_of(restored).adjudicated == (0, 0)


def test_reviews_agreeing_with_the_judge_adjudicate_without_overturning_and_a_split_changes_nothing(judged_db):
    db = judged_db["db"]
    declare(db, 2)
    before = board(db)
    item = passed_item(db)
    review(db, item, "ana", "PASS")
    review(db, item, "ben", "FAIL")
    assert row_of(board(db)).score == row_of(before).score and row_of(board(db)).adjudicated == (0, 0)
    review(db, item, "cleo", "PASS")
    after = board(db)
    assert row_of(after).score == row_of(before).score and row_of(after).adjudicated == (1, 0)
    conn = open_db(db)
    adj = adjudication_of(conn.conn, judged_db["manifest_hash"])
    conn.conn.close()
    history = adj.items[item.hash]
    assert history.judge_verdict == "PASS" and history.verdict == "PASS" and not history.overturned
    assert [r.verdict for r in history.reviews] == ["PASS", "FAIL", "PASS"]


def test_without_the_setting_reviews_change_nothing_and_the_report_has_no_adjudication_keys(judged_db):
    db = judged_db["db"]
    before = board(db)
    item = passed_item(db)
    review(db, item, "ana", "FAIL")
    review(db, item, "ben", "FAIL")
    after = board(db)
    assert after.to_dict() == before.to_dict()
    assert all("adjudicated" not in r for r in after.to_dict()["rows"])


def _site(judged_db, folder):
    from helmbench.publish import PublishSettings, build_site

    build_site(PublishSettings(db=judged_db["db"], manifest=judged_db["manifest"], datasette_url="http://127.0.0.1:8001"),
               site_dir=folder)
    return folder


def _text(html: str) -> str:
    import re

    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html))


def _pages(site) -> dict[str, bytes]:
    return {str(p.relative_to(site)): p.read_bytes() for p in sorted(site.rglob("*")) if p.is_file()}


def test_the_case_page_shows_the_history_and_the_leaderboard_counts_it(judged_db, tmp_path):
    item = overturned(judged_db["db"])
    site = _site(judged_db, tmp_path / "site")
    case = _text((site / "cases" / item.case_id / "index.html").read_text(encoding="utf-8"))
    head = case.index("test/model-a")
    mine = case[head:case.index("test/model-b", head)]
    assert "adjudicated by clinicians (the judge: ✓ PASS score 1.0)" in mine
    assert "CR1 reviewed by clinicians: The judge ✓ PASS" in mine
    assert mine.count("✗ FAIL FAIL —") == 2, "each review: its verdict, its option and its date"
    assert "Published verdict: adjudicated ✗ FAIL (overturns the judge) on" in mine
    assert "ana" not in mine and "ben" not in mine, "clinicians' names stay private"
    board = _text((site / "index.html").read_text(encoding="utf-8"))
    assert "1 result adjudicated by clinicians, 1 overturned" in board
    assert "0 results adjudicated by clinicians, 0 overturned" in board  # model-b
    assert "Clinicians adjudicate:" in board
    method = _text((site / "methodology" / "index.html").read_text(encoding="utf-8"))
    assert "k = 2" in method and "strict majority" in method and "not per model" in method
    assert "test/model-a 18 1 1 100.0 %" in method and "test/model-b 18 0 0 —" in method, "the overturn rate per model"


@pytest.mark.slow
def test_without_the_setting_the_site_is_byte_identical_whatever_the_reviews(judged_db, tmp_path):
    db = judged_db["db"]
    before = _pages(_site(judged_db, tmp_path / "before"))
    item = passed_item(db)
    review(db, item, "ana", "FAIL")
    review(db, item, "ben", "FAIL")
    after = _pages(_site(judged_db, tmp_path / "after"))
    assert after.keys() == before.keys()
    changed = {p for p in before if before[p] != after[p]}
    # the reviews count on the calibration badges (n of N reviewed, on the leaderboard and the item's scenario
    # page, and so in the search index), as they did before adjudication existed; no result, score or case moves
    assert changed == {"index.html", f"scenarios/{item.scenario}/index.html", "search/search_index.json"}
    assert all(b"class=\"hb-adjudicat" not in after[p] and b"id=\"adjudication" not in after[p] for p in after)

    def leaderboard(page: bytes) -> bytes:  # the page without what says how far the judge is checked: its
        start = page.index(b'<h2 id="judge-calibration"')  # calibration table and the sentence beside the headline
        page = page[:start] + page[page.index(b"</table>", start):]
        start = page.index(b'<div class="hb-validation"')
        return page[:start] + page[page.index(b"</div>", start):]
    assert leaderboard(after["index.html"]) == leaderboard(before["index.html"])


def test_the_eee_export_carries_the_clinicians_verdict_marked_as_theirs(judged_db, tmp_path):
    from jsonschema import Draft202012Validator

    from helmbench.cli.schema_cmd import output_schemas
    from helmbench.publish.eee import export_eee

    db = judged_db["db"]
    item = overturned(db)
    out = export_eee(db, tmp_path / "eee", judged_db["manifest"], bootstrap=0).out_dir
    check = Draft202012Validator(output_schemas()["eee-extras"])
    records = [json.loads(p.read_text()) for p in out.rglob("*.json")]
    samples = [json.loads(line) for p in out.rglob("*_samples.jsonl") for line in p.read_text().splitlines()]
    for doc in [*records, *samples]:
        assert [e.message for e in check.iter_errors(doc)] == []
    marked = [s for s in samples if "adjudication" in s["metadata"]]
    assert [(s["model_id"], s["metadata"]["case_id"]) for s in marked] == [(MODEL, item.case_id)]
    (s,) = marked
    assert s["evaluation"] == {"score": 0.0, "is_correct": False} and s["metadata"]["verdict"] == "FAIL"
    assert s["metadata"]["adjudication"] == {"judge_verdict": "PASS", "judge_score": 1.0, "criteria": [
        {"criterion": "CR1", "judge_verdict": "PASS", "verdict": "FAIL", "reviews": 2}]}
    details = {r["model_info"]["id"]: r["source_metadata"]["additional_details"] for r in records}
    assert (details[MODEL]["adjudicated"], details[MODEL]["overturned"]) == ("1", "1")


def test_a_stale_review_counts_for_nothing(judged_db):
    """A review of the criterion as it was worded before (its key no longer an item's) is stale: below k again."""
    db = judged_db["db"]
    before = board(db)
    item = overturned(db)
    assert row_of(board(db)).adjudicated == (1, 1)
    conn = sqlite3.connect(db)
    with conn:  # as a reworded criterion leaves it: the review's key names no current item
        conn.execute("UPDATE reviews SET item_hash = 'sha256:reworded' WHERE item_hash = ? AND reviewer = 'ben'",
                     [item.hash])
    conn.close()
    assert row_of(board(db)).score == row_of(before).score and row_of(board(db)).adjudicated == (0, 0)


def test_the_report_json_counts_adjudication_and_follows_its_schema(judged_db):
    from typer.testing import CliRunner

    from helmbench.cli import app
    from tests.review.test_output_schemas import errors

    item = overturned(judged_db["db"])
    out = CliRunner().invoke(app, ["report", "--db", str(judged_db["db"]), "--manifest", str(judged_db["manifest"]),
                                   "--format", "json", "--bootstrap", "0"])
    assert out.exit_code == 0, out.output
    data = json.loads(out.output)
    assert errors("report", data) == []
    rows = {r["model"]: r for r in data["rows"]}
    assert (rows[MODEL]["adjudicated"], rows[MODEL]["overturned"]) == (1, 1)
    assert (rows["test/model-b"]["adjudicated"], rows["test/model-b"]["overturned"]) == (0, 0)
    assert item.case_id
    text = CliRunner().invoke(app, ["report", "--db", str(judged_db["db"]), "--manifest", str(judged_db["manifest"]),
                                    "--bootstrap", "0"])
    assert f"{MODEL}: 1 result adjudicated by clinicians, 1 overturned" in text.output


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["transcript", "transcript (checked)", "reply (checked)"])
def test_a_transcript_or_a_checked_item_overturned_re_decides_its_result(shipped, tmp_path, kind):
    """One item of each other kind, overturned by two clinicians: its result is re-decided from its stored
    criteria (a conversation's checkpoint rows; a reply's judged criteria and recomputed checks), losing
    1/n of its score for the criterion that no longer passes (n: the criteria and checkpoints it was decided on)."""
    from tests.review.review_pipeline import copy_of

    db = copy_of(shipped["db"], tmp_path / "results.db")
    conn = open_db(db)
    _, items = judged_items(conn)
    conn.conn.close()
    item = next(i for i in items.values() if i.kind == kind and len(i.results) == 1
                and next(iter(i.judges.values()))[1] == "PASS")
    (result_id, run_id, sample), = item.results
    raw = sqlite3.connect(db)
    verdict, score = raw.execute("SELECT verdict, score FROM results WHERE id = ?", [result_id]).fetchone()
    if item.transcript is not None:
        n = raw.execute("SELECT count(*) FROM checkpoint_verdicts WHERE result_id = ?", [result_id]).fetchone()[0]
    else:
        evaluation = json.loads(raw.execute("SELECT c.evaluation_json FROM results r JOIN cases c ON c.hash = "
                                            "r.case_hash WHERE r.id = ?", [result_id]).fetchone()[0])
        n = len(evaluation.get("criteria") or []) + len(evaluation.get("checks") or [])
    raw.close()
    declare(db, 2)
    for reviewer in ("ana", "ben"):
        review(db, item, reviewer, "FAIL")
    conn = open_db(db)
    adjudication = adjudication_of(conn.conn, shipped_manifest(conn.conn))
    conn.conn.close()
    assert adjudication.unreproduced == 0, "every re-decided result's stored criteria reproduce its verdict"
    decision = adjudication.decisions[(run_id, item.case_id, sample)]
    assert (decision.judge_verdict, decision.judge_score) == (verdict, score)
    assert decision.verdict == "FAIL" and decision.overturned
    assert decision.score == pytest.approx(score - 1 / n, abs=1e-9)


def shipped_manifest(conn) -> str:
    from helmbench.store.queries.reviews import latest_judged_manifest

    return latest_judged_manifest(conn)


def test_benchmark_yml_declares_it_lint_checks_it_at_its_line_and_the_manifest_carries_it(tmp_path):
    from helmbench.lint import lint_tree
    from helmbench.manifest import compile_tree
    from tests.review.test_review_spec import _tree

    root = _tree(tmp_path / "ok", "adjudication:\n  min_reviews: 3\n")
    assert not [d for d in lint_tree(root)[1] if d.is_error]
    assert compile_tree(root, tmp_path / "ok" / "build").header["catalog"]["adjudication"] == {"min_reviews": 3}
    bad = _tree(tmp_path / "bad", "adjudication:\n  min_reviews: 0\n")
    lines = len((bad / "benchmark.yml").read_text().splitlines())
    assert any(str(d.path).endswith("benchmark.yml") and d.line == lines and d.is_error for d in lint_tree(bad)[1])
    plain = _tree(tmp_path / "plain", "")
    assert "adjudication" not in compile_tree(plain, tmp_path / "plain" / "build").header["catalog"]
