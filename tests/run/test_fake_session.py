"""The suite shares one fake OpenRouter per session (tests/conftest.py): a test must see only its own
requests in the fake's in-flight peaks, even while an earlier test's call still waits out its latency."""

from __future__ import annotations

import json
import threading
import time
import urllib.request

from tests.fakes.openrouter import FakeOpenRouter


def _post(fake: FakeOpenRouter, model: str) -> None:
    body = json.dumps({"model": model, "messages": [{"role": "user", "content": "hi"}]}).encode()
    req = urllib.request.Request(f"{fake.api_base}/chat/completions", data=body,
                                 headers={"Content-Type": "application/json", "Authorization": "Bearer sk-test"})
    try:
        urllib.request.urlopen(req, timeout=30).read()
    except OSError:
        pass


def _wait(condition, timeout: float = 20.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition() and time.monotonic() < deadline:
        time.sleep(0.01)
    assert condition()


def test_a_request_left_in_flight_by_an_earlier_test_is_not_counted_in_the_next_ones_peaks():
    fake = FakeOpenRouter().start()
    try:
        fake.latency = 2.0
        earlier = threading.Thread(target=_post, args=(fake, "test/model-a"))
        earlier.start()
        _wait(lambda: fake.model_in_flight["test/model-a"] == 1)
        fake.restore()  # the next test starts; the earlier request is still waiting
        _post(fake, "test/model-a")
        assert fake.model_peak["test/model-a"] == 1 and fake.peak_in_flight == 1
        earlier.join(timeout=30)
        assert fake.model_in_flight["test/model-a"] == 0 and fake.in_flight == 0
    finally:
        fake.stop()
