"""`helmbench run --shard K/N`: N shards, each in its own folder and database, together make exactly
the calls one unsharded run makes (each once at the fake OpenRouter), conversations and judge calls
follow the answers' partition, the run rows say which shard they hold, the partition does not move
when the manifest grows, and a bad K/N is a usage error."""

from __future__ import annotations

import json
import sqlite3
from collections import Counter
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tests.conversation.conv_runs import fake_openrouter, run_tree, two_model_tree
from tests.conversation.conv_trees import MODEL, USER_MODEL

from helmbench.cli import app
from helmbench.manifest import compile_tree, read_manifest
from helmbench.run.selection import Shard, parse_shard
from tests.fakes.manifests import JUDGE, synthetic_cases, write_manifest

OTHER = "test/model-b"


@pytest.fixture
def server():
    """The conversation tests' fake OpenRouter (it plays the simulated user), the environment pointing at it."""
    with fake_openrouter() as fake:
        yield fake


@pytest.fixture
def tree(tmp_path):
    """Single-answer, judged and conversation (scripted and simulated) scenarios, two models under test."""
    root = two_model_tree(tmp_path / "bench", OTHER)
    compile_tree(root, root / "build")
    return root


_run = run_tree


def _calls(fake) -> tuple[Counter, Counter]:
    """(calls of the models under test and the simulated user, judge calls), each by its exact request."""
    answers, judge = Counter(), Counter()
    with fake.lock:
        bodies = list(fake.bodies)
    for body in bodies:
        model = str(body.get("model", "")).removeprefix("openrouter/")
        key = (model, json.dumps(body["messages"], sort_keys=True))
        (judge if model == JUDGE else answers)[key] += 1
    return answers, judge


def _rows(db: Path, sql: str) -> list[tuple]:
    conn = sqlite3.connect(db)
    try:
        return conn.execute(sql).fetchall()
    finally:
        conn.close()


def test_three_shards_make_exactly_the_calls_of_one_run_each_once(server, tree, tmp_path):
    whole = _run(tree, tmp_path / "whole")
    assert whole.status == "completed"
    one_run, _ = _calls(server)
    assert {m for m, _ in one_run} == {MODEL, OTHER, USER_MODEL}  # answers, conversation turns, the simulated user
    assert set(one_run.values()) == {1}, [(m, c[:300]) for (m, c), n in one_run.items() if n > 1][:3]

    together: Counter = Counter()
    results = Counter()
    for k in (1, 2, 3):
        server.reset_counts()
        report = _run(tree, tmp_path / f"shard-{k}", shard=Shard(k, 3))
        assert report.status == "partial"  # a part is never taken for the whole
        answers, judge = _calls(server)
        assert answers, f"shard {k}/3 asked nothing: the partition is lopsided"
        together += answers
        assert max(judge.values(), default=1) == 1, "a judge request was paid twice within a shard"
        db = tmp_path / f"shard-{k}" / "results.db"
        assert _rows(db, "SELECT DISTINCT shard, status FROM runs") == [(f"{k}/3", "partial")]
        results.update(dict(_rows(db, "SELECT r.model, count(*) FROM results res JOIN runs r ON r.id = res.run_id "
                                      "GROUP BY r.model")))
    assert together == one_run  # the same requests, each counted once at the server across the shards
    whole_db = tmp_path / "whole" / "results.db"
    assert results == Counter(dict(_rows(whole_db, "SELECT r.model, count(*) FROM results res JOIN runs r "
                                                   "ON r.id = res.run_id GROUP BY r.model")))
    assert _rows(whole_db, "SELECT DISTINCT shard FROM runs") == [(None,)]


def test_a_shard_run_again_into_its_database_asks_nothing_and_a_second_shard_is_recorded_beside(server, tree,
                                                                                               tmp_path):
    _run(tree, tmp_path / "db", shard="2/3")
    server.reset_counts()
    _run(tree, tmp_path / "db", shard="2/3")
    assert _calls(server)[0] == Counter()
    _run(tree, tmp_path / "db", shard="1/3")
    assert {r[0] for r in _rows(tmp_path / "db" / "results.db", "SELECT shard FROM runs")} == {"1,2/3"}
    _run(tree, tmp_path / "db")  # the rest, unsharded: the run is whole again
    assert {r[0] for r in _rows(tmp_path / "db" / "results.db", "SELECT shard FROM runs")} == {None}


def _partition(manifest: Path, models: list[str], n: int) -> dict[tuple[str, str], int]:
    """(case id, model) → its shard, from the plans of the N shards (answers and conversations)."""
    from helmbench.run.plan import build_plan, iter_jobs
    from helmbench.spec.models import ModelEntry

    entries = [ModelEntry(id=m) for m in models]
    out: dict[tuple[str, str], int] = {}
    for k in range(1, n + 1):
        plan = build_plan(read_manifest(manifest), entries, None, scenarios=None, case_ids=None, samples=1,
                          shard=Shard(k, n))
        taken = [(j.case["id"], j.model.id) for j in iter_jobs(plan)]
        taken += [(c["id"], mp.id) for c in plan.conversations for mp in plan.models if plan.takes(c, mp)]
        for pair in taken:
            assert pair not in out, f"{pair} is in shards {out[pair]} and {k}"
            out[pair] = k
        assert plan.shard_pairs == len(taken) and plan.pairs == len(models) * plan.cases
    return out


def test_the_partition_covers_every_pair_once_and_a_case_keeps_its_shard_when_the_manifest_grows(tmp_path):
    models = ["test/model-a", "test/model-b", "test/model-c"]
    cases = list(synthetic_cases(40))
    small, grown = tmp_path / "small.jsonl", tmp_path / "grown.jsonl"
    write_manifest(small, cases[8:])  # the first cases removed: every position after them moves
    write_manifest(grown, cases)
    before, after = _partition(small, models, 3), _partition(grown, models, 3)
    assert len(after) == len(cases) * len(models)  # every (case, model) in exactly one shard
    assert {k: after[k] for k in before} == before
    assert sorted(Counter(after.values()).values())[0] > len(after) / 6  # no shard nearly empty


def test_the_dry_run_shows_the_shards_share(tree, monkeypatch):
    monkeypatch.delenv("OPENROUTER_API_KEY", raising=False)
    result = CliRunner().invoke(app, ["run", "--manifest", str(tree / "build/manifest.jsonl"), "--models-file",
                                      str(tree / "models.yml"), "--db", str(tree / "build/results.db"),
                                      "--shard", "2/3"], env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    assert "Shard 2/3:" in result.stdout and "selected (case, model) pair(s)" in result.stdout


@pytest.mark.parametrize("bad", ["0/3", "4/3", "a/b", "3", "1/0", "-1/3", "1/3/5", ""])
def test_a_bad_shard_is_a_usage_error_before_anything_is_read(bad, tmp_path):
    result = CliRunner().invoke(app, ["run", "--shard", bad, "--manifest", str(tmp_path / "missing.jsonl")],
                                env={"OPENROUTER_API_KEY": None, "COLUMNS": "200"})
    assert result.exit_code == 2, result.output
    assert result.stderr.startswith("error: --shard") and "hint:" in result.stderr
    assert "Traceback" not in result.output + result.stderr and "missing.jsonl" not in result.stderr


def test_parse_shard_accepts_k_of_n():
    assert parse_shard(" 2/3 ") == Shard(2, 3) and str(parse_shard("1/1")) == "1/1" and parse_shard(None) is None
