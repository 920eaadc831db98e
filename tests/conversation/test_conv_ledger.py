"""The call ledger against the fake OpenRouter: every request the server counts is one ledger row, and
the numbers shown (run summary, `costs`, judge totals) are sums of those rows.

The tree holds a single-answer sqe scenario, a scripted and a simulated conversation, one model, a
judge and a simulated user: every kind of call a run makes.
"""

from __future__ import annotations

import json
import shutil
import signal
import sqlite3
import time
from pathlib import Path

import pytest

from tests import forked
from tests.conversation.conv_trees import MODEL, SCRIPTED, SIMULATED_TEXT, USER_MODEL
from test_conv_run import compile_, rows
from test_conv_run import run as run_tree

from helmbench.manifest import read_manifest

JUDGE = "test/judge"
FIXTURE = Path(__file__).resolve().parents[1] / "store" / "fixtures" / "results-794e7ac.sql"


@pytest.fixture
def tree(conv_tree):
    compile_(conv_tree)
    return conv_tree


def run(tree: Path, *scenarios: str, **kw):
    return run_tree(tree, *scenarios, **kw)


def ledger_by_model(tree: Path, where: str = "1") -> dict[str, int]:
    return dict(rows(tree, f"SELECT model, count(*) FROM calls WHERE {where} GROUP BY model"))


def test_every_request_the_server_counts_is_one_ledger_row_and_the_summaries_are_their_sums(env, fake, tree):
    from helmbench.store import open_reader
    from helmbench.store.queries.ledger import JUDGE_KINDS, MODEL_KINDS, run_costs

    report = run(tree, samples=2)
    assert report.status == "completed"
    served = {m: n for m, n in fake.by_model.items()}
    assert set(served) == {MODEL, USER_MODEL, JUDGE}
    assert ledger_by_model(tree) == served  # answers, turns, simulated user, judge: one row per request
    assert rows(tree, "SELECT count(*) FROM calls WHERE state != 'answered'") == [(0,)]
    (versions,) = rows(tree, "SELECT count(*) FROM calls WHERE model_version IS NULL OR provider IS NULL")
    assert versions == (0,)  # every answered call names the version and provider that served it
    (ledger,) = report.ledger.values()
    assert ledger.calls(kinds=MODEL_KINDS) == served[MODEL] + served[USER_MODEL]
    assert report.judge.calls == ledger.calls(kinds=JUDGE_KINDS) == served[JUDGE]
    billed = sum(served.values()) * fake.cost
    assert abs(report.spent - billed) < 1e-12
    (c,) = run_costs(open_reader(tree / "build/results.db"))
    assert c["calls"] + c["judge_calls"] == fake.total and c["unknown"] == 0
    assert abs((c["paid"] or 0) + (c["judge_paid"] or 0) - billed) < 1e-12
    (judge_calls,) = rows(tree, "SELECT judge_calls FROM runs")[0]
    assert judge_calls == served[JUDGE]


def test_identical_judge_requests_within_a_run_are_paid_once(env, fake, tree):
    """Two samples of a deterministic conversation give identical transcripts: one judge call per
    distinct judge request, whichever phase asks it."""
    run(tree, samples=2)
    judge_requests = fake.requests_for(JUDGE)
    distinct = {json.dumps(b["messages"], sort_keys=True) for b in judge_requests}
    assert len(judge_requests) == len(distinct) > 0
    # and both samples' results use the one judgement
    (links,) = rows(tree, "SELECT count(*) FROM result_judgements rj JOIN results r ON r.id = rj.result_id "
                          "JOIN cases c ON c.hash = r.case_hash WHERE c.id = 'P1-B1-S3-C1-PT1'")[0]
    (results,) = rows(tree, "SELECT count(*) FROM results r JOIN cases c ON c.hash = r.case_hash "
                            "WHERE c.id = 'P1-B1-S3-C1-PT1'")[0]
    assert results == 2 and links == 2


