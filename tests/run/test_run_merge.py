"""`helmbench merge` of the shards of one run: three shards of a manifest, each run in its own folder and
database against the fake OpenRouter, merged, give `report --format json` the same scores, pass rates,
intervals, ranks, groups and costs as one unsharded run; every answer call was made once across the
shards; merging again changes nothing; the merged database reads like any other (report, publish,
agreement, serve's snapshot); a conflicting database is refused with OUT untouched."""

from __future__ import annotations

import json
import sqlite3
from collections import Counter
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tests.conversation.conv_runs import fake_openrouter, run_tree, two_model_tree
from tests.fakes.manifests import JUDGE
from tests.store.test_store_merge import dump, edit

from helmbench.cli import app
from helmbench.manifest import compile_tree
from helmbench.run.selection import Shard

pytestmark = pytest.mark.xdist_group(name="merge_shards")

OTHER = "test/model-b"
SHARDS = 3


def _answer_calls(fake) -> Counter:
    """Requests to the models under test and the simulated user (not the judge), by exact request."""
    with fake.lock:
        bodies = list(fake.bodies)
    calls: Counter = Counter()
    for body in bodies:
        model = str(body.get("model", "")).removeprefix("openrouter/")
        if model != JUDGE:
            calls[(model, json.dumps(body["messages"], sort_keys=True))] += 1
    return calls


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """One unsharded run and its three shards, each in its own folder, with the fake's answer calls of each."""
    tmp = tmp_path_factory.mktemp("merge")
    tree = two_model_tree(tmp / "bench", OTHER)
    compile_tree(tree, tree / "build")
    calls = {}
    with fake_openrouter() as fake:
        assert run_tree(tree, tmp / "whole").status == "completed"
        calls["whole"] = _answer_calls(fake)
        for k in range(1, SHARDS + 1):
            fake.reset_counts()
            with fake.lock:
                fake.bodies.clear()
            assert run_tree(tree, tmp / f"shard-{k}", shard=Shard(k, SHARDS)).status == "partial"
            calls[k] = _answer_calls(fake)
    return {"tmp": tmp, "tree": tree, "calls": calls,
            "shards": [tmp / f"shard-{k}" / "results.db" for k in range(1, SHARDS + 1)],
            "whole": tmp / "whole" / "results.db"}


def _cli(*args: str):
    result = CliRunner().invoke(app, list(args), env={"COLUMNS": "200", "OPENROUTER_API_KEY": None})
    return result


def _merged(runs, name: str = "merged.db") -> Path:
    out = runs["tmp"] / name
    if not out.exists():
        result = _cli("merge", str(out), *map(str, runs["shards"]))
        assert result.exit_code == 0, result.output
    return out


def _report(db: Path, tree: Path) -> dict:
    result = _cli("report", "--format", "json", "--db", str(db), "--manifest", str(tree / "build/manifest.jsonl"))
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


#: What may differ between the merged shards and the unsharded run in `report --format json`, and why:
#: `run_id` (ids are local to a database: the merged one numbers its runs as it meets them) and `date`
#: (the day the run finished: the shards finished later than the unsharded run). Nothing else: scores,
#: pass rates, intervals, ranks, groups, costs (behind the results and billed), tokens, counts, statuses.
LOCAL = ("run_id", "date")


def _without_local(value):
    if isinstance(value, dict):
        return {k: _without_local(v) for k, v in value.items() if k not in LOCAL}
    if isinstance(value, list):
        return [_without_local(v) for v in value]
    return value


def test_three_merged_shards_report_what_one_unsharded_run_reports(runs):
    merged = _merged(runs)
    whole, parts = _report(runs["whole"], runs["tree"]), _report(merged, runs["tree"])
    assert [r["status"] for r in parts["rows"]] == ["completed", "completed"]  # one complete run per model
    assert _without_local(parts) == _without_local(whole)
    # the comparison can fail: the rows carry the numbers it is about
    row = parts["rows"][0]
    assert {"score", "score_ci", "pass_rate", "pass_rate_ci", "rank", "group", "cost", "billed_cost"} <= set(row)
    assert row["billed_cost"] and row["cost"]


def test_every_answer_call_was_made_once_across_the_shards(runs):
    together = sum((runs["calls"][k] for k in range(1, SHARDS + 1)), Counter())
    assert together == runs["calls"]["whole"] and set(together.values()) == {1}


