"""The Content Security Policy in a real Chromium: every page carries it, the theme and the
site's own scripts still run under it, and a script that a missed escape let into a page does not.
The hostile site's pages of the types test_publish_a11y.py checks are checked with axe-core here too, on the
same page load (the hostile titles must leave the pages accessible as well as inert)."""

from __future__ import annotations

import re
import shutil

import pytest

from browser_helpers import wcag_violations
from publish_helpers import RAW_PAYLOADS, XSS, XSS_MODEL, serve
from helmbench.publish import csp
from helmbench.publish.slugs import slugify

pytestmark = pytest.mark.browser

#: One page of each type of the hostile site (every title and name holds the payload).
HOSTILE_PAGES = ["", "models/", f"models/{slugify(XSS_MODEL)}/", "scenarios/", "scenarios/P1-B1-S1/",
                 "cases/P1-B1-S1-C1-U1-PT1/", "methodology/", "authors-guide/", "404.html"]
#: Those whose authored titles land in headings, tables, links and charts' text alternatives: checked with axe
#: too (leaderboard, model, scenarios index, scenario, case). The others show no more hostile text than these.
AXE_CHECKED = {"", f"models/{slugify(XSS_MODEL)}/", "scenarios/", "scenarios/P1-B1-S1/", "cases/P1-B1-S1-C1-U1-PT1/"}


def _policy(html: str) -> str:
    m = re.search(r'<meta http-equiv="Content-Security-Policy" content="([^"]*)">', html)
    assert m, "no Content-Security-Policy meta"
    return m.group(1).replace("&#39;", "'")


def test_every_page_carries_the_policy_before_any_authored_text(hostile_site):
    pages = [p for p in hostile_site.rglob("*.html")]
    assert len(pages) > 50
    for path in pages:
        html = path.read_text(encoding="utf-8")
        policy = _policy(html)
        assert "script-src 'self' 'sha256-" in policy and "'unsafe-inline'" not in policy.split(";")[1]
        assert "object-src 'none'" in policy
        assert html.index(csp.MARKER) < html.index("<title>"), path


@pytest.mark.parametrize("url", HOSTILE_PAGES)
def test_hostile_pages_run_no_script_and_the_theme_still_works(shared_page, axe, hostile_url, url):
    with shared_page(hostile_url, viewport={"width": 1400, "height": 900}) as page:
        page.goto(f"{hostile_url}/{url}", wait_until="networkidle")
        page.wait_for_timeout(100)  # time for an onerror handler to fire, if one existed
        assert page.evaluate("typeof window.__xss") == "undefined", url
        assert page.evaluate("typeof __md_get") == "function", url  # the theme's inline script ran
        assert page.locator("script:not([src]):not([type])").count() >= 1
        if url in AXE_CHECKED:  # was test_publish_a11y.py's test_pages_with_xss_titles_pass_wcag_aa
            assert wcag_violations(axe, page) == [], url
        assert page.errors == [] and page.foreign == [], (url, page.errors, page.foreign)


def test_a_missed_escape_cannot_run(shared_page, hostile_site, tmp_path):
    """A page into which the raw payload was written (as a missed escape would) runs none of it,
    while the theme's scripts and the sortable tables still do."""
    site = tmp_path / "site"
    shutil.copytree(hostile_site, site)
    index = site / "index.html"
    html = index.read_text(encoding="utf-8")
    injected = html.replace('<article class="md-content__inner md-typeset">',
                            '<article class="md-content__inner md-typeset">' + XSS
                            + '<a id="hb-js" href="javascript:window.__xss=4">x</a>', 1)
    assert injected != html and all(p in injected for p in RAW_PAYLOADS)
    index.write_text(injected, encoding="utf-8")
    server = serve(site)
    url = next(server)
    try:
        with shared_page(url) as page:
            page.goto(url + "/", wait_until="networkidle")
            page.click("#hb-js")
            page.wait_for_timeout(200)
            assert page.evaluate("typeof window.__xss") == "undefined"
            refused = [e for e in page.errors if "Content Security Policy" in e]
            assert refused, page.errors  # the browser refused the injected script and handlers
            page.click("#col-score")
            assert page.get_attribute("#col-score", "aria-sort") == "ascending"  # vendored JS runs
    finally:
        server.close()


def test_the_policy_allows_the_theme_scripts_of_every_depth(hostile_site):
    """The hashes come from the theme's templates: the scope script of a page at any depth is allowed,
    whichever page is loaded first (instant navigation keeps the first page's policy)."""
    root = _policy((hostile_site / "index.html").read_text(encoding="utf-8"))
    deep = _policy((hostile_site / "cases" / "P1-B1-S1-C1-U1-PT1" / "index.html").read_text(encoding="utf-8"))
    assert root == deep
    body = re.search(r"<script>(__md_scope=.*?)</script>",
                     (hostile_site / "cases" / "P1-B1-S1-C1-U1-PT1" / "index.html").read_text(encoding="utf-8")).group(1)
    assert csp._sha256(body) in root
    assert csp._sha256(body + ";window.__xss=1") not in root


def test_search_works_under_the_policy_and_shows_titles_as_text(shared_page, hostile_url):
    """The search worker (a site file) runs under the policy; results with an authored title show it as text."""
    with shared_page(hostile_url) as page:
        page.goto(hostile_url + "/scenarios/", wait_until="networkidle")
        page.keyboard.press("/")  # the theme's shortcut: focus the search box
        page.keyboard.type("arrangements")
        page.wait_for_selector(".md-search-result__item", timeout=10_000)
        page.wait_for_timeout(100)
        assert page.evaluate("typeof window.__xss") == "undefined"
        assert page.locator(".md-search-result img, .md-search-result script").count() == 0
        assert page.errors == [] and page.foreign == [], page.errors
