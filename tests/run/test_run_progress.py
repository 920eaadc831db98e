"""Progress reporting and per-run logs."""

from __future__ import annotations

import io
import logging

from rich.console import Console

from helmbench.run.logs import run_logging
from helmbench.cli.progress_bar import ProgressBar
from helmbench.run.progress import PhaseCounter
from run_helpers import run_inprocess
from tests.fakes.manifests import write_models


def test_plain_progress_logs_a_line_per_interval(caplog):
    with caplog.at_level(logging.INFO, logger="helmbench.run.progress"):
        with PhaseCounter(10, interval=0.0) as p:
            p.advance(cost=0.5)
            p.advance(error=True)
    lines = [r.getMessage() for r in caplog.records]
    assert lines and "2/10 calls" in lines[-1] and "$0.5000" in lines[-1] and "1 error(s)" in lines[-1]


def test_the_clis_live_bar_is_drawn_from_the_progress_events_and_never_passes_its_total():
    buf = io.StringIO()
    console = Console(file=buf, force_terminal=True, width=120)
    with ProgressBar(console) as bar:
        counter = PhaseCounter(2, on_progress=bar, log_lines=False)
        for _ in range(3):  # one call more than expected (a simulated user asked again): the total grows
            counter.advance(cost=0.01)
    assert counter.total == counter.done == 3
    assert "3/3" in buf.getvalue() and "$0.0300" in buf.getvalue()


def test_the_api_key_is_redacted_from_every_log_line(tmp_path):
    buf = io.StringIO()
    with run_logging(Console(file=buf), verbose=True, live=False, secrets=["sk-secret-123"], logs_dir=tmp_path,
                     run_ids=[7]):
        logging.getLogger("helmbench.run").error("header was Bearer %s", "sk-secret-123")
    assert "sk-secret-123" not in buf.getvalue() + (tmp_path / "run-7.log").read_text()
    assert "Bearer ***" in buf.getvalue()


def test_each_run_has_its_own_log_file(env, fake, small):
    """With --verbose a line per call, in its run's file only; without, no line per call (the ledger has
    every call; formatting a line per answer was a measurable share of a fast run's CPU), but the run's
    own lines still."""
    write_models(small["models"], ["test/model-a", "test/model-b"])
    report = run_inprocess(small, verbose=True)
    logs = small["db"].parent / "logs"
    a, b = (logs / f"run-{mp.run_id}.log" for mp in report.plan.models)
    text_a, text_b = a.read_text(), b.read_text()
    assert "test/model-a P1-B1" in text_a and "test/model-b P1-B1" not in text_a
    assert "test/model-b P1-B1" in text_b and "finished" in text_b

    quiet = {**small, "db": small["db"].parent / "quiet" / "results.db"}  # a new database: calls again
    report = run_inprocess(quiet)
    a, b = (quiet["db"].parent / "logs" / f"run-{mp.run_id}.log" for mp in report.plan.models)
    text_a, text_b = a.read_text(), b.read_text()
    assert "P1-B1" not in text_a + text_b
    assert "test/model-a on manifest" in text_a and "test/model-a on manifest" not in text_b
    assert "finished" in text_a and "finished" in text_b


def test_the_time_left_reads_as_a_question_mark_until_it_is_known_then_in_minutes_or_hours():
    """Before the first answer no rate is known: the line says "?" rather than a guess. (This line was reached
    only when a run's first progress tick came before its first answer, which depends on the machine's speed.)"""
    from helmbench.run.progress import _eta

    assert _eta(None) == "?"
    assert _eta(59.9) == "0m59s" and _eta(3600) == "1h00m"
