"""A paid call is counted once wherever a cost is shown, however many runs' results use it.

Four models under test, one simulated user, one judge, the conversation tree of these tests. A
conversation's turn keys chain its authored content, so the simulated user's request at turn N has the same
key in all four models' conversations (each run pays its own call for it, with its own model's replies in
it); and the fake answers every model alike, so the judge is asked once about the four identical answers
(one call, four runs' results use it). Before the fix each run's results took every run's payment for the
simulated user (4 × its own) and each the one shared judge call: the four "costs behind the results" added
to more than the ledger's total.

What must hold: each run's results count the simulated-user calls it sent, no more; the four runs' costs
behind their results (model, simulated user and judge) add to the ledger's total; a shared call is counted
in the run that sent it and named as shared by the others; and the leaderboard page, the model pages, the
report and `helmbench costs` show the same numbers for each run.
"""

from __future__ import annotations

import math
import re

import pytest

from tests.conversation.conv_trees import USER_MODEL
from test_conv_run import compile_, rows
from test_conv_run import run as run_tree

MODELS = ["test/model-a", "test/model-b", "test/model-c", "test/model-d"]


@pytest.fixture
def four(env, fake, conv_tree):
    (conv_tree / "models.yml").write_text(
        f"marking_model: test/judge\nuser_model:\n  id: {USER_MODEL}\n  temperature: 0.9\nmodels:\n"
        + "".join(f"  - id: {m}\n    temperature: 0\n" for m in MODELS), encoding="utf-8")
    compile_(conv_tree)
    assert run_tree(conv_tree).status == "completed"
    return conv_tree


def test_four_runs_costs_add_to_the_ledger_total_and_every_page_shows_costs_number(four):
    from typer.testing import CliRunner

    from helmbench.cli import app
    from helmbench.publish import PublishSettings
    from helmbench.publish.reader import load
    from helmbench.publish.pages import Links, plan
    from helmbench.cli.run_render import _money as money
    from helmbench.publish.render import render, sortkey
    from helmbench.store import open_reader
    from helmbench.store.queries.ledger import (USER_KINDS, behind_results_ledger, run_costs, run_ledger,
                                                shared_ledger)

    db = four / "build/results.db"
    (total,), = rows(four, "SELECT sum(cost) FROM calls")
    per_run_user = dict(rows(four, "SELECT run_id, count(*) FROM calls WHERE kind = 'user' GROUP BY run_id"))
    assert len(per_run_user) == 4 and len(set(per_run_user.values())) == 1  # each run asked the simulated user itself
    (shared_keys,), = rows(four, "SELECT count(*) FROM (SELECT request_key FROM calls WHERE kind = 'user' "
                                 "GROUP BY request_key, settings_hash, sample HAVING count(DISTINCT run_id) = 4)")
    assert shared_keys > 0, "the four conversations reach the same simulated-user request keys"

    reader = open_reader(db)
    costs = {r["run_id"]: r for r in run_costs(reader)}
    assert len(costs) == 4
    for run_id, r in costs.items():
        behind = behind_results_ledger(reader, run_id)
        assert behind.calls(kinds=USER_KINDS) == run_ledger(reader, run_id).calls(kinds=USER_KINDS) == \
            per_run_user[run_id]  # its own simulated-user calls, not the four runs'
        assert r["behind_results"] == pytest.approx(r["behind_model"] + r["behind_user"] + r["behind_judge"])
    assert math.fsum(r["behind_results"] for r in costs.values()) == pytest.approx(total, rel=1e-12)
    assert math.fsum(r["paid"] + r["judge_paid"] for r in costs.values()) == pytest.approx(total, rel=1e-12)
    sharing = [r for r in costs.values() if r["shared_calls"]]
    assert sharing, "the judge call on the four identical answers is shared"
    assert all(r["shared_with"] and r["run_id"] not in r["shared_with"] for r in sharing)
    # a simulated-user call is its own run's (the request holds that model's replies), never shared
    assert all(shared_ledger(reader, run_id)[0].calls(kinds=USER_KINDS) == 0 for run_id in costs)

    # the site: the leaderboard's cost column and each model page, from the same database
    data = load(PublishSettings(db=db, manifest=four / "build/manifest.jsonl", datasette_url="http://127.0.0.1:8001"))
    pages = {p.src_uri: p for p in plan(data).pages}
    shown: dict[str, list[tuple[str, str, str]]] = {}
    for uri in ["index.md", *[u for u in pages if u.startswith("models/")]]:
        spec = pages[uri]
        html = str(render(spec.template, {**spec.context, "data": data, "link": Links(uri[:-3] + "/", "http://x")}))
        shown[uri] = re.findall(r'data-cost-model="([^"]+)" data-cost-user="([^"]+)" data-cost-judge="([^"]+)"', html)
    by_model = {m.id: m for m in data.models}
    assert sorted(shown["index.md"]) == sorted(
        (sortkey(r["behind_model"]), sortkey(r["behind_user"]), sortkey(r["behind_judge"])) for r in costs.values())
    for model_id, m in by_model.items():
        r = costs[m.row.run.id]
        assert shown[f"models/{m.slug}.md"] == [(sortkey(r["behind_model"]), sortkey(r["behind_user"]),
                                                 sortkey(r["behind_judge"]))]
        assert m.row.cost == pytest.approx(r["behind_results"], rel=1e-12)
        assert m.row.billed_cost == pytest.approx(r["paid"] + r["judge_paid"], rel=1e-12)

    # `helmbench costs` prints the same split for each run
    out = CliRunner(env={"COLUMNS": "250"}).invoke(app, ["costs", "--db", str(db)]).output
    for r in costs.values():
        assert (f"run {r['run_id']} behind its results: model {money(r['behind_model'])}, simulated user "
                f"{money(r['behind_user'])}, judge {money(r['behind_judge'])}") in out
