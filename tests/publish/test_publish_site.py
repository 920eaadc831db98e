"""The built site: every page it must have, numbers that agree with the scorer, escaping, links, nav."""

from __future__ import annotations

import html
import json
import re
import sqlite3
from contextlib import closing
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest

from publish_helpers import DATASETTE_URL, ERROR_MODEL, FORMAT_MODEL, MODELS, REPO, XSS, XSS_MODEL
from helmbench.publish.slugs import slugify

CRISIS_LINES = ("13 11 14", "116 123", "988", "findahelpline.com")


def page(site: Path, url: str) -> str:
    return (site / url / "index.html").read_text(encoding="utf-8")


def article(text: str) -> str:
    """The page's main content (without the theme's nav, header and footer)."""
    m = re.search(r'<article class="md-content__inner md-typeset">(.*?)</article>', text, re.S)
    assert m, "no article in page"
    return m.group(1)


def board_catalog(pipeline) -> dict:
    """The manifest's catalog (titles of pillars, behaviours, scenarios, components)."""
    with open(pipeline.manifest, encoding="utf-8") as f:
        return json.loads(f.readline())["catalog"]


class Links(HTMLParser):
    def __init__(self):
        super().__init__()
        self.hrefs: list[str] = []
        self.ids: set[str] = set()

    @classmethod
    def of(cls, path: Path) -> list[str]:
        parser = cls()
        parser.feed(path.read_text(encoding="utf-8"))
        return parser.hrefs

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if a.get("id"):
            self.ids.add(a["id"])
        for name in ("href", "src"):
            if a.get(name):
                self.hrefs.append(a[name])


def test_leaderboard_lists_every_model_with_every_column(site, pipeline):
    from helmbench.score.leaderboard import build_leaderboard

    body = article(page(site, ""))
    for model in MODELS:
        assert f'data-model="{model}"' in body
    # Tokens share the Cost cell, so that Group, Recall and False esc. fit the 1,400 px table.
    for header in ("Rank", "Model", "Score", "Group", "Pass rate", "Recall", "False esc.",
                   "Coverage", "Errors", "Format failures", "Model cost <small>(judge, user)</small>", "Run"):
        assert f">{header}</th>" in body, header
    for code, title in (("P1", "Risk detection"), ("P4", None)):  # a pillar by its title, its code small beside
        assert re.search(rf'>{title or "[^<]+"} <small class="hb-code"><code>{code}</code></small></th>', body), code
    # the model's own cost, then in small type the judge's (and the simulated user's) and the tokens of all three
    assert len(re.findall(r"<small>judge \$[\d.]+(?:<br>simulated user \$[\d.]+)?"
                          r'(?:<br><span class="hb-shared">[^<]*</span>)?<br>[\d\u202f\u00a0 ,]+ tok\.</small>',
                          body)) == len(MODELS)
    # Date, benchmark version, manifest and the rows share the Run column (so the table fits 1,400 px)
    assert len(re.findall(r'<td class="hb-run"><span class="hb-nowrap">\d{4}-\d\d-\d\d</span><br><small>v0\.1 · '
                          r'<code title="manifest sha256:[0-9a-f]{64}">[0-9a-f]{8}</code><br><a href="[^"]*run_id=\d+"',
                          body)) == len(MODELS)
    assert 'class="hb sortable hb-leaderboard"' in body
    assert re.search(r'<img src="charts/leaderboard.svg"', body)
    board = build_leaderboard(pipeline.db)
    for row in board.rows:  # the numbers shown are the scorer's
        assert f"{row.score * 100:.1f} %" in body
        if row.capped:  # a capped score shows its floor and the uncapped score instead of an interval
            from helmbench.publish.render import name_codes

            note = html.escape(name_codes(row.floor_note, board_catalog(pipeline)), quote=True).replace("&#x27;", "&#39;")
            assert f"{note}; uncapped {row.uncapped_score * 100:.1f} %" in re.sub(r"<[^>]+>", "", body)
        else:
            assert f"{row.score_ci[0] * 100:.1f}–{row.score_ci[1] * 100:.1f}" in body
        assert f'data-sort="{float(row.score)!r}"' in body
    assert board.manifest_hash.split(":")[1][:8] in body


