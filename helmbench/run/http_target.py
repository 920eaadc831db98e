"""One call to a deployed chatbot behind its own HTTP API (a models.yml entry with `http:`).

Why its own module: such a service is not a model litellm knows; it takes a JSON body of its own shape
and answers with one. The entry's `body` is a template (spec/models.py `HttpTarget`): its placeholders are
filled from the request, the body is POSTed with httpx, and the reply text is read at the entry's `reply`
path. What comes back is untrusted: the body read is bounded, a reply that is not JSON or holds no text at
that path is a clear error (`bad_reply`, not retried), and no redirect is followed (a secret header would
go along). Header values written `${NAME}` are read from the environment here, at the call, and never
stored; the provider scrubs them from any message.

A stateful service (the body holds `{{session_id}}`) keeps the conversation itself: it is sent only the
newest user message and the conversation's session id (`request["session"]`, made by the conversation
phase for each conversation it walks; a single-turn case gets a fresh one).
"""

from __future__ import annotations

import json
import os
import re
import uuid

from helmbench.run.calls import ProviderError, classify_status, parse_retry_after
from helmbench.spec.models import EnvRef, Placeholder

MAX_BODY = 4_000_000  # bytes of a reply read at most
_WHOLE = re.compile(r"^\{\{\s*(messages|message|session_id|system)\s*\}\}$")


def stateful(settings: dict) -> bool:
    """A deployed service that keeps the conversation itself (its body template holds `{{session_id}}`)."""
    return bool(settings.get("http")) and "session_id" in Placeholder.findall(repr(settings["http"].get("body")))


def fill(template, values: dict):
    """`template` with its placeholders filled: a whole-string placeholder becomes the value itself."""
    if isinstance(template, dict):
        return {k: fill(v, values) for k, v in template.items()}
    if isinstance(template, list):
        return [fill(v, values) for v in template]
    if isinstance(template, str):
        whole = _WHOLE.match(template)
        if whole:
            return values[whole[1]]
        return Placeholder.sub(lambda m: values[m[1]] if isinstance(values[m[1]], str)
                               else json.dumps(values[m[1]], ensure_ascii=False), template)
    return template


def dig(data, path: str):
    """The value at a dotted path (`data.reply`, `choices.0.text`); None when it is not there."""
    for part in path.split("."):
        if isinstance(data, dict):
            data = data.get(part)
        elif isinstance(data, list) and part.isdigit() and int(part) < len(data):
            data = data[int(part)]
        else:
            return None
    return data


def headers_of(spec: dict) -> dict[str, str]:
    """The request headers, `${NAME}` read from the environment (a missing variable is fatal: every call
    would be refused)."""
    out = {}
    where = no_query(spec["url"])
    for name, value in (spec.get("headers") or {}).items():
        for var in EnvRef.findall(value):
            if not os.environ.get(var):
                raise ProviderError("missing_key", f"the environment variable {var} (header {name} of {where} in "
                                    "models.yml) is not set", fatal=True)
            secret = os.environ[var]
            if not secret.isascii() or not secret.isprintable():
                # httpx would refuse it with the value in its message (a stray \r from a Windows .env file, say):
                # refused here naming only the variable, before any request
                raise ProviderError("missing_key", f"the environment variable {var} (header {name} of {where}) holds "
                                    "a control or non-ASCII character: a header value cannot carry it", fatal=True)
        out[name] = EnvRef.sub(lambda m: os.environ[m[1]], value)
    return out


def no_query(url: str) -> str:
    """A URL as every message, the dry run and the ledger show it: without its query or fragment, which may carry a
    key (`?key=…`)."""
    return url.split("?", 1)[0].split("#", 1)[0]


def body_of(spec: dict, messages: list[dict], session: str | None) -> dict:
    system = "\n\n".join(m["content"] for m in messages if m.get("role") == "system")
    users = [m for m in messages if m.get("role") == "user"]
    values = {"messages": [{"role": m["role"], "content": m.get("content") or ""} for m in messages],
              "message": users[-1].get("content") or "" if users else "",
              "session_id": session or uuid.uuid4().hex, "system": system}
    return fill(spec["body"], values)


async def call_http(settings: dict, messages: list[dict], session: str | None, timeout: float) -> str:
    """POST one request to the service; its reply text, or a classified `ProviderError`."""
    import httpx

    spec = settings["http"]
    body = body_of(spec, messages, session)
    try:
        async with httpx.AsyncClient(follow_redirects=False, timeout=timeout) as client:
            async with client.stream("POST", spec["url"], json=body, headers=headers_of(spec)) as resp:
                raw = bytearray()
                async for chunk in resp.aiter_bytes():
                    raw += chunk
                    if len(raw) > MAX_BODY:
                        raise ProviderError("bad_reply", f"{no_query(spec['url'])} answered more than {MAX_BODY} bytes")
    except httpx.TimeoutException:
        raise TimeoutError from None
    except httpx.HTTPError as exc:  # the exception's text may quote a request header: only its type is shown
        raise ProviderError("connection", f"cannot reach {no_query(spec['url'])}: {type(exc).__name__}",
                            transient=True) from None
    if resp.status_code >= 300:
        kind, transient, fatal = classify_status(resp.status_code)
        raise ProviderError(kind, f"{no_query(spec['url'])} answered HTTP {resp.status_code}",
                            status=resp.status_code, transient=transient, fatal=fatal,
                            retry_after=parse_retry_after(resp.headers))
    try:
        data = json.loads(bytes(raw))
    except (ValueError, RecursionError):  # RecursionError: a reply nested deeper than the parser goes
        raise ProviderError("bad_reply", f"{no_query(spec['url'])} answered something that is not JSON") from None
    text = dig(data, spec["reply"])
    if not isinstance(text, str):
        raise ProviderError("bad_reply", f"{no_query(spec['url'])}'s answer holds no text at `{spec['reply']}` "
                            "(the entry's `reply` path)")
    return text
