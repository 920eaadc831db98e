"""Who may talk to a local HELMBench server: the review page (every mode of it) and `helmbench serve`.

Why a middleware around the whole ASGI app rather than checks inside each page: every mode a
server gains (the review page's packet mode, Datasette behind `serve`) inherits them without
repeating them. Three attacks it stops:

- DNS rebinding: a page on `evil.example`, whose name is made to resolve to 127.0.0.1, talks to
  the server as if it were its own origin and reads every answer. A request is answered only
  when its `Host` names the server itself: a loopback name (`127.0.0.1`, `localhost`, `[::1]`)
  with the server's own port, the literal address it is bound to, or a name the user allowed
  explicitly (`--allow-host`) when binding elsewhere. Anything else gets 421.
- A forged write from another local port: cookies are not separated by port, so a page served
  from `127.0.0.1:<other port>` is "same site" and rides on the reviewer's cookies. A write
  (any method but GET/HEAD/OPTIONS) must come from the server's own origin: `Origin` equal to
  `http://<its Host>`, or, without `Origin` (or with `null`, which a browser sends under the
  pages' `no-referrer` policy), `Sec-Fetch-Site` `same-origin`/`none`; a client
  that sends neither (not a browser, so no ambient cookies to abuse) still needs the CSRF token.
  The CSRF cookie is made HttpOnly: the page carries the token in its form, no script reads it.
- Bodies a handler cannot read: a write must be a url-encoded form of a stated length below the
  bound (411, 413, 415), so no parser downstream (asgi-csrf's multipart one gave 500) ever meets
  anything else.
"""

from __future__ import annotations

LOOPBACK = ("127.0.0.1", "localhost", "[::1]", "::1")
SAFE_METHODS = ("GET", "HEAD", "OPTIONS")
FORM = b"application/x-www-form-urlencoded"
HEADERS = [(b"content-type", b"text/plain; charset=utf-8"), (b"x-content-type-options", b"nosniff"),
           (b"cache-control", b"no-store")]


def allowed_hosts(bound: str, port: int, extra: tuple[str, ...] | list[str] = ()) -> frozenset[str]:
    """Every `Host` value the server answers: loopback names, the bound address and `extra`, with `port`."""
    names = {n for n in LOOPBACK if n != "::1"}
    if bound not in ("0.0.0.0", "::", ""):
        names.add(f"[{bound}]" if ":" in bound and not bound.startswith("[") else bound)
    for name in extra:
        name = name.strip().lower()
        if name:
            names.add(f"[{name}]" if ":" in name and not name.startswith("[") else name)
    return frozenset(f"{n.lower()}:{port}" for n in names)


async def _refuse(send, status: int, message: str) -> None:
    body = message.encode("utf-8")
    await send({"type": "http.response.start", "status": status,
                "headers": [*HEADERS, (b"content-length", str(len(body)).encode())]})
    await send({"type": "http.response.body", "body": body})


def same_origin_write(headers: dict[bytes, bytes], host: str) -> bool:
    """Whether a write comes from the server's own origin (see the module's docstring)."""
    origin = headers.get(b"origin")
    if origin is not None and origin != b"null":  # "null": sent under `Referrer-Policy: no-referrer`
        return origin.decode("latin-1").lower() == f"http://{host}"
    site = headers.get(b"sec-fetch-site")
    return site is None or site.decode("latin-1").lower() in ("same-origin", "none")


def guard(app, hosts: frozenset[str], *, max_body: int | None = None, cookie_httponly: tuple[bytes, ...] = ()):
    """`app` answering only requests for `hosts`, and writes only from its own origin.

    `max_body`: when set, a write must be a url-encoded form with a Content-Length of at most
    this many bytes. `cookie_httponly`: names of cookies the wrapped app sets that get HttpOnly."""

    async def guarded(scope, receive, send):
        if scope["type"] != "http":
            return await app(scope, receive, send)
        headers = dict(scope.get("headers") or [])
        host = headers.get(b"host", b"").decode("latin-1").lower()
        if host not in hosts:
            return await _refuse(send, 421, "This server answers only requests addressed to itself "
                                            "(127.0.0.1 or localhost with its port).")
        if scope["method"] not in SAFE_METHODS:
            if not same_origin_write(headers, host):
                return await _refuse(send, 403, "A write from another origin is refused.")
            if max_body is not None:
                length = headers.get(b"content-length")
                if length is None or not length.isdigit():
                    return await _refuse(send, 411, "The request body is missing a length.")
                if int(length) > max_body:
                    return await _refuse(send, 413, "The request body is too large.")
                if headers.get(b"content-type", b"").split(b";")[0].strip().lower() != FORM:
                    return await _refuse(send, 415, "Send the page's form (application/x-www-form-urlencoded).")
        if not cookie_httponly:
            return await app(scope, receive, send)

        async def httponly(event):
            if event["type"] == "http.response.start":
                event = {**event, "headers": [
                    (k, v + b"; HttpOnly" if k.lower() == b"set-cookie" and v.split(b"=", 1)[0] in cookie_httponly
                     and b"httponly" not in v.lower() else v) for k, v in event.get("headers") or []]}
            await send(event)

        return await app(scope, receive, httponly)

    return guarded


__all__ = ["LOOPBACK", "allowed_hosts", "guard", "same_origin_write"]
