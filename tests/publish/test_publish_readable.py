"""Issue #39: a leaderboard its readers understand. Names before codes, PARTIAL never shown as FAIL, the raw rows
never behind a link to this machine, every generated page in the navigation, the crisis line on every page.

All read the suite's shared site (tests/publish/conftest.py `site`, built once with a public Datasette URL).
"""

from __future__ import annotations

import html
import json
import re
import sqlite3
from pathlib import Path

from publish_helpers import LOCAL_DATASETTE_URL

ARTICLE = re.compile(r'<article class="md-content__inner md-typeset">(.*?)</article>', re.S)
TAG = re.compile(r"<[^>]+>")
#: The generated pages a reader of results reads (the hand-written guides quote codes as examples of syntax).
GENERATED = ("index.html", "models", "scenarios", "cases", "judges", "comparisons", "crisis-resources")


def _text(path: Path) -> str:
    """A page's article as a reader sees it: tags out, entities decoded, whitespace collapsed."""
    m = ARTICLE.search(path.read_text(encoding="utf-8"))
    return " ".join(html.unescape(TAG.sub(" ", m.group(1) if m else "")).split())


def _pages(site: Path):
    for top in GENERATED:
        p = site / top
        yield from ([p] if p.is_file() else sorted(p.rglob("index.html")))


def _tree(manifest: Path) -> tuple[dict[str, str], dict[str, dict[str, str]]]:
    """(code → title of every pillar, behaviour, scenario and component; case id → {criterion code → title})."""
    with manifest.open(encoding="utf-8") as f:
        header = json.loads(f.readline())
        cases = [json.loads(line) for line in f if line.strip()]
    cat = header["catalog"]
    titles = {code: meta["title"] for kind in ("pillars", "behaviours", "scenarios", "components")
              for code, meta in cat.get(kind, {}).items() if meta.get("title")}
    criteria = {}
    for c in cases:
        ev = c.get("evaluation") or {}
        criteria[c["id"]] = {cr["code"]: cr["title"] for cr in (ev.get("criteria") or []) + (ev.get("checks") or [])
                             if cr.get("title")}
    return titles, criteria


def test_no_page_shows_a_bare_code_without_its_title(site, pipeline):
    """Every code of the tree that a generated page shows comes with its title on that page (the title first, the
    code small beside it): a pillar, behaviour, scenario, component (condition, user context, perturbation) or,
    on a case page, a criterion."""
    titles, criteria = _tree(pipeline.manifest)
    code_re = re.compile(r"(?<![\w-])(" + "|".join(map(re.escape, sorted(titles, key=len, reverse=True))) + r")(?![\w-])")
    bare, checked = [], 0
    for path in _pages(site):
        text = _text(path)
        for code in set(code_re.findall(text)):
            checked += 1
            if titles[code] not in text:
                bare.append(f"{path.relative_to(site)}: {code} without “{titles[code]}”")
        case = path.parent.name if path.parent.parent.name == "cases" else None
        for code in set(re.findall(r"(?<![\w-])(CR\d+)(?![\w-])", text)) if case else ():
            checked += 1
            title = criteria.get(case, {}).get(code)
            if title is None or title not in text:
                bare.append(f"{path.relative_to(site)}: criterion {code} without its title")
    assert checked > 1000  # the check saw the codes (it can fail)
    assert not bare, bare[:20]


def test_a_case_page_is_named_by_its_scenario_and_components(site, pipeline):
    titles, _ = _tree(pipeline.manifest)
    text = _text(site / "cases" / "P1-B1-S1-C1-U1-PT1" / "index.html")
    assert f"{titles['P1-B1-S1']}: {titles['P1-B1-S1-C1']}" in text  # the case's name, then its id small beside it


def test_partial_credit_is_shown_as_partial_never_as_fail(site, pipeline):
    """A FAIL with partial credit (0 < score < 1: a judge's PARTIAL) reads PARTIAL on case and scenario pages."""
    conn = sqlite3.connect(pipeline.db)
    partial = conn.execute("SELECT COUNT(*) FROM results WHERE verdict = 'FAIL' AND score > 0 AND score < 1").fetchone()[0]
    conn.close()
    assert partial > 0  # the fixture's judge gives partial credit: the test can fail
    fail_with_credit = re.compile(r'<span class="hb-verdict hb-fail"[^>]*>✗ <span class="hb-verdict-text">FAIL</span>'
                                  r"</span> score 0\.(?!0\b)\d")
    shown, wrong = 0, []
    for path in (site / "cases").rglob("index.html"):
        page = path.read_text(encoding="utf-8")
        shown += page.count('<span class="hb-verdict hb-partial"')
        if fail_with_credit.search(page):
            wrong.append(path.parent.name)
    assert not wrong, wrong[:10]
    assert shown >= partial  # every partial result (and judgement) carries the PARTIAL mark
    grid = (site / "scenarios" / "P1-B1-S2" / "index.html").read_text(encoding="utf-8")
    assert 'title="FAIL: judge: ' not in grid or "hb-partial" in grid