def test_a_database_of_the_release_before_the_ledger_is_migrated_without_paying_again(env, fake, tree):
    """The fixture is a results.db written by the release before the ledger (commit 794e7ac) for this
    very tree (two samples); its full-text index, derived data a SQL dump cannot hold, is rebuilt."""
    from helmbench.store import open_db

    db_path = tree / "build/results.db"
    conn = sqlite3.connect(db_path)
    conn.executescript(FIXTURE.read_text(encoding="utf-8"))
    conn.close()
    # the fixture is of this tree: every case is stored as it compiles today but the simulated
    # conversation, whose request now says which field of a reply its user reads
    stored = {h for (h,) in rows(tree, "SELECT hash FROM cases")}
    changed = {c["id"] for c in read_manifest(tree / "build/manifest.jsonl") if c["hash"] not in stored}
    assert changed == {"P1-B1-S3-C1-PT1"}
    from helmbench.score.leaderboard import build_leaderboard

    # read before any migration (a reader never migrates): no ledger, so its cost is unknown, not $0
    (row,) = build_leaderboard(db_path, None, bootstrap=0, seed=0).rows
    assert (row.cost, row.billed_cost, row.model_cost, row.judge_cost) == (None, None, None, None)
    db = open_db(db_path)
    backfilled = dict(db.execute("SELECT kind, count(*) FROM calls GROUP BY kind").fetchall())
    db.conn.close()
    (responses,) = rows(tree, "SELECT count(*) FROM responses")[0]
    (turns,) = rows(tree, "SELECT count(*) FROM turns WHERE source = 'model'")[0]
    (users,) = rows(tree, "SELECT count(*) FROM turns WHERE source = 'user_model'")[0]
    (judged,) = rows(tree, "SELECT count(*) FROM judgements")[0]
    assert backfilled == {"answer": responses, "turn": turns, "user": users, "judge": judged}
    # migration 10: the transcript's judgement joined the answers' in `judgements`, with its two links
    # (one per sample), and the transcript tables are gone
    assert rows(tree, "SELECT output, count(*) FROM judgements GROUP BY output") == [("answer", judged - 1),
                                                                                     ("transcript", 1)]
    assert rows(tree, "SELECT count(*) FROM result_judgements rj JOIN judgements j ON j.id = rj.judgement_id "
                      "WHERE j.output = 'transcript'") == [(2,)]
    tables = {t for (t,) in rows(tree, "SELECT name FROM sqlite_master WHERE type = 'table'")}
    assert not tables & {"transcript_judgements", "result_transcript_judgements"}
    assert all(uid.startswith("m9:") for (uid,) in rows(tree, "SELECT uid FROM calls"))
    dry = run(tree, samples=2, dry_run=True)
    # only the simulated conversation is asked again, from its second turn, on purpose: its user now
    # sees the reply text (the turn keys changed); the dry run counts those turns beforehand
    assert dry.plan.new_calls == 0 and dry.plan.new_turns == dry.plan.reasked_turns > 0
    user_turns = sum(m.user_turns for m in dry.plan.models)
    report = run(tree, samples=2)
    assert report.status == "completed"
    assert fake.by_model[MODEL] == dry.plan.new_turns and fake.by_model[USER_MODEL] == user_turns
    # no answer and no scripted turn is paid again, and no single answer is judged again; the transcripts are,
    # once: a transcript criterion is now judged with a wrapper of its own (the whole conversation, not "one
    # assistant response"), so its judge request is new (the authors' guide says so)
    judged = fake.requests_for(JUDGE)
    assert judged and all("<conversation>" in str(b["messages"][-1]["content"]) for b in judged)
    assert set(fake.by_model) == {MODEL, USER_MODEL, JUDGE}
    new = dict(rows(tree, "SELECT kind, count(*) FROM calls WHERE uid NOT LIKE 'm9:%' GROUP BY kind"))
    assert new == {"turn": fake.by_model[MODEL], "user": fake.by_model[USER_MODEL], "judge": fake.by_model[JUDGE]}


def test_the_simulated_user_reads_only_the_reply_text_of_a_structured_answer(env, fake, conv_tree):
    """A simulated conversation whose model answers in a schema ({"response", "category", "tags"}): the
    simulated user is shown the `response` text of each reply, as a person would read it."""
    tree = conv_tree
    s1 = tree / SCRIPTED.rsplit("/", 1)[0]
    s4 = s1.with_name("S4--structured")
    shutil.copytree(s1, s4)
    (s4 / "S1.md").rename(s4 / "S4.md")
    (s4 / "S1.json").rename(s4 / "S4.json")
    (s4 / "conversation.md").write_text(SIMULATED_TEXT, encoding="utf-8")
    compile_(tree)
    run(tree, "P1-B1-S4")
    asked = fake.requests_for(USER_MODEL)
    assert asked
    stored = [json.loads(c) for (c,) in rows(tree, "SELECT content FROM turns WHERE role = 'assistant'")]
    assert all(set(s) > {"response"} for s in stored)  # the model answers with more than its reply text
    texts = {s["response"] for s in stored}
    for body in asked:
        for m in body["messages"][1:]:
            if m["role"] == "user":  # the model's replies, from the simulated user's side
                assert m["content"] in texts and not m["content"].lstrip().startswith("{")


