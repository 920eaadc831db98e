"""Start the review page: load the judged items once, bind a socket, run uvicorn on it.

Binding the socket ourselves (rather than passing host/port to uvicorn) lets a caller ask for
port 0 and learn the port before the server starts, which the browser tests need, and lets
`helmbench review` report a port already in use as a clear error.
"""

from __future__ import annotations

import socket
import threading
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from helmbench.errors import HelmbenchError
from helmbench.publish.local_guard import allowed_hosts
from helmbench.publish.review.app import ReviewApp, with_csrf
from helmbench.publish.review.queue import stratified_sample
from helmbench.score.review_items import judged_items
from helmbench.store.db import open_db


@dataclass
class Prepared:
    app: ReviewApp
    manifest_hash: str | None


def prepare(db_path: Path, manifest_hash: str | None = None, *, size: int | None = None, seed: int = 0) -> Prepared:
    """Open (and migrate) the database, read the judged items and draw the sample."""
    db = open_db(db_path)
    try:
        manifest_hash, items = judged_items(db, manifest_hash)
    finally:
        db.conn.close()
    if not items:
        raise HelmbenchError(f"{db_path} holds no judged items to review",
                             hint="run a benchmark with judged (sqe) scenarios first: `helmbench run`")
    sample = stratified_sample(items, size, seed)
    return Prepared(ReviewApp(db_path, items, sample, seed=seed), manifest_hash)


def bind(host: str, port: int) -> socket.socket:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError as exc:
        sock.close()
        raise HelmbenchError(f"cannot listen on {host}:{port} ({exc.strerror})", exit_code=2,
                             hint="pass another --port (0 picks a free one)") from None
    sock.listen(64)
    sock.set_inheritable(True)
    return sock


def server(app, sock: socket.socket, allow_hosts: tuple[str, ...] = ()):
    """uvicorn serving `app` on `sock`, behind the CSRF check and the local guard (the Host names
    it answers: loopback and the bound address with this port, and `allow_hosts`)."""
    import uvicorn

    bound, port = sock.getsockname()[:2]
    config = uvicorn.Config(with_csrf(app, allowed_hosts(bound, port, allow_hosts)), lifespan="off", log_level="warning", access_log=False,
                            server_header=False, date_header=False)
    return uvicorn.Server(config)


def serve(app, sock: socket.socket, allow_hosts: tuple[str, ...] = ()) -> None:
    """Serve until Ctrl-C."""
    server(app, sock, allow_hosts).run(sockets=[sock])


@contextmanager
def running(app, host: str = "127.0.0.1", port: int = 0, allow_hosts: tuple[str, ...] = ()):
    """The server in a background thread (for tests and notebooks); yields its base URL."""
    sock = bind(host, port)
    srv = server(app, sock, allow_hosts)
    thread = threading.Thread(target=srv.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    try:
        while not srv.started:
            if not thread.is_alive():
                raise HelmbenchError("the review server stopped during start-up")
            threading.Event().wait(0.02)
        yield f"http://{host}:{sock.getsockname()[1]}"
    finally:
        srv.should_exit = True
        thread.join(10)
        sock.close()
