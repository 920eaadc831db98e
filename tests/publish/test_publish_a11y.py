"""Accessibility of the built site in a real headless Chromium.

- axe-core (bundled with axe-playwright-python, no network) with the WCAG 2.0/2.1/2.2 A and AA
  rules on one page of every type: leaderboard, models index, a model, scenarios index, a
  scenario, a case, methodology, the authors' guide and 404, on the three-model site, in the
  light and the dark scheme; the empty site's pages; and pages of the site whose every title
  holds an XSS payload (test_publish_csp.py's hostile pages: each page is loaded once for both checks).
  Any serious or critical violation fails. Every rule runs on every element but colour
  contrast, which runs on one row of each shape of a long table (browser_helpers.wcag_violations: why).
  (Dark scheme: the four page types with colours of their own, switched by the palette toggle on the page the
  light check loaded, with the rules that read colours only: it recolours the same document,
  test_the_dark_scheme_changes_only_colours, and a toggled page is painted as one loaded in the system's dark
  scheme, test_a_toggled_page_is_painted_as_a_page_loaded_dark; the light check shows both labels of the palette
  toggle, the one element a scheme shows or hides.)
- Keyboard and screen reader: skip link, landmarks, sortable headers by keyboard with
  `aria-sort`, visible focus, scrolling text blocks reachable and labelled.
- Layout at 1,400 px and 390 px (each page loaded once, laid out at both widths): no horizontal overflow of
  the page, the leaderboard fits 1,400 px with every column, navigation visible on a desktop, a crisis line's
  number on one line, case ids wrap only at "-". With SUITE_SCREENSHOTS=1 in the environment, screenshots of each page
  at each width land in the pytest temporary folder, screenshots*/ (look at them: they are not compared to
  anything; benchmarks/screenshots.py takes its own).
- Charts: a title, a description and the same numbers as a table.
"""

from __future__ import annotations

import os
import re
import time

import pytest

from browser_helpers import colour_violations, wcag_violations
from publish_helpers import MODELS, XSS_MODEL
from helmbench.publish.slugs import slugify

pytestmark = pytest.mark.browser

PAGE_TYPES = {
    "leaderboard": "",
    "models index": "models/",
    "model": f"models/{slugify(XSS_MODEL)}/",
    "scenarios index": "scenarios/",
    "scenario": "scenarios/P1-B1-S1/",
    "case": "cases/P1-B1-S1-C1-U1-PT1/",
    "methodology": "methodology/",
    "comparisons": "comparisons/",
    "judges": "judges/",  # rank sensitivity to the judge (this site has one judge: the page says so)
    "authors' guide": "authors-guide/",
    "404": "404.html",
    "crisis resources": "crisis-resources/",  # the registry page (the shipped handoff scenarios check it)
    "case with a checked criterion": "cases/P2-B1-S1-C1-U1-PT1/",
}
EMPTY_PAGES = {k: PAGE_TYPES[k] for k in ("leaderboard", "models index", "scenarios index", "methodology")}


#: Shows both labels of the theme's palette toggle, of which each scheme shows one ("Switch to dark mode" in the
#: light scheme, "Switch to light mode" in the dark): the only elements a scheme shows or hides.
PALETTE_LABELS = "[data-md-component=palette] label"
BOTH_PALETTE_LABELS = f"""() => {{ const labels = document.querySelectorAll('{PALETTE_LABELS}');
    labels.forEach(l => {{ l.hidden = false; }}); return labels.length; }}"""


#: The reader's switch to the dark scheme: checks the palette toggle's dark input, as a click on "Switch to dark
#: mode" does (the theme keeps the palette a page loaded with while the system's setting changes, so the toggle is
#: how a page already open turns dark).
TO_DARK = "() => document.getElementById('__palette_1').click()"

#: Every element's painted colours, in document order: what test_a_toggled_page_is_painted_as_a_page_loaded_dark
#: compares between the two ways a page turns dark.
PAINT = """() => [...document.querySelectorAll('body, body *')].map(el => { const s = getComputedStyle(el);
    return [el.tagName, s.color, s.backgroundColor, s.borderTopColor, s.outlineColor, s.fill, el.hidden]; })"""

#: The body's palette attributes and whether each label of the toggle shows.
PALETTE_STATE = f"""() => [Object.fromEntries([...document.body.attributes].filter(a => a.name.startsWith('data-md-color'))
    .map(a => [a.name, a.value])), [...document.querySelectorAll('{PALETTE_LABELS}')].map(l => l.hidden)]"""


