"""Issue #38: models.yml targets other than OpenRouter, end to end against servers on 127.0.0.1.

One run asks four targets side by side (an OpenRouter model, a model on a local OpenAI-compatible server
with its own key variable and a deployment prompt, a stateless and a stateful HTTP chatbot) a judged
single-turn scenario and a simulated conversation, judged on a local OpenAI-compatible server; the
leaderboard ranks them together and says what each target is. Each server saw its own key on every
request, and no key's value is in a file the run or the site wrote. A second run asks nothing again."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys

import pytest

from tests.conversation.conv_fake import ConvFake
from tests.fakes.chatbot_http import Chatbot
from tests.run.targets_tree import (BOT_TOKEN, DEPLOYMENT, JUDGE_KEY, LOCAL_KEY, KeyedFake, files_holding,
                                    secret_env, targets_tree)

FAST = {"HELMBENCH_RETRY_BASE_DELAY": "0.01", "HELMBENCH_RETRY_MAX_DELAY": "0.05", "HELMBENCH_MAX_ATTEMPTS": "3"}
OR_KEY = "sk-or-v1-TEST-targets"


@pytest.fixture
def servers():
    openrouter, local = ConvFake().start(), KeyedFake(expect_key=LOCAL_KEY, cost=None).start()
    judge = KeyedFake(expect_key=JUDGE_KEY, cost=None).start()
    for fake in (openrouter, local):
        fake.keep_bodies = True
    bot = Chatbot(expect={"/": f"Bearer {BOT_TOKEN}"}).start()
    try:
        yield {"openrouter": openrouter, "local": local, "judge": judge, "bot": bot}
    finally:
        for server in (openrouter, local, judge, bot):
            server.stop()


@pytest.fixture
def tree(tmp_path, servers, monkeypatch):
    env = {"OPENROUTER_API_BASE": servers["openrouter"].api_base, "OPENROUTER_API_KEY": OR_KEY, **FAST, **secret_env()}
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    root = targets_tree(tmp_path / "bench", servers["local"], servers["judge"], servers["bot"])
    return root


def _helmbench(root, *args, timeout=600):
    return subprocess.run([sys.executable, "-m", "helmbench", *args], cwd=root, env=dict(os.environ),
                          capture_output=True, text=True, timeout=timeout)


def _rows(db, sql):
    conn = sqlite3.connect(db)
    try:
        return conn.execute(sql).fetchall()
    finally:
        conn.close()


@pytest.mark.slow  # four servers, three runs and a site build
def test_four_kinds_of_target_in_one_run_and_one_leaderboard(tree, servers):
    """The commands in this process (tests/inprocess.py): the targets, keys and servers are the point here; a
    fresh interpreter per command was most of the test's CPU (the kill -9 test below keeps its processes)."""
    from tests.inprocess import helmbench

    def command(root, *args):  # `helmbench ARGS` in `root`, in this process
        return helmbench(*args, cwd=root, env=dict(os.environ))

    lint = command(tree, "lint")
    assert lint.returncode == 0, lint.stdout + lint.stderr
    assert command(tree, "compile").returncode == 0
    dry = command(tree, "run", "--dry-run")
    assert dry.returncode == 0, dry.stderr
    out = " ".join((dry.stdout + dry.stderr).replace("│", " ").split())
    assert f"openai/llama3 at {servers['local'].api_base}" in out and "POST http://127.0.0.1:" in out, out
    assert f"Judge calls go to: openai/judge-model at {servers['judge'].api_base}." in out, out
    first = command(tree, "run")
    assert first.returncode in (0, 1), first.stderr
    assert "Traceback" not in first.stderr
    db = tree / "build/results.db"
    per_model = dict(_rows(db, "SELECT model, count(*) FROM responses WHERE error_kind IS NULL GROUP BY model"))
    turns = dict(_rows(db, "SELECT model, count(*) FROM turns WHERE role = 'assistant' AND error_kind IS NULL "
                           "GROUP BY model"))
    targets = ("test/model-a", "local/llama", "acme/kai-stateless", "acme/kai-stateful")
    for model in targets:
        assert per_model.get(model), (model, per_model, first.stderr)
        assert turns.get(model), (model, turns, first.stderr)
    assert not _rows(db, "SELECT model, error_kind FROM responses WHERE error_kind IS NOT NULL")
    # each server saw its own key on every request
    local, judge, bot = servers["local"], servers["judge"], servers["bot"]
    assert local.auths and set(local.auths) == {f"Bearer {LOCAL_KEY}"}
    assert judge.auths and set(judge.auths) == {f"Bearer {JUDGE_KEY}"}
    assert bot.requests and {r["auth"] for r in bot.requests} == {f"Bearer {BOT_TOKEN}"}
    assert all(b["model"] == "llama3" for b in local.bodies)
    # the deployment prompt is the one system message; the case's own system instructions stay in its message
    assert all([m["role"] for m in b["messages"]][:2] == ["system", "user"] for b in local.bodies)
    assert all(b["messages"][0]["content"] == DEPLOYMENT for b in local.bodies)
    assert all("<system_instructions>" in b["messages"][1]["content"] for b in local.bodies)
    # a chatbot that takes no system message gets the system text at the start of the first user message
    stateless = bot.of("/stateless/")
    assert all(b["body"]["chat"]["history"][0]["role"] == "user" for b in stateless)
    assert all(b["body"]["client"] == "helmbench" for b in stateless)
    # the stateful chatbot got only the newest message, under one session id per conversation
    stateful = bot.of("/stateful/")
    sessions = {}
    for r in stateful:
        assert set(r["body"]) == {"session", "input"}
        sessions.setdefault(r["body"]["session"], []).append(r["body"]["input"]["text"])
    assert max(len(v) for v in sessions.values()) > 1, "no conversation kept its session over several turns"
    assert all(len(v) == len(set(v)) or len(v) == 1 for v in sessions.values())
    # the judge (on the local server) judged every target's outputs
    judged = dict(_rows(db, "SELECT judge_model, count(*) FROM judgements GROUP BY judge_model"))
    assert judged.get("local/judge"), judged
    # the ledger names the route each call took
    provider = dict(_rows(db, "SELECT model, provider FROM calls WHERE kind IN ('answer', 'turn') "
                              "AND provider IS NOT NULL GROUP BY model"))
    assert provider["local/llama"].startswith("openai/llama3 at http://127.0.0.1:"), provider
    assert provider["acme/kai-stateful"].startswith("POST http://127.0.0.1:"), provider
    # cost: the entry's price for a server that reports none; no known price (never $0) for the rest
    priced = _rows(db, "SELECT prompt_tokens, completion_tokens, cost FROM calls WHERE model = 'local/llama'")
    assert priced and all(c == pytest.approx((p * 1000 + t * 2000) / 1e6) for p, t, c in priced)
    assert _rows(db, "SELECT DISTINCT cost FROM calls WHERE model IN ('local/judge', 'acme/kai-stateful')") == [(None,)]

    counts = (local.total, judge.total, len(bot.requests), servers["openrouter"].total)
    again = command(tree, "run")
    assert again.returncode in (0, 1), again.stderr
    assert (local.total, judge.total, len(bot.requests), servers["openrouter"].total) == counts, "asked again"

    published = command(tree, "publish")
    assert published.returncode == 0, published.stderr
    site = tree / "build/site"
    board = (site / "index.html").read_text(encoding="utf-8")
    for model in targets:
        assert model in board
    pages = {p.read_text(encoding="utf-8") for p in (site / "models").rglob("index.html")}
    text = "\n".join(pages)
    assert "OpenRouter model" in text and "local model" in text and "deployed service (HTTP), stateful" in text
    assert DEPLOYMENT in text
    assert "first user message" in text
    assert files_holding(tree) == []