def test_leaderboard_shows_errors_and_format_failures(site, pipeline):
    from helmbench.score.leaderboard import build_leaderboard

    rows = {r.model: r for r in build_leaderboard(pipeline.db).rows}
    assert rows[ERROR_MODEL].n_errors > 0 and rows[ERROR_MODEL].coverage < rows[XSS_MODEL].coverage
    assert rows[FORMAT_MODEL].n_format_failures > 0
    assert rows[XSS_MODEL].n_format_failures == 0
    body = article(page(site, ""))
    assert f"?run_id={rows[ERROR_MODEL].run.id}&amp;verdict=ERROR" in body  # errors link to their rows


def test_generated_pages_exist_and_stay_out_of_the_nav(site, pipeline):
    from helmbench.manifest import read_manifest

    cases = [c["id"] for c in read_manifest(pipeline.manifest)]
    for model in MODELS:
        assert (site / "models" / slugify(model) / "index.html").is_file()
        assert (site / "charts" / "models" / f"{slugify(model)}.svg").is_file()
    scenarios = {c.rsplit("-", 3)[0] if "-U" in c else c.rsplit("-", 2)[0] for c in cases}
    for code in scenarios:
        assert (site / "scenarios" / code / "index.html").is_file(), code
    assert all((site / "cases" / c / "index.html").is_file() for c in cases)
    nav = re.search(r'<nav class="md-nav md-nav--primary".*?</nav>', page(site, "methodology"), re.S).group(0)
    assert "cases/" not in nav and "models/openai" not in nav
    # the five pages of the nav plus the methodology page's own sections (eight since ranks, floors,
    # recall and drift got theirs; ten since the simulation table and the checked criteria got one each),
    # never a generated page
    assert len(re.findall(r'class="md-nav__link', nav)) < 18
    # nothing generated is written into the sources
    docs = REPO / "helmbench" / "publish" / "site_default"
    assert docs.is_dir() and not list(docs.glob("cases")) and not (docs / "index.md").exists()


def test_model_page_has_pillars_severity_conditions_and_failed_cases(site, pipeline):
    body = article(page(site, f"models/{slugify(FORMAT_MODEL)}"))
    for section in ("Scores by pillar and behaviour", "Detection by severity", "Results by condition", "Failed cases"):
        assert section in body
    assert f'src="../../charts/models/{slugify(FORMAT_MODEL)}.svg"' in body
    assert re.search(r'href="../../cases/P\d-B\d-S\d[^"]*#model-', body)  # failed cases are linked
    assert "invalid JSON" in body and '<span class="hb-tag">format</span>' in body
    assert "severe (7–9)" in body
    svg = (site / "charts" / "models" / f"{slugify(FORMAT_MODEL)}.svg").read_text()
    assert "<svg" in svg and "@font-face" not in svg and "http://fonts" not in svg
    assert "score by pillar and behaviour" in svg and "pass rate by base severity" in svg
    assert "Risk detection (P1)" in svg and "severe (7–9)" in svg


def test_scenario_page_has_components_and_a_case_by_model_grid(site, pipeline):
    body = article(page(site, "scenarios/P1-B1-S1"))
    for word in ("Conditions", "User contexts", "Perturbations", "Difficulty", "Severity", "Verdicts by case"):
        assert word in body
    assert "Final arrangements" in body  # the scenario's title
    grid = re.search(r'<table class="hb sortable hb-grid">.*?</table>', body, re.S).group(0)
    assert grid.count("<tr>") == 1 + 64  # header + one row per case
    assert len(re.findall(r'class="hb-verdict hb-(pass|fail|error)"', grid)) >= 64 * len(MODELS) - 10


def test_case_page_shows_prompt_outputs_verdicts_and_judge_justification(site, pipeline):
    from helmbench.manifest import read_manifest

    case = next(c for c in read_manifest(pipeline.manifest) if c["id"] == pipeline.judged_case)
    body = article(page(site, f"cases/{pipeline.judged_case}"))
    first_line = case["request"]["messages"][0]["content"].splitlines()[0]
    assert html.escape(first_line, quote=False) in body
    for model in MODELS:
        assert f'id="model-{slugify(model)}"' in body
    assert re.search(r"Judge <code>[^<]+</code> on <strong>[^<]+</strong> <small class=\"hb-code\"><code>CR\d+</code>", body)
    assert "never checks on safety" in body