def test_the_merged_run_is_billed_the_sum_of_the_shards_each_call_once(runs):
    merged = _merged(runs)

    def billed(db: Path) -> dict:
        conn = sqlite3.connect(db)
        try:
            return dict(conn.execute("SELECT r.model, round(sum(c.cost), 9) FROM calls c JOIN runs r ON r.id = "
                                     "c.run_id GROUP BY r.model").fetchall())
        finally:
            conn.close()

    shards = Counter()
    for db in runs["shards"]:
        shards.update(billed(db))
    assert {m: round(v, 9) for m, v in shards.items()} == billed(merged)
    conn = sqlite3.connect(merged)
    try:
        assert conn.execute("SELECT count(*), count(DISTINCT uid) FROM calls").fetchone() == (
            sum(sqlite3.connect(db).execute("SELECT count(*) FROM calls").fetchone()[0] for db in runs["shards"]),) * 2
        assert conn.execute("SELECT DISTINCT shard, status FROM runs").fetchall() == [(None, "completed")]
    finally:
        conn.close()


def test_merging_again_or_merging_an_input_again_changes_nothing(runs):
    merged = _merged(runs, "again.db")
    before = dump(merged)
    result = _cli("merge", str(merged), *map(str, runs["shards"]))
    assert result.exit_code == 0, result.output
    assert "nothing new" in result.stdout
    assert dump(merged) == before
    result = _cli("merge", str(merged), str(runs["shards"][1]), str(merged))
    assert result.exit_code == 0, result.output
    assert dump(merged) == before
    for db in runs["shards"]:  # the inputs are never written
        conn = sqlite3.connect(db)
        assert conn.execute("SELECT DISTINCT status FROM runs").fetchall() == [("partial",)]
        conn.close()


def test_a_merge_in_any_order_holds_the_same_rows(runs):
    forward = _merged(runs)
    backward = runs["tmp"] / "backward.db"
    assert _cli("merge", str(backward), *map(str, reversed(runs["shards"]))).exit_code == 0
    assert _without_local(_report(backward, runs["tree"])) == _without_local(_report(forward, runs["tree"]))


def test_a_conflicting_database_is_refused_naming_the_row_and_the_files_and_out_is_untouched(runs):
    merged = _merged(runs, "conflict.db")
    before = dump(merged)
    other = runs["tmp"] / "changed.db"
    conn = sqlite3.connect(runs["whole"])
    conn.execute("VACUUM INTO ?", [str(other)])
    conn.close()
    conn = sqlite3.connect(other)
    with conn:
        rid, request = conn.execute("SELECT id, request_hash FROM responses WHERE error_kind IS NULL ORDER BY id "
                                    "LIMIT 1").fetchone()
        conn.execute("UPDATE responses SET content = 'a different answer' WHERE id = ?", [rid])
    conn.close()
    result = _cli("merge", str(merged), str(other))
    assert result.exit_code == 1, result.output
    assert result.stderr.startswith("error: cannot merge: 1 row(s)"), result.stderr
    assert f"responses (request_hash={request[:21]}" in result.stderr
    assert str(merged) in result.stderr and str(other) in result.stderr and "content" in result.stderr
    assert "Traceback" not in result.output
    assert dump(merged) == before
    assert not list(merged.parent.glob(".merge-*"))  # no temporary left behind


def test_databases_of_different_manifests_keep_their_runs_apart(runs, tmp_path):
    tree = two_model_tree(tmp_path / "bench", OTHER)
    bench = tree / "benchmark.yml"
    bench.write_text(bench.read_text(encoding="utf-8").replace("title: Risk detection", "title: Risk found"), encoding="utf-8")
    compile_tree(tree, tree / "build")
    with fake_openrouter():
        assert run_tree(tree, tmp_path / "other").status in ("completed", "partial")
    out = tmp_path / "both.db"
    result = _cli("merge", str(out), str(runs["whole"]), str(tmp_path / "other/results.db"))
    assert result.exit_code == 0, result.output
    conn = sqlite3.connect(out)
    try:
        manifests = conn.execute("SELECT manifest_hash, count(*) FROM runs GROUP BY manifest_hash").fetchall()
    finally:
        conn.close()
    whole = sqlite3.connect(runs["whole"]).execute("SELECT DISTINCT manifest_hash FROM runs").fetchone()[0]
    other = sqlite3.connect(tmp_path / "other/results.db").execute("SELECT DISTINCT manifest_hash FROM runs"
                                                                  ).fetchone()[0]
    if whole == other:
        pytest.fail("the second tree compiled to the same manifest: the test would prove nothing")
    assert sorted(manifests) == sorted([(whole, 2), (other, 2)])
    # `cost` (behind the results) is left out here: the two databases each paid for the requests both
    # manifests share, so the merged ledger holds two billed calls for each of those answers and counts both
    # behind either run's results; what each run was billed (`billed_cost`) is unchanged.
    numbers = ("rank", "model", "status", "score", "score_ci", "pass_rate", "pass_rate_ci", "group",
               "billed_cost", "coverage")
    for which, db in ((runs["tree"], runs["whole"]), (tree, tmp_path / "other/results.db")):
        # titles follow the manifest registered last, as in any database that ran both manifests
        assert ([{k: row[k] for k in numbers} for row in _report(out, which)["rows"]]
                == [{k: row[k] for k in numbers} for row in _report(db, which)["rows"]])


