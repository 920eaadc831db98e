"""The built site in a real headless Chromium: sorting, charts, no console errors, no script
injection, and no request to any host but the local server.

Uses Debian's chromium through playwright (no browser download). Without the binary the test
is skipped locally, but fails under CI=true, where .ci/run installs it.
"""

from __future__ import annotations

import pytest

from publish_helpers import MODELS, XSS, XSS_MODEL
from helmbench.publish.slugs import slugify

pytestmark = pytest.mark.browser


@pytest.fixture
def page(shared_page, site_url):
    """The worker's shared page (tests/conftest.py), recording console errors, page errors and every request
    to another host (the browser reaches no other machine)."""
    with shared_page(site_url) as p:
        yield p


def _scores(page) -> list[float]:
    return [float(v) for v in page.eval_on_selector_all(
        "#leaderboard-table tbody tr", "rows => rows.map(r => r.cells[2].getAttribute('data-sort'))")]


def _models(page) -> list[str]:
    """Every model on the leaderboard page: ranked, then the runs listed apart (not ranked)."""
    return page.eval_on_selector_all("#leaderboard-table tbody tr, #unranked-table tbody tr",
                                     "rows => rows.map(r => r.dataset.model)")


def test_leaderboard_sorts_shows_a_chart_and_stays_local(page, site_url):
    page.goto(site_url + "/", wait_until="networkidle")
    assert sorted(_models(page)) == sorted(MODELS)
    before = _scores(page)
    assert before == sorted(before, reverse=True)  # ranked best first
    page.click("#col-score")
    after = _scores(page)
    assert after == sorted(before)  # first click: ascending
    assert len(set(before)) == 1 or after != before  # the rows really moved
    assert page.get_attribute("#col-score", "aria-sort") == "ascending"
    page.click("#col-score")
    assert _scores(page) == sorted(before, reverse=True)
    assert page.get_attribute("#col-score", "aria-sort") == "descending"
    chart = page.locator("figure.hb-chart img").first
    assert chart.is_visible()
    assert page.evaluate("img => img.complete && img.naturalWidth > 0", chart.element_handle())
    assert page.errors == []
    assert page.foreign == []


def test_model_page_charts_render(page, site_url):
    page.goto(f"{site_url}/models/{slugify(XSS_MODEL)}/", wait_until="networkidle")
    img = page.locator("figure.hb-chart img")
    assert img.count() == 1  # one figure: scores by pillar and behaviour, and pass rate by severity
    assert img.is_visible()
    assert page.evaluate("img => img.complete && img.naturalWidth > 0 && img.naturalHeight > 300",
                         img.element_handle())
    page.click("table.hb-failed th:nth-child(2)")  # sortable tables on other pages too
    assert page.errors == [] and page.foreign == []


def test_xss_payload_in_model_output_is_shown_as_text_and_never_runs(page, site_url, pipeline):
    page.goto(f"{site_url}/cases/{pipeline.judged_case}/", wait_until="networkidle")
    assert page.evaluate("typeof window.__xss") == "undefined"
    output = page.locator(f"#model-{slugify(XSS_MODEL)} pre.hb-model-output")
    assert XSS.replace('"', '\\"') in output.inner_text() or XSS in output.inner_text()
    assert page.locator(f"#model-{slugify(XSS_MODEL)} script").count() == 0
    assert page.locator(f"#model-{slugify(XSS_MODEL)} img").count() == 0
    assert XSS in page.locator(f"#model-{slugify(XSS_MODEL)} .hb-judgement pre").first.inner_text()
    page.wait_for_timeout(200)  # give an onerror handler the chance to fire if one existed
    assert page.evaluate("typeof window.__xss") == "undefined"
    assert page.errors == [] and page.foreign == []


def test_instant_navigation_reattaches_sorting(page, site_url):
    page.goto(f"{site_url}/methodology/", wait_until="networkidle")
    page.click("nav.md-nav--primary >> text=Leaderboard")
    page.wait_for_selector("#leaderboard-table th[role=columnheader]")
    before = _scores(page)
    page.click("#col-score")
    assert _scores(page) == sorted(before)
    assert page.errors == [] and page.foreign == []
