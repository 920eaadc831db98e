"""The one module that talks to litellm (and through it to OpenRouter).

litellm is imported lazily, on the first real call, with the local cost map (otherwise the
import fetches a price list from the internet) and its debug banners off. litellm retries
nothing and would wait 6000 s by default, so every call passes an explicit timeout and
num_retries=0: retrying is helmbench's job (retry.py). litellm's timeout bounds each socket
read, not the request (a body that drips a byte a second never times out), so every attempt
also runs under an overall deadline of the same length: connect plus the whole body. Errors
leave this module as `ProviderError`s with a kind and whether they are transient or fatal,
and with a message fit for a terminal (no litellm prefixes repeated three times, no object
reprs such as `ssl:<ssl.SSLContext object at 0x…>`).

A provider that never answered is not worth retrying call by call: when the first calls of an
invocation all fail to connect (connection refused, DNS failure) or all get a 404 (a wrong base
URL), the `UNREACHABLE_AFTER`-th such failure is fatal and names the base URL, so a
misconfigured run stops in seconds with one message instead of retrying every call.

A model that never answers in time is treated the same way, for that model only: when its first
`UNREACHABLE_AFTER` calls are all cut by the deadline with no answer in between, it is `stalled`
(one message naming the model and the timeout); the engine then sends none of its remaining
calls and retries none, while the other models go on. Without this a dripping provider with
`timeout: 5` retried every call six times.
"""

from __future__ import annotations

import asyncio
import logging
import os
import re
import time
import warnings
from typing import Any

from helmbench.run.calls import Completion, ProviderError, classify_status, parse_retry_after, valid_cost
from helmbench.run.config import DEFAULT_TIMEOUT

log = logging.getLogger("helmbench.run.provider")
_litellm = None
_preloading = False
DEFAULT_BASE = "https://openrouter.ai/api/v1"
UNREACHABLE_AFTER = 3  # consecutive connect failures (or 404s) before anything answered

_OBJECT_REPR = re.compile(r"\s*(?:ssl:)?<[\w.]+ object at 0x[0-9a-fA-F]+>")
_PREFIX = re.compile(r"^(?:(?:litellm\.)?\w*(?:Error|Exception):\s*|\w+Exception - )+")


def load_litellm():
    global _litellm
    if _litellm is None:
        os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
        import litellm

        litellm.suppress_debug_info = True
        # Cancelling a call (Ctrl-C, a fatal error elsewhere) can drop a litellm-internal coroutine
        # before it starts; Python then warns at exit. It is noise to a user, not a leak.
        warnings.filterwarnings("ignore", message="coroutine .* was never awaited", category=RuntimeWarning)
        for name in ("LiteLLM", "LiteLLM Router", "LiteLLM Proxy", "litellm"):
            logging.getLogger(name).setLevel(logging.ERROR)
        _litellm = litellm
    return _litellm


def preload_litellm() -> None:
    """Start importing litellm in a background thread (it takes seconds), so the import overlaps
    reading the manifest and planning; `Provider()` then finds it loaded (Python's import lock makes
    a second importer wait for the first). A daemon thread: a run with nothing to send never waits."""
    import threading

    global _preloading
    if _litellm is None and not _preloading:
        _preloading = True
        threading.Thread(target=load_litellm, name="import-litellm", daemon=True).start()


def request_kwargs(model_id: str, settings: dict, request: dict, *, api_key: str, api_base: str | None,
                   timeout: float) -> dict[str, Any]:
    """The litellm.acompletion arguments for one case (settings from models.yml)."""
    kw: dict[str, Any] = {
        "model": "openrouter/" + model_id,
        "messages": request["messages"],
        "timeout": float(settings.get("timeout") or timeout),
        "num_retries": 0,
        "api_key": api_key,
    }
    if api_base:
        kw["api_base"] = api_base
    if request.get("response_format"):
        kw["response_format"] = request["response_format"]
    for name in ("temperature", "max_tokens", "top_p", "seed"):
        if settings.get(name) is not None:
            kw[name] = settings[name]
    extra = {name: settings[name] for name in ("provider", "reasoning") if settings.get(name) is not None}
    if extra:
        kw["extra_body"] = extra
    return kw


def _error(exc: BaseException, api_key: str) -> ProviderError:
    names = {c.__name__ for c in type(exc).__mro__}
    status = getattr(exc, "status_code", None)
    if "Timeout" in names or "APITimeoutError" in names or isinstance(exc, TimeoutError):
        kind, transient, fatal = "timeout", True, False
    elif "AuthenticationError" in names:
        kind, transient, fatal = "auth", False, True
    elif "RateLimitError" in names:
        kind, transient, fatal = "rate_limit", True, False
    elif "APIConnectionError" in names:
        kind, transient, fatal = "connection", True, False
    elif isinstance(status, int):
        kind, transient, fatal = classify_status(status)
    else:
        kind, transient, fatal = "internal", False, False
    headers = getattr(exc, "litellm_response_headers", None)
    if headers is None and getattr(exc, "response", None) is not None:
        headers = getattr(exc.response, "headers", None)
    message = clean_message(f"{type(exc).__name__}: {exc}")
    if api_key:
        message = message.replace(api_key, "***")
    return ProviderError(kind, message[:1000], status=status if isinstance(status, int) else None,
                         transient=transient, fatal=fatal, retry_after=parse_retry_after(headers))