@pytest.mark.slow
def test_the_merged_database_is_read_by_publish_agreement_and_serves_snapshot(runs, tmp_path):
    merged = _merged(runs)
    from helmbench.api import agreement, publish
    from helmbench.store.snapshot import vacuum_into

    site = publish(merged, tmp_path / "site", manifest=runs["tree"] / "build/manifest.jsonl")
    index = (site / "index.html").read_text(encoding="utf-8")
    assert "test/model-a" in index or "model-a" in index
    assert agreement(merged, runs["tree"] / "build/manifest.jsonl") is not None
    result = _cli("agreement", "--db", str(merged))
    assert result.exit_code == 0, result.output
    with vacuum_into(merged, tmp_path / "snap" / "results.db") as copy:  # what `serve` gives Datasette
        conn = sqlite3.connect(copy)
        assert conn.execute("SELECT count(*) FROM runs WHERE status = 'completed'").fetchone() == (2,)
        conn.close()
    result = _cli("serve", "--db", str(merged), "--publish", str(tmp_path / "public"))  # serve's public snapshot
    assert result.exit_code == 0, result.output
    public = next((tmp_path / "public").glob("*.db"))
    conn = sqlite3.connect(public)
    try:  # the scorer's scores of the merged runs, as Datasette's canned leaderboard reads them
        assert conn.execute("SELECT count(*) FROM run_scores s JOIN runs r ON r.id = s.run_id "
                            "WHERE r.status = 'completed' AND s.coverage = 1.0").fetchone() == (2,)
    finally:
        conn.close()


# ---------------------------------------------------------------------------------------------------
# Merge derives, never trusts (#36 §2): an input's catalog is taken as its hashes vouch for it, its reviews
# pass `review import`'s rules


def _copy(db: Path, dest: Path) -> Path:
    conn = sqlite3.connect(db)
    conn.execute("VACUUM INTO ?", [str(dest)])
    conn.close()
    return dest


#: The edit #36 found: every case's severity and difficulty changed, the catalog tables with them, a registration
#: date in the future so that this catalog "follows the newest"; no result touched.
EDITED_CATALOG = (
    "UPDATE manifests SET registered_at = '2099-01-01T00:00:00+00:00'",
    "UPDATE cases SET severity_perturbation = 0, severity_user_context = 0, severity_base = 0, difficulty = 3",
    "UPDATE conditions SET difficulty = 3", "UPDATE user_contexts SET severity = 0",
    "UPDATE perturbations SET severity = 0",
)


