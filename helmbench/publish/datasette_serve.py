"""`python -m helmbench.publish.datasette_serve SNAPSHOT METADATA HOST PORT [ALLOWED_HOST ...]`:
Datasette on a snapshot, behind HELMBench's local guard.

Why not `datasette serve`: Datasette answers any Host header, so a page on another name that
resolves to 127.0.0.1 (DNS rebinding) could read every table. Here Datasette's own ASGI app is
served by uvicorn behind `local_guard.guard`, which answers only requests addressed to this
server (loopback names or the bound address with its port, and names allowed with
`helmbench serve --allow-host`) and refuses writes from another origin. Every connection Datasette
opens allows only plain SQL (`plain_sql.py`: no FTS3 tokenizer, no extension loading).
"""

from __future__ import annotations

import asyncio
import json
import socket
import sys
from pathlib import Path


def app_for(snapshot: str, metadata: str, hosts: frozenset[str]):
    """Datasette serving `snapshot` immutable with `metadata`, behind the guard."""
    from datasette.app import Datasette
    from datasette.plugins import pm

    from helmbench.publish import plain_sql
    from helmbench.publish.local_guard import guard

    if not pm.is_registered(plain_sql):
        pm.register(plain_sql, name="helmbench-plain-sql")

    ds = Datasette([], immutables=[snapshot], metadata=json.loads(Path(metadata).read_text(encoding="utf-8")))
    asyncio.run(ds.invoke_startup())
    return guard(ds.app(), hosts)


def main(argv: list[str]) -> int:
    import uvicorn

    from helmbench.publish.local_guard import allowed_hosts

    snapshot, metadata, host, port, *extra = argv
    sock = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, int(port)))
    except OSError as exc:
        print(f"error: cannot listen on {host}:{port} ({exc.strerror})", file=sys.stderr)
        return 2
    bound, real_port = sock.getsockname()[:2]
    app = app_for(snapshot, metadata, allowed_hosts(bound, real_port, extra))
    config = uvicorn.Config(app, lifespan="on", log_level="warning", server_header=False)
    uvicorn.Server(config).run(sockets=[sock])
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