def test_model_output_is_escaped_everywhere(site, pipeline):
    shown = 0
    for path in site.rglob("*.html"):
        text = path.read_text(encoding="utf-8")
        assert "<script>window.__xss" not in text and "<img src=x" not in text, f"unescaped payload in {path}"
        shown += "&lt;script&gt;window.__xss=1&lt;/script&gt;&lt;img src=x onerror=" in text
    assert shown > 100  # the payload is shown (as text) on many case pages
    body = article(page(site, f"cases/{pipeline.judged_case}"))
    assert body.count(html.escape(XSS, quote=True).replace("&#x27;", "&#39;").replace("&quot;", "&#34;")) >= 1  # judge
    assert body.count("&lt;script&gt;window.__xss=1&lt;/script&gt;") >= 2  # the output and the justification


def test_crisis_content_pages_carry_a_content_note(site, pipeline):
    for url in ("methodology", "scenarios/P1-B1-S1", f"cases/{pipeline.judged_case}", f"models/{slugify(XSS_MODEL)}"):
        body = article(page(site, url))
        assert "Content note" in body, url
        for line in CRISIS_LINES:
            assert line in body, (url, line)


def test_methodology_computes_the_worked_example(site):
    body = article(page(site, "methodology"))
    assert "1, 3, 5, 7, 8, 9, 10" in body and "maximum cost is 43" in body
    assert "<strong>79.1 %</strong>" in body and "<strong>20.9 %</strong>" in body
    assert f"{DATASETTE_URL}/results/leaderboard" in body
    assert f"{DATASETTE_URL}/results/results?run_id=" in body


def test_methodology_explains_conversations_and_format_failures_by_their_column(site):
    body = article(page(site, "methodology"))
    assert 'id="conversations"' in body and "landmarks never reach the model under test" in body
    assert "<code>failure_kind</code>" in body and "starting with" not in body  # no reason-prefix matching left


@pytest.mark.slow
def test_every_internal_link_resolves(site):
    """The link checker over the built site: every internal link (and image) resolves, and, the site being built
    with a public Datasette (DATASETTE_URL), no page links to this machine (dead for every visitor)."""
    missing, local = [], []
    for path in site.rglob("*.html"):
        parser = Links()
        parser.feed(path.read_text(encoding="utf-8"))
        for ref in parser.hrefs:
            parts = urlsplit(ref)
            if parts.hostname in ("127.0.0.1", "localhost", "::1", "0.0.0.0"):
                local.append(f"{path.relative_to(site)} → {ref}")
            if parts.scheme or ref.startswith(("//", "#", "mailto:", "data:")):
                continue
            base = site if parts.path.startswith("/") else path.parent  # 404.html links from the root
            target = (base / unquote(parts.path).lstrip("/")).resolve()
            if target.is_dir() or not parts.path:
                target = target / "index.html" if parts.path else path
            if not target.exists():
                missing.append(f"{path.relative_to(site)} → {ref}")
    assert not missing, missing[:20]
    assert not local, local[:20]
    assert any(DATASETTE_URL in ref for ref in Links.of(site / "index.html"))  # the rows are linked, publicly


def test_empty_site_says_no_runs_yet(empty_site):
    out = empty_site  # built with no database and no manifest (tests/publish/conftest.py), strict
    body = article(page(out, ""))
    assert "No runs yet" in body and "helmbench run" in body and "make run" in body
    assert "<strong>79.1 %</strong>" in article(page(out, "methodology"))
    assert (out / "authors-guide" / "index.html").is_file()


@pytest.mark.slow
def test_publish_command_builds_from_a_manifest_without_a_database(tmp_path, pipeline):
    """The CLI (in-process: tests/inprocess.py), and the fresh-checkout case: a compiled manifest but no results yet."""
    from tests.inprocess import helmbench

    out = tmp_path / "site"
    proc = helmbench("publish", "--db", tmp_path / "none.db", "--manifest", pipeline.manifest,
                     "-f", REPO / "mkdocs.yml", "--site-dir", out, "--strict")
    assert proc.returncode == 0, proc.stderr
    assert "No runs yet" in article(page(out, ""))
    case = article(page(out, "cases/P1-B1-S1-C1-U1-PT1"))
    assert "No results yet" in case and "&lt;your_job&gt;" in case


