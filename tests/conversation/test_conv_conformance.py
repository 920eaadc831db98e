"""Every number about calls agrees with the requests the provider saw, over every kind of scenario and
the run patterns of a maintainer: fresh, unchanged re-run, a model added, a criterion reworded, a preview.

The tree: a structured single answer (list_includes), a multi-criteria judged scenario (sqe, CR1 and
CR2), a scripted and a simulated conversation, judged by an ensemble of three judges. (A run resumed
after kill -9 is test_conv_ledger's, in every phase.) Per invocation: the fake's count per model equals
the ledger's rows, the run summary's calls (`RunReport.ledger`) and the judge line's; over the database,
`costs` sums every ledger row once; the report's evaluations are the judgements linked to its results;
progress never passes its total.
"""

from __future__ import annotations

import shutil
from collections import Counter
from pathlib import Path

import pytest

from conv_trees import MODEL, SCRIPTED
from test_conv_run import compile_, rows

from helmbench.store.queries.ledger import JUDGE_KINDS, MODEL_KINDS

JUDGES = ["test/judge", "test/judge-2", "test/judge-3"]
OTHER = "test/model-b"


@pytest.fixture
def tree(conv_tree):
    s1 = conv_tree / SCRIPTED.rsplit("/", 1)[0]
    single = s1.with_name("S4--structured")  # the scripted conversation's scenario without its conversation
    shutil.copytree(s1, single)
    (single / "S1.md").rename(single / "S4.md")
    (single / "S1.json").rename(single / "S4.json")
    (single / "conversation.md").unlink()
    models = (conv_tree / "models.yml").read_text(encoding="utf-8")
    ensemble = "marking_model:\n" + "".join(f"  - id: {j}\n" for j in JUDGES)
    (conv_tree / "models.yml").write_text(models.replace("marking_model: test/judge\n", ensemble), encoding="utf-8")
    compile_(conv_tree)
    return conv_tree


def invocation(tree: Path, fake, **kw):
    """Run once; check that every number of this invocation is the fake's count, and return the report."""
    from helmbench.run.config import RetryPolicy, RunOptions
    from helmbench.run.session import run

    steps: list = []
    fake.reset_counts()
    opts = RunOptions(manifest=str(tree / "build/manifest.jsonl"), models_file=str(tree / "models.yml"),
                      db=str(tree / "build/results.db"), logs_dir=str(tree / "build/logs"),
                      retry=RetryPolicy(max_attempts=3, base_delay=0.01, max_delay=0.05), **kw)
    report = run(opts, on_progress=steps.append)
    served = Counter({m: n for m, n in fake.by_model.items() if n})
    ledger = Counter(dict(rows(tree, "SELECT model, count(*) FROM calls WHERE invocation = ? GROUP BY model",
                               [report.invocation])))
    assert ledger == served, "the ledger is not what the provider saw"
    judges = sum(served[j] for j in JUDGES)
    summary_model = sum(led.calls(kinds=MODEL_KINDS) for led in report.ledger.values())
    assert summary_model == sum(served.values()) - judges, "the run summary's calls"
    if report.judge is not None:
        assert report.judge.calls == judges, "the judge line's calls"
    billed = sum((led.cost() or 0) for led in report.ledger.values())
    assert billed == pytest.approx(sum(served.values()) * fake.cost) == pytest.approx(report.spent)
    assert all(s.done <= s.total for s in steps), "progress passed 100 %"
    assert_database_agrees(tree)
    return report, served


def assert_database_agrees(tree: Path) -> None:
    from helmbench.store import open_reader
    from helmbench.store.queries import judge_totals_of
    from helmbench.store.queries.ledger import run_costs

    reader = open_reader(tree / "build/results.db")
    costs = run_costs(reader)
    (total,) = rows(tree, "SELECT count(*) FROM calls")[0]
    assert sum(c["calls"] + c["judge_calls"] for c in costs) == total, "costs counts each ledger row once"
    for c in costs:
        (links,) = rows(tree, "SELECT count(*) FROM result_judgements rj JOIN results r ON r.id = rj.result_id "
                              "WHERE r.run_id = :run", {"run": c["run_id"]})[0]
        assert judge_totals_of(reader.conn, c["run_id"])["n_judgements"] == links, "the report's evaluations"
    reader.conn.close()


def test_every_number_is_the_providers_count_across_scenario_kinds_and_run_patterns(env, fake, tree):
    fresh, served = invocation(tree, fake)
    assert fresh.status == "completed"
    from helmbench.store import open_readonly
    from helmbench.store.queries import run_spend

    conn = open_readonly(tree / "build/results.db")
    (run_id,) = fresh.ledger
    spend = run_spend(conn, run_id)  # the report's (and the site's) cost of the run: what its results use
    conn.close()
    assert spend.model_cost + spend.judge_cost == pytest.approx(fresh.spent)  # a fresh run uses all it paid
    assert {MODEL, "test/user-model", *JUDGES} <= set(served)  # every kind of call was made
    assert set(dict(rows(tree, "SELECT kind, 1 FROM calls"))) == {"answer", "turn", "user", "judge"}

    unchanged, served = invocation(tree, fake)
    assert unchanged.status == "completed" and not served  # nothing paid twice

    models = tree / "models.yml"
    models.write_text(models.read_text(encoding="utf-8") + f"  - id: {OTHER}\n    temperature: 0\n", encoding="utf-8")
    added, served = invocation(tree, fake)
    assert served[OTHER] > 0 and served[MODEL] == 0  # only the new model is asked (and judged)

    cr2 = next(tree.glob("scenarios/P1/B1/S2*/CR2.md"))
    cr2.write_text(cr2.read_text(encoding="utf-8").replace("## Evaluation criteria\n",
                                                             "## Evaluation criteria\n\nReworded. "), encoding="utf-8")
    compile_(tree)
    reworded, served = invocation(tree, fake)
    assert served[MODEL] == served[OTHER] == 0 and sum(served[j] for j in JUDGES) > 0  # only the judges, again

    preview, served = invocation(tree, fake, case_ids=("P1-B1-S4-C1-U1-PT1",), preview=True)
    assert not served  # a preview of a stored answer asks nothing