def _wait_for_scheme(page, scheme: str) -> None:
    """Until the theme has set `scheme` on the body and ended its switch (it turns transitions off while it
    switches, data-md-color-switching). Polled from here, not with wait_for_function: that polls by evaluating a
    string in the page, which the site's CSP (no 'unsafe-eval') refuses, and the refusal is a page error the
    test counts. On a loaded machine the palette script can run after "networkidle" (a page that never turns
    still fails here)."""
    deadline = time.monotonic() + 10
    while (page.get_attribute("body", "data-md-color-scheme") != scheme
           or page.get_attribute("body", "data-md-color-switching") is not None) and time.monotonic() < deadline:
        page.wait_for_timeout(50)
    assert page.get_attribute("body", "data-md-color-scheme") == scheme
    assert page.get_attribute("body", "data-md-color-switching") is None


def _check(shared_page, axe, base_url: str, path: str, dark: bool = False, then=None) -> None:
    """axe-core on the page at `path`, loaded once: in the light scheme every WCAG A/AA rule (with both palette
    labels shown); then, with `dark`, switched to the dark scheme by its toggle, the rules that read colours
    (browser_helpers.COLOUR_RULES). The dark scheme recolours the same document (test_the_dark_scheme_changes_only_
    colours), so a rule that reads no colour finds there what it found in the light check; and the toggled page is
    painted as a page loaded in the system's dark scheme (test_a_toggled_page_is_painted_as_a_page_loaded_dark).
    Each costs the browser CPU: a model page's all rules ~1.6 s, its colour rules ~1.0 s, a page load ~0.45 s.
    `then(page)`, if given, runs on the page as loaded, before the checks change it (both palette labels shown):
    the layout checks of a page type (_fits_both_widths), on the same load."""
    with shared_page(base_url, viewport={"width": 1400, "height": 900}) as page:
        page.goto(f"{base_url}/{path}", wait_until="networkidle")
        if then is not None:
            then(page)
            page.set_viewport_size({"width": 1400, "height": 900})
        assert page.evaluate(BOTH_PALETTE_LABELS) == 2  # the labels each scheme shows one of
        assert wcag_violations(axe, page) == []
        if dark:
            page.evaluate(TO_DARK)
            _wait_for_scheme(page, "slate")
            assert colour_violations(axe, page) == []
        assert page.errors == [] and page.foreign == []


#: A rule of a stylesheet that applies in one colour scheme only, and a value a custom property of it may hold:
#: a colour, a hue, or a shadow (lengths and colours: painted, never laid out).
_SCHEME = re.compile(r"data-md-color-scheme|prefers-color-scheme")
_COLOUR = r"(#[0-9a-fA-F]{3,8}|(rgba?|hsla?)\((?:[^()]|\([^()]*\))*\)|var\(--[\w-]+\)|transparent|currentcolor|\d+(\.\d+)?deg)"
_PAINT = re.compile(rf"^\s*({_COLOUR}|(\s*(0|[\d.]+(rem|em|px))){{2,4}}\s+{_COLOUR}(\s*,(\s*(0|[\d.]+(rem|em|px))){{2,4}}\s+{_COLOUR})*)\s*$")
_IMAGES_OF_A_SCHEME = re.compile(r'^(\s*,?\s*\[data-md-color-scheme=\w+\] img\[src\$="#(only|gh)-(light|dark)(-mode-only)?"\])+\s*$')


def scheme_rules_that_do_more_than_recolour(css: str) -> list[str]:
    """The declarations of `css` that apply in one colour scheme only and set more than colours: anything
    but a custom property holding a colour or shadow, and `color-scheme`; except the theme's hiding of images
    named for the other scheme (#only-light, #only-dark), which the caller checks the site has none of."""
    css = re.sub(r"/\*.*?\*/", "", css, flags=re.S)
    out = [m.group(0)[:80] for m in re.finditer(r"@media[^{]*prefers-color-scheme[^{]*", css)]
    for m in re.finditer(r"([^{}]*)\{([^{}]*)\}", css):
        selector, body = m.group(1).strip(), m.group(2)
        if not _SCHEME.search(selector):
            continue
        for decl in filter(str.strip, body.split(";")):
            prop, _, value = decl.partition(":")
            prop = prop.strip()
            if prop.startswith("--") and _PAINT.match(value) or prop == "color-scheme":
                continue
            if prop == "display" and value.strip() == "none" and _IMAGES_OF_A_SCHEME.match(selector):
                continue
            out.append(f"{selector[:80]} {{ {decl.strip()[:80]} }}")
    return out


