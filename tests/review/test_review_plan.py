"""Review plans, packets and status: k reviewers per item, balanced per stratum, reproducible; blinded packets;
status numbers that a count in the database confirms; badge dates from reviews that count."""

from __future__ import annotations

import json
import random
import sqlite3
from collections import Counter
from pathlib import Path

import pytest
from typer.testing import CliRunner

from helmbench.cli import app
from helmbench.errors import HelmbenchError
from helmbench.score.calibration import load_calibration
from helmbench.score.review_items import JudgedItem, judged_items
from helmbench.score.review_plan import assign, make_plan, stratified_sample, stratum
from helmbench.store import open_db
from helmbench.store.review_packets import read_packet
from helmbench.store.reviews import item_hash, save_review
from tests.review.review_pipeline import JUDGE, MODELS, rows

REVIEWERS = ["Ana", "Ben", "Cleo"]


def _items(db_path) -> dict[str, JudgedItem]:
    db = open_db(db_path)
    try:
        return judged_items(db)[1]
    finally:
        db.conn.close()


def _synthetic(n: int, seed: int) -> dict[str, JudgedItem]:
    """Items over 3 scenarios × PASS/FAIL with uneven strata, for balance checks beyond the fixture's 24."""
    rng = random.Random(seed)
    out = {}
    for i in range(n):
        crit = {"code": "CR1", "text": "t", "options": ["PASS", "FAIL"], "pass_values": ["PASS"]}
        h = item_hash([{"role": "user", "content": str(i)}], str(i), crit)
        out[h] = JudgedItem(h, f"C{i}", rng.choice(["S1", "S2", "S2", "S3"]), [], str(i), crit,
                            judges={"j": ("PASS", rng.choice(["PASS", "FAIL", "FAIL"]))})
    return out


def _check(items, plan_assigned: dict[str, list[str]], sample: list[str], k: int) -> None:
    per_item = Counter(h for hs in plan_assigned.values() for h in hs)
    assert set(per_item) == set(sample) and set(per_item.values()) == {k}, "every sampled item has exactly k reviewers"
    for hs in plan_assigned.values():
        assert len(hs) == len(set(hs)), "a reviewer never gets an item twice"
    for s in {stratum(items[h]) for h in sample}:
        loads = [sum(1 for h in hs if stratum(items[h]) == s) for hs in plan_assigned.values()]
        assert max(loads) - min(loads) <= 1, (s, loads)
    totals = [len(hs) for hs in plan_assigned.values()]
    assert max(totals) - min(totals) <= 1, totals


@pytest.mark.parametrize("n,reviewers,k,size,seed", [(24, 3, 2, 12, 0), (97, 5, 3, None, 1), (60, 4, 2, 41, 7),
                                                     (30, 2, 2, None, 3), (50, 7, 1, 33, 11)])
def test_every_item_gets_k_reviewers_and_loads_differ_by_at_most_one_per_stratum(n, reviewers, k, size, seed):
    items = _synthetic(n, seed)
    sample = stratified_sample(items, size, seed)
    names = [f"r{i}" for i in range(reviewers)]
    _check(items, assign(items, sample, names, k, seed), sample, k)


def test_many_random_plans_are_balanced():
    for trial in range(120):
        rng = random.Random(trial)
        n, reviewers = rng.randint(5, 90), rng.randint(2, 8)
        k, size = rng.randint(1, reviewers), rng.choice([None, rng.randint(1, n)])
        items = _synthetic(n, trial)
        sample = stratified_sample(items, size, trial)
        _check(items, assign(items, sample, [f"r{i}" for i in range(reviewers)], k, trial), sample, k)


def test_pairs_of_reviewers_vary():
    items = _synthetic(80, 5)
    sample = stratified_sample(items, None, 5)
    got = assign(items, sample, ["a", "b", "c", "d"], 2, 5)
    pairs = Counter(frozenset(r for r, hs in got.items() if h in hs) for h in sample)
    assert len(pairs) == 6, f"all six pairs of four reviewers share items, got {pairs}"


