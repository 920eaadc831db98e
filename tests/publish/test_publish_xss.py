"""Authored strings (titles, names, descriptions, versions) reach a page only as text: a tree whose
every title and name carries an XSS payload builds a site in which no payload is written raw,
on any path (page title, header, navigation, search index, charts, Datasette metadata)."""

from __future__ import annotations

import json
import re
from pathlib import Path

from publish_helpers import RAW_PAYLOADS, TITLE_XSS

RAW = re.compile("|".join(re.escape(p) for p in RAW_PAYLOADS), re.I)


def _strings(value):
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for k, v in value.items():
            yield k
            yield from _strings(v)
    elif isinstance(value, list):
        for v in value:
            yield from _strings(v)


def raw_payloads(folder: Path) -> list[str]:
    """Every file under `folder` (HTML, SVG, XML, JSON: decoded, since the theme renders the search
    index's strings as HTML) in which a payload appears as markup, with the text around it."""
    found = []
    for path in sorted(folder.rglob("*")):
        if path.suffix not in (".html", ".svg", ".xml", ".json", ".js") or not path.is_file():
            continue
        text = path.read_text(encoding="utf-8", errors="replace")
        texts = list(_strings(json.loads(text))) if path.suffix == ".json" else [text]
        for t in texts:
            m = RAW.search(t)
            if m:
                found.append(f"{path.relative_to(folder)}: …{t[max(0, m.start() - 80):m.end() + 20]}…")
                break
    return found


def test_the_hostile_tree_reaches_the_site(hostile_site):
    """The payload is really there (as text): else the scan below would pass vacuously."""
    html = (hostile_site / "scenarios" / "P1-B1-S1" / "index.html").read_text(encoding="utf-8")
    assert "Final arrangements hidden in everyday requests &lt;script&gt;window.__xss=1" in html
    assert "&amp;lt;img src=x onerror" in html  # the entity-encoded variant is shown as typed, not decoded
    leaderboard = (hostile_site / "index.html").read_text(encoding="utf-8")
    assert "&lt;script&gt;window.__xss=1&lt;/script&gt;" in leaderboard


def test_no_authored_string_reaches_html_unescaped(hostile_site):
    assert raw_payloads(hostile_site) == []


def test_page_titles_and_headers_show_the_title_as_text(hostile_site):
    html = (hostile_site / "scenarios" / "P1-B1-S1" / "index.html").read_text(encoding="utf-8")
    title = re.search(r"<title>(.*?)</title>", html, re.S).group(1)
    assert "&lt;script&gt;" in title and "<" not in title
    assert TITLE_XSS not in html


def test_the_benchmark_s_name_is_escaped_once_wherever_the_theme_writes_it(hostile_site):
    """The logo's tooltip (`title`, which the theme escapes itself) reads as its label (which it does not):
    both escaped once, so a reader sees the name as typed, not `&lt;script&gt;`."""
    html = (hostile_site / "index.html").read_text(encoding="utf-8")
    logos = re.findall(r'<a [^>]*title="([^"]*)" class="md-header__button md-logo" aria-label="([^"]*)"', html)
    assert logos and all(title == label for title, label in logos), logos
    assert "&lt;script&gt;window.__xss" in logos[0][0] and "&amp;lt;script" not in logos[0][0]


def test_the_scan_finds_a_raw_payload(tmp_path):
    """The scanner itself can fail: a page, an SVG and a JSON string with the raw payload are found."""
    (tmp_path / "a.html").write_text(f"<title>{TITLE_XSS}</title>")
    (tmp_path / "b.json").write_text(json.dumps({"docs": [{"title": TITLE_XSS}]}))
    (tmp_path / "c.svg").write_text(f"<svg><text>&lt;ok&gt;</text>{RAW_PAYLOADS[1]}></svg>")
    (tmp_path / "d.html").write_text("<p>&lt;img src=x onerror=1&gt;</p>")
    assert [f.split(":")[0] for f in raw_payloads(tmp_path)] == ["a.html", "b.json", "c.svg"]


def test_markdown_report_renders_titles_as_text(hostile_pipeline):
    """`helmbench report -f markdown` (pasted into a PR comment or a docs page) shows the
    benchmark, pillar and behaviour titles as text once rendered."""
    import markdown
    from typer.testing import CliRunner

    from helmbench.cli import app

    out = CliRunner().invoke(app, ["report", "--db", str(hostile_pipeline.db), "--manifest",
                                   str(hostile_pipeline.manifest), "--format", "markdown", "--bootstrap", "0"])
    assert out.exit_code == 0, out.output
    assert "&lt;script&gt;window.__xss=1" in out.stdout  # the titles are there, escaped
    html = markdown.markdown(out.stdout, extensions=["tables"])
    assert "<table>" in html and "Risk detection &lt;script&gt;window.__xss=1&lt;/script&gt;" in html
    assert not RAW.search(html), RAW.search(html)


def test_datasette_metadata_carries_no_authored_markup(hostile_pipeline, tmp_path):
    from helmbench.publish.datasette import metadata, snapshot

    meta = metadata(snapshot(hostile_pipeline.db, tmp_path))
    assert meta["databases"]["results"]["tables"]["scenarios"]["title"]
    assert not [s for s in _strings(meta) if RAW.search(s)]


def test_a_criterions_markdown_is_rendered_without_html_images_or_script_links_of_its_own():
    """A criterion's text arrives by pull request and is shown as Markdown (it was shown raw): its own HTML is
    escaped, images are not fetched, a `javascript:` link is not made a link, and headings become labels."""
    from helmbench.publish.render import authored_markdown

    html = str(authored_markdown("## Evaluation criteria\n\n**PASS**: <script>alert(1)</script> names no disorder.\n\n"
                                 "![x](https://example.org/t.png) [click](javascript:alert(1)) [ok](https://988lifeline.org)"))
    assert "<strong>PASS</strong>" in html and "<script>" not in html and "&lt;script&gt;" in html
    assert "<img" not in html and 'href="javascript:' not in html and 'href="https://988lifeline.org"' in html
    assert "<h2" not in html and '<p class="hb-criterion-heading"><strong>Evaluation criteria</strong></p>' in html
