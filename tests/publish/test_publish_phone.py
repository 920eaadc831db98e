"""The site at 1,400 px (a laptop) and 390 px (a phone), in headless Chromium (issue #39).

Fails when the leaderboard's key columns (rank, model, score with its interval, pass rate) do not fit the
screen without scrolling, when any text of the leaderboard (its table and its chart, as drawn) is under 12 px,
when a page scrolls sideways, when a case's message from the person hides inside a scrolling box, or when a
crisis-service table's values lose their column labels on a phone. One browser, the suite's shared site; each
page is loaded once and laid out at both widths in turn (`_widths`).
"""

from __future__ import annotations

import re
from urllib.request import urlopen

import pytest


pytestmark = pytest.mark.browser

WIDTHS = (1400, 390)
MIN_PX = 11.95  # 12 px, with room for the browser's rounding

#: Cells of the leaderboard's key columns that reach past the table's visible region (its own scroll box).
KEY_OVERFLOW = """() => {
  const table = document.querySelector('#leaderboard-table');
  const box = table.closest('.hb-table-wrap').getBoundingClientRect();
  const right = Math.min(box.right, document.documentElement.clientWidth);
  const out = [];
  for (const row of table.rows) {
    for (const i of [0, 1, 2, 3]) {
      const r = row.cells[i].getBoundingClientRect();
      if (r.right > right + 0.5 || r.left < box.left - 0.5) out.push(`row ${row.rowIndex} col ${i}: ${r.left}–${r.right} > ${right}`);
    }
  }
  return out;
}"""

#: Visible text under MIN_PX px inside `selector`: [font size, the text] of each element holding text itself.
SMALL_TEXT = """([selector, min]) => {
  const out = [];
  for (const root of document.querySelectorAll(selector)) {
    for (const el of root.querySelectorAll('*')) {
      const own = [...el.childNodes].some(n => n.nodeType === 3 && n.textContent.trim());
      if (!own || !el.getClientRects().length) continue;
      const style = getComputedStyle(el);
      if (style.visibility === 'hidden' || el.closest('.hb-sr-only, .hb-verdict-text')) continue;
      const size = parseFloat(style.fontSize);
      if (size < min) out.push([size, el.textContent.trim().slice(0, 40)]);
    }
  }
  return out;
}"""

#: Each chart image's drawn width and its SVG's own width (the viewBox: the unit its font sizes are in).
CHARTS = """async () => {
  const out = [];
  for (const img of document.querySelectorAll('figure.hb-chart img')) {
    img.loading = 'eager';
    img.scrollIntoView();
    if (!img.complete || !img.naturalWidth) await new Promise(r => { img.addEventListener('load', r, {once: true}); setTimeout(r, 5000); });
    out.push([img.src, img.getBoundingClientRect().width]);
  }
  return out;
}"""


def _chart_min_font(url: str, drawn_width: float) -> float:
    """The smallest text of the SVG at `url` in CSS px, as drawn `drawn_width` px wide."""
    svg = urlopen(url, timeout=10).read().decode("utf-8")
    view_width = float(re.search(r'viewBox="0 0 ([\d.]+) ', svg).group(1))
    sizes = [float(s) for s in re.findall(r"font(?:-size)?: ([\d.]+)px", svg)]
    assert sizes, url
    return min(sizes) * drawn_width / view_width


def _widths(page):
    """Each of WIDTHS in turn on the page as loaded (a viewport change lays the page out again, as a load at that
    width would: one load serves both widths), ending at the first."""
    for width in WIDTHS:
        page.set_viewport_size({"width": width, "height": 900})
        yield width
    page.set_viewport_size({"width": WIDTHS[0], "height": 900})


def test_leaderboard_key_columns_fit_and_no_text_is_under_12_px(shared_page, site_url):
    with shared_page(site_url, viewport={"width": WIDTHS[0], "height": 900}) as page:
        page.goto(site_url + "/")
        page.wait_for_selector("#leaderboard-table th[role=columnheader]")
        for width in _widths(page):
            # the page never scrolls sideways
            assert page.evaluate("document.documentElement.scrollWidth") <= width, width
            assert page.evaluate(KEY_OVERFLOW) == [], width
            if width >= 1400:  # on a laptop the whole table fits, every column
                assert page.evaluate("(w => w.scrollWidth <= w.clientWidth)(document.querySelector("
                                     "'#leaderboard-table').closest('.hb-table-wrap'))")
            assert page.evaluate(SMALL_TEXT, ["#leaderboard-table, .hb-validation, .hb-crisis-line", MIN_PX]) == [], width
            charts = page.evaluate(CHARTS)
            assert charts, width
            for src, drawn in charts:
                assert _chart_min_font(src, drawn) >= MIN_PX, (width, src, drawn)


def test_model_page_charts_and_tables_are_readable(shared_page, site_url):
    with shared_page(site_url, viewport={"width": WIDTHS[0], "height": 900}) as page:
        page.goto(site_url + "/models/")
        page.click("table a[href*='models/'], table a[href*='../models/'], .md-typeset table a")
        page.wait_for_load_state("load")
        for width in _widths(page):
            assert page.evaluate("document.documentElement.scrollWidth") <= width, width
            for src, drawn in page.evaluate(CHARTS):
                assert _chart_min_font(src, drawn) >= MIN_PX, (width, src, drawn)


def test_a_case_shows_the_persons_message_whole_and_a_conversation_its_first_message(shared_page, site_url, site):
    conversation = next(p.parent.name for p in sorted((site / "cases").glob("*/index.html"))
                        if "hb-transcript" in p.read_text(encoding="utf-8"))
    with shared_page(site_url, viewport={"width": WIDTHS[0], "height": 900}) as page:
        page.goto(site_url + "/cases/P1-B1-S1-C1-U1-PT1/")
        for width in _widths(page):
            box = page.locator("#person-message")
            assert box.is_visible(), width
            assert page.evaluate("el => el.scrollHeight <= el.clientHeight + 1", box.element_handle()), width
            assert "<your_job>" not in box.inner_text() and "<users_input>" not in box.inner_text()
            assert page.evaluate("document.documentElement.scrollWidth") <= width, width
        page.goto(site_url + f"/cases/{conversation}/")
        for width in _widths(page):
            first = page.locator(".hb-transcript .hb-turn-user pre.hb-turn-text").first
            assert first.is_visible() and "<your_job>" not in first.inner_text(), width
            # the whole prompt, one click away
            assert page.locator(".hb-transcript details.hb-full-prompt").first.count() == 1, width
            assert page.evaluate("document.documentElement.scrollWidth") <= width, width


def test_crisis_tables_fit_a_phone_with_every_value_labelled(shared_page, site_url):
    with shared_page(site_url, viewport={"width": 390, "height": 900}) as page:
        page.goto(site_url + "/crisis-resources/")
        assert page.evaluate("document.documentElement.scrollWidth") <= 390
        cells = page.evaluate("""() => [...document.querySelectorAll('table.hb-stack td')].map(td =>
            [td.dataset.label, td.getBoundingClientRect().right, getComputedStyle(td, '::before').content])""")
        assert cells
        for label, right, before in cells:
            assert label and right <= 390 and label in before, (label, right, before)
        text = page.inner_text("article")
        assert "Source" in text and "Verified" in text
