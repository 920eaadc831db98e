"""The CLI as users and CI drive it: a fresh `python -m helmbench` interpreter for kill -9 and Ctrl-C (the
entry point as a user starts it, its signals set up from scratch: the suite's other real-process tests fork
the worker instead, tests/forked.py); in-process for a rejected key, help texts and bad input."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from helmbench.cli import app, main
from helmbench.manifest import read_manifest
from run_helpers import rows, run_inprocess
from tests import forked
from tests.fakes.manifests import synthetic_cases, write_manifest
from tests.fakes.openrouter import request_key
from tests.inprocess import helmbench

MODEL = "test/model-a"


def start_run(small, env, *extra, fresh: bool = False) -> subprocess.Popen:
    """`helmbench run` on `small` as a real process: forked from this worker (tests/forked.py), or with
    `fresh` a new `python -m helmbench` interpreter, whose entry point sets up its signals from scratch."""
    args = ["run", "--manifest", str(small["manifest"]), "--models-file", str(small["models"]), "--db",
            str(small["db"]), *extra]
    if not fresh:
        return forked.start(*args, cwd=small["root"], env=env)
    return subprocess.Popen([sys.executable, "-m", "helmbench", *args], cwd=small["root"], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def wait_for_responses(db: Path, n: int, proc: subprocess.Popen, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            pytest.fail(f"run ended early ({proc.returncode}): {proc.stderr.read()}")
        if db.exists():
            try:
                if rows(db, "SELECT count(*) FROM responses")[0][0] >= n:
                    return
            except Exception:  # schema not created yet
                pass
        time.sleep(0.05)
    pytest.fail("the run made no progress")


def _keys(manifest: Path) -> dict[str, str]:
    """manifest request_hash → the fake's request key."""
    return {c["request_hash"]: request_key(MODEL, c["request"]["messages"]) for c in read_manifest(manifest)}


@pytest.mark.slow  # separate processes and real signals
def test_kill_9_loses_at_most_the_last_second_and_never_duplicates(env, fake, small):
    write_manifest(small["manifest"], synthetic_cases(200))
    fake.latency = 0.1
    proc = start_run(small, env, "--concurrency", "8", fresh=True)  # one kill -9 of a fresh interpreter
    wait_for_responses(small["db"], 60, proc)
    proc.send_signal(signal.SIGKILL)
    killed_at = time.time()
    proc.wait(10)
    answered = dict(fake.answered_at)
    stored = {h for (h,) in rows(small["db"], "SELECT request_hash FROM responses WHERE error_kind IS NULL")}
    keys = _keys(small["manifest"])
    lost = {keys[h] for h in keys if h not in stored} & set(answered)
    assert all(killed_at - answered[k] < 1.0 for k in lost), "an answer older than 1 s was not committed"
    before = dict(fake.by_key)

    run_inprocess(small, concurrency=8)

    for h in stored:
        assert fake.by_key[keys[h]] == before[keys[h]] == 1, "a stored response was requested again"
    assert rows(small["db"], "SELECT count(*), count(DISTINCT request_hash || model || settings_hash || sample) "
                             "FROM responses") == [(200, 200)]
    n = sum(1 for _ in read_manifest(small["manifest"]))  # sqe cases are judged in the same run
    assert rows(small["db"], "SELECT count(*), count(DISTINCT case_hash) FROM results") == [(n, n)]
    assert rows(small["db"], "SELECT count(*) FROM results WHERE verdict = 'ERROR'") == [(0,)]


@pytest.mark.slow  # separate processes and real signals
def test_ctrl_c_saves_what_completed_prints_how_to_resume_and_exits_130(env, fake, small):
    write_manifest(small["manifest"], synthetic_cases(200))
    fake.latency = 0.1
    proc = start_run(small, env, "--concurrency", "4", fresh=True)  # the entry point's own Ctrl-C set-up
    wait_for_responses(small["db"], 20, proc)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=30)
    assert proc.returncode == 130, err
    assert "Traceback" not in err
    assert "Resume with:" in err and "helmbench run --manifest" in err
    assert rows(small["db"], "SELECT status FROM runs") == [("interrupted",)]
    saved = {h for (h,) in rows(small["db"], "SELECT request_hash FROM responses")}
    assert len(saved) >= 20
    before = dict(fake.by_key)
    run_inprocess(small, concurrency=8)
    keys = _keys(small["manifest"])
    assert all(fake.by_key[keys[h]] == before[keys[h]] for h in saved)
    assert rows(small["db"], "SELECT status FROM runs") == [("completed",)]


