"""Answering generation requests: from the store's cache, else through the phase engine.

The call itself is a job kind on the run stage's engine (kind.py), so generation gets the same
limits, retries, de-duplication, money limit and Ctrl-C drain as answering and judging. What is
here: the identity of a call (the `prompt_hash` the written files record, which keys the cache),
its cost estimate for `--dry-run`, and turning a phase's end into answers plus what stopped it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path


from helmbench.generate.prompts import Request
from helmbench.generate.placement import GenerateError
from helmbench.manifest.canonical import hash_of
from helmbench.run.calls import Completion
from helmbench.run.config import DEFAULT_CONCURRENCY, RetryPolicy
from helmbench.run.estimate import price_for
from helmbench.spec.models import ModelEntry
from helmbench.store import generations

#: Sent when models.yml gives the generator no max_tokens: bounds what one call can cost.
DEFAULT_MAX_TOKENS = 2000
EXIT_STOPPED = 3
EXIT_INTERRUPTED = 130


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

    db: object  # an open sqlite_utils.Database (reads), or None for a dry run without a database
    db_path: Path | None
    entry: ModelEntry
    api_key: str | None = None
    api_base: str | None = None
    max_cost: float | None = None
    spent: float = 0.0
    calls: int = 0
    cached: int = 0
    settings: dict = field(init=False)

    def __post_init__(self):
        self.settings = generator_settings(self.entry)

    @classmethod
    def open(cls, db_path: Path, entry: ModelEntry, *, dry_run: bool = False, **kw) -> "Generator":
        """With the results database at `db_path` (created for a real invocation; a dry run only
        reads one that exists)."""
        from helmbench.store import open_db, open_existing

        return cls(open_existing(db_path) if dry_run else open_db(db_path), db_path, entry, **kw)

    def hash_of(self, request: Request) -> str:
        return prompt_hash(self.entry, request)

    def stored(self, request: Request) -> dict | None:
        return generations.cached(self.db, self.hash_of(request)) if self.db is not None else None

    def row(self, request: Request, completion: Completion) -> dict:
        return {"prompt_hash": self.hash_of(request), "purpose": request.purpose, "model": self.entry.id,
                "settings": self.settings, "content": completion.content, "finish_reason": completion.finish_reason,
                "cost": completion.cost, "prompt_tokens": completion.prompt_tokens,
                "completion_tokens": completion.completion_tokens, "provider": completion.provider,
                "generation_id": completion.generation_id}

    def cost_range(self, request: Request) -> tuple[float | None, float | None]:
        """Low: an answer as long as the text sent (chars ÷ 4 tokens); high: the whole max_tokens."""
        price = price_for(self.entry)
        if price is None:
            return None, None
        base = sum(len(m["content"]) for m in request.messages) / 4 * price.input_per_token
        user_chars = len(request.messages[-1]["content"])
        return (base + user_chars / 4 * price.output_per_token,
                base + self.settings["max_tokens"] * price.output_per_token)

    def estimate(self, requests: list[Request]) -> Estimate:
        todo = [r for r in requests if self.stored(r) is None]
        ranges = [self.cost_range(r) for r in todo]
        if any(lo is None for lo, _ in ranges):
            return Estimate(len(todo), len(requests) - len(todo), None, None)
        return Estimate(len(todo), len(requests) - len(todo), sum(lo for lo, _ in ranges), sum(hi for _, hi in ranges))

    def answer_all(self, requests: list[Request]) -> tuple[dict[str, str | None], GenerateError | None]:
        """Answers by prompt hash (stored or new; a request missing was not answered), and what
        stopped the rest.
        Every paid answer is in the store before this returns, whatever ended the phase."""
        from helmbench.generate.kind import Generations
        from helmbench.run.budget import Budget
        from helmbench.run.engine import run_phase
        from helmbench.run.progress import PhaseCounter
        from helmbench.run.provider import Provider
        from helmbench.run.selection import needs_openrouter_key
        from helmbench.run.writer import Writer

        pending = [r for r in requests if self.stored(r) is None]
        if pending and not self.api_key and needs_openrouter_key([self.entry]):
            return {}, GenerateError("OPENROUTER_API_KEY is not set: nothing was generated", exit_code=2,
                                     hint="export OPENROUTER_API_KEY=…, or see what it would cost with --dry-run")
        writer = Writer(self.db_path, write=generations.store_batch)
        kind = Generations(self, requests, writer, concurrency=DEFAULT_CONCURRENCY)
        highs = [self.cost_range(r)[1] for r in pending]
        budget = Budget(self.max_cost, estimate=max(highs) if highs and None not in highs else None)
        progress = PhaseCounter(len(pending), phase="generation calls")
        try:
            status = run_phase(kind, provider=lambda: Provider(self.api_key or "", self.api_base, entries=[self.entry]),
                               writer=writer,
                               progress=progress, policy=RetryPolicy.from_env(), budget=budget)
        except Exception as exc:  # a fatal provider error (a rejected key): what was answered is stored
            message = getattr(exc, "message", None) or str(exc)
            return kind.answers, GenerateError(
                f"generation stopped: {message}", exit_code=EXIT_STOPPED,
                hint="run the same command again once fixed: answers already stored are not asked again")
        answers = kind.answers
        if status == "interrupted":
            return answers, GenerateError("interrupted: the answers received are stored and written",
                                          exit_code=EXIT_INTERRUPTED, hint="run the same command to continue")
        if status == "stopped_cost":
            return answers, GenerateError(
                f"--max-cost {self.max_cost:g} USD reached (spent {self.spent:.4f}); {len(kind.not_sent)} call(s) not "
                "made", exit_code=EXIT_STOPPED, hint="raise --max-cost, or see the cost first with --dry-run")
        if kind.failed:
            return answers, GenerateError(f"{len(kind.failed)} generation call(s) failed: "
                                          f"{next(iter(kind.failed.values()))}", exit_code=EXIT_STOPPED,
                                          hint="run the same command again: answers already stored are not asked again")
        return answers, None

