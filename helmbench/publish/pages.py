"""Which pages and charts the site has, and how pages link to each other and to Datasette.

| page | source URI | in nav |
| --- | --- | --- |
| leaderboard | `index.md` | yes |
| models index / one per model | `models/index.md` / `models/<slug>.md` | index only |
| scenarios index / one per scenario | `scenarios/index.md` / `scenarios/<code>.md` | index only |
| one per case | `cases/<case id>.md` | no |
| methodology and data | `methodology.md` | yes |
| pairwise comparisons (the tie groups' tests) | `comparisons.md` | no (linked from the leaderboard) |
| rank sensitivity to the judge (an ensemble's judges alone) | `judges.md` | yes (added after the methodology) |
| an evaluator's own page (the crisis-service registry) | `<type>.md` | yes (added after the methodology) |

A generated page "in nav" that the site's mkdocs.yml does not list is added to its navigation by
`site.add_to_nav`, so no generated page is a dead end a reader cannot find.

Detail pages (model, scenario, case) are left out of the search index: they are large, and
the indexes and the leaderboard carry their titles and ids.

Charts are planned here (`charts.ModelChartJob`): the leaderboard chart, and one per model (two panels);
`site.Builder` runs the jobs.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from functools import cached_property
from urllib.parse import quote, urlencode, urlsplit

from markupsafe import Markup, escape

from helmbench.score.breakdown import group_stats
from helmbench.spec.naming import natural_key
from helmbench.score import simulation
from helmbench.score.severity import severity_bucket
from helmbench.score.inference import ALPHA, MIN_INTERVAL_CASES, min_differing
from helmbench.score.stability import MIN_PAIRS

from . import charts
from .data import BOOTSTRAP, SEED, ModelData, SiteData
from .render import pretty_json, render
from .settings import DATASETTE_DB_NAME
from .worked_example import worked_example


@dataclass
class Page:
    src_uri: str
    title: str
    template: str
    context: dict = field(default_factory=dict)
    in_nav: bool = False
    content_note: bool = False
    search: bool = True  # False: left out of the search index
    hide: tuple[str, ...] = ()  # material's `hide:` (navigation, toc) for pages with wide tables

    def front_matter(self) -> str:
        """The page's YAML front matter. The title is HTML-escaped here, once: the theme writes
        `page.meta.title` into `<title>`, the header and the search index as HTML, unescaped (an
        authored title is untrusted text: `<img onerror=…>` in a scenario title would run)."""
        lines = ["---", f"title: {json.dumps(str(escape(self.title)))}"]  # a JSON string is a YAML string
        if self.hide:
            lines += ["hide:"] + [f"  - {h}" for h in self.hide]
        if not self.search:
            lines += ["search:", "  exclude: true"]
        return "\n".join(lines + ["---", ""])


@dataclass
class PagePlan:
    pages: list[Page]
    leaderboard_chart: list[charts.Bar] | None  # None: no results, no chart
    leaderboard_path: str
    model_jobs: dict[str, charts.ModelChartJob]  # by model slug

    @property
    def chart_uris(self) -> list[str]:
        uris = [chart_uri("leaderboard")] if self.leaderboard_chart is not None else []
        return uris + [chart_uri(f"models/{slug}") for slug in self.model_jobs]


def model_uri(slug: str) -> str:
    return f"models/{slug}.md"


def scenario_uri(code: str) -> str:
    return f"scenarios/{code}.md"


def case_uri(case_id: str) -> str:
    return f"cases/{case_id}.md"


def chart_uri(name: str) -> str:
    return f"charts/{name}.svg"


class Links:
    """URL helpers for one page's template: site links relative to the page, Datasette links absolute.

    Relative links are the path up to the site root (`../../` from `cases/X/`) plus the target's
    URL, so each costs a dictionary lookup: pages link to thousands of cases.
    """

    def __init__(self, page_url: str, datasette_url: str, urls: dict[str, str] | None = None):
        self.root = "../" * page_url.count("/")
        self.datasette = f"{datasette_url.rstrip('/')}/{DATASETTE_DB_NAME}"
        #: A Datasette a visitor can reach: links to raw rows are drawn only then. The default
        #: (`helmbench serve` on this machine) is dead for every public visitor, so without a public URL the
        #: pages say how to browse the rows locally instead of linking to 127.0.0.1.
        self.public = is_public_url(datasette_url)
        self.urls = urls or {}  # src URI → site URL, from mkdocs' files (one dict for the whole build)

    def page(self, src_uri: str) -> str:
        url = self.urls.get(src_uri)
        if url is None:  # directory URLs, mkdocs' default
            url = src_uri[:-3] + "/" if src_uri.endswith(".md") else src_uri
            url = url.removesuffix("index/")
        return self.root + url if self.root or url else "./"

    def model(self, slug: str) -> str:
        return self.page(model_uri(slug))

    def scenario(self, code: str) -> str:
        return self.page(scenario_uri(code))

    def case(self, case_id: str) -> str:
        return self.page(case_uri(case_id))

    def chart(self, name: str) -> str:
        return self.page(chart_uri(name))

    def ds(self, path: str = "", **params) -> str:
        """A Datasette URL: `ds("results", run_id=3)` → <base>/results/results?run_id=3.

        `path` is a table or canned query name ("" for the database page); a parameter with
        the value None is left out.
        """
        url = self.datasette + ("/" + quote(path) if path else "")
        query = {k: v for k, v in params.items() if v is not None}
        return url + ("?" + urlencode(query) if query else "")

    def rows(self, path: str = "", **params) -> str:
        """`ds(path, **params)` when the Datasette is public, else "": the page names the rows without a
        dead link, and `_macros.rows_help` says how to browse them locally."""
        return self.ds(path, **params) if self.public else ""

    def local_rows_help(self) -> str:
        """Where a page without a public Datasette sends a reader who wants the raw rows."""
        return self.page("methodology.md") + "#raw-rows"


LOCAL_HOSTS = frozenset({"127.0.0.1", "localhost", "::1", "0.0.0.0", ""})


def is_public_url(url: str | None) -> bool:
    """Whether `url` is reachable by a site's visitors: an http(s) URL whose host is not this machine."""
    if not url:
        return False
    parts = urlsplit(url)
    return parts.scheme in ("http", "https") and (parts.hostname or "") not in LOCAL_HOSTS


