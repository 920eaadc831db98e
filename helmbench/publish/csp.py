"""The site's Content Security Policy: only the site's own files and the theme's own inline scripts run.

Why: authored titles and model output are untrusted text. Every path to HTML escapes them, and the
policy is the second wall: were an escape missed, an injected `<script>` or `onerror=` would still
not run. It is a `<meta http-equiv>` (the site is static files, often served without headers of our
choosing), inserted right after `<meta charset>`, before anything authored.

Which inline scripts may run is derived from the theme's templates, never from a built page: the
bodies of the `<script>` elements in mkdocs-material's `partials/javascripts/*.html`, rendered for
every base URL the site's pages have (the one per-page variable they contain), each allowed by its
SHA-256. One policy serves every page, so instant navigation between pages of different depths
keeps working. Inline event handlers (`onerror=`), `javascript:` URLs, `eval`, plugins and
`<base>` are refused.
"""

from __future__ import annotations

import base64
import hashlib
import re
from collections.abc import Iterable

from markupsafe import escape

#: The theme's partials that hold inline scripts (material's layout since 9.x).
THEME_SCRIPT_PARTIALS = ("base", "palette", "content", "announce", "consent", "outdated")
_INLINE_SCRIPT = re.compile(r"<script>(.*?)</script>", re.S)
_CHARSET = re.compile(r"<meta charset=[\"']?utf-8[\"']?\s*/?>", re.I)
MARKER = 'http-equiv="Content-Security-Policy"'


def _sha256(body: str) -> str:
    return "'sha256-" + base64.b64encode(hashlib.sha256(body.encode("utf-8")).digest()).decode("ascii") + "'"


def base_urls(depths: Iterable[int], site_path: str = "/") -> set[str]:
    """The `base_url` mkdocs gives a page at each URL depth (and the absolute one of 404.html)."""
    out = {site_path or "/"}
    for d in depths:
        out.add("." if d == 0 else "/".join([".."] * d))
    return out


def theme_script_hashes(env, config, urls: Iterable[str]) -> list[str]:
    """SHA-256 sources for every inline script the theme's partials can produce on this site."""
    hashes: set[str] = set()
    for name in THEME_SCRIPT_PARTIALS:
        try:
            source = env.loader.get_source(env, f"partials/javascripts/{name}.html")[0]
        except Exception:  # noqa: BLE001 - a partial this theme version lacks
            continue
        for body in _INLINE_SCRIPT.findall(source):
            if "{{" not in body and "{%" not in body:
                hashes.add(_sha256(body))
                continue
            template = env.from_string(body)
            for url in urls:
                hashes.add(_sha256(template.render(config=config, base_url=url)))
    return sorted(hashes)


def policy(script_hashes: Iterable[str]) -> str:
    return "; ".join([
        "default-src 'self'",
        "script-src 'self' " + " ".join(script_hashes),
        "style-src 'self' 'unsafe-inline'",  # the theme sets styles from its script; CSS cannot run code
        "img-src 'self' data:",
        "font-src 'self' data:",
        "connect-src 'self'",
        "worker-src 'self'",
        "object-src 'none'",
        "base-uri 'self'",
        "form-action 'self'",
    ])


def insert(html: str, csp: str) -> str:
    """`html` with the policy's meta element right after `<meta charset>` (or at the top of `<head>`)."""
    meta = f'<meta {MARKER} content="{escape(csp)}">'
    m = _CHARSET.search(html)
    if m:
        return html[:m.end()] + "\n      " + meta + html[m.end():]
    if "<head>" in html:
        return html.replace("<head>", "<head>\n      " + meta, 1)
    return html


__all__ = ["MARKER", "base_urls", "insert", "policy", "theme_script_hashes"]
