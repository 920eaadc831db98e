"""The fake OpenRouter of tests/fakes, with the simulated user's replies programmable.

The model under test and the judge are answered exactly as by the shared fake (from the
requested schema, deterministically per request); requests to the user model are answered by
`user_reply(body, attempt)` when it returns text, and counted per model like every request.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from tests.fakes.openrouter import FakeOpenRouter

from tests.conversation.conv_trees import USER_MODEL


@dataclass
class ConvFake(FakeOpenRouter):
    user_reply: Callable[[dict, int], str | None] | None = None
    user_models: tuple[str, ...] = (USER_MODEL,)  # the ids answered as simulated users

    def __post_init__(self):
        super().__post_init__()
        self.keep_bodies = True

    def reply(self, body: dict, key: str, fault: str | None) -> dict:
        out = super().reply(body, key, fault)
        if str(body.get("model", "")).removeprefix("openrouter/") in self.user_models and out.get("choices"):
            text = self.user_reply(body, self.by_key[key]) if self.user_reply else None
            out["choices"][0]["message"]["content"] = text if text is not None else f"ok, fine. {key[7:15]}"
        return out

    def requests_for(self, model: str) -> list[dict]:
        with self.lock:
            return [b for b in self.bodies if str(b.get("model", "")).removeprefix("openrouter/") == model]
