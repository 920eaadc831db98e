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
from helmbench.publish.review.app import FileVerdicts, ReviewApp, with_csrf
from helmbench.score.review_items import JudgedItem, judged_items
from helmbench.score.review_plan import Plan, stratified_sample
from helmbench.store.db import open_db


@dataclass
class Prepared:
    app: ReviewApp
    manifest_hash: str | None


def prepare(db_path: Path, manifest_hash: str | None = None, *, size: int | None = None, seed: int = 0,
            plan: Plan | None = None) -> Prepared:
    """Open (and migrate) the database, read the judged items and draw the sample.

    With a `plan` (of this manifest), the sample is the plan's and each reviewer in it gets the
    items planned for them; `size` and `seed` are then the plan's."""
    db = open_db(db_path)
    try:
        manifest_hash, items = judged_items(db, manifest_hash)
    finally:
        db.conn.close()
    if not items:
        raise HelmbenchError(f"{db_path} holds no judged items to review",
                             hint="run a benchmark with judged (sqe) scenarios first: `helmbench run`")
    if plan is not None and plan.manifest_hash != manifest_hash:
        plan = None  # a plan of another manifest: its items are not these (the caller says so)
    if plan is not None:
        plan = plan.migrated(items)
        sample = [h for h in stratified_sample(items, None, plan.seed) if h in plan.sample]
        seed = plan.seed
    else:
        sample = stratified_sample(items, size, seed)
    return Prepared(ReviewApp(db_path, items, sample, seed=seed, plan=plan), manifest_hash)


def verdicts_path(packet: Path) -> Path:
    """Where a packet's verdicts go by default: beside it, `ana.review.json` → `ana.review-verdicts.jsonl`."""
    stem = packet.name[:-5] if packet.name.endswith(".json") else packet.name
    return packet.with_name(f"{stem}-verdicts.jsonl")


def prepare_packet(packet_path: Path, verdicts: Path | None = None) -> Prepared:
    """The review page for a packet: its items, its reviewer, verdicts to a JSONL file; no database.

    Verdicts already in the file (a review stopped half-way and started again) are read back,
    checked as an import would check them, and not asked again."""
    from helmbench.store.review_files import read
    from helmbench.store.review_packets import read_packet

    packet = read_packet(packet_path)
    items = {i["item_hash"]: JudgedItem(i["item_hash"], i["case_id"], i["scenario"], i["messages"], i["output"],
                                        i["criterion"], transcript=i["transcript"]) for i in packet["items"]}
    verdicts = verdicts or verdicts_path(packet_path)
    if verdicts.is_symlink():  # planted beside the packet (an archive can hold links): never read or written through
        from helmbench.safewrite import UnsafeWrite

        raise UnsafeWrite(f"refusing to use {verdicts} for the verdicts: it is a symbolic link; nothing was read or written",
                          hint="remove the link, or pass another file with --verdicts")
    rows = read(verdicts, {h: it.options for h, it in items.items()}) if verdicts.exists() else []
    others = sorted({r["reviewer"] for r in rows} - {packet["reviewer"]})
    if others:
        raise HelmbenchError(f"{verdicts} holds verdicts by {others[0]!r}, not by {packet['reviewer']!r}",
                             hint="pass another --verdicts file for this packet")
    app = ReviewApp(FileVerdicts(verdicts, rows), items, [i["item_hash"] for i in packet["items"]],
                    reviewer=packet["reviewer"])
    return Prepared(app, packet["manifest_hash"])


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
