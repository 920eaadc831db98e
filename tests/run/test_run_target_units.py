"""Issue #38, the parts without a server: an entry that says nothing new keys its answers exactly as before
(golden hashes computed on the release before routes existed), what a target's cache key covers and what it
never holds, the HTTP body template, the deployment prompt's place, and lint's refusal of a literal key."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from helmbench.lint import lint_tree
from helmbench.run.config import settings_hash
from helmbench.run.http_target import body_of, dig, fill
from helmbench.run.judge.judge_plan import JudgeModel
from helmbench.run.provider import request_kwargs, system_folded, where_to
from helmbench.spec.models import ModelEntry, ModelsFile

#: Computed with the code of main before issue #38 (`settings_hash(entry.settings())`, the judge's settings):
#: an entry that names no route, base URL, HTTP target or deployment prompt must key its answers the same.
GOLDEN = {
    "openai/gpt-4o-mini": "sha256:44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a",
    "anthropic/claude-3.5": "sha256:263b455607ef754a8c3598168ba025f6f98c635fea5854dcabd73aa4c490ed5a",
    "judge": "sha256:e4ff491169b8a9ea78518a7972422b5a24d5e3790e0d9a9e5cbfb384d9b621e0",
    "user": "sha256:c083976164c1b2dd91d7051d9a295d00ad5bd8300e3bc89407b0021e6df8fa79",
}
BEFORE = {"marking_model": "openai/gpt-4.1", "user_model": {"id": "openai/gpt-4.1-mini", "temperature": 0.7},
          "models": [{"id": "openai/gpt-4o-mini"},
                     {"id": "anthropic/claude-3.5", "temperature": 0.0, "max_tokens": 800,
                      "provider": {"order": ["Anthropic"]}, "price": {"input_per_mtok": 1, "output_per_mtok": 2},
                      "concurrency": 3}]}


def test_an_entry_that_says_nothing_new_keys_its_answers_as_before():
    m = ModelsFile.model_validate(BEFORE)
    for e in m.models:
        assert settings_hash(e.settings()) == GOLDEN[e.id]
    assert JudgeModel.from_entry(m.judges[0]).settings_hash == GOLDEN["judge"]
    assert settings_hash(m.user_model.settings()) == GOLDEN["user"]
    # and the request it makes is the one it always made
    kw = request_kwargs("openai/gpt-4o-mini", {}, {"messages": [{"role": "user", "content": "hi"}]},
                        api_key="k", api_base="http://x/api/v1", timeout=5)
    assert kw["model"] == "openrouter/openai/gpt-4o-mini" and kw["api_key"] == "k" and kw["api_base"] == "http://x/api/v1"
    assert kw["messages"] == [{"role": "user", "content": "hi"}]


def _hash(**entry) -> str:
    return settings_hash(ModelEntry.model_validate({"id": "local/llama", **entry}).settings())


def test_the_cache_key_covers_what_changes_answers_and_never_a_key():
    base = {"route": "openai/llama3", "api_base": "http://127.0.0.1:8000/v1"}
    plain = _hash(**base)
    assert _hash(**base, api_key_env="LOCAL_KEY") == plain == _hash(**base, api_key_env="OTHER")
    assert _hash(**base, concurrency=2, price={"input_per_mtok": 1, "output_per_mtok": 1}) == plain
    for changed in ({"route": "openai/llama3.1"}, {"api_base": "http://127.0.0.1:9000/v1"},
                    {"system_prompt": "You are Kai."}, {"system_message": False}):
        assert _hash(**{**base, **changed}) != plain, changed
    bot = {"url": "http://127.0.0.1:1/chat", "body": {"q": "{{messages}}"}, "reply": "a.b",
           "headers": {"Authorization": "Bearer ${BOT_TOKEN}"}}
    bot_hash = _hash(http=bot)
    assert _hash(http={**bot, "body": {"query": "{{messages}}"}}) != bot_hash
    assert _hash(http={**bot, "url": "http://127.0.0.1:2/chat"}) != bot_hash
    assert "BOT_TOKEN" in str(ModelEntry.model_validate({"id": "a/b", "http": bot}).settings())  # the name, not a value
    assert "LOCAL_KEY" not in str(ModelEntry.model_validate({"id": "a/b", **base, "api_key_env": "LOCAL_KEY"}).settings())


@pytest.mark.parametrize("entry, why", [
    ({"http": {"url": "http://h/x", "body": {"q": "hi"}, "reply": "a"}}, "{{messages}}"),
    ({"http": {"url": "http://h/x", "body": {"q": "{{message}}"}, "reply": "a"}}, "{{session_id}}"),
    ({"http": {"url": "http://h/x", "body": {"q": "{{messages}}"}, "reply": "a"}, "route": "openai/x"}, "http"),
    ({"api_key_env": "sk-not a name"}, "api_key_env"),
    ({"api_base": "http://user:pw@host/v1"}, "api_base"),
])
def test_bad_target_entries_are_refused(entry, why):
    with pytest.raises(ValidationError, match="(?s)" + __import__("re").escape(why)):
        ModelEntry.model_validate({"id": "a/b", **entry})


def test_the_body_template_fills_whole_values_and_text():
    messages = [{"role": "system", "content": "sys"}, {"role": "user", "content": "hello"}]
    body = body_of({"body": {"h": "{{messages}}", "m": "said: {{message}}", "s": "{{session_id}}", "y": "{{system}}",
                             "n": [1, {"k": "{{ message }}"}]}}, messages, "abc")
    assert body == {"h": messages, "m": "said: hello", "s": "abc", "y": "sys", "n": [1, {"k": "hello"}]}
    assert fill({"x": "{{messages}} as text"}, {"messages": [{"a": 1}]}) == {"x": '[{"a": 1}] as text'}
    assert dig({"data": {"out": [{"text": "t"}]}}, "data.out.0.text") == "t"
    assert dig({"data": {}}, "data.out.0.text") is None and dig({"a": [1]}, "a.5") is None


def test_the_deployment_prompt_comes_first_and_folds_into_the_first_user_message_without_a_system_role():
    case = [{"role": "system", "content": "CASE"}, {"role": "user", "content": "hi"},
            {"role": "assistant", "content": "yo"}, {"role": "user", "content": "again"}]
    assert system_folded({"system_prompt": "DEPLOY"}, case)[0] == {"role": "system", "content": "DEPLOY\n\nCASE"}
    folded = system_folded({"system_prompt": "DEPLOY", "system_message": False}, case)
    assert [m["role"] for m in folded] == ["user", "assistant", "user"]
    assert folded[0]["content"] == "DEPLOY\n\nCASE\n\nhi" and folded[2]["content"] == "again"
    assert system_folded({"system_message": False}, case)[0]["content"] == "CASE\n\nhi"
    assert system_folded({}, case) == case


def test_where_a_call_goes_is_named_without_a_query_or_key():
    assert where_to("a/b", {}, "http://127.0.0.1:9/api/v1") == "openrouter/a/b at http://127.0.0.1:9/api/v1"
    assert where_to("l/x", {"route": "ollama/llama3", "api_base": "http://localhost:11434"}) == \
        "ollama/llama3 at http://localhost:11434"
    assert where_to("b/c", {"http": {"url": "https://bot.example/chat?token=abc"}}) == "POST https://bot.example/chat"
    kw = request_kwargs("l/x", {"route": "ollama/llama3", "api_base": "http://localhost:11434"},
                        {"messages": []}, api_key=None, api_base="https://openrouter.ai/api/v1", timeout=5)
    assert kw["model"] == "ollama/llama3" and kw["api_base"] == "http://localhost:11434" and "api_key" not in kw


@pytest.fixture
def clean_tree(tmp_path):
    import shutil

    from tests.conversation.conv_trees import BASE

    return shutil.copytree(BASE, tmp_path / "bench")


MODELS_WITH_A_KEY = """\
marking_model: openai/gpt-4o-mini
models:
  - id: openai/gpt-4.1-mini
  - id: local/llama
    route: openai/llama3
    api_base: http://127.0.0.1:8000/v1
    api_key_env: {key}
  - id: acme/bot
    http:
      url: http://127.0.0.1:9/chat
      body: {{history: "{{{{messages}}}}"}}
      reply: text
      headers: {{Authorization: "Bearer {token}", X-Client: helmbench}}