def _pillar_label(data: SiteData, code: str) -> str:
    """A chart's label for a pillar: its title first, its code after (names first, codes second)."""
    title = (data.catalog.get("pillars", {}).get(code) or {}).get("title")
    return f"{title} ({code})" if title else code


def _behaviour_label(data: SiteData, code: str) -> str:
    title = (data.catalog.get("behaviours", {}).get(code) or {}).get("title")
    return f"{title} ({code})" if title else code


def detection_bars(m: ModelData) -> list[charts.Bar]:
    """Pass rate on risk cases at each base-severity level; a level clearly below a lower one says so."""
    d = m.row.detection
    if d is None:
        return []
    # A base severity is the sum of two severities on the 0–10 scale, so it can pass 10: each bar names the
    # scale's own band beside the sum ("base 14 · catastrophic (≥ 10)"), never a level the scale does not have.
    return [charts.Bar(f"base {lvl} · {severity_bucket(lvl)}", rate.value, rate.interval,
                       f"n={rate.n}" + ("; below a lower level" if lvl in d.non_monotonic else ""))
            for lvl, rate in d.by_level.items()]


def history_bars(m: ModelData) -> list[charts.Bar]:
    """The model's score at each of its runs: the composite (after floors), its interval when not capped."""
    out = []
    for hp in m.history:
        capped = hp.floored is not None and hp.floored.capped
        note = f"{hp.floored.note}; uncapped {hp.score * 100:.1f} %" if capped else hp.status
        out.append(charts.Bar(f"{hp.date or 'no date'} · run {hp.run_id}", hp.composite,
                              None if capped else hp.score_ci, note))
    return out


def _model_job(data: SiteData, m: ModelData, dest) -> charts.ModelChartJob:
    s = m.row.summary
    return charts.ModelChartJob(
        name=m.name,
        pillars=[(p, _pillar_label(data, p), st.score, st.n_verdicts) for p, st in s.by_pillar.items()],
        behaviours=[(b, st.pillar, _behaviour_label(data, b), st.score, st.n_verdicts)
                    for b, st in s.by_behaviour.items()],
        severity=[charts.Bar(label, st.pass_rate, st.pass_rate_ci, f"n={st.n_verdicts}")
                  for label, st in m.by_severity.items()],
        scored=m.scored,
        path=dest(chart_uri(f"models/{m.slug}")),
        bootstrap=BOOTSTRAP, seed=SEED,
        detection=detection_bars(m),
        history=history_bars(m) if len(m.history) > 1 else [],
    )


