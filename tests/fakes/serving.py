"""Wait for a server started by a test (Datasette under `helmbench serve`) to answer on 127.0.0.1."""

from __future__ import annotations

import time
from pathlib import Path

import httpx


def wait_for_datasette(base: str, proc, log: Path, timeout: float = 60) -> None:
    """Return once `base`/-/versions.json answers 200; fail with the server's log if it exits or never does."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            if httpx.get(f"{base}/-/versions.json", timeout=2).status_code == 200:
                return
        except httpx.TransportError:
            pass
        assert proc.poll() is None, log.read_text()
        assert time.monotonic() < deadline, "datasette did not start"
        time.sleep(0.2)


def stop(proc, timeout: float = 30) -> int:
    """Ctrl-C a server started by a test; killed if it does not stop within `timeout` (then re-raised)."""
    import signal
    import subprocess

    proc.send_signal(signal.SIGINT)
    try:
        return proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        raise