def test_the_plan_is_reproducible_from_its_seed_and_the_same_seed_gives_the_same_packets(judged_db, tmp_path):
    db = judged_db["db"]
    runner = CliRunner()
    outs = []
    for run, seed in enumerate([4, 4, 5]):
        plan = tmp_path / f"plan{run}.json"
        r = runner.invoke(app, ["review", "plan", "--db", str(db), "--out", str(plan), "--sample", "12", "--seed",
                                str(seed), *[a for n in REVIEWERS for a in ("--reviewer", n)]])
        assert r.exit_code == 0, r.output
        assert "12 item(s)" in r.output and "2 reviewer(s) each" in r.output
        out_dir = tmp_path / f"packets{run}"
        r = runner.invoke(app, ["review", "packet", "--db", str(db), "--plan", str(plan), "--out-dir", str(out_dir)])
        assert r.exit_code == 0, r.output
        outs.append((plan.read_bytes(), {p.name: p.read_bytes() for p in sorted(out_dir.iterdir())}))
    assert outs[0] == outs[1], "the same seed gives the same plan and byte-identical packets"
    assert outs[0][0] != outs[2][0], "another seed, another plan"
    assert sorted(outs[0][1]) == ["ana.review.json", "ben.review.json", "cleo.review.json"]
    plan = json.loads(outs[0][0])
    items = _items(db)
    _check(items, plan["assigned"], [h for hs in plan["assigned"].values() for h in hs], 2)
    assert {len(hs) for hs in plan["assigned"].values()} == {8}


def _blind_db(db: Path) -> list[str]:
    """Give the database recognisable secrets: judge reasoning, another reviewer's verdicts and note."""
    conn = sqlite3.connect(db)
    with conn:
        conn.execute("UPDATE judgements SET justification = 'judge-reasoning-' || id")
    conn.close()
    items = _items(db)
    other = open_db(db)
    for h, it in items.items():
        save_review(other, {"item_hash": h, "reviewer": "Zed Outsider", "case_id": it.case_id, "scenario": it.scenario,
                            "criterion": "CR1", "criterion_text": it.criterion["text"], "judgment": "PARTIAL",
                            "note": "zed-private-note"})
    other.conn.close()
    return [r[0] for r in rows(db, "SELECT justification FROM judgements")]


def test_a_packet_holds_no_model_judge_verdict_or_other_reviewers_verdict(judged_db, tmp_path):
    db = judged_db["db"]
    justifications = _blind_db(db)
    runner = CliRunner()
    assert runner.invoke(app, ["review", "plan", "--db", str(db), "-r", "Ana", "-r", "Ben"]).exit_code == 0
    r = runner.invoke(app, ["review", "packet", "--db", str(db), "--out-dir", str(tmp_path)])
    assert r.exit_code == 0, r.output
    items = _items(db)
    for name in ("ana", "ben"):
        text = (tmp_path / f"{name}.review.json").read_text(encoding="utf-8")
        for secret in [*MODELS, JUDGE, "judge-reasoning-", "zed-private-note", "Zed Outsider", "pass_values",
                       '"verdict', '"judges', '"models', "judgment_json", "scores"]:
            assert secret not in text, f"the packet of {name} holds {secret!r}"
        packet = json.loads(text)
        assert packet["reviewer"] == name.title() and len(packet["items"]) == 24  # k=2 of 2 reviewers: all items
        for it in packet["items"]:
            assert set(it) == {"item_hash", "case_id", "scenario", "criterion", "messages", "output"}
            assert set(it["criterion"]) == {"code", "title", "text", "options", "response_type"}
            assert it["output"] == items[it["item_hash"]].output
        assert read_packet(tmp_path / f"{name}.review.json")["items"][0]["item_hash"] == packet["items"][0]["item_hash"]


