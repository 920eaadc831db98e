"""Offline and private: nothing in the built site loads from a third-party host.

Plain links (`<a href>`) may point anywhere (Datasette, findahelpline.com); everything a browser
fetches on its own (scripts, styles, images, frames, fonts, CSS url()) must come from the site.
"""

from __future__ import annotations

import re
from html.parser import HTMLParser
from urllib.parse import urlsplit

import pytest

FETCHED = {  # tag → attributes a browser fetches without a click
    "script": ("src",), "link": ("href",), "img": ("src", "srcset"), "iframe": ("src",), "source": ("src", "srcset"),
    "video": ("src", "poster"), "audio": ("src",), "embed": ("src",), "object": ("data",), "image": ("href", "xlink:href"),
    "use": ("href", "xlink:href"), "track": ("src",), "input": ("src",),
}
CSS_URL = re.compile(r"""url\(\s*['"]?([^'")\s]+)""", re.I)
CSS_IMPORT = re.compile(r"""@import\s+['"]([^'"]+)""", re.I)
KNOWN_THIRD_PARTIES = ("fonts.googleapis", "fonts.gstatic", "unpkg", "jsdelivr", "cdnjs", "cdn.", "googletagmanager",
                       "google-analytics")


def is_external(url: str) -> bool:
    url = url.strip()
    if url.startswith("data:") or url.startswith("#"):
        return False
    parts = urlsplit(url)
    return bool(parts.scheme and parts.scheme not in ("data",)) or url.startswith("//") or bool(parts.netloc)


class Fetches(HTMLParser):
    def __init__(self):
        super().__init__()
        self.urls: list[tuple[str, str]] = []

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        for name in FETCHED.get(tag, ()):
            value = a.get(name)
            if not value:
                continue
            for candidate in value.split(",") if name == "srcset" else [value]:
                self.urls.append((tag, candidate.strip().split(" ")[0]))
        if a.get("style"):
            self.urls += [("style", u) for u in CSS_URL.findall(a["style"])]

    def handle_data(self, data):
        if "url(" in data:  # inline <style> blocks
            self.urls += [("style", u) for u in CSS_URL.findall(data)]


@pytest.mark.slow
def test_no_built_file_fetches_from_another_host(site):
    offenders = []
    n_html = 0
    for path in site.rglob("*"):
        if path.suffix in (".html", ".svg"):
            n_html += path.suffix == ".html"
            parser = Fetches()
            parser.feed(path.read_text(encoding="utf-8"))
            offenders += [f"{path.relative_to(site)}: <{tag}> {url}" for tag, url in parser.urls if is_external(url)]
        elif path.suffix == ".css":
            text = path.read_text(encoding="utf-8")
            urls = CSS_URL.findall(text) + CSS_IMPORT.findall(text)
            offenders += [f"{path.relative_to(site)}: url({u})" for u in urls if is_external(u)]
    assert n_html > 500
    assert not offenders, offenders[:20]


def test_no_page_names_a_third_party_asset_host(site):
    for path in list(site.rglob("*.html")) + list(site.rglob("*.css")) + list(site.rglob("*.svg")):
        text = path.read_text(encoding="utf-8")
        for host in KNOWN_THIRD_PARTIES:
            assert host not in text, f"{path.relative_to(site)} mentions {host}"


def test_theme_fonts_are_off_and_scripts_are_vendored(site):
    index = (site / "index.html").read_text(encoding="utf-8")
    head = index.split("</head>")[0]
    assert "fonts.googleapis" not in head and "--md-text-font" not in head  # theme.font: false
    for script in ("javascripts/vendor/tablesort/tablesort.min.js", "javascripts/vendor/tablesort/tablesort.number.min.js",
                   "javascripts/tables.js"):
        assert f'src="{script}"' in index
        assert (site / script).is_file()
    assert (site / "javascripts/vendor/tablesort/LICENSE").is_file()
    assert "tablesort v5.7.1" in (site / "javascripts/vendor/tablesort/tablesort.min.js").read_text()
