"""The cost estimate: output tokens from stored medians or the schema and max_tokens, prices from
models.yml or litellm's local map, and models with no known price named."""

from __future__ import annotations

import sqlite3
import statistics
import sys

import pytest
from rich.console import Console

from helmbench.run import estimate
from helmbench.run.config import RetryPolicy, RunOptions
from helmbench.run.session import run
from helmbench.spec.models import ModelEntry
from tests.fakes.manifests import EVALUATIONS, make_case, write_manifest, write_models

SCHEMA_CASE = make_case("P1-B1-S1", 1, 1, evaluation=EVALUATIONS[0])


def test_price_override_wins_then_litellm_then_none():
    costs = {"openrouter/a/known": {"input_cost_per_token": 1e-6, "output_cost_per_token": 4e-6},
             "bare-name": {"input_cost_per_token": 2e-6, "output_cost_per_token": 3e-6}}
    here = ModelEntry(id="a/known", price={"input_per_mtok": 10, "output_per_mtok": 20})
    assert estimate.price_for(here, costs) == estimate.Price(10e-6, 20e-6, "models.yml")
    assert estimate.price_for(ModelEntry(id="a/known"), costs) == estimate.Price(1e-6, 4e-6, "litellm")
    assert estimate.price_for(ModelEntry(id="x/bare-name"), costs).input_per_token == 2e-6
    assert estimate.price_for(ModelEntry(id="x/unknown"), costs) is None


def test_litellm_shipped_price_list_is_read_without_importing_litellm():
    import subprocess

    code = ("import sys; from helmbench.run import estimate; from helmbench.spec.models import ModelEntry\n"
            "p = estimate.price_for(ModelEntry(id='openai/gpt-4.1-mini'))\n"
            "print(p.source, 0 < p.input_per_token < p.output_per_token, 'litellm' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.stdout.split() == ["litellm", "True", "False"], out.stderr


def test_price_is_not_part_of_the_request_settings():
    entry = ModelEntry(id="a/b", max_tokens=10, price={"input_per_mtok": 1, "output_per_mtok": 2})
    assert entry.settings() == {"max_tokens": 10}


def test_price_must_be_finite_and_non_negative():
    from pydantic import ValidationError

    for bad in ({"input_per_mtok": -1, "output_per_mtok": 1}, {"input_per_mtok": float("inf"), "output_per_mtok": 1},
                {"input_per_mtok": 1}):
        with pytest.raises(ValidationError):
            ModelEntry(id="a/b", price=bad)


def test_schema_floor_is_the_smallest_valid_answer():
    # {"response": "", "tags": [], "category": "REFUSAL"}: the shortest enum value
    assert estimate.floor_tokens(SCHEMA_CASE["request"]) == len('{"response": "", "tags": [], "category": "REFUSAL"}') // 4
    assert estimate.floor_tokens({"messages": [], "response_format": None}) == 1


def test_range_without_history_is_floor_to_max_tokens_and_unbounded_without_max_tokens():
    capped = ModelEntry(id="a/capped", max_tokens=300, price={"input_per_mtok": 1, "output_per_mtok": 2})
    open_ended = ModelEntry(id="a/open", price={"input_per_mtok": 1, "output_per_mtok": 2})
    unknown = ModelEntry(id="a/unknown", max_tokens=300)
    est = estimate.Estimator([capped, open_ended, unknown], None, costs={})
    for m in ("a/capped", "a/open", "a/unknown"):
        est.add(m, SCHEMA_CASE, 3)
    res = {m.id: m for m in est.result().models}
    floor = estimate.floor_tokens(SCHEMA_CASE["request"])
    inp = sum(len(m["content"]) for m in SCHEMA_CASE["request"]["messages"]) // 4
    c = res["a/capped"]
    assert (c.calls, c.input_tokens, c.output_low, c.output_high) == (3, 3 * inp, 3 * floor, 900)
    assert c.cost_low == pytest.approx(3 * inp * 1e-6 + 3 * floor * 2e-6)
    assert c.cost_high == pytest.approx(3 * inp * 1e-6 + 900 * 2e-6)
    assert res["a/open"].output_high is None and res["a/open"].cost_high is None
    assert res["a/unknown"].cost_low is None and est.result().unpriced == ["a/unknown"]
    lines = estimate.notes(est.result())
    assert any("No known price for: a/unknown" in line for line in lines)
    assert any("no upper bound" in line for line in lines)


def test_stored_medians_give_a_point_estimate_per_model_and_scenario(tmp_path, fake_env, monkeypatch):
    for k, v in fake_env.items():
        monkeypatch.setenv(k, v)
    cases = [make_case(s, 1, p, evaluation=EVALUATIONS[0]) for s in ("P1-B1-S1", "P1-B1-S2") for p in (1, 2, 3)]
    manifest = tmp_path / "build" / "manifest.jsonl"
    write_manifest(manifest, cases)
    models = write_models(tmp_path / "models.yml", ["test/model-a"], judge=None, max_tokens=500)
    db = tmp_path / "build" / "results.db"
    opts = RunOptions(manifest=str(manifest), models_file=str(models), db=str(db), logs_dir=str(tmp_path / "logs"),
                      scenarios=("P1-B1-S1",), retry=RetryPolicy(max_attempts=3, base_delay=0.01, max_delay=0.05))
    run(opts, Console(stderr=True, file=sys.stderr), live=False)
    conn = sqlite3.connect(db)
    stored = [r[0] for r in conn.execute("SELECT completion_tokens FROM responses WHERE model = 'test/model-a'")]
    conn.close()
    assert len(stored) == 3
    median = statistics.median(stored)

    entry = ModelEntry(id="test/model-a", max_tokens=500, price={"input_per_mtok": 1, "output_per_mtok": 1})
    est = estimate.Estimator([entry], db, costs={})
    for case in cases:
        est.add(entry.id, case)
    m = est.result().models[0]
    floor = estimate.floor_tokens(cases[0]["request"])
    assert m.from_history == 3
    assert m.output_low == pytest.approx(3 * median + 3 * floor)
    assert m.output_high == pytest.approx(3 * median + 3 * 500)

    # `helmbench costs`: what was billed, then the estimate of the 3 calls of P1-B1-S2 not made yet
    from packaged_helpers import helmbench

    costs = helmbench("costs", "--db", str(db), "--manifest", str(manifest), "--models-file", str(models),
                      cwd=tmp_path)
    assert costs.returncode == 0, costs.stderr
    billed, remaining = costs.stdout.split("Not run yet for")
    assert "test/model-a" in billed
    row = next(line for line in remaining.splitlines() if "test/model-a" in line)
    cells = [c.strip() for c in row.split("│")[1:-1]]
    assert cells[:2] == ["test/model-a", "3"] and cells[-1] == "no known price"


def test_nothing_left_to_call_is_zero_dollars_not_unknown():
    entry = ModelEntry(id="test/model-a", max_tokens=500)  # no known price
    est = estimate.Estimator([entry], None, costs={}).result()
    text = "\n".join(estimate.notes(est))
    assert est.calls == 0
    assert "$0" in text and "unknown" not in text