def test_a_packet_leaves_out_what_its_reviewer_has_reviewed(judged_db, tmp_path):
    db = judged_db["db"]
    runner = CliRunner()
    assert runner.invoke(app, ["review", "plan", "--db", str(db), "-r", "Ana", "-r", "Ben", "-r", "Cleo"]).exit_code == 0
    plan = json.loads((db.parent / "review-plan.json").read_text())
    items = _items(db)
    first = plan["assigned"]["Ana"][:3]
    conn = open_db(db)
    for h in first:  # reviewed on the maintainer's machine, under a differently spaced and cased name
        it = items[h]
        save_review(conn, {"item_hash": h, "reviewer": " ana ", "case_id": it.case_id, "scenario": it.scenario,
                           "criterion": "CR1", "criterion_text": it.criterion["text"], "judgment": "PASS"})
    conn.conn.close()
    r = runner.invoke(app, ["review", "packet", "--db", str(db), "-r", "ANA", "--out-dir", str(tmp_path)])
    assert r.exit_code == 0, r.output
    packet = json.loads((tmp_path / "ana.review.json").read_text())
    assert [i["item_hash"] for i in packet["items"]] == plan["assigned"]["Ana"][3:]
    r = runner.invoke(app, ["review", "packet", "--db", str(db), "-r", "Dora", "--out-dir", str(tmp_path)])
    assert r.exit_code == 2 and "'Dora' is not in the review plan" in r.output


def test_review_status_equals_a_count_in_the_database(judged_db):
    db = judged_db["db"]
    runner = CliRunner()
    r = runner.invoke(app, ["review", "plan", "--db", str(db), "--sample", "16", "--seed", "2",
                            *[a for n in REVIEWERS for a in ("-r", n)]])
    assert r.exit_code == 0, r.output
    plan = json.loads((db.parent / "review-plan.json").read_text())
    items = _items(db)
    conn = open_db(db)
    rng = random.Random(1)
    for name, hs in plan["assigned"].items():  # each reviewer does part of their share, and one item off-plan
        off = next(h for h in sorted(items) if h not in hs)
        for h in [*hs[: rng.randint(2, len(hs))], off]:
            it = items[h]
            save_review(conn, {"item_hash": h, "reviewer": name, "case_id": it.case_id, "scenario": it.scenario,
                               "criterion": "CR1", "criterion_text": it.criterion["text"],
                               "judgment": rng.choice(["PASS", "FAIL", "PARTIAL"])})
    conn.conn.close()
    r = runner.invoke(app, ["review", "status", "--db", str(db), "--format", "json"])
    assert r.exit_code == 0, r.output
    status = json.loads(r.output)
    for rev in status["reviewers"]:
        assigned = plan["assigned"][rev["reviewer"]]
        marks = ",".join("?" * len(assigned))
        done = rows(db, f"SELECT count(*) FROM reviews WHERE reviewer = ? AND item_hash IN ({marks})",
                    [rev["reviewer"], *assigned])[0][0]
        total = rows(db, "SELECT count(*) FROM reviews WHERE reviewer = ?", [rev["reviewer"]])[0][0]
        assert (rev["assigned"], rev["done"], rev["other"]) == (len(assigned), done, total - done)
    overlap = dict(rows(db, """SELECT scenario || '/' || criterion, count(*) FROM (
        SELECT item_hash, scenario, criterion FROM reviews GROUP BY item_hash HAVING count(DISTINCT reviewer) >= 2)
        GROUP BY scenario, criterion"""))
    reviewed = dict(rows(db, "SELECT scenario || '/' || criterion, count(DISTINCT item_hash) FROM reviews "
                             "GROUP BY scenario, criterion"))
    assert {c["key"]: c["overlap"] for c in status["criteria"]} == overlap
    assert {c["key"]: c["reviewed"] for c in status["criteria"]} == reviewed
    assert sum(c["planned"] for c in status["criteria"]) == 16
    assert sum(c["assigned"] for c in status["criteria"]) == 32
    assert sum(c["done"] for c in status["criteria"]) == sum(r["done"] for r in status["reviewers"])
    agreement = load_calibration(sqlite3.connect(db))
    assert {c.key: c.n_alpha for c in agreement.criteria} == overlap, "≥2 reviews is what α is computed on"
    text = runner.invoke(app, ["review", "status", "--db", str(db)])
    assert text.exit_code == 0 and "≥2 reviews (α)" in text.output and "Cleo" in text.output


def test_status_without_a_plan_counts_reviews(judged_db):
    r = CliRunner().invoke(app, ["review", "status", "--db", str(judged_db["db"])])
    assert r.exit_code == 0, r.output
    assert "no review plan" in r.output and "no reviewers yet" in r.output


