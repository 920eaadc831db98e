"""A benchmark run on four kinds of target at once, for the tests of models.yml's routes and HTTP chatbots:
an OpenRouter model (the shared fake), a model on a local OpenAI-compatible server with its own key
variable and a deployment prompt, a stateless and a stateful HTTP chatbot (tests/fakes/chatbot_http.py),
and the judge on a second local OpenAI-compatible server. The tree is the conversation tree without its
structured-output scenario (a chatbot answers in free text): a judged single-turn scenario (S2) and a
judged conversation with a simulated user (S3)."""

from __future__ import annotations

import shutil
from dataclasses import dataclass, field
from pathlib import Path

from tests.conversation.conv_trees import conversation_tree
from tests.fakes.chatbot_http import Chatbot
from tests.fakes.openrouter import FakeOpenRouter

LOCAL_KEY = "sk-local-SECRET-0f3a9c1e7b2d4a68"
JUDGE_KEY = "sk-judge-SECRET-7c1d2e9f4b6a8035"
BOT_TOKEN = "bot-SECRET-token-5e8a1c3f9d2b7064"
SECRETS = (LOCAL_KEY, JUDGE_KEY, BOT_TOKEN)
DEPLOYMENT = "You are Kai, the support companion of Acme Health. DEPLOYMENT-MARK"


@dataclass
class KeyedFake(FakeOpenRouter):
    """The fake OpenRouter as a local OpenAI-compatible server that records the Authorization of each request."""

    auths: list = field(default_factory=list)

    def decide(self, body, auth):
        with self.lock:
            self.auths.append(auth)
        return super().decide(body, auth)


def models_yml(local: KeyedFake, judge: KeyedFake, bot: Chatbot) -> str:
    return f"""\
# the judge on a local OpenAI-compatible server
marking_model:
  id: local/judge
  route: openai/judge-model
  api_base: {judge.api_base}
  api_key_env: JUDGE_KEY
user_model:
  id: test/user-model
  temperature: 0.9
models:
  - id: test/model-a              # OpenRouter (the default)
    temperature: 0
  - id: local/llama               # a local OpenAI-compatible server (vLLM, llama.cpp, Ollama's /v1)
    route: openai/llama3
    api_base: {local.api_base}
    api_key_env: LOCAL_KEY
    system_prompt: "{DEPLOYMENT}"
    price: {{input_per_mtok: 1000, output_per_mtok: 2000}}   # a local server reports no cost
  - id: acme/kai-stateless        # a deployed chatbot that takes the whole conversation
    http:
      url: {bot.url('/stateless/chat')}
      body: {{chat: {{history: "{{{{messages}}}}"}}, client: helmbench}}
      reply: data.reply.text
      headers: {{Authorization: "Bearer ${{BOT_TOKEN}}", X-Client: helmbench}}
    system_message: false
  - id: acme/kai-stateful         # a deployed chatbot that keeps the conversation itself
    http:
      url: {bot.url('/stateful/chat')}
      body: {{session: "{{{{session_id}}}}", input: {{text: "{{{{message}}}}"}}}}
      reply: data.reply.text
      headers: {{Authorization: "Bearer ${{BOT_TOKEN}}"}}
    system_message: false
"""


def targets_tree(dest: Path, local: KeyedFake, judge: KeyedFake, bot: Chatbot) -> Path:
    root = conversation_tree(dest)
    shutil.rmtree(root / "scenarios/P1/B1/S1--late-planning")  # structured output: not for a chatbot
    (root / "models.yml").write_text(models_yml(local, judge, bot), encoding="utf-8")
    return root


def secret_env() -> dict[str, str]:
    return {"LOCAL_KEY": LOCAL_KEY, "JUDGE_KEY": JUDGE_KEY, "BOT_TOKEN": BOT_TOKEN}


def files_holding(root: Path, secrets=SECRETS) -> list[str]:
    """Every file below `root` whose bytes hold one of `secrets`."""
    found = []
    for path in root.rglob("*"):
        if path.is_file():
            data = path.read_bytes()
            found += [f"{path}: {s[:8]}…" for s in secrets if s.encode() in data]
    return found
