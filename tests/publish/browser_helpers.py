"""Headless Chromium for the browser tests: Debian's chromium through playwright (no browser download).

Without the binary the tests are skipped locally, but fail under CI=true, where .ci/run installs it.
"""

from __future__ import annotations

import os
import shutil
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import urlsplit

import pytest

CHROMIUM = Path("/usr/bin/chromium")
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync"]


def chromium() -> str:
    path = CHROMIUM if CHROMIUM.exists() else (Path(shutil.which("chromium")) if shutil.which("chromium") else None)
    if path is None:
        if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
            pytest.fail("chromium is missing under CI: .ci/run should have installed Debian's chromium")
        pytest.skip("chromium is not installed (apt-get install chromium); CI installs it")
    return str(path)


@contextmanager
def launched():
    """A launched headless Chromium (a module fixture yields from it), closed after."""
    executable = chromium()
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=executable, args=ARGS)
        yield b
        b.close()


@contextmanager
def recording_page(browser, base_url: str, **context_options):
    """A page that records console errors (a refused script or style is one), page errors, and
    every request to another host than `base_url`'s (blocked)."""
    context = browser.new_context(**context_options)
    page = context.new_page()
    page.errors = []
    page.foreign = []
    local = urlsplit(base_url).netloc

    def route(r):
        if urlsplit(r.request.url).netloc == local or r.request.url.startswith(("data:", "blob:")):
            r.continue_()
        else:
            page.foreign.append(r.request.url)
            r.abort()

    context.route("**/*", route)
    page.on("console", lambda m: page.errors.append(f"console.{m.type}: {m.text}") if m.type == "error" else None)
    page.on("pageerror", lambda e: page.errors.append(f"pageerror: {e}"))
    try:
        yield page
    finally:
        context.close()
