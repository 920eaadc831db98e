"""What a real provider does rarely, through litellm's real HTTP path, counted at the fake server:
a body that drips, an answer without choices, a cost that cannot be right, and a money limit
with calls in flight."""

from __future__ import annotations

import time

import pytest

from helmbench.run.calls import ProviderError
from helmbench.run.provider import load_litellm
from run_helpers import rows, run_inprocess
from test_run_provider import call
from tests.fakes.manifests import synthetic_cases, write_manifest, write_models
from tests.fakes.openrouter import Rule


def test_a_dripping_body_times_out_at_the_overall_deadline(fake):
    fake.rules = [Rule("drip")]
    fake.drip_seconds = 0.5  # each read arrives well within the 1 s timeout; the body would take minutes
    load_litellm()  # the clock covers the call, not the import
    start = time.monotonic()
    with pytest.raises(ProviderError) as err:
        call(fake, settings={"timeout": 1.0})
    assert err.value.kind == "timeout" and err.value.transient
    assert "deadline" in err.value.message
    assert time.monotonic() - start < 20  # ~1 s; without a deadline it waits for every byte (minutes)


def test_a_run_retries_a_dripping_call_and_completes(env, fake, small):
    """Half the first attempts drip; the other half answer at once, so the model is slow at times, not
    unreachable: the dripping calls are retried and every case completes."""
    cases = list(synthetic_cases(12, scenarios=3))
    write_manifest(small["manifest"], cases)
    write_models(small["models"], ["test/model-a"], timeout=1.0)
    slow = {c["request"]["messages"][-1]["content"] for c in cases[::2]}
    fake.rules = [Rule("drip", times=1, match=lambda body: body["messages"][-1]["content"] in slow)]
    fake.drip_seconds = 0.5
    start = time.monotonic()
    report = run_inprocess(small, concurrency=12)
    assert report.status == "completed" and time.monotonic() - start < 60 and not report.stalled
    assert fake.faults["drip"] == len(slow) == 6
    assert rows(small["db"], "SELECT attempts, count(*) FROM responses WHERE error_kind IS NULL "
                             "GROUP BY attempts") == [(1, 6), (2, 6)]


@pytest.mark.slow
def test_a_model_whose_first_three_calls_time_out_stops_its_lane_while_another_finishes(env, fake, small, capsys,
                                                                                     monkeypatch):
    import sys

    from helmbench.cli import main

    write_manifest(small["manifest"], synthetic_cases(12, scenarios=3))
    small["models"].write_text("models:\n  - id: test/slow\n    timeout: 1\n    concurrency: 1\n"
                               "  - id: test/model-a\n    timeout: 1\n", encoding="utf-8")
    fake.rules = [Rule("drip", match="test/slow")]
    fake.drip_seconds = 0.5
    monkeypatch.setattr(sys, "argv", ["helmbench", "run", "--manifest", str(small["manifest"]), "--models-file",
                                      str(small["models"]), "--db", str(small["db"])])
    start = time.monotonic()
    with pytest.raises(SystemExit) as ended:
        main()
    took = time.monotonic() - start
    assert ended.value.code == 3 and took < 3 * 1.0 + 6  # about three timeouts (and the import), not 12 × 6
    assert fake.by_model["test/slow"] == 3 and fake.by_model["test/model-a"] == 12
    said = capsys.readouterr().err
    assert said.count("test/slow: its first 3 calls all hit the 1 s deadline") == 1
    statuses = dict(rows(small["db"], "SELECT model, status FROM runs"))
    assert statuses == {"test/slow": "failed", "test/model-a": "completed"}
    assert rows(small["db"], "SELECT count(*) FROM results r JOIN runs ON runs.id = r.run_id "
                             "WHERE runs.model = 'test/model-a' AND verdict != 'ERROR'") == [(12,)]


def test_no_choices_is_retried_less_and_its_billed_cost_recorded(env, fake, small):
    write_manifest(small["manifest"], synthetic_cases(6, scenarios=3))
    fake.rules = [Rule("no_choices")]
    report = run_inprocess(small)  # 12 attempts allowed for network errors (FAST policy), 2 for no choices
    assert fake.total == 2 * 6 and set(fake.by_key.values()) == {2}
    assert rows(small["db"], "SELECT error_kind, attempts, round(cost, 6), count(*) FROM responses GROUP BY 1, 2, 3") \
        == [("empty_choices", 2, 0.0002, 6)]
    assert report.spent == pytest.approx(12 * 0.0001)
    fake.rules = []
    again = run_inprocess(small)
    assert again.status == "completed" and fake.total == 12 + 6  # the errors are asked once more, then answered


@pytest.mark.parametrize("cost", [-50, "0.5 USD", float("inf")])
def test_an_impossible_cost_is_recorded_as_unknown_and_flagged(env, fake, small, cost):
    write_manifest(small["manifest"], synthetic_cases(6, scenarios=3))
    fake.cost = cost if cost != float("inf") else 1e400  # JSON has no infinity: an overflowing literal
    report = run_inprocess(small, max_cost=0.01)
    assert report.status == "completed" and report.spent == 0
    assert rows(small["db"], "SELECT count(*), count(cost) FROM responses") == [(6, 0)]
    assert rows(small["db"], "SELECT cost FROM runs") == [(None,)]
    log = (small["db"].parent / "logs" / "run-1.log").read_text()
    assert log.count("recorded as unknown") == 6


def test_max_cost_is_not_overshot_by_the_calls_in_flight(env, fake, small):
    write_manifest(small["manifest"], synthetic_cases(120, scenarios=3))
    fake.latency = 0.1
    fake.cost = 0.0001
    report = run_inprocess(small, concurrency=8, max_cost=0.001)
    assert report.status == "stopped_cost"
    # 10 calls reach the limit; one more may be in flight when it is reached (not 8 more)
    assert 10 <= fake.total <= 11, fake.total
    assert report.spent == pytest.approx(fake.total * 0.0001)
    assert fake.peak_in_flight > 1  # the reservation still lets calls run in parallel once a price is known