def test_plan_errors_are_usage_errors(judged_db, tmp_path):
    runner = CliRunner()
    db = str(judged_db["db"])
    r = runner.invoke(app, ["review", "plan", "--db", db, "-r", "Ana"])
    assert r.exit_code == 2 and "needs at least 2 reviewers" in r.output
    r = runner.invoke(app, ["review", "plan", "--db", db, "-r", "Ana", "-r", " ana"])
    assert r.exit_code == 2 and "name the same reviewer" in r.output
    r = runner.invoke(app, ["review", "packet", "--db", db, "--out-dir", str(tmp_path)])
    assert r.exit_code == 2 and "review plan" in r.output
    bad = tmp_path / "plan.json"
    bad.write_text('{"format": "helmbench-review-plan", "version": 1}')
    r = runner.invoke(app, ["review", "status", "--db", db, "--plan", str(bad)])
    assert r.exit_code != 0 and "not a usable review plan" in r.output and "Traceback" not in r.output


def _packet(tmp_path, judged_db) -> Path:
    db = judged_db["db"]
    runner = CliRunner()
    assert runner.invoke(app, ["review", "plan", "--db", str(db), "-r", "Ana", "-r", "Ben", "--sample", "4"]).exit_code == 0
    assert runner.invoke(app, ["review", "packet", "--db", str(db), "-r", "Ana", "--out-dir", str(tmp_path)]).exit_code == 0
    return tmp_path / "ana.review.json"


@pytest.mark.parametrize("change,why", [
    (lambda p: p["items"][0].update(output=p["items"][0]["output"] + " (edited)"), "does not match"),
    (lambda p: p["items"][0]["criterion"].update(options=["PASS"]), "does not match"),
    (lambda p: p["items"][0].update(model="test/model-a"), "unknown key"),
    (lambda p: p.update(format="something-else"), "not a version-1"),
    (lambda p: p["items"].append(p["items"][0]), "appears twice"),
    (lambda p: p["items"][0]["messages"].append({"role": "user", "content": 3}), "must be text"),
])
def test_an_altered_packet_is_refused_naming_what_is_wrong(judged_db, tmp_path, change, why):
    path = _packet(tmp_path, judged_db)
    packet = json.loads(path.read_text())
    change(packet)
    path.write_text(json.dumps(packet))
    with pytest.raises(HelmbenchError, match=why):
        read_packet(path)
    r = CliRunner().invoke(app, ["review", "--packet", str(path), "--port", "0"])
    assert r.exit_code != 0 and why in r.output and "Traceback" not in r.output


def test_a_packet_that_is_not_json_is_refused(tmp_path):
    path = tmp_path / "x.review.json"
    path.write_text("{not json")
    r = CliRunner().invoke(app, ["review", "--packet", str(path), "--port", "0"])
    assert r.exit_code != 0 and "not valid JSON" in r.output and "Traceback" not in r.output


def test_a_verdicts_file_of_another_reviewer_is_refused(judged_db, tmp_path):
    path = _packet(tmp_path, judged_db)
    (tmp_path / "ana.review-verdicts.jsonl").write_text(json.dumps({
        "item_hash": json.loads(path.read_text())["items"][0]["item_hash"], "reviewer": "Ben", "case_id": "x",
        "scenario": "x", "criterion": "CR1", "criterion_text": "t", "judgment": "PASS", "confidence": None,
        "note": None, "created_at": "2026-01-01T00:00:00+00:00"}) + "\n")
    r = CliRunner().invoke(app, ["review", "--packet", str(path), "--port", "0"])
    assert r.exit_code != 0 and "holds verdicts by 'Ben'" in r.output


def _review(db, h, reviewer, judgment, created_at):
    it = _items(db)[h] if h in _items(db) else None
    conn = open_db(db)
    save_review(conn, {"item_hash": h, "reviewer": reviewer, "case_id": it.case_id if it else "P1-B1-S1-001",
                       "scenario": it.scenario if it else "P1-B1-S1", "criterion": "CR1",
                       "criterion_text": it.criterion["text"] if it else "an earlier wording",
                       "judgment": judgment, "created_at": created_at})
    conn.conn.close()


