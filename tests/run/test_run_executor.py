"""The executor end to end, in-process, through litellm's real HTTP path to the fake OpenRouter."""

from __future__ import annotations

from pathlib import Path

import pytest

from helmbench.errors import HelmbenchError
from helmbench.manifest import compile_tree, read_manifest
from run_helpers import run_inprocess, rows
from tests.fakes.manifests import EVALUATIONS, SCHEMA, make_case, synthetic_cases, write_manifest, write_models
from tests.fakes.openrouter import Rule, request_key

REPO = Path(__file__).resolve().parents[2]
UPSTREAM = REPO.parent / "shared" / "fixtures" / "upstream-sample"


def _check_complete(db: Path, manifest: Path, model: str):
    cases = list(read_manifest(manifest))
    got = rows(db, "SELECT r.case_hash, r.verdict FROM results r JOIN runs ON runs.id = r.run_id WHERE runs.model = ?",
               [model])
    assert {h for h, _ in got} == {c["hash"] for c in cases}  # sqe cases too: judged in the same run
    assert {v for _, v in got} <= {"PASS", "FAIL"}
    stored = rows(db, "SELECT count(DISTINCT request_hash) FROM responses WHERE model = ? AND error_kind IS NULL",
                  [model])[0][0]
    assert stored == len(_single(cases))
    conversations = [c for c in cases if "conversation" in c["request"]]  # answered turn by turn, in `turns`
    linked = rows(db, "SELECT count(DISTINCT rt.result_id) FROM result_turns rt JOIN results r ON r.id = rt.result_id "
                      "JOIN runs ON runs.id = r.run_id WHERE runs.model = ?", [model])[0][0]
    assert linked == len(conversations)
    return cases


def _single(cases: list[dict]) -> set[str]:
    """The request hashes of the single-answer cases (one call each)."""
    return {c["request_hash"] for c in cases if "conversation" not in c["request"]}


def _compile(root: Path, out: Path) -> Path:
    try:
        return compile_tree(root, out).path
    except HelmbenchError as exc:
        pytest.skip(f"{root} does not compile yet: {exc.message}")


@pytest.mark.slow
def test_shipped_benchmark_gets_a_verdict_for_every_case_and_a_rerun_costs_nothing(env, fake, tmp_path):
    manifest = _compile(REPO / "benchmark", tmp_path / "build")
    paths = {"manifest": manifest, "models": REPO / "benchmark" / "models.yml", "db": tmp_path / "build" / "results.db"}
    report = run_inprocess(paths, models=("openai/gpt-4.1-mini",), concurrency=16)
    assert report.status == "completed"
    cases = _check_complete(paths["db"], manifest, "openai/gpt-4.1-mini")
    assert report.runs[0]["n_awaiting_judge"] == 0
    turns = rows(paths["db"], "SELECT count(*) FROM turns WHERE caller = ?", ["openai/gpt-4.1-mini"])[0][0]
    assert fake.by_model["openai/gpt-4.1-mini"] == len(_single(cases)) + turns
    fake.reset_counts()
    again = run_inprocess(paths, models=("openai/gpt-4.1-mini",))
    assert fake.total == 0 and again.plan.new_calls == 0
    assert rows(paths["db"], "SELECT count(*) FROM runs")[0][0] == 1


@pytest.mark.skipif(not UPSTREAM.is_dir(), reason="upstream sample fixture not present")
def test_upstream_sample_runs_completely(env, fake, tmp_path):
    manifest = _compile(UPSTREAM, tmp_path / "build")
    paths = {"manifest": manifest, "models": write_models(tmp_path / "models.yml", ["test/upstream"], max_tokens=300),
             "db": tmp_path / "build" / "results.db"}
    run_inprocess(paths, concurrency=16)
    _check_complete(paths["db"], manifest, "test/upstream")
    fake.reset_counts()
    run_inprocess(paths)
    assert fake.total == 0


@pytest.mark.slow
def test_transient_faults_are_retried_until_every_case_completes(env, fake, small):
    write_manifest(small["manifest"], synthetic_cases(80))
    write_models(small["models"], ["test/model-a"], timeout=1.0)  # a loaded machine can take 0.3 s for an ordinary call
    fake.slow_seconds = 2.5  # beyond the deadline: a "slow" fault times out
    fake.set_faults({"429": 0.06, "500": 0.06, "502": 0.06, "drop": 0.06, "slow": 0.06})
    report = run_inprocess(small, concurrency=8)
    assert report.status == "completed"
    _check_complete(small["db"], small["manifest"], "test/model-a")
    attempts = [a for (a,) in rows(small["db"], "SELECT attempts FROM responses")]
    assert max(attempts) > 1
    judge_attempts = rows(small["db"], "SELECT coalesce(sum(attempts), 0) FROM judgements")[0][0]
    # Every request the server saw is recorded as an attempt (nothing reaches the provider unrecorded).
    # The client may record a few more: an attempt cut by its deadline while a loaded machine was
    # still connecting never reached the server.
    assert fake.total <= sum(attempts) + judge_attempts <= fake.total + 8
    assert sum(fake.faults.values()) > 10


def test_bad_output_is_the_models_fail_with_a_reason(env, fake, small):
    faults = {"C1-PT1": "invalid_json", "C1-PT2": "truncated", "C1-PT3": "empty", "C1-PT4": "html"}
    fake.rules = [Rule(f, match=f"P1-B1-S1-{suffix}:") for suffix, f in faults.items()]
    run_inprocess(small)
    got = dict(rows(small["db"], "SELECT case_id, reason FROM results WHERE verdict = 'FAIL'"))
    assert "invalid JSON" in got["P1-B1-S1-C1-PT1"]
    assert "truncated" in got["P1-B1-S1-C1-PT2"]
    assert "empty" in got["P1-B1-S1-C1-PT3"]
    (content,) = rows(small["db"], "SELECT content FROM responses r JOIN results x ON x.response_id = r.id "
                                   "WHERE x.case_id = 'P1-B1-S1-C1-PT4'")[0]
    assert "<script>" in content  # stored verbatim; escaping is the site's job