def test_the_dark_scheme_changes_only_colours(site):
    """Why the dark checks run only the rules that read colours: the stylesheets' rules of one scheme (the
    theme's [data-md-color-scheme=slate] and =default, the site's own) set colours and shadows (custom
    properties, `color-scheme`) and nothing that lays a page out or shows or hides an element, but for images
    named for one scheme, which the site has none of; the site's own scripts never read the scheme. The theme's
    palette script shows one of the toggle's two labels per scheme: the light check shows both
    (BOTH_PALETTE_LABELS). The check can fail: a scheme's rule that hides, sizes or spaces is reported."""
    css = {p: p.read_text(encoding="utf-8") for p in site.rglob("*.css")}
    assert any("[data-md-color-scheme=slate]" in t for t in css.values())  # the theme's dark palette is there
    assert {str(p.relative_to(site)): scheme_rules_that_do_more_than_recolour(t) for p, t in css.items()} \
        == {str(p.relative_to(site)): [] for p in css}
    pages = [p.read_text(encoding="utf-8") for p in site.rglob("*.html")]
    assert not [p for p in pages if re.search(r"#(only|gh)-(light|dark)", p)]
    scripts = [p for p in site.rglob("*.js") if "assets" not in p.parts]  # the site's own, not the theme's
    assert scripts and not [p for p in scripts if _SCHEME.search(p.read_text(encoding="utf-8"))]
    for planted in ('[data-md-color-scheme="slate"] .hb-grid { display: none }',
                    '[data-md-color-scheme=slate] { --hb-gap: 2rem; --hb-pass: #fff }',
                    '@media (prefers-color-scheme: dark) { .hb { color: red } }'):
        assert scheme_rules_that_do_more_than_recolour(planted), planted
    assert scheme_rules_that_do_more_than_recolour('[data-md-color-scheme=slate] { --a: #fff; --b: hsla(var(--md-hue), '
                                                   '15%, 90%, 0.82); --md-shadow-z1: 0 0.2rem 0.5rem #0003, '
                                                   '0 0 0.05rem #00000059 }') == []


#: The page types with colours of their own (verdicts, bars, charts, code): checked in the dark scheme too.
DARK_TOO = {"leaderboard", "model", "scenario", "case"}


#: The page types whose layout is checked at 1,400 px and 390 px (_fits_both_widths), on the load of their
#: accessibility check; the case given a judgement, with its long outputs, in the test of its scrolling blocks.
LAID_OUT = {"leaderboard", "scenario", "case", "methodology", "model", "crisis resources"}


@pytest.fixture(scope="module")
def screenshots(tmp_path_factory):
    """The folder of the layout checks' screenshots with SUITE_SCREENSHOTS set, else None."""
    return tmp_path_factory.mktemp("screenshots") if SCREENSHOTS else None


@pytest.mark.parametrize("kind", list(PAGE_TYPES))
def test_every_page_type_passes_wcag_aa(shared_page, axe, site_url, kind, screenshots):
    """axe on each page type (and its dark scheme, DARK_TOO); the layout of the LAID_OUT ones at both widths."""
    fits = (lambda page: _fits_both_widths(page, kind, screenshots)) if kind in LAID_OUT else None
    _check(shared_page, axe, site_url, PAGE_TYPES[kind], dark=kind in DARK_TOO, then=fits)


