"""A fake OpenRouter: a real HTTP server on 127.0.0.1 that answers like OpenRouter does.

Why a real server and not a mock: the executor must be tested through litellm's real HTTP
path (its client, its error mapping, its cost extraction), because that is where retries,
timeouts and 429s actually happen. The fake answers deterministically per request, fits
its answer to the requested JSON schema, counts every request (in total and per request
key) so tests can assert "zero calls" and "nothing sent twice", and injects faults on
demand, chosen by a hash of (seed, request, attempt) so runs are reproducible.
Judge requests are answered from their schema too, or as programmed per criterion code in
`judge_answers` (see judge_answer.py); requests are also counted per model id (`by_model`) and
judge requests per criterion (`judge_calls`). Faults include the ones a real provider shows
rarely: `drip` (the body one byte every `drip_seconds`), `no_choices` (a billed answer with an
empty `choices` list) and, through `cost`, a negative or non-numeric `usage.cost`.

Use it in-process (`FakeOpenRouter().start()`; the suite shares one per session: `fake` in tests/conftest.py)
or as a subprocess: `python -m tests.fakes.openrouter --port 0` prints `PORT <n>` and serves
until killed; `GET /_stats` returns the counters and `POST /_config` reprograms it.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import threading
import time
from collections import Counter
from dataclasses import MISSING, dataclass, field, fields
from typing import Any, Callable

from tests.fakes.judge_answer import forced_judgement, judge_criterion
from tests.fakes.openrouter_http import Server
from tests.fakes.schema_answer import answer, free_text

FAULTS = ("429", "500", "502", "503", "slow", "drop", "drip", "invalid_json", "truncated", "empty", "no_choices",
          "html", "401", "400", "403", "404")
TRANSIENT = ("429", "500", "502", "drop", "slow")


def canonical(obj: Any) -> bytes:
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


def request_key(model: str, messages: list[dict]) -> str:
    """What the fake counts by: the model (without `openrouter/`) and the messages."""
    model = model.removeprefix("openrouter/")
    msgs = [{"role": m["role"], "content": m["content"]} for m in messages]
    return "sha256:" + hashlib.sha256(canonical({"model": model, "messages": msgs})).hexdigest()


@dataclass
class Rule:
    """Inject `fault` into matching requests.

    `match`: None (all), a substring of the model id or the last message, or a predicate on the
    request body. `times`: fire only on the first N attempts of each request key.
    `probability`: fire with this chance, decided by a hash of (seed, key, attempt, rule).
    """

    fault: str
    match: str | Callable[[dict], bool] | None = None
    times: int | None = None
    probability: float = 1.0

    def __post_init__(self):
        if self.fault not in FAULTS:
            raise ValueError(f"unknown fault {self.fault!r}; one of {FAULTS}")

    def matches(self, body: dict) -> bool:
        if self.match is None:
            return True
        if callable(self.match):
            return bool(self.match(body))
        last = body.get("messages", [{}])[-1].get("content") or ""
        return self.match in str(body.get("model", "")) or self.match in str(last)


def _unit(*parts: Any) -> float:
    digest = hashlib.sha256("|".join(map(str, parts)).encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2**64


@dataclass
class FakeOpenRouter:
    latency: float = 0.0
    latency_spread: float = 0.0  # each request waits latency + spread × a fixed fraction of its key
    seed: int = 0
    rules: list[Rule] = field(default_factory=list)
    retry_after: str | None = "0"
    slow_seconds: float = 5.0
    drip_seconds: float = 2.0  # the "drip" fault: one byte of the body per this many seconds
    cost: Any = 0.0001  # reported as usage.cost; anything JSON (negative, a string) to test validation
    expect_key: str | None = None
    port: int = 0
    judge_answers: dict[str, str] = field(default_factory=dict)  # criterion code (or "*") → option or JUDGE_FAULT
    judge_by_model: dict[str, str] = field(default_factory=dict)  # judge id → the option it gives, whatever it is asked
    # (criterion code, text in the judge request, answer): the first that matches answers that criterion's requests
    # containing the text (before `judge_answers`); an answer is an option, a JUDGE_FAULT or a dict of answers
    judge_when: list = field(default_factory=list)
    # model id → most concurrent requests it accepts; above that it answers 429 at once, like an
    # upstream provider with its own rate limit (each model of OpenRouter has its own)
    model_limits: dict[str, int] = field(default_factory=dict)
    limit_retry_after: str = "0.2"  # the Retry-After of those 429s (seconds)

    def __post_init__(self):
        self.lock = threading.Lock()
        self.total = 0
        self.by_key: Counter[str] = Counter()
        self.faults: Counter[str] = Counter()
        self.by_model: Counter[str] = Counter()
        self.judge_calls: Counter[str] = Counter()  # criterion code → judge requests
        self.bodies: list[dict] = []
        self.keep_bodies = False
        self.in_flight = 0
        self.peak_in_flight = 0
        # Bumped by `restore`: a request still in flight from an earlier test (the session's fake outlives
        # it: a drained or killed run's calls may still be waiting out their latency) leaves without
        # touching this test's in-flight counts, so its peaks are this test's own.
        self.epoch = 0
        self.answered_at: dict[str, float] = {}  # request key → when its last 200 reply was sent
        self.model_in_flight: Counter[str] = Counter()
        self.model_peak: Counter[str] = Counter()  # model id → most requests in flight at once
        self.model_answers: dict[str, list[float]] = {}  # model id → when each 200 reply was sent
        self.over_limit: Counter[str] = Counter()  # model id → 429s from `model_limits`
        self.server: Server | None = None

    # --- programming ----------------------------------------------------------------

    def set_faults(self, probabilities: dict[str, float], *, times: int | None = None) -> None:
        """Shorthand: independent probabilities per fault kind (e.g. {"429": 0.1, "500": 0.1})."""
        self.rules = [Rule(k, probability=p, times=times) for k, p in probabilities.items()]

    def configure(self, values: dict) -> None:
        """Reprogram from JSON (`POST /_config` from another process)."""
        for name in ("latency", "latency_spread", "slow_seconds", "drip_seconds", "retry_after", "cost", "seed", "expect_key", "judge_answers",
                     "model_limits"):
            if name in values:
                setattr(self, name, values[name])
        if "rules" in values:
            self.set_rules(values["rules"])
        if values.get("reset"):
            self.reset_counts()

    def set_rules(self, rules: list[dict]) -> None:
        """Rules as JSON (for `POST /_config` from another process)."""
        self.rules = [Rule(**r) for r in rules]

    def reset_counts(self) -> None:
        with self.lock:
            self.total = 0
            self.by_key.clear()
            self.faults.clear()
            self.by_model.clear()
            self.judge_calls.clear()
            self.bodies.clear()
            self.peak_in_flight = 0
            self.answered_at.clear()
            self.model_peak.clear()
            self.model_answers.clear()
            self.over_limit.clear()

    def restore(self) -> "FakeOpenRouter":
        """Back to a fresh server's behaviour and counters, on the same port: how the suite's one
        session-wide fake (tests/conftest.py) starts every test as if it were its own."""
        for f in fields(self):
            if f.name != "port":
                setattr(self, f.name, f.default_factory() if f.default_factory is not MISSING else f.default)
        self.keep_bodies = False
        with self.lock:
            self.epoch += 1
            self.in_flight = 0
            self.model_in_flight = Counter()
        self.reset_counts()
        return self

    def wait_total(self, n: int, timeout: float = 10.0) -> int:
        """The request count once it reaches `n` or `timeout` seconds have passed (requests a killed client
        had already sent may still be on their way): a bounded wait on a condition, not a fixed sleep."""
        deadline = time.monotonic() + timeout
        while self.total < n and time.monotonic() < deadline:
            time.sleep(0.01)
        return self.total

    def stats(self) -> dict:
        with self.lock:
            return {"total": self.total, "by_key": dict(self.by_key), "faults": dict(self.faults),
                    "by_model": dict(self.by_model), "judge_calls": dict(self.judge_calls),
                    "peak_in_flight": self.peak_in_flight, "model_peak": dict(self.model_peak),
                    "over_limit": dict(self.over_limit), "model_answers": {m: len(t) for m, t in self.model_answers.items()},
                    "model_span": {m: max(t) - min(t) for m, t in self.model_answers.items() if t}}

    # --- serving -----------------------------------------------------------------------

    @property
    def api_base(self) -> str:
        return f"http://127.0.0.1:{self.port}/api/v1"

    def start(self) -> "FakeOpenRouter":
        self.server = Server(self, self.port)
        self.port = self.server.port
        return self

    def stop(self) -> None:
        if self.server:
            self.server.close()
            self.server = None

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()

    # --- the behaviour -----------------------------------------------------------------

    def decide(self, body: dict, auth: str | None) -> tuple[str, int, str | None]:
        """Count the request and choose its fate: (key, attempt, fault or None)."""
        key = request_key(body.get("model", ""), body.get("messages", []))
        criterion = judge_criterion(body)
        with self.lock:
            self.total += 1
            self.by_key[key] += 1
            self.by_model[str(body.get("model", "")).removeprefix("openrouter/")] += 1
            if criterion is not None:
                self.judge_calls[criterion] += 1
            attempt = self.by_key[key]
            if self.keep_bodies:
                self.bodies.append(body)
        fault = None
        if self.expect_key is not None and auth != f"Bearer {self.expect_key}":
            fault = "401"
        for i, rule in enumerate(self.rules):
            if fault:
                break
            if rule.times is not None and attempt > rule.times:
                continue
            if rule.matches(body) and _unit(self.seed, key, attempt, i) < rule.probability:
                fault = rule.fault
        if fault:
            with self.lock:
                self.faults[fault] += 1
        return key, attempt, fault

    def latency_of(self, key: str) -> float:
        """The wait before answering the request `key` (reproducible, so benchmarks can add it up)."""
        return self.latency + self.latency_spread * _unit(self.seed, key, "latency") if self.latency_spread else self.latency

    def enter(self, model: str) -> bool:
        """A request for `model` starts; False if it is over the model's own concurrency limit."""
        with self.lock:
            self.model_in_flight[model] += 1
            self.model_peak[model] = max(self.model_peak[model], self.model_in_flight[model])
            limit = self.model_limits.get(model)
            if limit is not None and self.model_in_flight[model] > limit:
                self.over_limit[model] += 1
                return False
            return True

    def leave(self, model: str, answered: bool, epoch: int | None = None) -> None:
        with self.lock:
            if epoch is not None and epoch != self.epoch:
                return  # it entered before `restore`: not this test's request
            self.model_in_flight[model] -= 1
            if answered:
                self.model_answers.setdefault(model, []).append(time.monotonic())

    def rate(self, model: str) -> float:
        """Answers per second `model` got, from its first answer to its last."""
        times = self.model_answers.get(model) or []
        return (len(times) - 1) / (max(times) - min(times)) if len(times) > 1 and max(times) > min(times) else 0.0

    def reply(self, body: dict, key: str, fault: str | None) -> dict:
        """An OpenRouter-shaped chat completion whose content fits the requested schema."""
        rf = body.get("response_format") or {}
        schema = (rf.get("json_schema") or {}).get("schema") if rf.get("type") == "json_schema" else None
        html = fault == "html"
        if schema is not None:
            content = json.dumps(answer(schema, key, html=html), ensure_ascii=False)
        elif rf.get("type") == "json_object":
            content = json.dumps({"answer": free_text(key, html=html)})
        else:
            content = free_text(key, html=html)
        finish = "stop"
        criterion = judge_criterion(body)
        forced = None
        asked = str((body.get("messages") or [{}])[-1].get("content") or "") if criterion else ""
        when = next((a for c, text, a in self.judge_when if c == criterion and text in asked), None)
        if when is not None:
            forced = when
        elif criterion:
            forced = self.judge_by_model.get(str(body.get("model", "")).removeprefix("openrouter/"),
                                             self.judge_answers.get(criterion, self.judge_answers.get("*")))
        if forced is not None and schema is not None:
            content, finish = forced_judgement(schema, forced)
        if fault == "invalid_json":
            content = content[: max(1, len(content) // 2)] + " oops"
        elif fault == "truncated":
            content, finish = content[: max(1, len(content) // 2)], "length"
        elif fault == "empty":
            content = ""
        prompt_chars = sum(len(str(m.get("content") or "")) for m in body.get("messages", []))
        usage = {"prompt_tokens": prompt_chars // 4 + 1, "completion_tokens": len(content) // 4 + 1}
        usage["total_tokens"] = usage["prompt_tokens"] + usage["completion_tokens"]
        if self.cost is not None:
            usage["cost"] = self.cost
        if fault == "no_choices":  # answered (and billed) with nothing in it
            return {"id": "gen-" + key[7:27], "provider": "FakeProvider", "model": body.get("model"),
                    "object": "chat.completion", "created": int(time.time()), "choices": [], "usage": usage}
        return {
            "id": "gen-" + key[7:27],
            "provider": "FakeProvider",
            "model": body.get("model"),
            "object": "chat.completion",
            "created": int(time.time()),
            "choices": [{"index": 0, "finish_reason": finish, "native_finish_reason": finish,
                         "message": {"role": "assistant", "content": content}}],
            "usage": usage,
        }


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description="Serve a fake OpenRouter on 127.0.0.1.")
    p.add_argument("--port", type=int, default=0)
    p.add_argument("--latency", type=float, default=0.0, help="seconds before every reply")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--faults", default="", help='e.g. "429=0.1,500=0.1,drop=0.05"')
    p.add_argument("--slow-seconds", type=float, default=5.0)
    p.add_argument("--expect-key", default=None, help="answer 401 unless this bearer key is sent")
    a = p.parse_args(argv)
    fake = FakeOpenRouter(latency=a.latency, seed=a.seed, slow_seconds=a.slow_seconds, expect_key=a.expect_key, port=a.port)
    if a.faults:
        fake.set_faults({k: float(v) for k, v in (item.split("=") for item in a.faults.split(","))})
    fake.start()
    print(f"PORT {fake.port}", flush=True)
    try:
        threading.Event().wait()
    except KeyboardInterrupt:
        pass
    finally:
        fake.stop()
        sys.exit(0)


if __name__ == "__main__":
    main()
