"""Headless Chromium for the browser tests: Debian's chromium through playwright (no browser download).

Without the binary the tests are skipped locally, but fail under CI=true, where .ci/run installs it.

One Chromium per test process (xdist worker), owned by a thread of its own (`PlaywrightThread`; the `browser`
fixture of tests/conftest.py): Playwright's sync API keeps its event loop marked as running in the thread that
started it for as long as it is open, so in the main thread every later `asyncio.run` (a pipeline, a fake, a
review server) would be refused. Every call of a Playwright object is made in the owning thread: a browser
test's body runs there (tests/conftest.py's pytest_pyfunc_call), and a fixture that opens a page goes through
`PlaywrightThread.run`. A launch costs ~2 s of CPU, a fresh context with its first page ~1 s more than a page
load in one already open; so read-only checks of the static site share one page per colour scheme
(`PlaywrightThread.page`, the `shared_page` fixture), and what needs isolation (cookies, a reviewer's session)
still opens a context of its own (`recording_page`).
"""

from __future__ import annotations

import os
import queue
import shutil
import threading
from concurrent.futures import Future
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import urlsplit

import pytest

#: The WCAG 2.0/2.1/2.2 A and AA rules of axe-core; a serious or critical violation of one fails a page.
WCAG = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "wcag22aa"]
BLOCKING = ("serious", "critical")

#: Marks each table row whose shape (its elements, their classes, styles and other attributes, its parity for
#: striped rows) an earlier row of its table body already has; returns how many it marked. Links, ids, titles,
#: labels and sort keys differ from row to row and decide no colour, so they are left out of the shape (and the
#: mark itself: a page checked again, in another colour scheme, is marked the same).
SAME_SHAPE = """() => {
  const PER_ROW = new Set(['href', 'id', 'title', 'data-sort', 'data-model', 'aria-label', 'aria-labelledby',
                           'aria-describedby', 'for', 'headers', 'name', 'value', 'data-hb-same-shape']);
  const shape = el => el.tagName + [...el.attributes].filter(a => !PER_ROW.has(a.name))
      .map(a => ` ${a.name}=${a.value}`).sort().join('') + '(' + [...el.children].map(shape).join(',') + ')';
  let marked = 0;
  for (const body of document.querySelectorAll('tbody')) {
    const seen = new Set();
    [...body.rows].forEach((row, i) => {
      const key = (i % 2) + shape(row);
      if (seen.has(key)) { row.setAttribute('data-hb-same-shape', ''); marked++; } else seen.add(key);
    });
  }
  return marked;
}"""


def wcag_violations(axe, page) -> list[str]:
    """The serious and critical WCAG A/AA violations axe-core finds on `page` (`axe`: an
    axe_playwright_python Axe, for its bundled script), one line each: impact, rule, every element's selector.

    Every rule runs on every element, except colour contrast on table rows of a shape already checked on
    that page: contrast is the one rule whose cost grows with each text element (a model page's 428 failed
    cases took 20 s of the browser's CPU, four fifths of the check), and a row's colours follow from its
    shape (elements, classes, styles, striping parity), never from its text or its link. So contrast runs
    on the first row of each shape and parity of every table body, in place in the page as laid out, and
    on everything outside tables (test_axe_reports_a_serious_violation plants a faint row deep in a long
    table: a row of a shape of its own is checked). One run (CONTRAST_OF_NEW_SHAPES_ONLY: how)."""
    page.evaluate(axe.axe_script)
    page.evaluate(SAME_SHAPE)
    options = {"runOnly": {"type": "tag", "values": WCAG}, "resultTypes": ["violations"]}
    return _blocking(page.evaluate(CONTRAST_OF_NEW_SHAPES_ONLY, options)["violations"])


