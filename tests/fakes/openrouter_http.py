"""The HTTP side of the fake OpenRouter: a small asyncio HTTP/1.1 server with keep-alive.

Why asyncio and not http.server: a thread per connection that sleeps for the latency and then
fights for the GIL delays bursts of replies by milliseconds each, which would show up in the
throughput benchmark as the executor's overhead. One event loop in one thread answers
thousands of concurrent requests with exact latencies. openrouter.py decides what to answer;
this module only speaks HTTP (and performs the socket-level faults: drop, slow, drip).
"""

from __future__ import annotations

import asyncio
import json
import threading
import time

ERRORS = {
    "429": (429, "Rate limit exceeded"),
    "500": (500, "Internal Server Error"),
    "502": (502, "Provider returned error"),
    "503": (503, "No available provider"),
    "401": (401, "No auth credentials found"),
    "400": (400, "Bad request: invalid parameter"),
    "403": (403, "Input was flagged by moderation"),
    "404": (404, "No endpoints found for this model"),
}
REASONS = {200: "OK", **{s: m for s, m in ERRORS.values()}, 404: "Not Found"}


class Drip(bytes):
    """A reply sent one byte every `interval` seconds after its headers (a stalled stream)."""

    interval: float = 1.0


def _response(status: int, obj: dict, headers: dict | None = None) -> bytes:
    data = json.dumps(obj).encode()
    head = [f"HTTP/1.1 {status} {REASONS.get(status, 'Error')}", "Content-Type: application/json",
            f"Content-Length: {len(data)}"] + [f"{k}: {v}" for k, v in (headers or {}).items()]
    return ("\r\n".join(head) + "\r\n\r\n").encode() + data


class Server:
    """Serves `fake` on 127.0.0.1:`port` (0 = any free port) from a background thread."""

    def __init__(self, fake, port: int = 0):
        self.fake = fake
        self.loop = asyncio.new_event_loop()
        self.server = self.loop.run_until_complete(
            asyncio.start_server(self.handle, "127.0.0.1", port, backlog=1024, limit=2**24))
        self.port = self.server.sockets[0].getsockname()[1]
        self.thread = threading.Thread(target=self.loop.run_forever, name="fake-openrouter", daemon=True)
        self.thread.start()

    def close(self) -> None:
        async def shutdown():
            self.server.close()
            tasks = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)

        try:
            asyncio.run_coroutine_threadsafe(shutdown(), self.loop).result(5)
        finally:
            self.loop.call_soon_threadsafe(self.loop.stop)
            self.thread.join(5)
            self.loop.close()

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                line = await reader.readline()
                if not line.strip():
                    break
                method, path, _ = line.decode("latin-1").split(" ", 2)
                headers = {}
                while (h := await reader.readline()) not in (b"\r\n", b"\n", b""):
                    k, _, v = h.decode("latin-1").partition(":")
                    headers[k.strip().lower()] = v.strip()
                n = int(headers.get("content-length") or 0)
                body = json.loads(await reader.readexactly(n)) if n else {}
                reply = await self.route(method, path, headers, body)
                if reply is None:  # the "drop" fault: hang up without answering
                    writer.transport.abort()
                    return
                if isinstance(reply, Drip):  # headers at once, then the body a byte at a time
                    head, _, data = bytes(reply).partition(b"\r\n\r\n")
                    writer.write(head + b"\r\n\r\n")
                    for i in range(len(data)):
                        await writer.drain()
                        await asyncio.sleep(reply.interval)
                        writer.write(data[i:i + 1])
                writer.write(b"" if isinstance(reply, Drip) else reply)
                await writer.drain()
                if headers.get("connection", "").lower() == "close":
                    break
        except (ConnectionError, asyncio.IncompleteReadError, asyncio.CancelledError, ValueError):
            pass
        finally:
            writer.close()

    async def route(self, method: str, path: str, headers: dict, body: dict) -> bytes | None:
        fake = self.fake
        if method == "GET" and path.startswith("/_stats"):
            return _response(200, fake.stats())
        if method == "POST" and path.startswith("/_config"):
            fake.configure(body)
            return _response(200, {"ok": True})
        if not (method == "POST" and path.endswith("/chat/completions")):
            return _response(404, {"error": {"message": "not found", "code": 404}})
        with fake.lock:
            epoch = fake.epoch
            fake.in_flight += 1
            fake.peak_in_flight = max(fake.peak_in_flight, fake.in_flight)
        model = str(body.get("model", "")).removeprefix("openrouter/")
        reply = None
        try:
            if not fake.enter(model):  # over this model's own limit: 429 at once
                status, message = ERRORS["429"]
                return _response(status, {"error": {"message": message, "code": status}}, {"Retry-After": fake.limit_retry_after})
            reply = await self.chat(body, headers.get("authorization"))
            return reply
        finally:
            with fake.lock:
                if epoch == fake.epoch:  # an earlier test's request (before `restore`) is not counted
                    fake.in_flight -= 1
            fake.leave(model, answered=bool(reply) and bytes(reply[:12]) == b"HTTP/1.1 200", epoch=epoch)

    async def chat(self, body: dict, auth: str | None) -> bytes | None:
        fake = self.fake
        key, _, fault = fake.decide(body, auth)
        latency = fake.latency_of(key)
        if latency:
            await asyncio.sleep(latency)
        if fault == "drop":
            return None
        if fault == "slow":
            await asyncio.sleep(fake.slow_seconds)
        if fault in ERRORS:
            status, message = ERRORS[fault]
            extra = {"Retry-After": fake.retry_after} if fault == "429" and fake.retry_after else None
            return _response(status, {"error": {"message": message, "code": status}}, extra)
        reply = _response(200, fake.reply(body, key, fault))
        if fault == "drip":
            reply = Drip(reply)
            reply.interval = fake.drip_seconds
        with fake.lock:
            fake.answered_at[key] = time.time()
        return reply