def test_an_input_with_an_edited_catalog_is_refused_naming_it_and_out_stays_byte_identical(runs, tmp_path):
    out = _copy(_merged(runs), tmp_path / "out.db")
    before = out.read_bytes()
    edited = _copy(runs["shards"][0], tmp_path / "edited-shard.db")
    edit(edited, *EDITED_CATALOG)
    result = _cli("merge", str(out), str(edited))
    assert result.exit_code == 1, result.output
    assert result.stderr.startswith(f"error: {edited}: refused:"), result.stderr
    assert "do not hash to the manifest" in result.stderr and "case " in result.stderr
    assert "Traceback" not in result.output
    assert out.read_bytes() == before
    assert not list(out.parent.glob(".merge-*"))
    # the catalog in the header edited too, its catalog_hash recomputed: the manifest hash still says no
    header_edited = _copy(runs["shards"][1], tmp_path / "header-edited.db")
    conn = sqlite3.connect(header_edited)
    (text,) = conn.execute("SELECT header_json FROM manifests").fetchone()
    conn.close()
    header = json.loads(text)
    for component in header["catalog"]["components"].values():
        component["severity"], component["difficulty"] = 0, 3
    from helmbench.manifest.canonical import hash_of

    header["catalog_hash"] = hash_of(header["catalog"])
    conn = sqlite3.connect(header_edited)
    with conn:
        conn.execute("UPDATE manifests SET header_json = ?, catalog_hash = ?", [json.dumps(header),
                                                                                 header["catalog_hash"]])
    conn.close()
    edit(header_edited, *EDITED_CATALOG)
    result = _cli("merge", str(out), str(header_edited))
    assert result.exit_code == 1 and "do not hash to the manifest hash it claims" in result.stderr, result.output
    assert out.read_bytes() == before
    # into a new OUT: nothing is created
    assert _cli("merge", str(tmp_path / "new.db"), str(edited), *map(str, runs["shards"])).exit_code == 1
    assert not (tmp_path / "new.db").exists()
    # a prompt edited where OUT has no copy to compare it with: its hash says no (outside conversations, whose
    # scripted turns `cases` does not hold)
    prompt = edit(_copy(runs["shards"][2], tmp_path / "prompt-edited.db"),
                  "UPDATE cases SET messages_json = replace(messages_json, 'e', 'E')")
    result = _cli("merge", str(tmp_path / "new.db"), str(prompt))
    assert result.exit_code == 1 and "its request or evaluation does not match its hash" in result.stderr, result.output
    assert not (tmp_path / "new.db").exists()


def _item_options(db: Path) -> dict[str, list[str]]:
    from helmbench.score.review_items import judged_items

    conn = sqlite3.connect(db)
    try:
        return {h: item.options for h, item in judged_items(conn)[1].items()}
    finally:
        conn.close()


def _add_reviews(db: Path, rows: list[dict]) -> None:
    conn = sqlite3.connect(db)
    with conn:
        for r in rows:
            conn.execute("INSERT INTO reviews (item_hash, reviewer, case_id, scenario, criterion, criterion_text, "
                         "judgment_json, created_at, source) VALUES (?, ?, 'P1-B1-S1-C1', 'P1-B1-S1', 'CR1', 'text', "
                         "?, ?, 'local')", [r["item_hash"], r["reviewer"], json.dumps(r["judgment"]), r["created_at"]])
    conn.close()


