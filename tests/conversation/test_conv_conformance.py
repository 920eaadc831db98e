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

from tests.conversation.conv_trees import MODEL, SCRIPTED
from test_conv_ledger import assert_progress_within_its_total
from test_conv_run import compile_, rows

from helmbench.store.queries.ledger import JUDGE_KINDS, MODEL_KINDS, OWN_KINDS, USER_KINDS

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
    before = shown(tree)
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
    assert_progress_within_its_total(steps, sum(served.values()))
    assert_database_agrees(tree)
    after = shown(tree)
    grew = {key: sum((after[r][key] or 0) - (before.get(r, {}).get(key) or 0) for r in report.ledger if r in after)
            for key in ("billed_model_cost", "billed_user_cost", "billed_judge_cost")}
    assert grew["billed_model_cost"] + grew["billed_user_cost"] == pytest.approx(
        (sum(served.values()) - judges) * fake.cost), "billed (model and simulated user)"
    assert grew["billed_judge_cost"] == pytest.approx(judges * fake.cost), "billed (judge)"
    return report, served


KEYS = ("model_cost", "user_cost", "judge_cost", "prompt_tokens", "completion_tokens", "billed_model_cost",
        "billed_user_cost", "billed_judge_cost")


def _outputs(tree: Path, run_id: int) -> set[tuple]:
    """(kind, model, settings hash, request key, sample, model under test) of the outputs a run's results use."""
    wanted = set(rows(tree, "SELECT 'answer', rs.model, rs.settings_hash, rs.request_hash, rs.sample, rs.model "
                            "FROM results res JOIN responses rs ON rs.id = res.response_id WHERE res.run_id = ?",
                      [run_id]))
    for role, caller, model, settings, key, sample in rows(
            tree, "SELECT t.role, t.caller, t.model, t.settings_hash, t.turn_key, t.sample FROM results res "
                  "JOIN result_turns rt ON rt.result_id = res.id JOIN turns t ON t.id = rt.turn_id "
                  "WHERE res.run_id = ?", [run_id]):
        wanted.add(("turn" if role == "assistant" else "user", caller or model, settings, key, sample, model))
    wanted |= set(rows(tree, "SELECT 'judge', j.judge_model, j.judge_settings_hash, j.judge_request_hash, NULL, NULL "
                             "FROM results res JOIN result_judgements rj ON rj.result_id = res.id JOIN judgements j "
                             "ON j.id = rj.judgement_id WHERE res.run_id = ?", [run_id]))
    return wanted


def behind_results(tree: Path, run_id: int) -> list[tuple]:
    """The ledger rows behind a run's results, found here without the store's query, by the rule the docs
    give: the calls (any run's, every attempt) at the answers, turns and judgements its results link to, a
    model's output only from a run of that model; a call the results of several runs of the manifest use is
    counted in the one that sent it when its results use it, else in the lowest-numbered user."""
    runs = {r: (manifest, model, status) for r, manifest, model, status in
            rows(tree, "SELECT id, manifest_hash, model, status FROM runs")}
    calls = rows(tree, "SELECT id, kind, model, settings_hash, request_key, sample, run_id, cost, prompt_tokens, "
                       "completion_tokens FROM calls")

    def used_by(run: int) -> set[int]:
        wanted = _outputs(tree, run)
        return {c[0] for c in calls if (c[1], c[2], c[3], c[4], c[5], None if c[1] == "judge" else
                                        (runs.get(c[6]) or (None, None))[1]) in wanted}

    mine = used_by(run_id)
    if runs[run_id][2] != "preview":
        peers = {r: used_by(r) for r, (m, _, status) in runs.items()
                 if m == runs[run_id][0] and status != "preview"}
        sender = {c[0]: c[6] for c in calls}

        def owner(call: int) -> int:
            users = [r for r, used in peers.items() if call in used]
            return sender[call] if sender[call] in users else min(users)

        mine = {c for c in mine if owner(c) == run_id}
    return [(kind, cost, pt, ct) for i, kind, _, _, _, _, _, cost, pt, ct in calls if i in mine]


def shown(tree: Path) -> dict[int, dict]:
    """Per run shown, the two costs, tokens and evaluations that `report --format json`, the API and the site's
    data layer give; checks that the three agree, that the cost is the sum of the ledger rows behind the
    results and "billed in run" the sum of the run's own ledger rows."""
    import json

    from helmbench import api
    from helmbench.cli.report_render import as_json
    from helmbench.publish.reader import load
    from helmbench.publish.settings import PublishSettings

    db, manifest = tree / "build/results.db", tree / "build/manifest.jsonl"
    if not db.exists():
        return {}
    data = api.report_data(db, manifest, bootstrap=0)
    by_json = {r["run_id"]: r for r in json.loads(as_json(data))["rows"]}
    by_api = {r.run.id: {k: getattr(r, k) for k in KEYS} for r in api.report(db, manifest, bootstrap=0).rows}
    site = load(PublishSettings(db=db, manifest=manifest, datasette_url="http://127.0.0.1:1")).leaderboard
    by_site = {r.run.id: {k: getattr(r, k) for k in KEYS} for r in site.rows}
    assert {r: {k: v[k] for k in KEYS} for r, v in by_json.items()} == by_api == by_site, "report, API, site"
    for run_id, row in by_json.items():
        behind = behind_results(tree, run_id)
        model = [c for kind, c, _, _ in behind if kind in OWN_KINDS and c is not None]
        user = [c for kind, c, _, _ in behind if kind in USER_KINDS and c is not None]
        judge = [c for kind, c, _, _ in behind if kind in JUDGE_KINDS and c is not None]
        assert row["model_cost"] == pytest.approx(sum(model)) and model, "the cost behind the results (model)"
        assert row["user_cost"] == (pytest.approx(sum(user)) if user else None), "behind the results (simulated user)"
        assert row["judge_cost"] == (pytest.approx(sum(judge)) if judge else None), "the cost behind the results (judge)"
        assert (row["prompt_tokens"], row["completion_tokens"]) == (sum(b[2] or 0 for b in behind),
                                                                    sum(b[3] or 0 for b in behind)), "tokens"
        for key, of in {"billed_model_cost": OWN_KINDS, "billed_user_cost": USER_KINDS,
                        "billed_judge_cost": JUDGE_KINDS}.items():
            marks = ",".join("?" * len(of))
            (paid,) = rows(tree, f"SELECT sum(cost) FROM calls WHERE run_id = ? AND kind IN ({marks})", [run_id, *of])[0]
            assert row[key] == (pytest.approx(paid) if paid is not None else None), key
        (links,) = rows(tree, "SELECT count(*) FROM result_judgements rj JOIN results r ON r.id = rj.result_id "
                              "WHERE r.run_id = ?", [run_id])[0]
        assert row["evaluations"]["n_judgements"] == links, "the report's evaluations"
    return by_json


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
    assert spend.model_cost + spend.user_cost + spend.judge_cost == pytest.approx(fresh.spent)  # a fresh run uses all it paid
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