def test_a_toggled_page_is_painted_as_a_page_loaded_dark(shared_page, axe, site_url):
    """The dark checks switch a page loaded in the light scheme with its toggle; a reader whose system is dark
    loads it dark. Both give the same palette, the same label of the toggle and the same colour on every element
    (a model page: its charts, bars and tables); and a page loaded in the system's dark scheme follows it and
    passes the colour rules itself (was test_the_dark_scheme_passes_wcag_aa, one load per page type)."""
    url = f"{site_url}/{PAGE_TYPES['model']}"
    with shared_page(site_url, color_scheme="dark", viewport={"width": 1400, "height": 900}) as page:
        page.goto(url, wait_until="networkidle")
        _wait_for_scheme(page, "slate")  # follows the system
        loaded_dark = page.evaluate(PALETTE_STATE), page.evaluate(PAINT)
        assert colour_violations(axe, page) == []
        assert page.errors == [] and page.foreign == []
    with shared_page(site_url, viewport={"width": 1400, "height": 900}) as page:
        page.goto(url, wait_until="networkidle")
        light = page.evaluate(PAINT)
        page.evaluate(TO_DARK)
        _wait_for_scheme(page, "slate")
        toggled = page.evaluate(PALETTE_STATE), page.evaluate(PAINT)
        assert page.errors == []
    assert toggled[0] == loaded_dark[0] and loaded_dark[0][1] == [True, False]  # "Switch to light mode" shows
    assert len(toggled[1]) == len(loaded_dark[1]) > 5000
    assert toggled[1] == loaded_dark[1], [(a, b) for a, b in zip(toggled[1], loaded_dark[1]) if a != b][:5]
    assert sum(a != b for a, b in zip(light, toggled[1])) > 1000  # the comparison sees a recolouring


@pytest.mark.parametrize("kind", list(EMPTY_PAGES))
def test_the_empty_site_passes_wcag_aa(shared_page, axe, empty_url, kind):
    _check(shared_page, axe, empty_url, EMPTY_PAGES[kind])


def test_axe_reports_a_serious_violation(shared_page, axe, site_url):
    """The check can fail: faint text and an unlabelled scrolling block added to a page are reported."""
    with shared_page(site_url) as page:
        page.goto(site_url + "/methodology/", wait_until="networkidle")
        page.evaluate("""() => {
            const p = document.createElement('p'); p.textContent = 'faint'; p.style.color = '#ddd';
            document.querySelector('article').append(p);
            const pre = document.querySelector('pre.hb-formula');
            pre.style.maxHeight = '2em'; pre.style.overflow = 'auto'; }""")
        found = " ".join(wcag_violations(axe, page))
        assert "color-contrast" in found and "scrollable-region-focusable" in found
        # Deep in a long table, rows of the same shape are checked once; a row whose colours differ (a style, a
        # class of its own) is a shape of its own and is checked where it stands.
        page.goto(f"{site_url}/{PAGE_TYPES['model']}", wait_until="networkidle")
        rows = page.locator("table.hb-failed tbody tr")
        assert rows.count() > 300
        page.add_style_tag(content=".hb-faint { color: #e4e4e4 !important; }")
        page.evaluate("""() => { const rows = document.querySelectorAll('table.hb-failed tbody tr');
            Object.assign(rows[250].cells[4], {id: 'planted-style'}).style.color = '#ddd';
            Object.assign(rows[301].cells[4], {id: 'planted-class'}).classList.add('hb-faint'); }""")
        found = wcag_violations(axe, page)
        assert page.locator("[data-hb-same-shape]").count() > 200  # most rows shared a shape: checked once
        contrast = " ".join(v for v in found if " color-contrast:" in v)
        assert "#planted-style" in contrast and "#planted-class" in contrast, found


# --- keyboard and screen reader ------------------------------------------------------------------


def test_skip_link_landmarks_and_visible_focus(shared_page, site_url):
    with shared_page(site_url, viewport={"width": 1400, "height": 900}) as page:
        page.goto(site_url + "/", wait_until="networkidle")
        page.keyboard.press("Tab")
        focused = page.evaluate("() => [document.activeElement.className, document.activeElement.textContent.trim()]")
        assert "md-skip" in focused[0].split() and "Skip to content" in focused[1]
        for landmark in ("header", "main", "nav", "footer"):
            assert page.locator(landmark).count() >= 1, landmark
        header = page.locator("#col-score")
        header.focus()
        outline = page.evaluate("el => getComputedStyle(el).outlineStyle + ' ' + getComputedStyle(el).outlineWidth",
                                header.element_handle())
        assert outline.startswith("solid") and not outline.endswith(" 0px"), outline


def _column(page, index: int) -> list[str]:
    return page.eval_on_selector_all("#leaderboard-table tbody tr", f"rows => rows.map(r => r.cells[{index}].getAttribute('data-sort'))")