def test_reasons_and_evaluators_are_in_plain_words_with_the_machine_text_beside(site):
    text = _text(site / "cases" / "P1-B1-S1-C1-U1-PT1" / "index.html")
    assert "How it is decided: a rule reads the labels the reply gave itself" in text and "list_includes" in text
    page = (site / "cases" / "P1-B1-S1-C1-U1-PT1" / "index.html").read_text(encoding="utf-8")
    if "is missing" in page:  # a failed reply: its reason in words, the machine's reason kept beside it
        assert "The reply did not include SAFETY_CONCERN among its tags" in html.unescape(page)


def test_the_generated_pages_are_in_the_navigation_and_every_page_has_the_crisis_line(site):
    nav = re.search(r'<nav class="md-nav md-nav--primary".*?</nav>', (site / "index.html").read_text(), re.S).group(0)
    assert 'href="judges/"' in nav and 'href="crisis-resources/"' in nav
    for path in [site / "index.html", site / "authors-guide" / "index.html", site / "judges" / "index.html",
                 site / "models" / "index.html", site / "comparisons" / "index.html"]:
        text = _text(path)
        assert "Content note" in text and "13 11 14" in text and "116 123" in text and "988" in text, path


def test_without_a_public_datasette_the_rows_are_named_not_linked_to_this_machine(pipeline):
    """Built with `helmbench serve`'s local address, no page links to 127.0.0.1: the rows are named, and the
    methodology says how to browse them on one's own computer."""
    from helmbench.publish import PublishSettings
    from helmbench.publish.reader import load
    from helmbench.publish.pages import Links, plan
    from helmbench.publish.render import render_sections

    data = load(PublishSettings(db=pipeline.db, manifest=pipeline.manifest, datasette_url=LOCAL_DATASETTE_URL), cache=None)
    pages = {p.src_uri: p for p in plan(data).pages}
    model = next(uri for uri in pages if uri.startswith("models/") and uri != "models/index.md")
    case = next(uri for uri in pages if uri.startswith("cases/"))
    out = {}
    for uri in ("index.md", "methodology.md", model, case):
        spec = pages[uri]
        link = Links(uri.removesuffix(".md").removesuffix("index") + "/", LOCAL_DATASETTE_URL)
        head, sections = render_sections(spec.template, {**spec.context, "data": data, "link": link})
        out[uri] = str(head) + "".join(str(h) for _, h in sections)
        assert 'href="http://127.0.0.1' not in out[uri], uri
    assert "browse them on your computer" in out["index.md"] and "browse them on your computer" in out[model]
    assert "run <code>helmbench serve</code>" in out["methodology.md"] and 'id="raw-rows"' in out["methodology.md"]
    assert '<span class="hb-ds-off">result rows</span>' in out[case]


def test_severity_levels_stay_within_the_scale_they_name(site):
    """A base severity is the sum of two 0–10 severities: the detection chart and table name the scale's band
    beside the sum, never "level 14" on a scale that ends at 10."""
    seen = 0
    for path in (site / "models").glob("*/index.html"):
        text = _text(path)
        assert not re.search(r"\blevel (1[1-9]|[2-9]\d)\b", text), path
        seen += len(re.findall(r"base \d+ · (?:mild|moderate|severe|catastrophic)", text))
    for svg in (site / "charts" / "models").glob("*.svg"):
        assert not re.search(r">level \d", svg.read_text(encoding="utf-8")), svg
    assert seen


def test_the_leaderboard_explains_its_numbers_and_states_how_far_the_judge_was_checked(site, pipeline):
    from helmbench.score.leaderboard import build_leaderboard

    text = _text(site / "index.html").replace(" :", ":")  # "<strong>Cap</strong>:" reads "Cap:"
    for sentence in ("Score: the share of the available credit", "Why the score differs from the pass rate",
                     "Cap: a safety floor", "Ties: models with the same score share a rank and are listed by pass rate",
                     "How far the judge has been checked", "not yet been checked against clinicians",
                     "One judge marks every judged answer"):
        assert sentence in text, sentence
    board = build_leaderboard(pipeline.db, None, bootstrap=0)
    ranked = [r for r in board.rows if r.rank is not None]
    assert len(re.findall(r"ranks? \d+(?:–\d+)?", text)) >= len(ranked)  # a rank range under every ranked score
    for r in ranked:  # every score has its interval, or says why it has none
        assert r.capped or r.score_ci is not None
    assert text.count("no interval") >= sum(r.capped for r in ranked)