#: One axe run of every rule, colour contrast confined to what is not in a row of a shape already checked: the rule
#: selects every element (`*`), so its selector becomes every element outside such a row. The same elements as a
#: second run of contrast alone with those rows excluded (measured: 258, 250 and 151 nodes checked on a model page,
#: the leaderboard and a scenario page either way), without axe's set-up of the page (its flattened tree, its
#: caches) done twice: ~0.1 s of the browser's CPU on a short page, ~0.4 s on a model page.
CONTRAST_OF_NEW_SHAPES_ONLY = """o => {
  const rule = axe._audit.rules.find(r => r.id === 'color-contrast');
  if (rule.selector !== '*')
    throw new Error('axe-core color-contrast now selects ' + rule.selector + ': browser_helpers.wcag_violations assumes *');
  axe.configure({rules: [{id: 'color-contrast', selector: '*:not([data-hb-same-shape], [data-hb-same-shape] *)'}]});
  return axe.run(document, o);
}"""


#: The WCAG A/AA rules of axe-core 4.12 that read computed colours: contrast of text with what is behind it, and
#: a link in a block of text told apart from the text around it (by colour contrast, or by a style that does not
#: rely on colour). No other rule of those tags looks at a colour (each rule's checks: `axe._audit.rules`).
COLOUR_RULES = ["color-contrast", "link-in-text-block"]


def colour_violations(axe, page) -> list[str]:
    """The serious and critical violations of COLOUR_RULES on `page`, in wcag_violations' form: for a page
    whose every other rule was checked in another colour scheme of the same document (the dark scheme
    recolours the same page, test_publish_a11y.py's test_the_dark_scheme_changes_only_colours). One axe run;
    rows of a shape already checked are left out, as in wcag_violations: a link's colour and style, like a
    text's, follow from its row's shape."""
    page.evaluate(axe.axe_script)
    page.evaluate(SAME_SHAPE)
    return _blocking(_run_same_shape_excluded(page, COLOUR_RULES))


def _run_same_shape_excluded(page, rules: list[str]) -> list[dict]:
    return page.evaluate("o => axe.run({exclude: [['[data-hb-same-shape]']]}, o)",
                         {"runOnly": {"type": "rule", "values": rules}, "resultTypes": ["violations"]})["violations"]


def _blocking(violations: list[dict]) -> list[str]:
    return [f"{v['impact']} {v['id']}: {v['help']}; {len(v['nodes'])}×: " + " | ".join(str(n["target"]) for n in v["nodes"])
            for v in violations if v["impact"] in BLOCKING]


CHROMIUM = Path("/usr/bin/chromium")
#: --proxy-server: a proxy where nothing listens, so every request to another machine fails in the browser
#: (net::ERR_PROXY_CONNECTION_FAILED, no name looked up); the loopback, where the tests serve, bypasses proxies.
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync",
        "--proxy-server=127.0.0.1:9"]


def chromium() -> str:
    path = CHROMIUM if CHROMIUM.exists() else (Path(shutil.which("chromium")) if shutil.which("chromium") else None)
    if path is None:
        if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
            pytest.fail("chromium is missing under CI: .ci/run should have installed Debian's chromium")
        pytest.skip("chromium is not installed (apt-get install chromium); CI installs it")
    return str(path)


def _recording(context, base_url: str):
    """The context's new page, recording console errors (a refused script or style is one), page errors, and
    every request to another host than `page.local` (set to `base_url`'s).

    Requests are watched, not intercepted: a route that lets each request through costs a round trip to this
    process per request (and turns the browser's cache off): ~0.2 s of CPU per page of the site. The browser
    itself reaches no other machine (ARGS' proxy); a request to another local port is recorded all the same."""
    page = context.new_page()
    page.errors, page.foreign, page.local = [], [], urlsplit(base_url).netloc

    def request(r):
        if urlsplit(r.url).netloc != page.local and not r.url.startswith(("data:", "blob:", "about:")):
            page.foreign.append(r.url)

    def console(m):
        # The browser's own look for /favicon.ico on a page that names no icon (the review pages) is no request
        # of the page's (an intercepting route used to keep the browser from making it at all).
        if m.type == "error" and not urlsplit(m.location.get("url", "")).path == "/favicon.ico":
            page.errors.append(f"console.{m.type}: {m.text}")

    context.on("request", request)
    page.on("console", console)
    page.on("pageerror", lambda e: page.errors.append(f"pageerror: {e}"))
    return page