class SharedCaseHTML:
    """How a case is evaluated and the response format it asks for, as HTML: the same for the cases of a
    scenario, so rendered once for them, and only when a case page is rendered. A build whose case pages
    come from the cache renders neither, nor loads the plugins whose partials the evaluation uses."""

    def __init__(self, case):
        self.case = case

    @cached_property
    def evaluation(self) -> Markup:
        return render("_evaluation.html.j2", {"ev": self.case.evaluation})

    @cached_property
    def response_format(self) -> Markup:
        if not self.case.response_format:
            return Markup("<p>No response format: the model answers in free text.</p>")
        return (Markup('<details><summary>Response format</summary><pre class="hb-text" data-search-exclude '
                       'tabindex="0" role="region" aria-label="Response format">{}</pre></details>')
                .format(pretty_json(self.case.response_format)))


def _simulation() -> dict | None:
    """The simulation table (benchmarks/significance.py --write) as the methodology page shows it."""
    doc = simulation.load()
    if doc is None:
        return None
    head, rows = simulation.table(doc)
    return {"command": doc["command"], "head": head, "rows": rows, "resamples": doc["resamples"],
            "summary": simulation.summary(doc)}


def rank_ranges(models: list[ModelData]) -> dict[str, tuple[int, int]]:
    """Model slug → (best, worst) rank its tie group spans: the ranks a model could hold, given that the models
    of its group cannot be told apart (LMArena's rank range, here from the paired tests behind the groups rather
    than from overlapping intervals, so it never contradicts the Group column). Without groups, its own rank."""
    ranked = [m for m in models if m.row.rank is not None]
    out: dict[str, tuple[int, int]] = {}
    for m in ranked:
        same = [i for i, o in enumerate(ranked, start=1) if m.row.group and o.row.group == m.row.group]
        out[m.slug] = (min(o.row.rank for o in ranked if o.row.group == m.row.group), max(same)) if same \
            else (m.row.rank, m.row.rank)
    return out


def _kappa_words(k: float) -> str:
    """Landis and Koch's words for a κ, as a clinician reading the page would say it."""
    for bound, words in ((0.8, "almost perfect"), (0.6, "substantial"), (0.4, "moderate"), (0.2, "fair"),
                         (0.0, "slight")):
        if k >= bound:
            return words
    return "worse than chance"


def validation(data: SiteData) -> dict[str, str] | None:
    """Two sentences for beside the headline: how far the judge has been checked against clinicians, and how far
    the judges agree with each other. None when nothing on the board rests on a judge."""
    cal = getattr(data, "calibration", None)
    rows = list(cal.criteria) if cal is not None and cal.criteria else []
    judged = bool(rows) or data.judges is not None or any(
        r.judgements for per in data.results_by_case.values() for rs in per.values() for r in rs[:1])
    if not judged:
        return None
    done = [c for c in rows if c.calibrated]
    if not rows or not any(c.n for c in rows):
        clinicians = ("The LLM judge has <strong>not yet been checked against clinicians</strong>: no clinician has "
                      "reviewed its verdicts, so its scores are the judge's reading alone.")
    else:
        t = cal.threshold
        best = ", ".join(f"{c.key} κ {c.kappa.value:.2f} (n {c.n})" for c in done[:3])
        clinicians = (f"<strong>{len(done)} of {len(rows)}</strong> judged criteria are calibrated against clinicians' "
                      f"blind reviews (κ ≥ {t.min_kappa:g} with n ≥ {t.min_n})"
                      + (f": {escape(best)}." if done else ": none yet, so the judged scores rest on the judge alone."))
    judges = ""
    if data.judges is not None and data.judges.kappa:
        ks = [k for k in data.judges.kappa.values() if k is not None]
        if ks:
            lo, hi = min(ks), max(ks)
            span = f"{lo:.2f}" if lo == hi else f"{lo:.2f} to {hi:.2f}"
            words = _kappa_words(lo) if lo == hi else f"{_kappa_words(lo)} to {_kappa_words(hi)}"
            judges = (f" The {len(data.judges.judges)} judges agree with each other with Fleiss' κ {span} per "
                      f"criterion ({words} agreement); the majority verdict counts, a tie fails.")
    elif data.judges is None:
        judges = " One judge marks every judged answer, so there is no agreement between judges to report."
    return {"clinicians": Markup(clinicians), "judges": Markup(escape(judges))}


