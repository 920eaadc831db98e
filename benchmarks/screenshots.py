"""Screenshots of the site as its readers see it, at 1,400 px (a laptop) and 390 px (a phone).

One command makes them all (issue #39):

    .venv/bin/python benchmarks/screenshots.py                 # into build/screenshots/
    .venv/bin/python benchmarks/screenshots.py --site build/site --out /tmp/shots

Without `--site` it makes a populated site first, the way the publishing tests do: the shipped benchmark
compiled and run on three models against the fake OpenRouter of tests/fakes (no key, no network; the
judge and the simulated user answer too), then `helmbench.publish.build_site` with a public Datasette URL.
Then, in headless Chromium (Debian's /usr/bin/chromium through playwright), it photographs the
leaderboard, a model page, a case page, a conversation (a case with a transcript), the judges page and the
crisis-resources page, each at both widths, as `<page>-<width>.png` (the whole page: `--full`), and
`--readme` copies the leaderboard's 1,400 px one to docs/screenshots/ for the README.
"""

from __future__ import annotations

import argparse
import functools
import shutil
import sys
import tempfile
import threading
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))  # tests.fakes, as the suite imports them
WIDTHS = (1400, 390)
PUBLIC_DATASETTE = "https://datasette.helmbench.example"
#: The part of each page photographed on its own too (`<page>-<width>-detail.png`).
DETAIL = {"leaderboard": "#leaderboard-table", "case": "#person-message", "conversation": ".hb-transcript",
          "crisis-resources": "table.hb-stack", "model": "figure.hb-chart", "judges": "article"}
MODELS = ("openai/gpt-4.1-mini", "anthropic/claude-sonnet-4", "google/gemini-2.5-flash")


def populated_site(root: Path) -> Path:
    """The shipped benchmark run on MODELS against the fake OpenRouter, published into root/site."""
    import os
    from contextlib import ExitStack

    from rich.console import Console

    from helmbench.manifest import compile_tree
    from helmbench.publish import PublishSettings, build_site
    from helmbench.run.config import RetryPolicy, RunOptions
    from helmbench.run.session import run
    from tests.fakes.openrouter import FakeOpenRouter, Rule

    manifest = compile_tree(REPO / "benchmark", root / "build").path
    db = root / "build" / "results.db"
    fake = FakeOpenRouter(rules=[Rule("500", match=MODELS[0], probability=0.02)]).start()
    saved = {k: os.environ.get(k) for k in ("OPENROUTER_API_KEY", "OPENROUTER_API_BASE")}
    with ExitStack() as stack:
        stack.callback(fake.stop)
        os.environ.update(OPENROUTER_API_KEY="sk-or-v1-screenshots", OPENROUTER_API_BASE=fake.api_base)
        try:
            opts = RunOptions(manifest=str(manifest), models_file=str(REPO / "benchmark" / "models.yml"), db=str(db),
                              models=MODELS, logs_dir=str(root / "build" / "logs"), concurrency=16,
                              retry=RetryPolicy(max_attempts=1, base_delay=0.0, max_delay=0.0))
            run(opts, Console(stderr=True), live=False)
        finally:
            for k, v in saved.items():
                os.environ.pop(k) if v is None else os.environ.__setitem__(k, v)
    settings = PublishSettings(db=db, manifest=manifest, datasette_url=PUBLIC_DATASETTE)
    return build_site(settings, config_file=REPO / "mkdocs.yml", site_dir=root / "site", strict=True)


class _Quiet(SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


def pages_of(site: Path) -> dict[str, str]:
    """name → site URL path of each page photographed: the first model, a single-turn case and a conversation."""
    models = sorted(p.parent.name for p in (site / "models").glob("*/index.html"))
    cases = sorted(p.parent.name for p in (site / "cases").glob("*/index.html"))
    conversation = next((c for c in cases if "hb-transcript" in (site / "cases" / c / "index.html").read_text()), None)
    single = next((c for c in cases if c != conversation and "P1-B1" in c), cases[0] if cases else None)
    out = {"leaderboard": ""}
    if models:
        out["model"] = f"models/{models[0]}/"
    if single:
        out["case"] = f"cases/{single}/"
    if conversation:
        out["conversation"] = f"cases/{conversation}/"
    out["judges"] = "judges/"
    crisis = [p.parent.name for p in site.glob("*/index.html") if "crisis" in p.parent.name]
    if crisis:
        out["crisis-resources"] = f"{crisis[0]}/"
    return out


def shoot(site: Path, out: Path, full: bool) -> list[Path]:
    from playwright.sync_api import sync_playwright

    server = ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(_Quiet, directory=str(site)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{server.server_address[1]}/"
    out.mkdir(parents=True, exist_ok=True)
    written = []
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=["--headless", "--no-sandbox"])
            for width in WIDTHS:
                context = browser.new_context(viewport={"width": width, "height": 900 if width > 500 else 844},
                                              color_scheme="light")
                page = context.new_page()
                for name, url in pages_of(site).items():
                    page.goto(base + url, wait_until="load")
                    path = out / f"{name}-{width}.png"
                    page.screenshot(path=str(path), full_page=full)
                    written.append(path)
                    part = page.locator(DETAIL[name]).first if name in DETAIL else None
                    if part is not None and part.count():  # the part a reader came for, wherever it falls
                        part.scroll_into_view_if_needed()
                        path = out / f"{name}-{width}-detail.png"
                        part.screenshot(path=str(path))
                        written.append(path)
                context.close()
            browser.close()
    finally:
        server.shutdown()
        server.server_close()
    return written


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--site", type=Path, help="a built site to photograph (default: build a populated one)")
    ap.add_argument("--out", type=Path, default=REPO / "build" / "screenshots")
    ap.add_argument("--full", action="store_true", help="the whole page, not the first screen")
    ap.add_argument("--readme", action="store_true", help="copy leaderboard-1400.png to docs/screenshots/")
    args = ap.parse_args(argv)
    tmp = None
    site = args.site
    if site is None:
        tmp = Path(tempfile.mkdtemp(prefix="helmbench-screenshots-"))
        site = populated_site(tmp)
    try:
        for path in shoot(site, args.out, args.full):
            print(path)
        if args.readme:
            dest = REPO / "docs" / "screenshots"
            dest.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(args.out / "leaderboard-1400.png", dest / "leaderboard-1400.png")
            print(dest / "leaderboard-1400.png")
    finally:
        if tmp is not None:
            shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
