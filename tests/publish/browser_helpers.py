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

#: The WCAG 2.0/2.1/2.2 A and AA rules of axe-core; a serious or critical violation of one fails a page.
WCAG = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "wcag22aa"]
BLOCKING = ("serious", "critical")

#: Marks each table row whose shape (its elements, their classes, styles and other attributes, its parity for
#: striped rows) an earlier row of its table body already has; returns how many it marked. Links, ids, titles,
#: labels and sort keys differ from row to row and decide no colour, so they are left out of the shape.
SAME_SHAPE = """() => {
  const PER_ROW = new Set(['href', 'id', 'title', 'data-sort', 'data-model', 'aria-label', 'aria-labelledby',
                           'aria-describedby', 'for', 'headers', 'name', 'value']);
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
    table: a row of a shape of its own is checked)."""
    page.evaluate(axe.axe_script)
    page.evaluate(SAME_SHAPE)
    options = {"runOnly": {"type": "tag", "values": WCAG}, "resultTypes": ["violations"]}
    found = page.evaluate("o => axe.run(document, o)", {**options, "rules": {"color-contrast": {"enabled": False}}})
    contrast = page.evaluate("o => axe.run({exclude: [['[data-hb-same-shape]']]}, o)",
                             {"runOnly": {"type": "rule", "values": ["color-contrast"]}, "resultTypes": ["violations"]})
    return [f"{v['impact']} {v['id']}: {v['help']}; {len(v['nodes'])}×: " + " | ".join(str(n["target"]) for n in v["nodes"])
            for v in found["violations"] + contrast["violations"] if v["impact"] in BLOCKING]


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
