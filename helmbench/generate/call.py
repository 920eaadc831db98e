"""The one place `helmbench generate` calls a model: cached by content, budgeted, retried.

Kept small on purpose: once the phase engine lands, this becomes a job kind on it. Until then
it reuses the run stage's provider (the only importer of litellm), its cost estimate ideas and
the store's `generations` table. Calls go one at a time: a generation invocation makes a
handful of calls, and one at a time makes `--max-cost` exact to within one call.
"""

from __future__ import annotations

import asyncio
import random
from dataclasses import dataclass, field

from helmbench.generate.prompts import Request
from helmbench.generate.writer import GenerateError
from helmbench.manifest.canonical import hash_of
from helmbench.run.calls import ProviderError
from helmbench.run.estimate import price_for
from helmbench.spec.models import ModelEntry
from helmbench.store import generations

#: Sent when models.yml gives the generator no max_tokens: bounds what one call can cost.
DEFAULT_MAX_TOKENS = 2000
MAX_ATTEMPTS = 4
EXIT_STOPPED = 3


def generator_settings(entry: ModelEntry) -> dict:
    settings = entry.settings()
    settings.setdefault("max_tokens", DEFAULT_MAX_TOKENS)
    return settings


def prompt_hash(entry: ModelEntry, request: Request) -> str:
    """Identity of a generation call (and the `prompt_hash` its files record): model, settings
    (numbers normalised, so `temperature: 0` and `0.0` agree) and the request."""
    return hash_of({"model": entry.id, "settings": generator_settings(entry), "request": request.body()})


@dataclass(frozen=True)
class Estimate:
    calls: int  # calls that would be made (not cached)
    cached: int
    low: float | None  # USD; None: the model has no known price
    high: float | None


@dataclass
class Generator:
    """Answers generation requests from the cache or the model, within `max_cost` USD."""

    db: object  # sqlite_utils.Database, or None for a dry run without a database
    entry: ModelEntry
    api_key: str | None = None
    api_base: str | None = None
    max_cost: float | None = None
    spent: float = 0.0
    calls: int = 0
    cached: int = 0
    _provider: object = field(default=None, repr=False)

    def hash_of(self, request: Request) -> str:
        return prompt_hash(self.entry, request)

    def stored(self, request: Request) -> dict | None:
        return generations.cached(self.db, self.hash_of(request)) if self.db is not None else None

    def cost_range(self, request: Request) -> tuple[float | None, float | None]:
        """Low: the answer as long as the text sent (chars ÷ 4); high: the whole max_tokens."""
        price = price_for(self.entry)
        if price is None:
            return None, None
        tokens_in = sum(len(m["content"]) for m in request.messages) / 4
        user_chars = len(request.messages[-1]["content"])
        base = tokens_in * price.input_per_token
        return (base + user_chars / 4 * price.output_per_token,
                base + generator_settings(self.entry)["max_tokens"] * price.output_per_token)

    def estimate(self, requests: list[Request]) -> Estimate:
        todo = [r for r in requests if self.stored(r) is None]
        ranges = [self.cost_range(r) for r in todo]
        if any(lo is None for lo, _ in ranges):
            return Estimate(len(todo), len(requests) - len(todo), None, None)
        return Estimate(len(todo), len(requests) - len(todo), sum(lo for lo, _ in ranges), sum(hi for _, hi in ranges))

    def would_exceed(self, request: Request) -> bool:
        if self.max_cost is None:
            return False
        _, high = self.cost_range(request)
        return self.spent + (high or 0.0) > self.max_cost or self.spent >= self.max_cost

    def answer_all(self, requests: list[Request]) -> tuple[list[str | None], GenerateError | None]:
        """Answers in order, as far as they go: (answers so far, what stopped the rest or None).
        Callers write what was answered before reporting the stop, so nothing paid is wasted."""
        return asyncio.run(self._answer_all(requests))

    async def _answer_all(self, requests: list[Request]) -> tuple[list[str | None], GenerateError | None]:
        out: list[str | None] = []
        for request in requests:
            try:
                out.append(await self.answer(request))
            except GenerateError as stop:
                return out, stop
        return out, None

    async def answer(self, request: Request) -> str | None:
        """The model's answer (content) to `request`: stored, or asked now and stored at once.
        Raises GenerateError when the budget or the provider stops generation."""
        if (row := self.stored(request)) is not None:
            self.cached += 1
            return row["content"]
        if self.would_exceed(request):
            raise GenerateError(f"--max-cost {self.max_cost:g} USD reached (spent {self.spent:.4f}); "
                                f"{request.label} and the rest were not generated", exit_code=EXIT_STOPPED,
                                hint="raise --max-cost, or see the cost first with --dry-run")
        if not self.api_key:
            raise GenerateError("OPENROUTER_API_KEY is not set: nothing was generated", exit_code=2,
                                hint="export OPENROUTER_API_KEY=…, or see what it would cost with --dry-run")
        completion = await self._ask(request)
        self.calls += 1
        self.spent += completion.cost or 0.0
        generations.store(self.db, prompt_hash=self.hash_of(request), purpose=request.purpose, model=self.entry.id,
                          settings=generator_settings(self.entry), content=completion.content,
                          finish_reason=completion.finish_reason, cost=completion.cost,
                          prompt_tokens=completion.prompt_tokens, completion_tokens=completion.completion_tokens,
                          provider=completion.provider, generation_id=completion.generation_id)
        return completion.content

    async def _ask(self, request: Request):
        if self._provider is None:
            from helmbench.run.provider import Provider

            self._provider = Provider(self.api_key or "", self.api_base)
        rng = random.Random()
        for attempt in range(1, MAX_ATTEMPTS + 1):
            try:
                return await self._provider.complete(self.entry.id, generator_settings(self.entry), request.body())
            except ProviderError as err:
                self.spent += err.cost or 0.0
                if err.fatal or not err.transient or attempt == MAX_ATTEMPTS:
                    raise GenerateError(f"the generator model failed on {request.label}: {err.message}",
                                        exit_code=EXIT_STOPPED,
                                        hint="run the same command again: answers already stored are not asked again")
                await asyncio.sleep(min(err.retry_after or rng.uniform(0, 0.5 * 2 ** attempt), 10.0))
        raise AssertionError("unreachable")