def _board_note(row, ranks: tuple[int, int] | None = None) -> str:
    """The leaderboard chart's short annotation: rank range and tie group (and why a capped score has no
    whisker), or not ranked."""
    if row.rank is None:
        return f"not ranked, {row.coverage * 100:.0f} %" if row.coverage is not None else "not ranked"
    lo, hi = ranks or (row.rank, row.rank)
    note = f"ranks {lo}–{hi}" if hi != lo else f"rank {lo}"
    note += f", group {row.group}" if row.group else ""
    if row.capped:
        return note + "\ncapped: no interval"
    return note if row.score_ci else note + "\nno interval: too few cases"


def plan(data: SiteData, dest=lambda uri: uri) -> PagePlan:
    """Every generated page of the site for `data`, and the chart jobs (`dest(uri)`: where a chart is written).

    Pages come in the order mkdocs will process them: model pages last, so that their chart
    jobs (which also compute the intervals their tables show) have the longest time to finish.
    """
    board = None
    ranges = rank_ranges(data.models)
    if data.models:
        board = [charts.Bar(m.name, m.row.score, m.row.score_ci, _board_note(m.row, ranges.get(m.slug)))
                 for m in data.models]
    chart_rows = [(b.label, b.value, b.ci, b.note) for b in board or []]  # the chart's numbers, as a table
    extra = data.evaluator_pages
    # Wide pages hide the table of contents, never the navigation (Models and the authors' guide
    # must stay one click away on a desktop).
    out: list[Page] = [
        Page("index.md", "Leaderboard", "leaderboard.html.j2",
             {"chart_rows": chart_rows, "rank_ranges": ranges, "validation": validation(data)}, in_nav=True,
             hide=("toc",)),
        Page("methodology.md", "Methodology and data", "methodology.html.j2",
             {"example": worked_example(), "bootstrap": BOOTSTRAP, "simulation": _simulation(), "alpha": ALPHA,
              "min_differing": min_differing(), "min_interval_cases": MIN_INTERVAL_CASES, "evaluator_pages": extra,
              "stability_min": MIN_PAIRS},
             in_nav=True, content_note=True),
        Page("comparisons.md", "Pairwise comparisons", "comparisons.html.j2",
             {"alpha": ALPHA, "resamples": BOOTSTRAP, "min_differing": min_differing()}, hide=("toc",)),
        Page("judges.md", "Judges", "judges.html.j2", in_nav=True, hide=("toc",)),
        Page("models/index.md", "Models", "models_index.html.j2", in_nav=True),
        Page("scenarios/index.md", "Scenarios", "scenarios_index.html.j2", in_nav=True),
    ]
    out += [Page(uri, title, f"evaluation_page/{type_}", {"page_data": page_data}, content_note=True, in_nav=True)
            for type_, uri, title, page_data in extra]
    for code in sorted(data.catalog.get("scenarios", {}), key=natural_key):
        meta = data.catalog["scenarios"][code]
        title = f"{code} {meta['title']}" if meta.get("title") else code
        by_model = [(m, group_stats([r for r in m.scored if r.scenario == code])) for m in data.models]
        out.append(Page(scenario_uri(code), title, "scenario.html.j2",
                        {"code": code, "meta": meta, "cases": data.scenario_cases(code), "by_model": by_model},
                        content_note=True, hide=("toc",), search=False))
    shared: dict[str, SharedCaseHTML] = {}  # HTML that the cases of a scenario share, rendered once if at all
    for case in data.cases.values():
        key = json.dumps([case.evaluation, case.response_format], sort_keys=True)
        if key not in shared:
            shared[key] = SharedCaseHTML(case)
        out.append(Page(case_uri(case.id), case.id, "case.html.j2", {"case": case, "shared": shared[key]},
                        content_note=True, search=False))
    jobs: dict[str, charts.ModelChartJob] = {}
    for m in data.every_model:  # imported runs not ranked have pages of their own too
        out.append(Page(model_uri(m.slug), m.name, "model.html.j2",
                        {"m": m, "detection_bars": detection_bars(m), "history_bars": history_bars(m),
                         "ranks": ranges.get(m.slug)},
                        content_note=True, search=False))
        jobs[m.slug] = _model_job(data, m, dest)
    return PagePlan(out, board, dest(chart_uri("leaderboard")), jobs)