def test_a_rebuild_is_identical_and_reuses_the_cached_scores_and_charts(site, pipeline, tmp_path, monkeypatch):
    """The site is reproducible byte for byte, and an unchanged model is neither re-scored nor redrawn."""
    import helmbench.publish.reader as reader_mod
    import helmbench.publish.worker as worker
    from helmbench.publish import PublishSettings, build_site

    def fail(*args, **kwargs):
        raise AssertionError("a cached summary or chart was computed again")

    monkeypatch.setattr(reader_mod, "summarise", fail)
    monkeypatch.setattr(reader_mod, "tie_groups", fail)  # nor are the paired comparisons (nor scipy imported)
    # A chart drawn again would be drawn here, and fail the build. (The site's data and pages may be
    # read again: other tests open the database read-write, and closing it checkpoints its log, which
    # changes its bytes, not its rows.)
    monkeypatch.setenv("HELMBENCH_INLINE_CHARTS", "1")
    for task in ("model", "leaderboard"):
        monkeypatch.setitem(worker.TASKS, task, fail)
    settings = PublishSettings(db=pipeline.db, manifest=pipeline.manifest, datasette_url=DATASETTE_URL)
    again = build_site(settings, config_file=REPO / "mkdocs.yml", site_dir=tmp_path / "site")
    for path in list(site.rglob("*.html")) + list(site.rglob("*.svg")):
        assert (again / path.relative_to(site)).read_bytes() == path.read_bytes(), path.relative_to(site)


def test_charts_are_drawn_in_process_when_the_worker_dies(small_pipeline, tmp_path, monkeypatch):
    """On the 9-case run (`small_pipeline`): what is checked is the chart worker's death, not the charts' content
    (test_model_page_has_pillars_severity_conditions_and_failed_cases reads those on the shipped benchmark's site)."""
    import helmbench.publish.worker as worker
    from helmbench.publish import PublishSettings, build_site

    killed: list[str] = []

    class Dead(worker.ChartWorker):
        def submit(self, name, /, *args, **kwargs):
            future = super().submit(name, *args)
            if name != "ready":
                self.proc.kill()
                killed.append(name)
            return future

    monkeypatch.setattr(worker, "ChartWorker", Dead)
    monkeypatch.delenv("HELMBENCH_INLINE_CHARTS")  # the suite draws in-process (tests/conftest.py): here, the worker
    pipeline = small_pipeline
    db = _copy_db(pipeline, tmp_path / "results.db")  # a copy, so that its chart cache (next to it) starts empty
    settings = PublishSettings(db=db, manifest=pipeline.manifest, datasette_url=DATASETTE_URL)
    out = build_site(settings, config_file=REPO / "mkdocs.yml", site_dir=tmp_path / "site")
    model = MODELS[0]  # the small run's one model
    assert (out / "charts" / "models" / f"{slugify(model)}.svg").read_bytes().startswith(b"<?xml")
    assert (out / "charts" / "leaderboard.svg").read_bytes().startswith(b"<?xml")
    assert "%" in article(page(out, f"models/{slugify(model)}"))
    # the worker was killed at its first chart and found dead at each later one: each drawn in this process instead
    assert len(killed) >= 2, f"the build sent the chart worker {killed}: a second chart to a dead worker is untested"


def _copy_db(pipeline, db: Path) -> Path:
    """A copy with its own caches. The pipeline's database is in WAL mode: copying the main file alone
    can miss rows still in the -wal file, so copy through SQLite's backup API."""
    with closing(sqlite3.connect(pipeline.db)) as src, closing(sqlite3.connect(db)) as dst:
        src.backup(dst)
    return db


def _seed_cache(pipeline, db: Path) -> None:
    """The cached summaries and charts the session's `site` left beside the pipeline's database, copied beside `db`
    (a copy of that database): their keys are their inputs, not the database's path, so a build of the copy draws
    no chart again. Only a saving: an entry missing (another test's build pruned it meanwhile) is drawn or computed
    again, as it would be without this."""
    cache = db.parent / "cache" / "site"
    cache.mkdir(parents=True)
    for entry in (pipeline.db.parent / "cache" / "site").glob("*.json"):
        try:
            cache.joinpath(entry.name).write_bytes(entry.read_bytes())
        except FileNotFoundError:
            pass
    (cache / "built").write_bytes(b"")  # newer than `db`, as a build leaves it: no chart worker started in advance