@contextmanager
def recording_page(browser, base_url: str, **context_options):
    """A page of a fresh context (its own cookies and storage) that records console errors (a refused script
    or style is one), page errors, and every request to another host than `base_url`'s (`_recording`)."""
    context = browser.new_context(**context_options)
    try:
        yield _recording(context, base_url)
    finally:
        context.close()


#: Run before any script of each document of a shared page (an init script: not the page's, so no CSP applies).
FRESH_STORAGE = "try { localStorage.clear(); sessionStorage.clear(); } catch (e) {}"

#: Playwright's viewport when a context sets none (the tests that ask for no size were written against it).
DEFAULT_VIEWPORT = {"width": 1280, "height": 720}


class PlaywrightThread:
    """A thread that owns this process's Playwright and its one Chromium, and runs what it is handed.

    `run(fn, ...)` calls fn in this thread and returns (or raises) what it did; called from this thread it just
    calls fn. `browser()` is the launched Chromium (launched again if it went away). `page(base_url, ...)` is the
    shared page of a colour scheme: one context per scheme, created once, with the recording of
    `recording_page`; each use gets it with its viewport set, its records emptied and `base_url`'s host the
    local one, and leaves it on about:blank (the next use starts from an empty document, never a page another
    test scripted). Each document it loads starts with empty storage (FRESH_STORAGE), as in a fresh context:
    the theme would otherwise keep the palette it chose, and a page would no longer show that it follows the
    system's colour scheme."""

    def __init__(self) -> None:
        self._calls: queue.SimpleQueue = queue.SimpleQueue()
        self._browser = None
        self._pages: dict[str, object] = {}
        started: Future = Future()
        self._thread = threading.Thread(target=self._main, args=(started,), name="playwright", daemon=True)
        self._thread.start()
        started.result()

    def _main(self, started: Future) -> None:
        from playwright.sync_api import sync_playwright

        try:
            manager = sync_playwright()
            self._playwright = manager.__enter__()
        except BaseException as exc:  # noqa: BLE001 - raised in the thread that started this one
            started.set_exception(exc)
            return
        started.set_result(None)
        try:
            while (call := self._calls.get()) is not None:
                fn, args, kwargs, future = call
                try:
                    future.set_result(fn(*args, **kwargs))
                except BaseException as exc:  # noqa: BLE001 - a test's failure or skip, raised in the caller
                    future.set_exception(exc)
        finally:
            manager.__exit__(None, None, None)

    def run(self, fn, *args, **kwargs):
        if threading.current_thread() is self._thread:
            return fn(*args, **kwargs)
        future: Future = Future()
        self._calls.put((fn, args, kwargs, future))
        return future.result()

    def browser(self):
        return self.run(self._launched)

    def _launched(self):
        if self._browser is None or not self._browser.is_connected():
            self._pages.clear()
            self._browser = self._playwright.chromium.launch(executable_path=chromium(), args=ARGS)
        return self._browser

    @contextmanager
    def page(self, base_url: str, color_scheme: str = "light", viewport: dict | None = None):
        page = self.run(self._acquire, base_url, color_scheme, viewport or DEFAULT_VIEWPORT)
        try:
            yield page
        finally:
            self.run(self._release, page)

    def _acquire(self, base_url: str, color_scheme: str, viewport: dict):
        page = self._pages.get(color_scheme)
        if page is None or page.is_closed() or page.crashed or not self._browser.is_connected():
            context = self._launched().new_context(color_scheme=color_scheme)
            # Every document starts with empty storage, as the first page of a fresh context does: the theme
            # keeps the palette it chose, and a page must pick its scheme from the system setting each time.
            context.add_init_script(FRESH_STORAGE)
            page = self._pages[color_scheme] = _recording(context, base_url)
            page.crashed = False
            page.on("crash", lambda p: setattr(p, "crashed", True))
        page.set_viewport_size(viewport)
        page.errors, page.foreign, page.local = [], [], urlsplit(base_url).netloc
        return page

    def _release(self, page) -> None:
        if not (page.is_closed() or page.crashed):
            page.goto("about:blank")

    def close(self) -> None:
        def close():
            if self._browser is not None and self._browser.is_connected():
                self._browser.close()

        try:
            self.run(close)
        finally:
            self._calls.put(None)
            self._thread.join(30)