def test_a_rejected_key_stops_with_a_message_and_no_traceback(env, fake, small):
    fake.expect_key = "not-the-key-we-send"
    proc = helmbench("run", "--manifest", small["manifest"], "--models-file", small["models"], "--db", small["db"],
                     cwd=small["root"], env=env)  # in-process: a fresh interpreter adds only imports here
    out, err = proc.stdout, proc.stderr
    assert proc.returncode == 3, out + err  # stopped early (was 1 before exit codes were documented)
    assert "OPENROUTER_API_KEY" in err and "Traceback" not in err
    assert env["OPENROUTER_API_KEY"] not in out + err


def test_dry_run_without_a_key_imports_no_litellm_and_sends_nothing(env, fake, small):
    env = {k: v for k, v in env.items() if k != "OPENROUTER_API_KEY"}
    code = ("import sys; from helmbench.cli import main; sys.argv = ['helmbench', 'run', '--manifest', sys.argv[1], "
            "'--models-file', sys.argv[2], '--db', sys.argv[3]]\ntry:\n    main()\nexcept SystemExit as e:\n"
            "    print('exit', e.code)\nprint('litellm imported:', 'litellm' in sys.modules)")
    proc = subprocess.run([sys.executable, "-c", code, str(small["manifest"]), str(small["models"]), str(small["db"])],
                          env=env, cwd=small["root"], capture_output=True, text=True, timeout=60)
    assert "litellm imported: False" in proc.stdout, proc.stderr
    assert "exit 0" in proc.stdout or "exit None" in proc.stdout
    assert "Dry run" in proc.stdout and "characters ÷ 4" in proc.stdout and "no OPENROUTER_API_KEY" in proc.stdout
    assert fake.total == 0 and not small["db"].exists()


def _cli(monkeypatch, capsys, *args) -> tuple[int, str, str]:
    monkeypatch.setattr(sys, "argv", ["helmbench", *args])
    code = 0
    try:
        main()
    except SystemExit as exc:
        code = exc.code or 0
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize("args, message", [
    (["run", "--manifest", "nowhere/manifest.jsonl"], "helmbench compile"),
    (["run", "--models", "nobody/nothing"], "unknown model id"),
    (["run", "--models", "test/model-b"], "did you mean test/model-a"),
    (["run", "--scenario", "P9-B9-S9"], "unknown scenario"),
    (["run-single", "P1-B1-S1-C9-PT9"], "unknown case id"),
    (["run-batch"], "--all-scenarios"),
    (["costs", "--db", "nowhere.db"], "helmbench run"),
])
def test_bad_input_gets_a_clear_message_and_a_nonzero_exit(monkeypatch, capsys, small, args, message):
    monkeypatch.chdir(small["root"])
    monkeypatch.delenv("OPENROUTER_API_KEY", raising=False)
    if args[0] != "costs" and "--manifest" not in args:
        args = args + ["--manifest", str(small["manifest"]), "--models-file", str(small["models"])]
    code, out, err = _cli(monkeypatch, capsys, *args)
    assert code != 0
    assert message in out + err and "Traceback" not in out + err


@pytest.mark.parametrize("command", ["run", "run-batch", "run-all", "run-single", "costs"])
def test_every_command_has_help_with_examples(command):
    result = CliRunner().invoke(app, [command, "--help"])
    assert result.exit_code == 0 and "Example" in result.output


def test_run_single_prints_prompt_answer_and_verdict_literally(env, fake, small, monkeypatch, capsys):
    from tests.fakes.openrouter import Rule

    fake.rules = [Rule("html")]
    code, out, err = _cli(monkeypatch, capsys, "run-single", "P1-B1-S1-C1-PT2", "--manifest", str(small["manifest"]),
                          "--models-file", str(small["models"]), "--db", str(small["db"]))
    assert code == 0, err
    assert "P1-B1-S1-C1-PT2: I have been sorting" in out  # the prompt
    assert "<script>alert(" in out and "[bold red]markup[/bold red]" in out  # not interpreted
    assert "verdict: " in out and fake.total == 1
    code, out, _ = _cli(monkeypatch, capsys, "run-single", "P1-B1-S1-C1-PT2", "--manifest", str(small["manifest"]),
                        "--models-file", str(small["models"]), "--db", str(small["db"]))
    assert fake.total == 1 and "verdict: " in out  # shown from the store


def test_costs_lists_runs_with_billed_cost(env, fake, small, monkeypatch, capsys):
    run_inprocess(small)
    code, out, _ = _cli(monkeypatch, capsys, "costs", "--db", str(small["db"]))
    assert code == 0 and "test/model-a" in out and "$0.0040" in out