@pytest.mark.slow
def test_a_warm_rebuild_reads_no_rows_and_renders_no_fragment_until_an_input_changes(pipeline, site, tmp_path,
                                                                                       monkeypatch):
    """Unchanged inputs: the data and every page's fragments come from the cache, and the site is the same
    byte for byte. A changed row: the cache is missed and the page shows it. On the shipped benchmark's site
    (three builds of it, ~10 s of CPU): only that site has every page type (comparisons, judges, crisis
    resources, an evaluator's page), each of whose fragments must come from the cache."""
    import helmbench.publish.site as site_mod
    from helmbench.publish import PublishSettings, build_site

    db = _copy_db(pipeline, tmp_path / "results.db")
    _seed_cache(pipeline, db)  # `site` built: the first build below reads the rows and renders every page, no chart
    settings = PublishSettings(db=db, manifest=pipeline.manifest, datasette_url=DATASETTE_URL)
    first = build_site(settings, config_file=REPO / "mkdocs.yml", site_dir=tmp_path / "one")

    def fail(*args, **kwargs):
        raise AssertionError("read or rendered again although no input changed")

    with monkeypatch.context() as m:
        m.setattr(site_mod, "load", fail)
        m.setattr(site_mod, "render_sections", fail)
        again = build_site(settings, config_file=REPO / "mkdocs.yml", site_dir=tmp_path / "two")
    for path in first.rglob("*.html"):
        assert (again / path.relative_to(first)).read_bytes() == path.read_bytes(), path.relative_to(first)

    changed = "a reason written after the first build"
    with closing(sqlite3.connect(db)) as conn, conn:
        case_id = conn.execute("SELECT case_id FROM results WHERE reason IS NOT NULL ORDER BY id LIMIT 1").fetchone()[0]
        conn.execute("UPDATE results SET reason = ? WHERE case_id = ?", [changed, case_id])
    third = build_site(settings, config_file=REPO / "mkdocs.yml", site_dir=tmp_path / "three")
    assert changed in article(page(third, f"cases/{case_id}"))
    assert changed not in article(page(again, f"cases/{case_id}"))


def test_the_inputs_digest_follows_the_bytes_not_the_times(tmp_path):
    import os

    from helmbench.publish.cache import inputs_digest

    db, absent = tmp_path / "results.db", tmp_path / "results.db-wal"
    db.write_bytes(b"one")
    before = inputs_digest([db, absent], "settings")
    times = db.stat()
    db.write_bytes(b"two")
    os.utime(db, ns=(times.st_atime_ns, times.st_mtime_ns))  # copied over with its times kept
    assert inputs_digest([db, absent], "settings") != before
    db.write_bytes(b"one")
    os.utime(db, ns=(0, 0))
    assert inputs_digest([db, absent], "settings") == before
    assert inputs_digest([db, absent], "other settings") != before
    absent.write_bytes(b"")
    assert inputs_digest([db, absent], "settings") != before  # an empty log is not a missing one


def test_cached_site_data_plans_its_pages_without_loading_the_plugins(pipeline):
    """Which evaluators have a page of their own is read once, with the site's data, and cached with it, and the
    HTML the cases of a scenario share is rendered only with a case page: a warm build (the data decoded from
    the cache, every page's fragments too) plans its pages without loading the plugin registry (~0.3 s of the
    20-model warm build, by py-spy over benchmarks/site_build.py's build)."""
    from helmbench.plugins import registry
    from helmbench.publish import pages
    from helmbench.publish.codec import decode, encode
    from helmbench.publish.reader import load
    from helmbench.publish.settings import PublishSettings

    data = load(PublishSettings(db=pipeline.db, manifest=pipeline.manifest, datasette_url=DATASETTE_URL))
    assert [(t, uri) for t, uri, _, _ in data.evaluator_pages] == [("crisis_resources", "crisis-resources.md")]
    cached = decode(encode(data))
    assert cached == data  # every part of the site's data comes back as it was, types included
    registry.reset()
    try:
        plan = pages.plan(cached)
        assert registry._current is None  # nothing asked the plugins
    finally:
        registry.reset()
    assert "crisis-resources.md" in {p.src_uri for p in plan.pages}
    methodology = next(p for p in plan.pages if p.src_uri == "methodology.md")
    assert methodology.context["evaluator_pages"] == data.evaluator_pages