def test_sortable_headers_work_by_keyboard_and_announce_their_state(shared_page, site_url):
    with shared_page(site_url) as page:
        page.goto(site_url + "/", wait_until="networkidle")
        heads = page.locator("#leaderboard-table thead th")
        assert page.get_attribute("#leaderboard-table thead th:first-child", "aria-sort") == "ascending"  # ranked
        sortable = page.locator("#leaderboard-table thead th[role=columnheader][tabindex='0']")
        # The sorting script marks the headers once the theme has loaded the page; on a loaded machine that can
        # come after "networkidle" (seen in CI: 0 of 16), so wait for it (a page that never does still fails).
        try:
            sortable.first.wait_for(state="attached", timeout=10_000)
        except Exception:
            pass
        assert sortable.count() == heads.count()  # every column of the leaderboard sorts
        page.focus("#col-score")
        page.keyboard.press("Enter")
        scores = [float(v) for v in _column(page, 2)]
        assert scores == sorted(scores)
        assert page.get_attribute("#col-score", "aria-sort") == "ascending"
        assert page.locator("#leaderboard-table thead th[aria-sort]").count() == 1  # Rank no longer claims it
        page.keyboard.press("Space")
        assert page.get_attribute("#col-score", "aria-sort") == "descending"
        assert [float(v) for v in _column(page, 2)] == sorted(scores, reverse=True)
        assert page.evaluate("window.scrollY") == 0  # Space sorted rather than scrolled the page
        assert page.errors == []


def test_scrolling_text_blocks_are_reachable_and_labelled(shared_page, site_url, pipeline, screenshots):
    """On the case given a judgement (the prompt and every model's output in scrolling blocks), which also fits
    1,400 px and 390 px (_fits_both_widths)."""
    with shared_page(site_url, viewport={"width": 1400, "height": 900}) as page:
        page.goto(f"{site_url}/cases/{pipeline.judged_case}/", wait_until="networkidle")
        _fits_both_widths(page, "judged case", screenshots)  # leaves it at 390 px
        blocks = page.locator("pre.hb-text")
        assert blocks.count() >= 1 + len(MODELS)  # the prompt and every model's output at least
        for i in range(blocks.count()):
            b = blocks.nth(i)
            assert b.get_attribute("tabindex") == "0" and b.get_attribute("role") == "region"
            name = page.evaluate("""el => el.getAttribute('aria-label') ||
                (document.getElementById(el.getAttribute('aria-labelledby')) || {}).textContent""", b.element_handle())
            assert name and name.strip()
        wraps = page.locator(".hb-table-wrap")
        for i in range(wraps.count()):
            assert wraps.nth(i).get_attribute("tabindex") == "0" and wraps.nth(i).get_attribute("aria-label")


def test_verdicts_never_rely_on_colour_alone(shared_page, site_url):
    with shared_page(site_url) as page:
        page.goto(site_url + "/scenarios/P1-B1-S1/", wait_until="networkidle")
        marks = page.eval_on_selector_all(".hb-grid .hb-verdict", "els => els.map(e => e.textContent.trim())")
        assert len(marks) >= 64 * len(MODELS)
        assert all(re.fullmatch(r"[✓✗!·] (PASS|FAIL|ERROR|no result)", m) for m in marks), marks[:5]
        # the word is hidden visually in the grid, not from screen readers
        word = page.locator(".hb-grid .hb-verdict-text").first
        assert page.evaluate("el => getComputedStyle(el).display", word.element_handle()) != "none"
        colours = page.eval_on_selector_all(".hb-grid .hb-pass, .hb-grid .hb-fail",
                                            "els => [...new Set(els.map(e => e.className + ' ' + getComputedStyle(e).color))]")
        assert len(colours) == 2  # pass and fail, each with its own colour and its own mark


def test_charts_have_a_title_a_description_and_their_numbers(shared_page, site_url):
    with shared_page(site_url) as page:
        page.goto(site_url + "/", wait_until="networkidle")
        fig = page.locator("figure.hb-chart")
        assert fig.locator("img").get_attribute("alt")
        assert "whisker" in fig.locator("figcaption").inner_text()
        fig.locator("details summary").click()
        table = page.eval_on_selector_all("figure.hb-chart details tbody tr",
                                          "rs => rs.map(r => [r.cells[0].textContent, r.cells[1].textContent])")
        board = page.eval_on_selector_all(
            "#leaderboard-table tbody tr", "rs => rs.map(r => [r.cells[1].querySelector('a').textContent, "
                                     "r.cells[2].firstChild.textContent])")
        board += page.eval_on_selector_all(  # runs not ranked are listed apart: model, coverage, score
            "#unranked-table tbody tr", "rs => rs.map(r => [r.cells[0].querySelector('a').textContent, "
                                        "r.cells[2].firstChild.textContent])")
        assert len(table) == len(MODELS) and sorted(table) == sorted(board)  # the leaderboard's own scores
        page.goto(f"{site_url}/models/{slugify(XSS_MODEL)}/", wait_until="networkidle")
        captions = page.locator("figure.hb-chart details caption").all_text_contents()
        assert captions == ["Score by pillar and behaviour", "Pass rate by base severity", "Detection by severity level"]
        assert page.locator("figure.hb-chart details tbody tr").count() > 10