"""
KEY = "sk-proj-4f9a2b7c1d3e5f6a8b9c0d1e2f3a4b5c"


def test_a_literal_key_in_models_yml_is_an_error_at_its_line_and_never_repeated(clean_tree):
    (clean_tree / "models.yml").write_text(MODELS_WITH_A_KEY.format(key=KEY, token="tok_9f8e7d6c5b4a39281706f5e4"),
                                           encoding="utf-8")
    _, diags = lint_tree(clean_tree)
    found = [(d.code, d.line) for d in diags if d.code == "HB610"]
    assert found == [("HB610", 7), ("HB610", 13)], [(d.code, d.line, d.message) for d in diags]
    assert all(KEY not in d.message + (d.hint or "") and "tok_9f8e" not in d.message for d in diags)


def test_names_of_variables_are_not_secrets(clean_tree):
    (clean_tree / "models.yml").write_text(MODELS_WITH_A_KEY.format(key="LOCAL_KEY", token="${BOT_TOKEN}"),
                                           encoding="utf-8")
    _, diags = lint_tree(clean_tree)
    assert not [d for d in diags if d.code == "HB610" or d.severity == "error"], diags


def test_a_database_and_manifest_written_by_the_release_before_targets_ask_nothing_again(tmp_path):
    """tests/run/fixtures/main_before_targets: the conversation tree (a single answer, a judged answer, a scripted
    and a simulated conversation) compiled and run by main before issue #38 (its database gzipped). Today's
    code keys the same answers, turns and judgements under the same hashes: a run sends nothing."""
    import gzip
    import shutil
    from pathlib import Path

    from tests.conversation.conv_runs import fake_openrouter
    from tests.run.run_helpers import run_inprocess

    here = Path(__file__).parent / "fixtures" / "main_before_targets"
    db = tmp_path / "build" / "results.db"
    db.parent.mkdir()
    db.write_bytes(gzip.decompress((here / "results.db.gz").read_bytes()))
    for name in ("manifest.jsonl", "models.yml"):
        shutil.copy(here / name, tmp_path / name)
    paths = {"manifest": tmp_path / "manifest.jsonl", "models": tmp_path / "models.yml", "db": db}
    with fake_openrouter() as fake:
        report = run_inprocess(paths)
        assert fake.total == 0, dict(fake.by_model)
    assert report.status == "completed"
    assert [(r["n_pass"], r["n_fail"], r["n_error"]) for r in report.runs] == [(1, 3, 0)]


def test_a_chatbot_that_is_down_stops_the_run_naming_its_url_not_openrouter():
    import asyncio
    import socket

    from helmbench.run.calls import ProviderError
    from helmbench.run.provider import Provider

    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    entry = ModelEntry.model_validate({"id": "acme/bot", "http": {
        "url": f"http://127.0.0.1:{port}/chat?tenant=x", "body": {"h": "{{messages}}"}, "reply": "text"}})
    provider = Provider("", entries=[entry])
    assert provider.litellm is None  # only chatbots: litellm is never imported
    errors = []
    for _ in range(3):
        try:
            asyncio.run(provider.complete("acme/bot", entry.settings(), {"messages": [{"role": "user", "content": "hi"}]}))
        except ProviderError as err:
            errors.append(err)
    assert [e.kind for e in errors] == ["connection", "connection", "unreachable"] and errors[-1].fatal
    assert f"http://127.0.0.1:{port}/chat " in errors[-1].message and "OPENROUTER" not in errors[-1].message
    assert "tenant" not in errors[-1].message


def test_structured_output_scenarios_are_refused_for_a_chatbot_before_anything_is_sent(tmp_path):
    from helmbench.errors import UsageError
    from helmbench.manifest import compile_tree
    from tests.conversation.conv_runs import fake_openrouter, run_tree
    from tests.conversation.conv_trees import conversation_tree

    tree = conversation_tree(tmp_path / "bench")
    with (tree / "models.yml").open("a", encoding="utf-8") as f:
        f.write("  - id: acme/bot\n    http:\n      url: http://127.0.0.1:9/chat\n"
                "      body: {history: \"{{messages}}\"}\n      reply: text\n")
    compile_tree(tree, tree / "build")
    with fake_openrouter() as fake:
        with pytest.raises(UsageError) as refused:
            run_tree(tree, tmp_path)
        assert fake.total == 0
    assert "acme/bot is a deployed chatbot" in refused.value.message and "P1-B1-S1" in refused.value.message
    assert "--scenario" in refused.value.hint
    with fake_openrouter() as fake:  # the judged scenario alone is planned for the chatbot too
        report = run_tree(tree, tmp_path, scenarios=("P1-B1-S2",), dry_run=True)
        assert fake.total == 0
    assert report.status == "dry-run" and {mp.id: mp.new for mp in report.plan.models}["acme/bot"] > 0


def test_a_chatbot_cannot_be_the_judge():
    bot = {"id": "acme/bot", "http": {"url": "http://h/x", "body": {"q": "{{messages}}"}, "reply": "a"}}
    with pytest.raises(ValidationError, match="`marking_model` cannot be an `http` chatbot"):
        ModelsFile.model_validate({"marking_model": bot})
    assert ModelsFile.model_validate({"models": [bot]}).models[0].http.stateful is False


def test_the_estimate_prices_a_target_by_its_route_or_its_price_entry():
    from helmbench.run.estimate import price_for

    costs = {"openai/gpt-4.1": {"input_cost_per_token": 2e-6, "output_cost_per_token": 8e-6},
             "openrouter/local/llama": {"input_cost_per_token": 1.0, "output_cost_per_token": 1.0}}
    direct = ModelEntry.model_validate({"id": "openai/gpt-4.1-direct", "route": "openai/gpt-4.1"})
    assert (price_for(direct, costs).input_per_token, price_for(direct, costs).source) == (2e-6, "litellm")
    assert price_for(ModelEntry.model_validate({"id": "local/llama", "route": "ollama/llama3"}), costs) is None
    bot = {"id": "acme/bot", "http": {"url": "http://h/x", "body": {"q": "{{messages}}"}, "reply": "a"}}
    assert price_for(ModelEntry.model_validate(bot), costs) is None
    priced = ModelEntry.model_validate({**bot, "price": {"input_per_mtok": 1, "output_per_mtok": 2}})
    assert price_for(priced, costs).source == "models.yml"


def test_openrouter_key_is_needed_only_by_an_entry_that_goes_to_openrouter_with_it(monkeypatch):
    from helmbench.run.selection import needs_openrouter_key, secret_values

    local = ModelEntry.model_validate({"id": "local/llama", "route": "ollama/llama3", "api_key_env": "LOCAL_KEY"})
    bot = ModelEntry.model_validate({"id": "acme/bot", "http": {"url": "http://h/x", "body": {"q": "{{messages}}"},
                                                               "reply": "a", "headers": {"X-Key": "k ${BOT_TOKEN}"}}})
    assert not needs_openrouter_key([local, bot])
    assert needs_openrouter_key([local, bot, ModelEntry.model_validate({"id": "openai/gpt-4.1"})])
    assert not needs_openrouter_key([ModelEntry.model_validate({"id": "openai/gpt-4.1", "api_key_env": "MY_OR_KEY"})])
    monkeypatch.setenv("LOCAL_KEY", "sk-local-value-1")
    monkeypatch.setenv("BOT_TOKEN", "bot-value-2")
    assert sorted(secret_values([local, bot])) == ["bot-value-2", "sk-local-value-1"]


# --- the hostile review of targets -------------------------------------------------------------------------------

def _serve(body: bytes):
    """A chatbot on 127.0.0.1 that answers every POST with `body`; (url, stop)."""
    import threading
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self):  # noqa: N802 (http.server's name)
            self.rfile.read(int(self.headers.get("Content-Length") or 0))
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return f"http://127.0.0.1:{server.server_address[1]}/chat", server.shutdown


def _call(url: str, headers: dict | None = None):
    import asyncio

    from helmbench.run.http_target import call_http

    spec = {"url": url, "body": {"q": "{{message}}"}, "reply": "text", "headers": headers or {}}
    return asyncio.run(call_http({"http": spec}, [{"role": "user", "content": "hi"}], None, 10))


def test_a_secret_with_a_control_or_non_ascii_character_is_refused_naming_only_its_variable(monkeypatch):
    """A stray \\r (a .env saved on Windows) made httpx refuse the header with its value in the message, which then
    reached the log, the database and the site (the scrub matches the value, not its repr); a non-ASCII one crashed
    the run."""
    from helmbench.run.provider import ProviderError

    for value in ("tok-CRLFSECRET99\r", "tök-abcdef"):
        monkeypatch.setenv("BOT_TOKEN", value)
        with pytest.raises(ProviderError) as refused:
            _call("http://127.0.0.1:9/chat?key=QSECRET", {"Authorization": "Bearer ${BOT_TOKEN}"})
        assert refused.value.fatal and "BOT_TOKEN" in refused.value.message
        assert "SECRET" not in refused.value.message and "tök" not in refused.value.message


def test_a_reply_nested_too_deep_or_too_long_is_a_bad_reply_and_the_url_loses_its_query(monkeypatch):
    from helmbench.run import http_target
    from helmbench.run.provider import ProviderError

    url, stop = _serve(b"[" * 200_000 + b"]" * 200_000)
    try:
        with pytest.raises(ProviderError) as deep:
            _call(url + "?key=QSECRET")
        monkeypatch.setattr(http_target, "MAX_BODY", 1000)
        with pytest.raises(ProviderError) as long:
            _call(url + "?key=QSECRET")
    finally:
        stop()
    assert deep.value.kind == long.value.kind == "bad_reply"
    assert all("QSECRET" not in e.value.message and url in e.value.message for e in (deep, long))


def test_a_credential_in_a_urls_query_is_a_lint_error_at_its_line(clean_tree):
    (clean_tree / "models.yml").write_text(
        "marking_model: openai/gpt-4.1\nmodels:\n  - id: acme/bot\n    http:\n"
        "      url: https://bot.example/chat?key=SUPERSECRETQ\n      body: {q: '{{message}}'}\n      reply: text\n"
        "  - id: local/llama\n    route: openai/llama3\n    api_base: http://127.0.0.1:11434/v1?api_key=abc\n"
        "  - id: local/fine\n    route: openai/llama3\n    api_base: http://127.0.0.1:11434/v1?version=2\n",
        encoding="utf-8")
    _, diags = lint_tree(clean_tree)
    assert [(d.code, d.line) for d in diags if d.code == "HB610"] == [("HB610", 5), ("HB610", 10)]
    assert all("SUPERSECRETQ" not in d.message for d in diags)
