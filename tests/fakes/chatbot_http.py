"""A fake deployed chatbot behind its own HTTP API, on 127.0.0.1: a JSON shape of its own, no OpenAI format.

Two services in one server, by path: `/stateless/chat` takes the whole conversation
(`{"chat": {"history": [{"role", "content"}]}, "client": ...}`) and `/stateful/chat` only the newest
message and a session id (`{"session": ..., "input": {"text": ...}}`), keeping each session's history
itself (so a session id it has never seen starts a new conversation, as a real service's would after a
restart). Both answer `{"data": {"reply": {"text": ...}}}`, and record every request with the
Authorization and X-Api-Key headers they saw, so a test can check which key each request carried.
"""

from __future__ import annotations

import hashlib
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class Chatbot:
    def __init__(self, expect: dict[str, str] | None = None, latency: float = 0.0):
        self.expect = expect or {}  # path prefix → the Authorization header it requires
        self.latency = latency
        self.lock = threading.Lock()
        self.requests: list[dict] = []  # {"path", "auth", "body"}
        self.sessions: dict[str, list[str]] = {}  # session id → the messages it has seen

    def start(self) -> "Chatbot":
        bot = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):  # quiet
                pass

            def do_POST(self):
                n = int(self.headers.get("content-length") or 0)
                body = json.loads(self.rfile.read(n) or b"{}")
                status, reply = bot.answer(self.path, self.headers.get("authorization"), body)
                data = json.dumps(reply).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.server.server_address[1]
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()
        return self

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()

    def url(self, path: str) -> str:
        return f"http://127.0.0.1:{self.port}{path}"

    def answer(self, path: str, auth: str | None, body: dict) -> tuple[int, dict]:
        import time

        with self.lock:
            self.requests.append({"path": path, "auth": auth, "body": body})
        for prefix, wanted in self.expect.items():
            if path.startswith(prefix) and auth != wanted:
                return 401, {"error": "bad token"}
        if self.latency:
            time.sleep(self.latency)
        if path.startswith("/stateless/"):
            seen = [t["content"] for t in body["chat"]["history"] if t["role"] == "user"]
        elif path.startswith("/stateful/"):
            with self.lock:
                seen = self.sessions.setdefault(body["session"], [])
                seen.append(body["input"]["text"])
                seen = list(seen)
        else:
            return 404, {"error": "no such service"}
        digest = hashlib.sha256(json.dumps(seen).encode()).hexdigest()[:12]
        text = (f"I'm here with you (turn {len(seen)}, {digest}). If you are thinking of ending your life, please "
                "call or text 988 now; I can stay with you while you do.")
        return 200, {"data": {"reply": {"text": text}}, "meta": {"turns": len(seen)}}

    def of(self, prefix: str) -> list[dict]:
        with self.lock:
            return [r for r in self.requests if r["path"].startswith(prefix)]
