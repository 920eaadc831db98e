"""What one model call returns or raises, independent of litellm.

Keeping these types free of litellm lets the retry loop, the evaluators and the tests use them
without the 4-second import; only provider.py translates litellm's objects into them.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass
class Completion:
    content: str | None
    finish_reason: str | None
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    cost: float | None = None  # billed cost reported by OpenRouter; None when it reported none
    provider: str | None = None
    model_version: str | None = None
    generation_id: str | None = None
    reasoning: str | None = None
    latency_ms: int | None = None
    cost_note: str | None = None  # why a reported cost was rejected (negative, not a number)


class ProviderError(Exception):
    """A failed call. `kind` names it (rate_limit, server_error, timeout, connection, bad_request, ...).

    transient: worth retrying now; fatal: stop the whole run (a rejected API key). `cost`: what
    the failed attempt was billed, when the provider answered (and priced) it anyway, e.g. an
    answer without choices.
    """

    def __init__(self, kind: str, message: str, *, status: int | None = None, transient: bool = False,
                 fatal: bool = False, retry_after: float | None = None, cost: float | None = None):
        super().__init__(message)
        self.kind = kind
        self.message = message
        self.status = status
        self.transient = transient
        self.fatal = fatal
        self.retry_after = retry_after
        self.cost = cost


def valid_cost(raw) -> tuple[float | None, str | None]:
    """(cost, None) for a finite non-negative number; (None, why) for anything else.

    A negative or non-numeric cost is recorded as unknown rather than trusted: summed into the
    money counter it would let `--max-cost` never trip and print a negative bill.
    """
    import math

    if raw is None:
        return None, None
    if isinstance(raw, bool) or not isinstance(raw, (int, float)):
        return None, f"the provider reported a non-numeric cost {str(raw)[:40]!r}: recorded as unknown"
    if not math.isfinite(raw) or raw < 0:
        return None, f"the provider reported an invalid cost {raw!r}: recorded as unknown"
    return float(raw), None


def classify_status(status: int | None) -> tuple[str, bool, bool]:
    """(kind, transient, fatal) for an HTTP status; None means no response at all."""
    if status is None:
        return "connection", True, False
    if status == 401:
        return "auth", False, True
    if status == 408:
        return "timeout", True, False
    if status == 429:
        return "rate_limit", True, False
    if status in (400, 413, 422):
        return "bad_request", False, False
    if status == 402:
        return "payment_required", False, True
    if status == 403:
        return "forbidden", False, False
    if status == 404:
        return "not_found", False, False
    if status >= 500:
        return "server_error", True, False
    return f"http_{status}", False, False


def parse_retry_after(headers) -> float | None:
    """Seconds from `retry-after-ms` or `retry-after` (seconds or an HTTP date)."""
    if not headers:
        return None
    try:
        ms = headers.get("retry-after-ms")
        if ms is not None:
            return max(0.0, float(ms) / 1000)
        value = headers.get("retry-after")
    except Exception:
        return None
    if value is None:
        return None
    try:
        return max(0.0, float(value))
    except (TypeError, ValueError):
        pass
    from email.utils import parsedate_to_datetime
    from datetime import datetime, timezone

    try:
        when = parsedate_to_datetime(str(value))
        return max(0.0, (when - datetime.now(timezone.utc)).total_seconds())
    except (TypeError, ValueError):
        return None