def _in_flight(tree: Path, fake, kind: str, proc, timeout: float = 60) -> None:
    """Wait until calls of `kind` are in flight and every `sent` row's request has reached the server (a
    row is committed just before its request leaves: a kill in between would over-count by design)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        assert proc.poll() is None, proc.stderr.read()
        try:
            (mine, sent), = rows(tree, f"SELECT sum(kind = '{kind}'), count(*) FROM calls WHERE state = 'sent'")
        except sqlite3.Error:
            mine = sent = 0
        if mine and sent == fake.in_flight:
            return
        time.sleep(0.005)
    raise AssertionError(f"no {kind} call was ever in flight")


@pytest.mark.slow
@pytest.mark.parametrize("kind, only", [("answer", ()), ("turn", ()), ("user", ()), ("judge", ()),
                                        ("judge", ("P1-B1-S2",)), ("judge", ("P1-B1-S3",))],
                         ids=["answer", "turn", "user", "judge", "judge-answers", "judge-transcript"])
def test_kill_9_in_every_phase_leaves_each_request_the_server_saw_in_the_ledger(env, fake, tree, kind, only):
    """Killed while calls of `kind` are in flight: the server's count equals the completed rows plus the
    rows still `sent` (cut: possibly billed); the next run completes them, pays each missing call once and
    no completed call again. `only` the judged single-answer scenario (P1-B1-S2), or the simulated
    conversation (P1-B1-S3): every judge call judges an answer, or a transcript."""
    fake.latency = 0.3
    proc = forked.start("run", "--manifest", tree / "build/manifest.jsonl", "--models-file", tree / "models.yml",
                        "--db", tree / "build/results.db", "--samples", "2", "--concurrency", "2",
                        *(a for s in only for a in ("--scenario", s)), cwd=tree, env=env)  # a real process: kill -9
    try:
        _in_flight(tree, fake, kind, proc)
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait(10)
    (completed, cut), = rows(tree, "SELECT sum(state != 'sent'), sum(state = 'sent') FROM calls")
    assert cut >= 1
    assert fake.wait_total(completed + cut) == completed + cut
    if only:  # the calls cut were judge calls of that scenario's answers, or of its transcript
        assert rows(tree, "SELECT DISTINCT kind FROM calls WHERE state = 'sent'") == [("judge",)]
    answered = set(rows(tree, "SELECT kind, model, request_key, sample FROM calls WHERE state = 'answered'"))
    fake.latency = 0
    before = fake.total
    steps: list = []
    report = run(tree, *only, samples=2, on_progress=steps.append)
    assert report.status == ("partial" if only else "completed")
    (still_cut,) = rows(tree, "SELECT count(*) FROM calls WHERE state = 'sent'")[0]
    assert still_cut == cut  # a cut call stays visible: it may have been billed
    (after,) = rows(tree, "SELECT count(*) FROM calls WHERE state != 'sent'")[0]
    assert fake.total - before == after - completed  # the re-run's calls are all in the ledger too
    again = set(rows(tree, "SELECT kind, model, request_key, sample FROM calls WHERE invocation = ?",
                     [report.invocation]))
    assert not answered & again, "the re-run paid a completed call again"
    assert_progress_within_its_total(steps, fake.total - before)


def assert_progress_within_its_total(steps: list, calls: int) -> None:
    """Each phase's progress total is known when it starts and never passes 100 %: `PhaseCounter` raises a
    total the calls outgrow, so a total that changed mid-phase is a total that was passed. The judge
    phase's total is exactly its calls (transcripts included); together the phases count every call."""
    by_phase: dict[str, list] = {}
    for s in steps:
        by_phase.setdefault(s.phase, []).append(s)
    for phase, seen in by_phase.items():
        assert {s.total for s in seen} == {seen[0].total}, f"{phase}: progress passed its total"
        assert [s.done for s in seen] == list(range(1, len(seen) + 1)) and seen[-1].done <= seen[-1].total
    judged = by_phase.get("judge calls", [])
    assert not judged or judged[-1].done == judged[-1].total
    assert sum(seen[-1].done for seen in by_phase.values()) == calls