def test_a_badge_is_dated_by_the_latest_review_that_counts(judged_db):
    db = judged_db["db"]
    items = _items(db)
    h = sorted(h for h, i in items.items() if i.scenario == "P1-B1-S1")[0]
    _review(db, h, "Ana", "PASS", "2026-03-01T10:00:00+00:00")
    _review(db, h, "Ben", "PASS", "2026-03-02T10:00:00+00:00")
    _review(db, "sha256:" + "0" * 64, "Ana", "PASS", "2026-06-01T10:00:00+00:00")  # stale: no item of this manifest
    _review(db, h, "Cleo", "PASS", "9999-01-01T00:00:00+00:00")  # a date in the future
    report = load_calibration(sqlite3.connect(db))
    crit = report.of("P1-B1-S1", "CR1")
    assert crit.n_stale == 1 and crit.last_review == "2026-03-02T10:00:00+00:00" and crit.date == "2026-03-02"
    assert report.overall.date == "2026-03-02"


def test_reviewers_per_item_is_checked_by_lint_and_carried_when_set(tmp_path):
    import shutil

    from helmbench.lint import lint_tree
    from helmbench.manifest import compile_tree
    from tests.review.review_pipeline import REPO

    root = tmp_path / "bench"
    shutil.copytree(REPO / "benchmark", root)
    base = (root / "benchmark.yml").read_text()
    (root / "benchmark.yml").write_text(base + "calibration:\n  reviewers_per_item: 0\n")
    bad = [d for d in lint_tree(root)[1] if str(d.path).endswith("benchmark.yml") and d.is_error]
    assert [(d.code, d.line) for d in bad] == [("HB203", len(base.splitlines()) + 2)], bad
    (root / "benchmark.yml").write_text(base + "calibration:\n  reviewers_per_item: 3\n")
    assert compile_tree(root, tmp_path / "b1").header["catalog"]["calibration"] == {
        "min_kappa": 0.6, "min_n": 30, "reviewers_per_item": 3}
    from helmbench.spec.models import CalibrationThreshold

    field = CalibrationThreshold.model_json_schema()["properties"]["reviewers_per_item"]  # editors see it too
    assert (field["minimum"], field["maximum"], field["default"]) == (1, 20, 2)
    (root / "benchmark.yml").write_text(base + "calibration:\n  min_n: 40\n")
    assert compile_tree(root, tmp_path / "b2").header["catalog"]["calibration"] == {"min_kappa": 0.6, "min_n": 40}


def test_k_comes_from_the_manifests_calibration_settings_or_per_item(judged_db, tmp_path):
    db = judged_db["db"]
    conn = sqlite3.connect(db)
    header = json.loads(conn.execute("SELECT header_json FROM manifests").fetchone()[0])
    header["catalog"]["calibration"] = {"min_kappa": 0.6, "min_n": 30, "reviewers_per_item": 3}  # as compiled
    with conn:
        conn.execute("UPDATE manifests SET header_json = ?", [json.dumps(header)])
    conn.close()
    runner = CliRunner()
    plan = tmp_path / "plan.json"
    r = runner.invoke(app, ["review", "plan", "--db", str(db), "--out", str(plan), "--sample", "10",
                            *[a for n in ["a", "b", "c", "d"] for a in ("-r", n)]])
    assert r.exit_code == 0 and "3 reviewer(s) each" in r.output, r.output
    assert set(Counter(h for hs in json.loads(plan.read_text())["assigned"].values() for h in hs).values()) == {3}
    r = runner.invoke(app, ["review", "plan", "--db", str(db), "--out", str(plan), "--sample", "10", "-r", "solo",
                            "--per-item", "1"])
    assert r.exit_code == 0, r.output
    assert len(json.loads(plan.read_text())["assigned"]["solo"]) == 10, "one clinician alone gets every sampled item"


