"""`helmbench generate variants` against the fake OpenRouter: files, review gate, cache, budget."""

from __future__ import annotations

import json
import sqlite3

import yaml

from helmbench.spec import load_benchmark
from tests.generate.conftest import cli, lint_codes, set_reviewed, snapshot

PT = "scenarios/P1/B1/S1--late-planning/perturbations.md"
AXES = ["--axis", "age=teen,older", "--axis", "country=UK,India"]


def _generated(root, scenario="P1-B1-S1"):
    bench, _ = load_benchmark(root)
    sc = next(s for s in bench.scenarios if s.key == scenario)
    return [c for c in sc.perturbations if c.meta and c.meta.is_generated]


def _identity(out):
    """(manifest hash, [(case id, case hash)]) of a compiled manifest."""
    lines = (out / "manifest.jsonl").read_text().splitlines()
    return json.loads(lines[0])["manifest_hash"], [(c["id"], c["hash"]) for c in map(json.loads, lines[1:])]


def _variants(tree, *extra):
    return cli("generate", "variants", "P1-B1-S1-PT1", tree, *AXES, *extra)


def test_two_axes_write_one_component_per_combination_that_lints_and_compiles(tree, env):
    before = cli("compile", tree, "--out", tree / "before")
    assert before.exit_code == 0, before.output
    result = _variants(tree)
    assert result.exit_code == 0, result.output
    assert env.stats()["total"] == 4
    made = _generated(tree)
    assert [c.code for c in made] == ["PT3", "PT4", "PT5", "PT6"]  # the next free codes; PT1, PT2 untouched
    assert {tuple(sorted(c.meta.generated.axes.items())) for c in made} == {
        (("age", a), ("country", c)) for a in ("teen", "older") for c in ("UK", "India")}
    for c in made:
        assert c.path == PT and c.meta.generated_from == "PT1" and c.meta.reviewed is False
        assert c.meta.generated.model == "openai/gpt-4.1" and c.meta.generated.prompt_hash.startswith("sha256:")
        assert c.severity == 5  # the source's severity, never the model's
        assert [s.startswith("## User's input") for s in [c.body]] == [True]  # the source's heading
    # every request the model saw names its combination
    users = [b["messages"][-1]["content"] for b in env.bodies]
    assert any("age: teen; country: India" in u for u in users)
    # lints clean apart from the review warning, one per variant
    code, codes = lint_codes(tree)
    assert code == 0 and codes == ["HB720"] * 4
    # compiles: left out by default (the same cases and manifest hash as before; only the recorded
    # sha256 of perturbations.md, which now holds them, differs), in with --include-unreviewed
    after = cli("compile", tree, "--out", tree / "after")
    assert after.exit_code == 0 and "left out 4 generated component(s)" in after.output
    assert _identity(tree / "after") == _identity(tree / "before")
    tried = cli("compile", tree, "--out", tree / "tried", "--include-unreviewed")
    assert tried.exit_code == 0, tried.output
    lines = (tree / "tried/manifest.jsonl").read_text().splitlines()
    header, cases = json.loads(lines[0]), [json.loads(x) for x in lines[1:]]
    marked = {c["id"] for c in cases if c.get("unreviewed")}
    assert marked and all(c["perturbation"].rsplit("-", 1)[1] in {"PT3", "PT4", "PT5", "PT6"}
                          for c in cases if c["id"] in marked)
    assert all("unreviewed" not in c for c in cases if c["id"] not in marked)
    assert header["unreviewed"] == len(marked)


def test_a_second_identical_invocation_makes_no_call_and_writes_nothing(tree, env):
    assert _variants(tree).exit_code == 0
    files, calls = snapshot(tree), env.stats()["total"]
    again = _variants(tree)
    assert again.exit_code == 0, again.output
    assert env.stats()["total"] == calls == 4
    assert snapshot(tree) == files
    assert "nothing new written" in again.output and "4 answered from the cache" in again.output
    dry = _variants(tree, "--dry-run")
    assert "0 call(s) to make, 4 answered from the cache" in dry.output and env.stats()["total"] == 4
    db = sqlite3.connect(tree / "build" / "results.db")
    assert db.execute("SELECT count(*), sum(cost) FROM generations").fetchone() == (4, 0.0004)
    # the hash in each file is the cache key of its call
    keys = {r[0] for r in db.execute("SELECT prompt_hash FROM generations")}
    assert {c.meta.generated.prompt_hash for c in _generated(tree)} == keys
    from tests.generate.conftest import KEY

    db.close()
    assert all(KEY.encode() not in p.read_bytes() for p in (tree / "build").rglob("*") if p.is_file())