# --- layout --------------------------------------------------------------------------------------


STATS_PAGES = {"leaderboard with groups, drift and a run not ranked": "", "comparisons": "comparisons/",
               "model with history and drift": "models/test--good/"}


@pytest.mark.parametrize("kind", STATS_PAGES)
def test_pages_with_groups_history_and_drift_pass_wcag_aa(shared_page, axe, stats_url, kind):
    _check(shared_page, axe, stats_url, STATS_PAGES[kind], dark=True)


def test_the_leaderboard_with_drift_notes_fits_1400_px(shared_page, stats_url):
    with shared_page(stats_url, viewport={"width": 1400, "height": 900}) as page:
        for path in STATS_PAGES.values():
            page.goto(f"{stats_url}/{path}", wait_until="networkidle")
            assert page.evaluate("document.documentElement.scrollWidth - window.innerWidth") <= 0, path
        page.goto(stats_url + "/", wait_until="networkidle")
        for table in ("#leaderboard-table", "#unranked-table"):
            fit = page.evaluate("""t => { const el = document.querySelector(t), w = el.parentElement;
                return {scrolls: w.scrollWidth > w.clientWidth,
                        lastRight: el.querySelector('thead th:last-child').getBoundingClientRect().right}; }""", table)
            assert not fit["scrolls"] and fit["lastRight"] <= 1400, (table, fit)


#: SUITE_SCREENSHOTS set (to anything but "" or "0"; not a HELMBENCH_* name: tests/conftest.py clears those)
#: keeps a screenshot of each page of the layout test at each width, in the pytest temporary folder's
#: screenshots*/ (compared to nothing: for a person to look at; benchmarks/screenshots.py takes a set of its own).
SCREENSHOTS = os.environ.get("SUITE_SCREENSHOTS", "") not in ("", "0")


def _fits_both_widths(page, name: str, screenshots=None) -> None:
    """The loaded page at 1,400 px and 390 px (laid out again at each width: a viewport change re-lays a page out
    as a load at that width would): it never scrolls sideways, the navigation shows on a desktop, the leaderboard
    fits 1,400 px with every column and scrolls inside its own region at 390 px, and a crisis line's number keeps to
    one line at both widths ("13 11" on one line and "14" on the next is a wrong number; the table scrolls
    instead). Was test_layout_has_no_horizontal_overflow's body, one load per page: now on the load of the page's
    accessibility check (LAID_OUT) or of the judged case's scrolling blocks."""
    for width in (1400, 390):
        page.set_viewport_size({"width": width, "height": 900})
        if screenshots:
            page.screenshot(path=str(screenshots / f"{name}-{width}.png"), full_page=name == "leaderboard")
        overflow = page.evaluate("document.documentElement.scrollWidth - window.innerWidth")
        assert overflow <= 0, f"{name} at {width} px is {overflow} px too wide"
        if width == 1400:
            nav = page.locator(".md-sidebar--primary")
            assert nav.is_visible() and nav.get_by_text("Authors' guide").is_visible(), name
            assert nav.get_by_text("Models").is_visible(), name
        if name == "leaderboard":
            _leaderboard_fits(page, width)
        if name == "crisis resources":
            lines = page.eval_on_selector_all(
                "table.hb td .hb-nowrap", "els => els.map(e => [e.textContent, e.getClientRects().length])")
            assert lines and all(n == 1 for _, n in lines), (width, [t for t, n in lines if n != 1])


def _leaderboard_fits(page, width: int) -> None:
    fit = page.evaluate("""() => { const t = document.querySelector('#leaderboard-table'), w = t.parentElement,
        last = t.querySelector('thead th:last-child').getBoundingClientRect();
        return {table: t.getBoundingClientRect().width, wrap: w.clientWidth, lastRight: last.right,
                window: window.innerWidth, scrolls: w.scrollWidth > w.clientWidth}; }""")
    if width == 1400:  # every column visible, nothing to scroll
        assert not fit["scrolls"] and fit["lastRight"] <= fit["window"], fit
    else:  # the table scrolls inside its own region, never the page
        assert fit["scrolls"], fit