def test_the_packet_page_has_the_review_pages_guards_and_resumes_from_its_verdicts_file(judged_db, tmp_path):
    import httpx

    from helmbench.publish.review.serve import prepare_packet, running
    from helmbench.store.review_files import read

    path = _packet(tmp_path, judged_db)
    prepared = prepare_packet(path)
    first = prepared.app.sample[0]
    with running(prepared.app) as url, httpx.Client(base_url=url, follow_redirects=False) as client:
        assert client.get("/", headers={"host": "evil.example:80"}).status_code == 421
        page = client.get("/")
        assert page.status_code == 200 and "Reviewing as <b>Ana</b>" in page.text and "not you?" not in page.text
        assert client.post("/verdict", data={"item": first, "judgment": "PASS"}).status_code == 403, "no CSRF token"
        token = client.cookies["csrftoken"]
        assert client.post("/reviewer", data={"reviewer": "Eve", "csrftoken": token}).status_code == 303
        assert client.post("/verdict", data={"item": first, "judgment": "MAYBE", "csrftoken": token}).status_code == 400
        assert client.post("/verdict", data={"item": first, "judgment": "FAIL", "csrftoken": token,
                                             "confidence": "low", "note": "=1+1"}).status_code == 303
        assert "1 of 4 reviewed" in client.get("/").text
    verdicts = tmp_path / "ana.review-verdicts.jsonl"
    assert verdicts.exists() and not [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")], \
        "no temporary file is left behind"
    (row,) = read(verdicts)
    assert (row["item_hash"], row["reviewer"], row["judgment"], row["confidence"]) == (first, "Ana", "FAIL", "low")
    again = prepare_packet(path)  # the reviewer stops and starts again: the item is not asked twice
    assert again.app.done_by("Ana") == {first}
    assert again.app.queue("Ana").next({first}) == prepared.app.sample[1]


def test_a_verdicts_file_planted_as_a_link_beside_a_packet_is_refused_before_serving(judged_db, tmp_path):
    """A packet arrives by email, maybe in an archive that also holds `ana.review-verdicts.jsonl ->
    ~/.bashrc` (or a dangling link): the page must neither read through it nor answer a verdict
    with a 500 when the safe writer refuses it; it refuses at start, naming the link."""
    import os

    import httpx

    from helmbench.publish.review.serve import prepare_packet, running
    from helmbench.safewrite import UnsafeWrite

    path = _packet(tmp_path, judged_db)
    link = tmp_path / "ana.review-verdicts.jsonl"
    secret = tmp_path / "secret.txt"
    secret.write_text('{"not": "a verdict"}\n')
    for target in (tmp_path / "nowhere.jsonl", secret):
        os.symlink(target, link)
        with pytest.raises(UnsafeWrite, match="symbolic link"):
            prepare_packet(path)
        os.unlink(link)
    assert not (tmp_path / "nowhere.jsonl").exists() and secret.read_text() == '{"not": "a verdict"}\n'
    prepared = prepare_packet(path)  # a link planted after the start: the verdict is refused, with a page
    os.symlink(tmp_path / "nowhere.jsonl", link)
    with running(prepared.app) as url, httpx.Client(base_url=url, follow_redirects=False) as client:
        client.get("/")
        r = client.post("/verdict", data={"item": prepared.app.sample[0], "judgment": "PASS",
                                          "csrftoken": client.cookies["csrftoken"]})
        assert r.status_code == 500 and "could not be saved" in r.text and "symbolic link" in r.text
        assert "Traceback" not in r.text
    assert not (tmp_path / "nowhere.jsonl").exists()


def test_the_default_packet_folder_planted_as_a_link_in_the_build_folder_is_refused(judged_db, tmp_path):
    """build/review-packets is HELMBench's own folder: a link planted there (a committed build/ in the
    authors' layout) must not carry the packets elsewhere. A folder the user names is theirs."""
    import os

    db = judged_db["db"]
    runner = CliRunner()
    assert runner.invoke(app, ["review", "plan", "--db", str(db), "-r", "Ana", "-r", "Ben", "--sample", "4"]).exit_code == 0
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    os.symlink(elsewhere, db.parent / "review-packets")
    r = runner.invoke(app, ["review", "packet", "--db", str(db), "-r", "Ana"])
    assert r.exit_code == 2 and "symbolic link" in r.output and "Traceback" not in r.output, r.output
    assert list(elsewhere.iterdir()) == []
    named = runner.invoke(app, ["review", "packet", "--db", str(db), "-r", "Ana", "--out-dir", str(db.parent / "review-packets")])
    assert named.exit_code == 0, named.output
    assert [p.name for p in elsewhere.iterdir()] == ["ana.review.json"]