KILL_MODELS = """\
marking_model: test/judge
user_model:
  id: test/user-model
  temperature: 0.9
models:
  - id: test/model-a
    temperature: 0
  - id: acme/kai-stateful
    http:
      url: {url}
      body: {{session: "{{{{session_id}}}}", input: {{text: "{{{{message}}}}"}}}}
      reply: data.reply.text
      headers: {{Authorization: "Bearer ${{BOT_TOKEN}}"}}
    system_message: false
"""
SAMPLES = 3


def _stateful_turns(db) -> int:
    try:
        return _rows(db, "SELECT count(*) FROM turns WHERE model = 'acme/kai-stateful' AND role = 'assistant' "
                         "AND error_kind IS NULL")[0][0]
    except sqlite3.Error:
        return 0


@pytest.mark.slow  # separate processes and a real kill -9
def test_kill_9_mid_conversation_resumes_asking_nothing_answered_and_restarts_the_stateful_conversation(tree, servers):
    import time

    from helmbench.manifest import read_manifest
    from helmbench.run.provider import system_folded
    from tests import forked  # real processes forked from this one: kill -9 needs one, not a fresh interpreter
    from tests.fakes.openrouter import request_key

    bot, openrouter = servers["bot"], servers["openrouter"]
    bot.latency = 0.4
    (tree / "models.yml").write_text(KILL_MODELS.format(url=bot.url("/stateful/chat")), encoding="utf-8")
    assert forked.run("compile", cwd=tree, env=dict(os.environ), timeout=600).returncode == 0
    db = tree / "build/results.db"
    proc = forked.start("run", "--samples", SAMPLES, cwd=tree, env=dict(os.environ))
    deadline = time.monotonic() + 120
    while _stateful_turns(db) < SAMPLES:  # every conversation has its first reply: kill it mid-way
        assert proc.poll() is None, proc.stderr.read()
        assert time.monotonic() < deadline, "the conversations never started"
        time.sleep(0.05)
    proc.kill()
    proc.wait(10)
    assert _stateful_turns(db) < 4 * SAMPLES, "every conversation had ended before the kill"
    before = len(bot.requests)

    resumed = forked.run("run", "--samples", SAMPLES, cwd=tree, env=dict(os.environ), timeout=600)
    assert resumed.returncode in (0, 1), resumed.stderr
    err = resumed.stderr
    assert "a conversation with a stateful service was cut mid-way" in err and "starts again from turn 1" in err, err
    assert len(bot.requests) > before, err

    # nothing answered was asked again: each single-turn case once of the chatbot and once of the OpenRouter model
    settings = {"system_message": False}
    for case in read_manifest(tree / "build/manifest.jsonl"):
        if "conversation" in case["request"]:
            continue
        text = system_folded(settings, case["request"]["messages"])[-1]["content"]
        asked = [r for r in bot.of("/stateful/") if r["body"]["input"]["text"] == text]
        assert len(asked) == SAMPLES, (case["id"], len(asked))
        assert openrouter.by_key[request_key("test/model-a", case["request"]["messages"])] == SAMPLES
    # every stored transcript is one session: reply k says "turn k" (a continued lost session would say turn 1)
    replies = _rows(db, "SELECT sample, turn, content FROM turns WHERE model = 'acme/kai-stateful' "
                        "AND role = 'assistant' ORDER BY sample, turn")
    assert len(replies) == 4 * SAMPLES and all(f"(turn {turn}," in text for _, turn, text in replies), replies
    assert not _rows(db, "SELECT id FROM turns WHERE model = 'acme/kai-stateful' AND error_kind IS NOT NULL")
    sessions = {r["body"]["session"] for r in bot.of("/stateful/")}
    assert files_holding(tree) == []
    assert len(sessions) > SAMPLES  # the restarted conversation(s) got a new session