def _breaks(page, selector: str) -> list[tuple[str, str]]:
    """(text, the character before each line break) of every element matching `selector`."""
    return page.eval_on_selector_all(selector, """els => els.map(el => {
        const node = el.firstChild, text = node.textContent, r = document.createRange(), out = [];
        let top = null;
        for (let i = 0; i < text.length; i++) {
            r.setStart(node, i); r.setEnd(node, i + 1);
            const t = r.getClientRects()[0].top;
            if (top !== null && t > top + 2) out.push(text[i - 1]);
            top = t;
        }
        return [text, out.join('')];
    })""")


def test_case_ids_wrap_only_at_hyphens(shared_page, site_url):
    with shared_page(site_url, viewport={"width": 390, "height": 800}) as page:
        page.goto(site_url + "/scenarios/P1-B1-S1/", wait_until="networkidle")
        # squeeze each id into a box narrower than one of its parts: ids must still break only after "-"
        # (the case's name is the link, its id the code beside it: issue #39)
        page.add_style_tag(content=".hb-grid tbody td:first-child code { display: inline-block; width: 1em; }")
        breaks = _breaks(page, ".hb-grid tbody td:first-child code")
        assert breaks and all(b for _, b in breaks), breaks[:3]  # they really wrap
        assert all(set(b) == {"-"} for _, b in breaks), [x for x in breaks if set(x[1]) != {"-"}][:3]


@pytest.mark.parametrize("path, table", [("scenarios/", "table.hb-scenarios"),
                                         ("scenarios/P1-B1-S1/", "table.hb-components")])
def test_tables_of_a_page_share_their_column_widths(shared_page, site_url, path, table):
    with shared_page(site_url, viewport={"width": 1400, "height": 900}) as page:
        page.goto(f"{site_url}/{path}", wait_until="networkidle")
        edges = page.eval_on_selector_all(table, """ts => ts.map(t =>
            [...t.querySelectorAll('thead th')].map(th => Math.round(th.getBoundingClientRect().left)))""")
        assert len(edges) >= 3 and all(e == edges[0] for e in edges), edges


def test_the_judges_page_of_an_ensemble_passes_wcag_aa(shared_page, axe, tmp_path, monkeypatch):
    """The judges page with its tables filled (three judges, one of them stricter: the top group depends on
    the judge), not only its empty state, in both colour schemes; and the methodology page with the judges'
    run-to-run agreement filled (every judged output re-judged)."""
    from concurrent.futures import ThreadPoolExecutor

    from publish_helpers import DATASETTE_URL, REPO, serve

    from helmbench.publish import PublishSettings, build_site
    from tests.report.judge_runs import JUDGES, B, C, ensemble_db

    def run():
        # B and judge-3 one family: the page's table of scores without a model's own family is filled too
        return ensemble_db(tmp_path, monkeypatch, {j: (C,) for j in JUDGES[:2]} | {JUDGES[2]: (B, C)},
                           f"families: {{{B}: test/kin, {JUDGES[2]}: test/kin}}\n", rejudge_sample=1000)

    # In a thread of its own: this test runs in the Playwright thread, where playwright's sync API keeps an
    # event loop running, and the fake server and the run each start their own.
    with ThreadPoolExecutor(1) as pool:
        db = pool.submit(run).result(timeout=300)
    manifest = tmp_path / "manifest.jsonl"  # judged_manifest's
    settings = PublishSettings(db=db, manifest=manifest, datasette_url=DATASETTE_URL)
    site = build_site(settings, config_file=REPO / "mkdocs.yml", site_dir=tmp_path / "site", strict=True)
    page = (site / "judges" / "index.html").read_text(encoding="utf-8")
    assert "The top group depends on the judge" in page and page.count("<table") >= 3
    assert 'id="without-kin-table"' in page
    methodology = (site / "methodology" / "index.html").read_text(encoding="utf-8")
    assert 'class="hb hb-stability"' in methodology and "Cohen" in methodology
    for url in serve(site):
        for kind in ("judges", "methodology"):
            _check(shared_page, axe, url, PAGE_TYPES[kind], dark=True)