@pytest.mark.parametrize("dry_run", [True, False])
def test_a_models_file_with_another_simulated_user_is_refused_not_half_applied(env, fake, tree, dry_run):
    from helmbench.errors import UsageError

    text = (tree / "models.yml").read_text(encoding="utf-8")
    other = tree / "other.yml"
    other.write_text(text.replace(f"id: {USER_MODEL}", "id: test/other-user"), encoding="utf-8")
    with pytest.raises(UsageError) as refused:
        _run_with(tree, other, dry_run)
    assert "test/other-user" in refused.value.message and USER_MODEL in refused.value.message
    assert "compile" in refused.value.hint
    assert fake.total == 0
    same = tree / "same.yml"  # the same simulated user, another judge: accepted
    same.write_text(text.replace("marking_model: test/judge", "marking_model: test/judge-2"), encoding="utf-8")
    assert _run_with(tree, same, True).status == "dry-run"


def _run_with(tree: Path, models_file: Path, dry_run: bool):
    from helmbench.run.config import RunOptions
    from helmbench.run.session import run as run_

    return run_(RunOptions(manifest=str(tree / "build/manifest.jsonl"), models_file=str(models_file),
                           db=str(tree / "build/results.db"), logs_dir=str(tree / "build/logs"), dry_run=dry_run))


def test_the_dry_run_estimate_is_the_sum_of_each_phases_estimate(env, fake, tree):
    """Each phase gives the estimate of the calls it would send; the dry run's is their sum, so a new
    phase brings its own estimate and the numbers never depend on who remembered which kind of call.
    The simulated user's turns are calls too: the conversation phase estimates and prices them on the
    user model's own row (a dry run once said "new calls 0" for a conversation benchmark)."""
    from helmbench.run.estimate import Estimator, estimate_plan
    from helmbench.run.phases import phases

    plan = run(tree, samples=2, dry_run=True).plan
    assert fake.total == 0
    assert [um.id for um in plan.user_models] == [USER_MODEL]
    per = {}
    for phase in phases():
        est = Estimator([mp.entry for mp in plan.models], None, users=plan.user_models)
        phase.estimate(plan, est)
        per[type(phase).__name__] = est.result()
    total = estimate_plan(plan, None)
    assert per["AnswerPhase"].calls == plan.new_calls > 0  # single answers only
    assert plan.user_calls > 0
    assert per["ConversationPhase"].calls == plan.new_turns + plan.user_calls  # the model's and the user's turns
    [user_row] = [m for m in per["ConversationPhase"].models if m.role == "simulated user"]
    assert user_row.calls == plan.user_calls and user_row.label == f"{USER_MODEL} (simulated user)"
    assert per["JudgePhase"].calls == 0  # not estimated (the notes say so)
    assert total.calls == sum(e.calls for e in per.values())
    for m in total.models:
        parts = [next(p for p in e.models if p.label == m.label) for e in per.values()]
        assert m.input_tokens == sum(p.input_tokens for p in parts)
        assert m.output_low == sum(p.output_low for p in parts)


def test_the_dry_run_counts_what_the_run_then_asks_conversation_turns_and_the_simulated_user(env, fake, tree):
    """The dry run's table and the run's log count every call: answers, the model's conversation turns and the
    simulated user's turns, which the fake server then sees (the user's count is an upper bound: it may stop)."""
    from rich.console import Console

    from helmbench.cli.run_render import dry_run

    report = run(tree, dry_run=True)
    [mp] = report.plan.models
    shown = Console(width=240, record=True)
    dry_run(report, shown)
    text = shown.export_text()
    assert f"│ {MODEL}" in text and f"{USER_MODEL} (simulated user)" in text
    model_row = next(line for line in text.splitlines() if line.startswith(f"│ {MODEL}"))
    assert [c.strip() for c in model_row.split("│")[2:4]] == [str(mp.new + mp.conversation_turns),
                                                              str(mp.conversation_turns)]
    assert mp.conversation_turns > 0 and report.plan.user_calls > 0

    done = run(tree)
    assert done.status == "completed"
    assert fake.by_model[MODEL] == mp.new + mp.conversation_turns  # exactly the model's calls the dry run counted
    assert 0 < fake.by_model[USER_MODEL] <= report.plan.user_calls
    logged = "\n".join(p.read_text(encoding="utf-8") for p in (tree / "build" / "logs").glob("*.log"))
    assert f"{mp.new + mp.conversation_turns} new call(s) ({mp.new} answer(s), {mp.conversation_turns} " \
           "conversation turn(s)" in logged