def test_a_400_is_a_permanent_error_retried_only_by_the_next_run(env, fake, small):
    fake.rules = [Rule("400", match="P1-B1-S2-C1-PT3:")]
    report = run_inprocess(small)
    assert report.runs[0]["n_error"] == 1
    (rid, kind, attempts), = rows(small["db"], "SELECT id, error_kind, attempts FROM responses WHERE error_kind IS NOT NULL")
    assert (kind, attempts) == ("bad_request", 1)
    assert rows(small["db"], "SELECT verdict, score FROM results WHERE case_id = 'P1-B1-S2-C1-PT3'") == [("ERROR", None)]
    fake.rules, before = [], fake.total
    run_inprocess(small)
    assert fake.total == before + 1
    assert rows(small["db"], "SELECT id, error_kind FROM responses WHERE id = ?", [rid]) == [(rid, None)]
    assert rows(small["db"], "SELECT verdict FROM results WHERE case_id = 'P1-B1-S2-C1-PT3'")[0][0] in ("PASS", "FAIL")


def test_a_401_stops_the_run_naming_the_key_variable(env, fake, small):
    fake.expect_key = "a-different-key"
    with pytest.raises(HelmbenchError) as info:
        run_inprocess(small, concurrency=2)
    assert "OPENROUTER_API_KEY" in info.value.message
    assert fake.total <= 4
    assert rows(small["db"], "SELECT status FROM runs") == [("failed",)]
    assert rows(small["db"], "SELECT count(*) FROM responses") == [(0,)]


def test_max_cost_stops_new_calls_and_a_later_run_finishes_without_repeats(env, fake, small):
    fake.cost = 0.01
    report = run_inprocess(small, concurrency=1, max_cost=0.05)
    assert report.status == "stopped_cost" and fake.total == 5
    assert rows(small["db"], "SELECT status, cost FROM runs") == [("stopped_cost", pytest.approx(0.05))]
    run_inprocess(small, concurrency=4)
    assert fake.by_model["test/model-a"] == 40 and set(fake.by_key.values()) == {1}


def model_keys(small) -> set[str]:
    return {request_key("test/model-a", c["request"]["messages"]) for c in read_manifest(small["manifest"])}


def test_samples_repeat_each_request_and_are_cached_too(env, fake, small):
    run_inprocess(small, samples=3)
    assert fake.by_model["test/model-a"] == 120 and fake.by_model["test/judge"] == 10  # identical samples: judged once
    assert {n for k, n in fake.by_key.items() if k in model_keys(small)} == {3}
    assert rows(small["db"], "SELECT count(*), count(DISTINCT sample) FROM responses") == [(120, 3)]
    assert rows(small["db"], "SELECT count(*) FROM results") == [(120,)]  # 40 cases × 3 (sqe judged too)
    total = fake.total
    run_inprocess(small, samples=3)
    assert fake.total == total


def test_identical_requests_in_one_manifest_are_sent_once(env, fake, small):
    rf = {"type": "json_schema", "json_schema": {"name": "shared", "strict": True, "schema": SCHEMA}}
    a = make_case("P1-B1-S1", 1, 1, evaluation=EVALUATIONS[0], text="same words", response_format=rf)
    b = make_case("P1-B1-S2", 1, 1, evaluation=EVALUATIONS[1], text="same words", response_format=rf)
    assert a["request_hash"] == b["request_hash"] and a["hash"] != b["hash"]
    write_manifest(small["manifest"], [a, b])
    run_inprocess(small)
    assert fake.total == 1
    assert rows(small["db"], "SELECT count(*), count(DISTINCT response_id) FROM results") == [(2, 1)]


def test_concurrency_is_bounded(env, fake, small):
    fake.latency = 0.05
    run_inprocess(small, concurrency=3)
    assert fake.peak_in_flight == 3


def test_scenario_selection_runs_only_that_scenario_and_marks_the_run_partial(env, fake, small):
    report = run_inprocess(small, scenarios=("P1-B1-S2",))
    assert fake.total == 10 and report.status == "partial"
    assert rows(small["db"], "SELECT DISTINCT substr(case_id, 1, 8) FROM results") == [("P1-B1-S2",)]


def test_dry_run_sends_nothing_and_counts_new_versus_stored(env, fake, small):
    run_inprocess(small, scenarios=("P1-B1-S1",))
    fake.reset_counts()
    report = run_inprocess(small, dry_run=True)
    assert fake.total == 0 and report.dry_run
    (mp,) = report.plan.models
    assert (mp.new, mp.stored) == (30, 10)
    assert mp.est_input_tokens > 0


def test_the_api_key_is_nowhere_in_the_database_logs_or_manifest(env, fake, small):
    key = env["OPENROUTER_API_KEY"].encode()
    fake.set_faults({"400": 0.2, "500": 0.2})
    run_inprocess(small)
    files = [p for p in small["root"].rglob("*") if p.is_file()]
    assert any(p.suffix == ".log" for p in files) and any(p.name == "results.db" for p in files)
    for p in files:
        assert key not in p.read_bytes(), p


def test_request_keys_of_the_fake_match_the_manifest(small):
    case = next(iter(read_manifest(small["manifest"])))
    assert request_key("openrouter/x/y", case["request"]["messages"]) == request_key("x/y", case["request"]["messages"])