def test_reviews_in_an_input_are_refused_or_merged_as_review_import_treats_them(runs, tmp_path):
    from datetime import datetime, timedelta, timezone

    from helmbench.store.reviews import save_review

    out = _copy(_merged(runs), tmp_path / "out.db")
    options = _item_options(out)
    assert len(options) >= 2, "the run judged too few answers for the test to mean anything"
    (x, x_options), (y, y_options) = sorted(options.items())[:2]
    past = (datetime.now(timezone.utc) - timedelta(hours=1)).isoformat(timespec="seconds")
    conn = sqlite3.connect(out)
    save_review(conn, {"item_hash": x, "reviewer": "ana", "case_id": "P1-B1-S1-C1", "scenario": "P1-B1-S1",
                       "criterion": "CR1", "criterion_text": "text", "judgment": x_options[0], "created_at": past})
    conn.close()
    hostile = [
        # a verdict dated in the future would override hers forever, and she could not correct it
        {"item_hash": x, "reviewer": "ANA ", "judgment": x_options[-1], "created_at": "2099-01-01T00:00:00+00:00"},
        # her name spelled another way is her: one reviewer, not two agreeing with each other
        {"item_hash": y, "reviewer": "ANA ", "judgment": y_options[0], "created_at": past},
        {"item_hash": y, "reviewer": "Ana", "judgment": y_options[-1], "created_at": past},  # and once more: refused
        {"item_hash": y, "reviewer": "ben\x1b[2J", "judgment": y_options[0], "created_at": past},
        {"item_hash": "sha256:" + "0" * 64, "reviewer": "cleo", "judgment": "PASS", "created_at": past},
    ]
    src = _copy(runs["whole"], tmp_path / "reviewed.db")
    _add_reviews(src, hostile)
    result = _cli("merge", str(out), str(src))
    assert result.exit_code == 0, result.output
    assert "4 review(s) refused by the rules `review import` applies" in result.stdout, result.stdout
    assert "in the future" in result.stdout and "control characters" in result.stdout
    assert "a second verdict by 'Ana' on the same item" in result.stdout
    assert "matches no judged output" in result.stdout and "\x1b" not in result.stdout
    conn = sqlite3.connect(out)
    try:
        merged = conn.execute("SELECT item_hash, reviewer, judgment_json FROM reviews ORDER BY item_hash").fetchall()
    finally:
        conn.close()
    assert merged == [(x, "ana", json.dumps(x_options[0])), (y, "ana", json.dumps(y_options[0]))]
    # `review import` of the same rows: it refuses the same four (a file is all or nothing) …
    rows_file = tmp_path / "same.jsonl"
    rows_file.write_text("".join(json.dumps({**r, "case_id": "P1-B1-S1-C1", "scenario": "P1-B1-S1",
                                             "criterion": "CR1", "criterion_text": "text"}) + "\n"
                                 for r in hostile), encoding="utf-8")
    twin = _copy(_merged(runs), tmp_path / "twin.db")
    conn = sqlite3.connect(twin)
    save_review(conn, {"item_hash": x, "reviewer": "ana", "case_id": "P1-B1-S1-C1", "scenario": "P1-B1-S1",
                       "criterion": "CR1", "criterion_text": "text", "judgment": x_options[0], "created_at": past})
    conn.close()
    imported = _cli("review", "import", str(rows_file), "--db", str(twin))
    assert imported.exit_code == 1 and "4 bad row(s)" in imported.stderr, imported.output
    # … and writes the one it accepts as merge wrote it
    rows_file.write_text(rows_file.read_text(encoding="utf-8").splitlines()[1] + "\n", encoding="utf-8")
    assert _cli("review", "import", str(rows_file), "--db", str(twin)).exit_code == 0
    conn = sqlite3.connect(twin)
    try:
        assert conn.execute("SELECT item_hash, reviewer, judgment_json FROM reviews ORDER BY item_hash"
                            ).fetchall() == merged
    finally:
        conn.close()
    before = dump(out)  # merging again changes nothing, and says the refusals again
    again = _cli("merge", str(out), str(src))
    assert again.exit_code == 0 and "4 review(s) refused" in again.stdout and dump(out) == before


def test_a_genuine_older_database_merged_in_leaves_the_current_leaderboards_measures_in_any_order(runs, tmp_path):
    """Two manifests share case rows (by hash) and catalog rows (by code); the severities live there, outside the
    case hashes. Merge once registered each input's manifest over OUT's, so a genuine older database merged into a
    newer one rescored the newer leaderboard, and the order of the inputs decided the ranking (hostile review of
    #36 §2). The measures of the manifest the leaderboard shows are set last, whatever the order."""
    import re

    tree = two_model_tree(tmp_path / "bench", OTHER)
    for path in tree.rglob("perturbations.md"):
        text = path.read_text(encoding="utf-8")
        path.write_text(re.sub(r"severity: (\d+)", lambda m: f"severity: {(int(m.group(1)) + 3) % 10}", text),
                        encoding="utf-8")
    compile_tree(tree, tree / "build")
    with fake_openrouter():
        assert run_tree(tree, tmp_path / "new").status in ("completed", "partial")
    new = tmp_path / "new/results.db"
    expected = _report(new, tree)
    numbers = ("model", "score", "score_ci", "pass_rate", "rank", "group")
    want = [{k: r[k] for k in numbers} for r in expected["rows"]]
    into_newer = _copy(new, tmp_path / "into-newer.db")
    assert _cli("merge", str(into_newer), str(runs["whole"])).exit_code == 0
    old_first, new_first = tmp_path / "old-first.db", tmp_path / "new-first.db"
    assert _cli("merge", str(old_first), str(runs["whole"]), str(new)).exit_code == 0
    assert _cli("merge", str(new_first), str(new), str(runs["whole"])).exit_code == 0
    for db in (into_newer, old_first, new_first):
        assert [{k: r[k] for k in numbers} for r in _report(db, tree)["rows"]] == want, db.name
        conn = sqlite3.connect(db)
        try:
            severities = sorted(conn.execute("SELECT code, severity FROM perturbations").fetchall())
        finally:
            conn.close()
        conn = sqlite3.connect(new)
        try:
            assert severities == sorted(conn.execute("SELECT code, severity FROM perturbations").fetchall())
        finally:
            conn.close()