def test_strict_fails_until_every_variant_is_reviewed(tree, env):
    assert _variants(tree).exit_code == 0
    assert cli("lint", tree, "--strict").exit_code == 1
    assert cli("lint", tree).exit_code == 0  # a warning only, without --strict
    set_reviewed(tree / PT)
    code, codes = lint_codes(tree, "--strict")
    assert code == 0 and codes == []
    out = cli("compile", tree, "--out", tree / "reviewed")
    assert out.exit_code == 0 and "left out" not in out.output
    lines = (tree / "reviewed/manifest.jsonl").read_text().splitlines()
    assert "unreviewed" not in json.loads(lines[0])
    assert {json.loads(x)["perturbation"].rsplit("-", 1)[1] for x in lines[1:]} >= {"PT3", "PT4", "PT5", "PT6"}
    # the reviewed variants still match their cached calls: nothing is generated again
    calls = env.stats()["total"]
    again = _variants(tree)
    assert again.exit_code == 0 and env.stats()["total"] == calls and "nothing new written" in again.output


def test_dry_run_estimates_and_neither_calls_nor_writes(tree, env):
    files = snapshot(tree)
    result = _variants(tree, "--dry-run")
    assert result.exit_code == 0, result.output
    assert "4 call(s) to make, 0 answered from the cache" in result.output
    assert "estimated cost $" in result.output  # openai/gpt-4.1 is in litellm's price list
    assert env.stats()["total"] == 0 and snapshot(tree) == files


def test_max_cost_stops_new_calls_and_a_rerun_pays_only_for_the_rest(tree, env):
    models = tree / "models.yml"
    data = yaml.safe_load(models.read_text())
    data["generator_model"]["price"] = {"input_per_mtok": 100, "output_per_mtok": 100}  # 600 tokens: $0.06 at most
    data["generator_model"]["concurrency"] = 1  # one at a time: the limit is then met exactly
    models.write_text(yaml.safe_dump(data))
    env.cost = 0.05  # what each call is billed: two reach the limit
    stopped = _variants(tree, "--max-cost", "0.1")
    assert stopped.exit_code == 3, stopped.output
    assert "--max-cost 0.1 USD reached" in stopped.output and "2 call(s) not made" in stopped.output
    assert env.stats()["total"] == 2 and len(_generated(tree)) == 2  # what was paid for is written
    rest = _variants(tree)
    assert rest.exit_code == 0, rest.output
    assert env.stats()["total"] == 4 and len(_generated(tree)) == 4  # the first answers were not paid again


def test_without_a_key_nothing_is_called_or_written(tree, env, monkeypatch):
    monkeypatch.delenv("OPENROUTER_API_KEY")
    files = snapshot(tree)
    result = _variants(tree)
    assert result.exit_code == 2 and "OPENROUTER_API_KEY is not set" in result.output
    assert env.stats()["total"] == 0 and snapshot(tree) == files


def test_bad_requests_are_clear_messages(tree, env):
    for args, message in [
        (["generate", "variants", "P1-B1-S1-PT9", tree, "--axis", "age=teen"], "has no user context or perturbation 'PT9'"),
        (["generate", "variants", "P1-B1-S1-PT1", tree, "--axis", "age"], "is not NAME=VALUE"),
        (["generate", "variants", "P1-B1-S1-PT1", tree], "no --axis given"),
        (["generate", "variants", "P9-B1-S1-PT1", tree, "--axis", "age=teen"], "no scenario 'P9-B1-S1'"),
    ]:
        result = cli(*args)
        assert result.exit_code == 2, result.output
        assert message in result.output and "Traceback" not in result.output
    models = tree / "models.yml"
    models.write_text(models.read_text().split("generator_model:")[0])
    result = cli("generate", "variants", "P1-B1-S1-PT1", tree, "--axis", "age=teen")
    assert result.exit_code == 2 and "models.yml names no generator_model" in result.output
    assert env.stats()["total"] == 0


def test_a_failing_provider_writes_nothing_and_a_rerun_recovers(tree, env):
    from tests.fakes.openrouter import Rule

    env.rules = [Rule("400")]  # a permanent error: not retried
    files = snapshot(tree)
    failed = _variants(tree)
    assert failed.exit_code == 3 and "4 generation call(s) failed" in failed.output
    assert snapshot(tree) == files and "Traceback" not in failed.output
    env.reset_counts()
    env.rules = [Rule("500", times=1)]  # a transient error once per request: retried by the engine
    ok = _variants(tree)
    assert ok.exit_code == 0, ok.output
    assert len(_generated(tree)) == 4 and env.stats()["faults"]["500"] == 4
