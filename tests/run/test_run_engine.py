"""The phase engine with a job kind written here, as any new kind of call is: one small class (its
ledger account included), nothing in the engine changed. Real litellm against the fake OpenRouter, a real
SQLite file through the real writer thread."""

from __future__ import annotations

import sqlite3


from helmbench.run.budget import Budget
from helmbench.run.config import RetryPolicy, RunOptions
from helmbench.run.engine import run_phase
from helmbench.run.limiter import AdaptiveLimiter
from helmbench.run.progress import PhaseCounter
from helmbench.run.provider import Provider
from helmbench.run.session import run
from helmbench.run.writer import Writer
from helmbench.store import open_db
from helmbench.store.ledger import Account

FAST = RetryPolicy(max_attempts=3, base_delay=0.01, max_delay=0.05)


def save_echoes(db, batch: list) -> int:
    """The kind's write: one row per job that got an answer."""
    with db.conn:
        db.conn.execute("CREATE TABLE IF NOT EXISTS echoes (job TEXT PRIMARY KEY, content TEXT)")
        db.conn.executemany("INSERT OR REPLACE INTO echoes VALUES (?, ?)", batch)
    return len(batch)


class Echo:
    """A job is (name, model, prompt): ask the model the prompt, store the answer under the name."""

    what = "echo calls"

    def __init__(self, jobs: list[tuple[str, str, str]], writer: Writer, concurrency: int = 4):
        self.all, self.writer, self.concurrency = jobs, writer, concurrency
        self.finished: list[list[str]] = []  # the names that shared each call
        self.not_sent: list[str] = []

    def lanes(self):
        return {m: AdaptiveLimiter(self.concurrency, name=m) for m in dict.fromkeys(j[1] for j in self.all)}

    def jobs(self, lane):
        yield from (j for j in self.all if j[1] == lane)

    def key(self, job):
        return job[1], job[2]

    def request(self, job):
        return job[1], {"max_tokens": 50}, {"messages": [{"role": "user", "content": job[2]}]}

    def label(self, job):
        return job[0]

    def account(self, job):
        return Account("generation", None, job[0])

    def finish(self, jobs, result, attempts) -> bool:
        self.finished.append([j[0] for j in jobs])
        for j in jobs:
            self.writer.add((j[0], result.content))
        return False

    def dropped(self, jobs) -> None:
        self.not_sent += [j[0] for j in jobs]

    def stopped_by_cost(self) -> bool:
        return bool(self.not_sent)


def _phase(kind_jobs, tmp_path, api_base, *, max_cost=None, concurrency=4):
    open_db(tmp_path / "echo.db").conn.close()  # the schema, the call ledger included
    writer = Writer(tmp_path / "echo.db", write=save_echoes)
    kind = Echo(kind_jobs, writer, concurrency)
    progress = PhaseCounter(0)
    status = run_phase(kind, provider=lambda: Provider("sk-test", api_base), writer=writer,
                       progress=progress, policy=FAST, budget=Budget(max_cost))
    conn = sqlite3.connect(tmp_path / "echo.db")
    try:
        stored = dict(conn.execute("SELECT job, content FROM echoes").fetchall())
    finally:
        conn.close()
    return status, kind, stored, progress


def test_a_new_kind_runs_on_the_engine_and_identical_requests_in_flight_are_sent_once(fake, env, tmp_path):
    fake.latency = 0.3  # the duplicates are produced while the first of each is still in flight
    jobs = [("a1", "test/m1", "alpha"), ("a2", "test/m1", "alpha"), ("b1", "test/m1", "beta"),
            ("a3", "test/m1", "alpha"), ("c1", "test/m2", "alpha"), ("c2", "test/m2", "alpha")]
    status, kind, stored, progress = _phase(jobs, tmp_path, fake.api_base)
    assert status == "completed"
    assert fake.total == 3  # (m1, alpha), (m1, beta), (m2, alpha): two lanes, one call per distinct request
    assert sorted(sorted(g) for g in kind.finished) == [["a1", "a2", "a3"], ["b1"], ["c1", "c2"]]
    assert set(stored) == {"a1", "a2", "a3", "b1", "c1", "c2"}  # every job got its rows
    assert stored["a1"] == stored["a3"] and stored["a1"]
    assert progress.done == 3 and not kind.not_sent


def test_the_money_limit_stops_new_calls_and_the_kind_hears_of_each_job_left(fake, env, tmp_path):
    fake.cost = 0.0001
    jobs = [(f"j{i}", "test/m1", f"prompt {i}") for i in range(10)]
    status, kind, stored, _ = _phase(jobs, tmp_path, fake.api_base, max_cost=0.00025, concurrency=1)
    assert status == "stopped_cost"
    assert fake.total == 3 == len(stored)  # 0.0001 × 3 reaches 0.00025; one call at a time, so no overshoot
    assert sorted(kind.not_sent + list(stored)) == sorted(j[0] for j in jobs)


def test_run_needs_no_console_and_reports_progress_to_a_callback(fake, env, small):
    updates = []
    opts = RunOptions(manifest=str(small["manifest"]), models_file=str(small["models"]), db=str(small["db"]),
                      logs_dir=str(small["db"].parent / "logs"), retry=FAST)
    report = run(opts, on_progress=updates.append)
    assert report.status == "completed"
    answers = [u for u in updates if u.phase == "model calls"]
    judged = [u for u in updates if u.phase == "judge calls"]
    assert [u.done for u in answers] == list(range(1, 41)) and answers[-1].total == 40
    assert judged and judged[-1].done == judged[-1].total == report.judge.calls > 0
    assert answers[-1].cost > 0 and answers[-1].errors == 0
