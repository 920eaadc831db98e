"""Knobs of the executor, with defaults for real use and environment overrides for tests.

Why environment variables for the retry timings: tests and the throughput benchmark drive the
real CLI in a subprocess and need tiny backoff delays; a hidden CLI flag would leak test
concerns into the user-facing surface.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass

DEFAULT_TIMEOUT = 120.0
DEFAULT_CONCURRENCY = 8
DEFAULT_DRAIN_SECONDS = 30.0


def settings_hash(settings: dict) -> str:
    """The cache key of a model's settings, through the manifest's canonical hasher.

    Why canonical: numbers are normalised the way every manifest hash is (a whole float is
    written as an int), so `temperature: 0` and `temperature: 0.0` in models.yml are the same
    settings and cost nothing to switch between. Hashes made before this (`legacy_settings_hash`)
    are adopted by the store on the next run (run/settings_compat.py), so no stored answer is
    paid for again.
    """
    from helmbench.errors import HelmbenchError
    from helmbench.manifest.canonical import hash_of

    try:
        return hash_of(settings)
    except ValueError as exc:  # NaN or infinity in a free-form mapping (provider, reasoning)
        raise HelmbenchError(f"model settings {settings!r} hold a number that is not finite (NaN or infinity), "
                             f"which JSON cannot write ({exc})", hint="use finite numbers in models.yml") from None


def legacy_settings_hash(settings: dict) -> str:
    """The settings hash of releases before numbers were normalised (plain `json.dumps`), for reuse."""
    data = json.dumps(settings, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return "sha256:" + hashlib.sha256(data.encode("utf-8")).hexdigest()


def _env_float(name: str, default: float) -> float:
    raw = os.environ.get(name)
    return float(raw) if raw not in (None, "") else default


@dataclass(frozen=True)
class RetryPolicy:
    """Exponential backoff with full jitter; `Retry-After` is honoured but capped.

    An answer without choices gets a smaller budget (`max_empty_attempts`) than a network error:
    the provider may bill it, and a provider that answers nothing tends to keep doing so.
    """

    max_attempts: int = 6
    base_delay: float = 1.0
    max_delay: float = 60.0
    max_empty_attempts: int = 2

    @classmethod
    def from_env(cls) -> "RetryPolicy":
        return cls(
            max_attempts=int(_env_float("HELMBENCH_MAX_ATTEMPTS", cls.max_attempts)),
            base_delay=_env_float("HELMBENCH_RETRY_BASE_DELAY", cls.base_delay),
            max_delay=_env_float("HELMBENCH_RETRY_MAX_DELAY", cls.max_delay),
            max_empty_attempts=int(_env_float("HELMBENCH_MAX_EMPTY_ATTEMPTS", cls.max_empty_attempts)),
        )


def drain_seconds() -> float:
    """How long the first Ctrl-C waits for the calls in flight (they are paid for already)."""
    return _env_float("HELMBENCH_DRAIN_SECONDS", DEFAULT_DRAIN_SECONDS)


@dataclass
class RunOptions:
    """Everything one invocation of `helmbench run` was asked to do."""

    manifest: str = "build/manifest.jsonl"
    models_file: str = "benchmark/models.yml"
    db: str = "build/results.db"
    scenarios: tuple[str, ...] = ()
    case_ids: tuple[str, ...] = ()
    models: tuple[str, ...] = ()
    samples: int = 1
    concurrency: int = DEFAULT_CONCURRENCY
    max_cost: float | None = None
    dry_run: bool = False
    logs_dir: str = "build/logs"
    command: str = "helmbench run"
    retry: RetryPolicy = RetryPolicy()
    preview: bool = False  # `run-single`: results go to preview runs, which are never scored
    shard: object = None  # `--shard K/N`: a run.selection.Shard, or None for all the work
    rejudge_sample: int = 0  # `--rejudge-sample N`: judged outputs the judge is asked again (its re-judge lane)
    rejudge_seed: int = 0  # `--rejudge-seed`: which N (the same manifest, outputs and seed draw the same ones)

    @property
    def api_key(self) -> str | None:
        return os.environ.get("OPENROUTER_API_KEY") or None

    @property
    def api_base(self) -> str | None:
        return os.environ.get("OPENROUTER_API_BASE") or None