def clean_message(text: str) -> str:
    """litellm's message without its stacked class-name prefixes and without object reprs."""
    text = _OBJECT_REPR.sub("", text)
    return _PREFIX.sub("", text).strip() or text.strip()


def _completion(resp: Any, latency_ms: int) -> Completion:
    usage = getattr(resp, "usage", None)
    cost, note = valid_cost(getattr(usage, "cost", None) if usage is not None else None)
    choices = getattr(resp, "choices", None) or []
    if not choices:  # billed all the same when priced: the retry loop records what it cost
        raise ProviderError("empty_choices", "the provider returned no choices", transient=True, cost=cost)
    choice = choices[0]
    message = getattr(choice, "message", None)
    return Completion(
        content=getattr(message, "content", None),
        finish_reason=getattr(choice, "finish_reason", None),
        prompt_tokens=getattr(usage, "prompt_tokens", None),
        completion_tokens=getattr(usage, "completion_tokens", None),
        cost=cost,
        provider=getattr(resp, "provider", None) or None,
        model_version=getattr(resp, "model", None),
        generation_id=getattr(resp, "id", None),
        reasoning=getattr(message, "reasoning_content", None),
        latency_ms=latency_ms,
        cost_note=note,
    )


class Provider:
    """Calls `openrouter/<id>` through litellm; one instance per run."""

    def __init__(self, api_key: str, api_base: str | None = None, default_timeout: float = DEFAULT_TIMEOUT):
        self.api_key = api_key
        self.api_base = api_base
        self.default_timeout = default_timeout
        self.answered = False  # some call got an answer: the base URL works
        self.unreachable = 0  # consecutive connect failures / 404s while nothing has answered
        self.model_answered: set[str] = set()  # models that answered some call in time
        self.timeouts: dict[str, int] = {}  # model → calls cut by the deadline before it ever answered
        self.stalled: dict[str, str] = {}  # model → why it is no longer called (see the module's doc)
        self.litellm = load_litellm()

    def _check_reachable(self, err: ProviderError) -> ProviderError:
        """`err`, or a fatal 'unreachable' error once the first calls all failed to reach the provider."""
        if self.answered:
            return err
        if err.kind not in ("connection", "not_found"):
            if err.status is not None and err.kind != "server_error":
                self.answered = True  # it answered, with an error about this call
            return err
        self.unreachable += 1
        if self.unreachable < UNREACHABLE_AFTER:
            return err
        base = self.api_base or DEFAULT_BASE
        if err.kind == "connection":
            text = (f"cannot reach the provider at {base} ({err.message[:200]}). Check the network, or "
                    "OPENROUTER_API_BASE if you set it. The run was stopped; nothing more was sent.")
        else:
            text = (f"the provider at {base} answered 404 Not Found to the first calls: check OPENROUTER_API_BASE "
                    "(it should end in /api/v1) and the model ids in models.yml. The run was stopped.")
        return ProviderError("unreachable", text, status=err.status, fatal=True)

    async def complete(self, model_id: str, settings: dict, request: dict) -> Completion:
        kw = request_kwargs(model_id, settings, request, api_key=self.api_key, api_base=self.api_base,
                            timeout=self.default_timeout)
        start = time.monotonic()
        deadline = kw["timeout"]
        try:
            async with asyncio.timeout(deadline):  # no extra task per call, unlike wait_for
                resp = await self.litellm.acompletion(**kw)
        except TimeoutError:
            self._timed_out(model_id, deadline)
            raise ProviderError("timeout", f"no complete answer within the {deadline:g} s deadline (connect and "
                                "whole body)", transient=True) from None
        except ProviderError:
            raise
        except Exception as exc:  # litellm's exception zoo → one classified error
            raise self._check_reachable(_error(exc, self.api_key)) from None
        self.answered = True
        self.model_answered.add(model_id)
        return _completion(resp, int((time.monotonic() - start) * 1000))

    def _timed_out(self, model_id: str, deadline: float) -> None:
        if model_id in self.model_answered or model_id in self.stalled:
            return
        self.timeouts[model_id] = self.timeouts.get(model_id, 0) + 1
        if self.timeouts[model_id] >= UNREACHABLE_AFTER:
            self.stalled[model_id] = (
                f"{model_id}: its first {self.timeouts[model_id]} calls all hit the {deadline:g} s deadline with no "
                "answer in between: it is treated as unreachable and none of its remaining calls is sent (the other "
                "models go on). Run again once it answers (or raise its `timeout` in models.yml): nothing stored is "
                "asked again.")
            log.debug("%s", self.stalled[model_id])  # the session reports it once, at the end
