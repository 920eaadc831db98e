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
from helmbench.run.http_target import no_query
from helmbench.spec.models import EnvRef

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
        # litellm's import loads a `.env` file from the working folder into the environment unless LITELLM_MODE
        # says otherwise: a benchmark repository's `.env` (a stranger's pull request can add one) could then set
        # OPENROUTER_API_BASE and send the key elsewhere. Configuration comes from the environment and
        # models.yml only.
        os.environ.setdefault("LITELLM_MODE", "PRODUCTION")
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


def env_refs(value: str) -> list[str]:
    """The environment variables a header value names (`Bearer ${BOT_TOKEN}` → [BOT_TOKEN])."""
    return EnvRef.findall(value)


def route_of(model_id: str, settings: dict) -> str:
    """The litellm route of a model entry: its own `route`, else OpenRouter's."""
    return settings.get("route") or "openrouter/" + model_id


def openrouter_base() -> str:
    """OpenRouter's base URL for this invocation (OPENROUTER_API_BASE, else OpenRouter's own)."""
    return os.environ.get("OPENROUTER_API_BASE") or DEFAULT_BASE


def where_to(model_id: str, settings: dict, api_base: str | None = None) -> str:
    """Where a call to this target goes, in words (the dry run, the ledger's provider column): never a key."""
    if settings.get("http"):
        return "POST " + no_query(settings["http"]["url"])
    route = route_of(model_id, settings)
    base = settings.get("api_base") or (api_base if route.startswith("openrouter/") else None)
    return route + (" at " + no_query(base) if base else "")


def _server(settings: dict) -> str | None:
    """The server a call goes to, for the unreachable rule: an entry's own base URL or chatbot URL (without a
    query), or None for OpenRouter's (OPENROUTER_API_BASE) and for a provider litellm knows by its route."""
    url = (settings.get("http") or {}).get("url") or settings.get("api_base")
    return no_query(url) if url else None


def system_folded(settings: dict, messages: list[dict]) -> list[dict]:
    """The messages a target is sent, with its deployment prompt. A case is one user message (its condition's
    system instructions are a tagged block inside it, for every target alike); the deployment prompt is the
    one system message before it, so the case plays inside the deployment. System messages a request carries
    itself follow the deployment prompt in that one message, after a blank line. A target that takes no
    system message (`system_message: false`) gets that text at the start of the first user message instead,
    separated by a blank line."""
    deployment = settings.get("system_prompt")
    own = [m["content"] for m in messages if m.get("role") == "system" and isinstance(m.get("content"), str)]
    rest = [m for m in messages if m.get("role") != "system"]
    system = "\n\n".join([*([deployment] if deployment else []), *own])
    if not system:
        return messages
    if settings.get("system_message") is False:
        for i, m in enumerate(rest):
            if m.get("role") == "user":
                return [*rest[:i], {**m, "content": f"{system}\n\n{m.get('content') or ''}"}, *rest[i + 1:]]
        return [{"role": "user", "content": system}, *rest]
    return [{"role": "system", "content": system}, *rest]


def request_kwargs(model_id: str, settings: dict, request: dict, *, api_key: str | None, api_base: str | None,
                   timeout: float) -> dict[str, Any]:
    """The litellm.acompletion arguments for one case (settings from models.yml). `api_base` is
    OPENROUTER_API_BASE: an entry's own `api_base` wins, and a route other than OpenRouter's never gets it."""
    route = route_of(model_id, settings)
    openrouter = route.startswith("openrouter/")
    kw: dict[str, Any] = {
        "model": route,
        "messages": system_folded(settings, request["messages"]),
        "timeout": float(settings.get("timeout") or timeout),
        "num_retries": 0,
    }
    if api_key or openrouter:
        kw["api_key"] = api_key
    base = settings.get("api_base") or (api_base if openrouter else None)
    if base:
        kw["api_base"] = base
    if request.get("response_format"):
        kw["response_format"] = request["response_format"]
    for name in ("temperature", "max_tokens", "top_p", "seed"):
        if settings.get(name) is not None:
            kw[name] = settings[name]
    extra = {name: settings[name] for name in ("provider", "reasoning") if settings.get(name) is not None}
    if extra:
        kw["extra_body"] = extra
    return kw


def _error(exc: BaseException, secrets) -> ProviderError:
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
    message = scrub(message, secrets)
    return ProviderError(kind, message[:1000], status=status if isinstance(status, int) else None,
                         transient=transient, fatal=fatal, retry_after=parse_retry_after(headers))


