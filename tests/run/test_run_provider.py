"""The provider through litellm's real HTTP path against the fake OpenRouter."""

from __future__ import annotations

import asyncio
import json

import pytest

from helmbench.run.calls import ProviderError
from helmbench.run.provider import Provider
from tests.fakes.openrouter import Rule

RF = {"type": "json_schema", "json_schema": {"name": "t", "strict": True, "schema": {
    "type": "object", "required": ["tags"], "additionalProperties": False,
    "properties": {"tags": {"type": "array", "items": {"type": "string", "enum": ["A", "B"]}}}}}}
SETTINGS = {"temperature": 0.5, "max_tokens": 50, "seed": 7, "top_p": 0.9, "provider": {"order": ["x"]},
            "reasoning": {"effort": "low"}, "timeout": 1.0}


def call(fake, content="hello", settings=SETTINGS, rf=RF, key="sk-test"):
    provider = Provider(key, fake.api_base)
    return asyncio.run(provider.complete("vendor/model-1", settings, {"messages": [{"role": "user", "content": content}],
                                                                     "response_format": rf}))


def test_a_call_sends_the_settings_and_records_billed_cost(fake):
    fake.keep_bodies = True
    got = call(fake)
    body = fake.bodies[-1]
    assert body["model"] == "vendor/model-1"
    assert body["response_format"] == RF
    assert (body["temperature"], body["max_tokens"], body["seed"], body["top_p"]) == (0.5, 50, 7, 0.9)
    assert body["provider"] == {"order": ["x"]} and body["reasoning"] == {"effort": "low"}
    assert json.loads(got.content)["tags"]
    assert (got.finish_reason, got.cost, got.provider) == ("stop", 0.0001, "FakeProvider")
    assert got.generation_id.startswith("gen-") and got.prompt_tokens and got.completion_tokens


def test_no_cost_is_invented_when_none_is_billed(fake):
    fake.cost = None
    assert call(fake).cost is None


@pytest.mark.parametrize("fault, kind, transient, fatal", [
    ("429", "rate_limit", True, False), ("500", "server_error", True, False), ("502", "server_error", True, False),
    ("drop", "connection", True, False), ("slow", "timeout", True, False), ("400", "bad_request", False, False),
    ("403", "forbidden", False, False), ("401", "auth", False, True),
])
def test_errors_are_classified(fake, fault, kind, transient, fatal):
    fake.rules = [Rule(fault)]
    fake.retry_after = "3"
    fake.slow_seconds = 3
    with pytest.raises(ProviderError) as info:
        call(fake, content=f"fault {fault}", settings={**SETTINGS, "timeout": 0.5})
    err = info.value
    assert (err.kind, err.transient, err.fatal) == (kind, transient, fatal)
    assert fake.total == 1  # litellm itself retried nothing
    if fault == "429":
        assert err.retry_after == 3.0


def test_the_key_never_appears_in_an_error_message(fake):
    fake.rules = [Rule("400")]
    key = "sk-or-v1-SENTINEL-in-error"
    with pytest.raises(ProviderError) as info:
        call(fake, key=key)
    assert key not in info.value.message