def scrub(text: str, secrets) -> str:
    """`text` with every key and secret header value this run holds replaced by ***."""
    for secret in sorted((s for s in secrets if s and len(s) >= 4), key=len, reverse=True):
        text = text.replace(secret, "***")
    return text


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
    """Calls each target of a run; one instance per run. An OpenRouter model goes to `openrouter/<id>` through
    litellm with OPENROUTER_API_KEY; an entry with its own `route` goes to that litellm route (its own
    `api_base`, and the key in the environment variable its `api_key_env` names); an `http` entry is a
    deployed chatbot, POSTed to with httpx (`http_target.py`).

    `entries`: every entry of models.yml (models, judges, the simulated user, the generator): where each
    call's key and price come from. Keys are read from the environment here, at the call, and never
    leave this object: not in the settings (the cache key), not in a message (`scrub`)."""

    def __init__(self, api_key: str, api_base: str | None = None, default_timeout: float = DEFAULT_TIMEOUT,
                 entries=()):
        self.api_key = api_key
        self.api_base = api_base
        self.default_timeout = default_timeout
        self.entries = {(e.id, e.route, e.http.url if e.http else None): e for e in entries}
        self.secrets = {api_key} | {os.environ.get(e.api_key_env) or "" for e in entries if e.api_key_env}
        self.secrets |= {os.environ.get(name) or "" for e in entries if e.http
                         for v in e.http.headers.values() for name in env_refs(v)}
        self.answered: set[str | None] = set()  # servers (None: OpenRouter's) that answered some call: they work
        self.unreachable: dict[str | None, int] = {}  # server → connect failures / 404s while it never answered
        self.model_answered: set[str] = set()  # models that answered some call in time
        self.timeouts: dict[str, int] = {}  # model → calls cut by the deadline before it ever answered
        self.stalled: dict[str, str] = {}  # model → why it is no longer called (see the module's doc)
        self.litellm = load_litellm() if any(not e.http for e in entries) or not entries else None

    def entry(self, model_id: str, settings: dict):
        """The models.yml entry a call is made for (None: an id no entry names, e.g. in a unit test)."""
        return self.entries.get((model_id, settings.get("route"), (settings.get("http") or {}).get("url")))

    def key_for(self, model_id: str, settings: dict) -> str | None:
        """The key of this call: the variable its entry names, else OPENROUTER_API_KEY for an OpenRouter route,
        else None (litellm reads the route's own variable, e.g. OPENAI_API_KEY)."""
        entry = self.entry(model_id, settings)
        if entry is not None and entry.api_key_env:
            value = os.environ.get(entry.api_key_env)
            if not value:
                raise ProviderError("missing_key", f"{model_id}: the environment variable {entry.api_key_env} (its "
                                    "`api_key_env` in models.yml) is not set", fatal=True)
            return value
        return self.api_key if route_of(model_id, settings).startswith("openrouter/") else None

    def _check_reachable(self, err: ProviderError, base: str | None = None) -> ProviderError:
        """`err`, or a fatal 'unreachable' error once the first calls all failed to reach a server. Counted per
        server (`base`: an entry's own base URL or chatbot URL; None: OpenRouter's), so a local server that is
        down is named as such and a working OpenRouter does not hide it."""
        if base in self.answered:
            return err
        if err.kind not in ("connection", "not_found"):
            if err.status is not None and err.kind != "server_error":
                self.answered.add(base)  # it answered, with an error about this call
            return err
        self.unreachable[base] = self.unreachable.get(base, 0) + 1
        if self.unreachable[base] < UNREACHABLE_AFTER:
            return err
        if base is not None:
            what = "404 Not Found to the first calls" if err.kind == "not_found" else f"nothing ({err.message[:200]})"
            return ProviderError("unreachable", f"the server at {base} answered {what}: check it is running and "
                                 "the entry's `api_base` or `http.url` in models.yml. The run was stopped.",
                                 status=err.status, fatal=True)
        base = self.api_base or DEFAULT_BASE
        if err.kind == "connection":
            text = (f"cannot reach the provider at {base} ({err.message[:200]}). Check the network, or "
                    "OPENROUTER_API_BASE if you set it. The run was stopped; nothing more was sent.")
        else:
            text = (f"the provider at {base} answered 404 Not Found to the first calls: check OPENROUTER_API_BASE "
                    "(it should end in /api/v1) and the model ids in models.yml. The run was stopped.")
        return ProviderError("unreachable", text, status=err.status, fatal=True)

    async def complete(self, model_id: str, settings: dict, request: dict) -> Completion:
        if settings.get("http"):
            return await self._complete_http(model_id, settings, request)
        if self.litellm is None:
            self.litellm = load_litellm()
        kw = request_kwargs(model_id, settings, request, api_key=self.key_for(model_id, settings),
                            api_base=self.api_base, timeout=self.default_timeout)
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
            raise self._check_reachable(_error(exc, self.secrets), _server(settings)) from None
        self.answered.add(_server(settings))
        self.model_answered.add(model_id)
        done = _completion(resp, int((time.monotonic() - start) * 1000))
        if not kw["model"].startswith("openrouter/"):  # the route it took; OpenRouter names its upstream itself
            done.provider = where_to(model_id, settings)
            if done.cost is None:
                done.cost = self._price(model_id, settings, done, resp)
        return done

    def _price(self, model_id: str, settings: dict, done: Completion, resp) -> float | None:
        """A route other than OpenRouter reports no cost: the entry's `price:`, else litellm's price list,
        else None ("no known price": unknown, never $0)."""
        entry = self.entry(model_id, settings)
        if entry is not None and entry.price is not None and done.prompt_tokens is not None:
            return ((done.prompt_tokens or 0) * entry.price.input_per_mtok
                    + (done.completion_tokens or 0) * entry.price.output_per_mtok) / 1e6
        try:
            cost = self.litellm.completion_cost(completion_response=resp)
        except Exception:  # not in litellm's price list (a local model): no known price
            return None
        return float(cost) if cost else None

    async def _complete_http(self, model_id: str, settings: dict, request: dict) -> Completion:
        from helmbench.run.http_target import call_http

        deadline = float(settings.get("timeout") or self.default_timeout)
        start = time.monotonic()
        try:
            async with asyncio.timeout(deadline):
                text = await call_http(settings, system_folded(settings, request["messages"]),
                                               request.get("session"), deadline)
        except TimeoutError:
            self._timed_out(model_id, deadline)
            raise ProviderError("timeout", f"no complete answer within the {deadline:g} s deadline", transient=True) from None
        except ProviderError as err:
            err.message = scrub(err.message, self.secrets)
            raise self._check_reachable(err, _server(settings)) from None
        self.answered.add(_server(settings))
        self.model_answered.add(model_id)
        return Completion(content=text, finish_reason="stop", prompt_tokens=None, completion_tokens=None, cost=None,
                          provider=where_to(model_id, settings), model_version=None, generation_id=None,
                          reasoning=None, latency_ms=int((time.monotonic() - start) * 1000))

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
