"""The mkdocs side of publishing: generated pages, charts and how their HTML reaches the site.

Pages are virtual (`File.generated`), made at build time from results.db, never written to
`site/`. Only the leaderboard (`index.md`), the models and scenarios indexes and the
methodology are in the navigation (mkdocs.yml); per-model, per-scenario and per-case pages
are `NOT_IN_NAV` and linked from those indexes, so no page carries a 600-entry nav.

How a generated page is made, and why it is cheap and safe:
1. `on_files` registers each page with only its front matter (title, search exclusion).
2. `on_page_markdown` renders the page's Jinja2 template (autoescaped HTML) and returns a
   tiny Markdown skeleton: `# title`, `## section` headings (so the table of contents
   works) and one placeholder comment per HTML fragment (the first one opens with the
   content note on pages that quote crisis content).
3. After Markdown, each placeholder is swapped for its fragment in one pass: in
   `on_page_content` for pages in the search index, and in `on_post_page` (the final HTML)
   for the large pages left out of it, which the theme and search plugin then never scan.
Markdown therefore never parses model output or large tables (fast), and nothing in them can
be interpreted as Markdown or HTML (safe).

Charts (matplotlib, the slowest part) are drawn by a worker process (`worker.py`) while
mkdocs renders the pages, and written straight into the site folder; `on_env`, which runs
just before mkdocs copies files, waits for them. On a single CPU they are drawn in-process.
Summaries and charts whose inputs did not change since the last build come from `cache.py`.
"""

from __future__ import annotations

import logging
import os
import re
from concurrent.futures import Executor, Future
from dataclasses import dataclass, field, replace
from pathlib import Path

from markupsafe import Markup

from . import csp, pages
from .cache import BuildCache
from .data import SiteData, load
from .render import markdown_heading, render_sections
from .settings import PublishSettings

log = logging.getLogger("mkdocs.plugins.helmbench")

PLACEHOLDER = "<!--helmbench:fragment:{}-->"
PLACEHOLDER_RE = re.compile(r"<!--helmbench:fragment:(\d+)-->")

# Case pages (one per case and model: hundreds) differ only in their title and content: the theme renders the
# same header, navigation, table of contents and scripts around each. The first case pages are
# rendered by the theme as usual; once two of them (with different titles) give the same page
# with their title and content taken out, that "shell" is reused for the others, whose
# template (`CASE_TEMPLATE`) then just prints it. A page whose title, table of contents, URL
# depth or metadata differ from the shell's is rendered by the theme, so the output is the same
# byte for byte either way.
CASE_TEMPLATE = "helmbench-case.html"
CASE_TEMPLATE_SOURCE = ('{% if helmbench_page is defined %}{{ helmbench_page }}'
                        '{% else %}{% include "main.html" %}{% endif %}')
SHELL_TITLE = "\ufffehelmbench:title\ufffe"
SHELL_CONTENT = "\ufffehelmbench:content\ufffe"
SHELL_ANCHOR = "\ufffehelmbench:anchor\ufffe"  # the h1's id (the theme's "skip to content" link)
PLAIN_TITLE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{2,}")


def _toc_signature(items) -> tuple:
    return tuple((i.title, i.id, i.level, _toc_signature(i.children)) for i in items)


def _h1_anchor(page) -> str | None:
    toc = list(page.toc)
    return toc[0].id if len(toc) == 1 and toc[0].level == 1 and toc[0].id else None


def _shell_signature(page) -> tuple:
    """What besides title and content could change the theme's output for a case page."""
    toc = list(page.toc)
    if len(toc) == 1 and toc[0].level == 1:  # the theme shows the h1's children only
        toc_sig = ("h1", _toc_signature(toc[0].children))
    else:
        toc_sig = ("flat", _toc_signature(toc))
    meta = {k: v for k, v in page.meta.items() if k not in ("template", "title")}
    return (toc_sig, page.url.count("/"), repr(sorted(meta.items())), page.previous_page is None,
            page.next_page is None, page.edit_url)

# The admonition Markdown would make of a `!!! warning "Content note"` block, as HTML, so that
# 600 pages do not each run it through Markdown's inline processors.
CONTENT_NOTE = Markup("""<div class="admonition warning">
<p class="admonition-title">Content note</p>
<p>This page quotes messages written as if by people thinking about suicide or self-harm.
If you need help now, contact a crisis line: in Australia <strong>Lifeline 13 11 14</strong>; in the UK
and Ireland <strong>Samaritans 116 123</strong>; in the US call or text <strong>988</strong>; elsewhere, find a
service at <a href="https://findahelpline.com">findahelpline.com</a>.</p>
</div>
""")


class _Inline(Executor):
    """Runs each chart task at once in this process (one CPU, or no worker could be started)."""

    def submit(self, name, /, *args, **kwargs):
        from .worker import TASKS

        future: Future = Future()
        try:
            future.set_result(TASKS[name](*args))
        except BaseException as exc:  # noqa: BLE001 - handed to whoever waits on the future
            future.set_exception(exc)
        return future


def _executor() -> Executor:
    if (os.cpu_count() or 1) < 2 or os.environ.get("HELMBENCH_INLINE_CHARTS"):
        return _Inline()
    from .worker import ChartWorker

    try:
        worker = ChartWorker()  # starts importing matplotlib while the build reads data
        worker.submit("ready")
        return worker
    except OSError as exc:  # no subprocesses here: draw in-process
        log.debug("helmbench: charts in-process (%s)", exc)
        return _Inline()


def _template_bytecode_cache(folder: Path) -> None:
    """Keep the fragment templates' compiled code between builds (each build is a new interpreter).

    Jinja keys an entry by the template's name and checks its source's checksum, so an edited
    template is compiled again. A folder that cannot be made only makes the build slower.
    """
    from jinja2 import FileSystemBytecodeCache

    from .render import environment

    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError:
        return
    env = environment()
    if env.bytecode_cache is None:
        env.bytecode_cache = FileSystemBytecodeCache(str(folder))


@dataclass
class Builder:
    """One build's state; `hooks.py` forwards mkdocs events to it."""

    settings: PublishSettings | None = None
    data: SiteData | None = None
    pages: dict[str, pages.Page] = field(default_factory=dict)
    fragments: dict[str, list[Markup]] = field(default_factory=dict)
    executor: Executor | None = None  # started at the first chart that is not in the cache
    cache: BuildCache | None = None
    chart_futures: dict[str, Future] = field(default_factory=dict)  # model slug (or "") → its chart job
    chart_tasks: dict[str, tuple] = field(default_factory=dict)  # the same → (task name, args), for a retry
    urls: dict[str, str] | None = None  # src URI → URL of every file, once per build
    shell: tuple | None = None  # (signature, shell HTML) once verified on two case pages
    shell_candidate: tuple | None = None  # (signature, shell HTML, title) from one case page
    csp: str | None = None  # the Content Security Policy every page carries (`csp.py`), set in on_env

    def on_config(self, config) -> None:
        base = Path(config.config_file_path).parent if config.config_file_path else Path.cwd()
        self.settings = PublishSettings.from_env(base)
        self.data, self.pages, self.fragments, self.urls = None, {}, {}, None
        self.chart_futures, self.chart_tasks = {}, {}
        self.shell, self.shell_candidate, self.csp = None, None, None
        self._shutdown()
        self.cache = BuildCache(self.settings.db.parent / "cache" / "site")
        _template_bytecode_cache(self.settings.db.parent / "cache" / "templates")
        if self.cache.stale(self.settings.db):
            self.executor = _executor()  # charts will be drawn: let the worker import matplotlib meanwhile

    def on_files(self, files, config):
        from mkdocs.structure.files import File, InclusionLevel

        assert self.settings is not None
        self.data = load(self.settings, cache=self.cache)
        site_dir = Path(config.site_dir)
        plan = pages.plan(self.data, dest=lambda uri: str(site_dir / uri))
        for page in plan.pages:
            existing = files.get_file_from_path(page.src_uri)
            if existing is not None:
                log.warning("helmbench: site/%s exists and is replaced by the generated page", page.src_uri)
                files.remove(existing)
            inclusion = InclusionLevel.INCLUDED if page.in_nav else InclusionLevel.NOT_IN_NAV
            files.append(File.generated(config, page.src_uri, content=page.front_matter(), inclusion=inclusion))
            self.pages[page.src_uri] = page
        if plan.leaderboard_chart is not None:
            self._chart("", "leaderboard", (plan.leaderboard_chart, plan.leaderboard_path), plan.leaderboard_path,
                        plan.leaderboard_chart)
        digests = {m.slug: m.digest for m in self.data.models}
        for slug, job in plan.model_jobs.items():  # keyed by a digest of the rows, computed once in load()
            self._chart(slug, "model", (job,), job.path, replace(job, path="", scored=digests[slug]))
        for uri in plan.chart_uris:  # written straight into site_dir by the job (mkdocs skips the copy)
            files.append(File.generated(config, uri, abs_src_path=str(site_dir / uri),
                                        inclusion=InclusionLevel.NOT_IN_NAV))
        log.info("helmbench: %d generated pages, %d charts (db %s)", len(plan.pages), len(plan.chart_uris),
                 self.settings.db)
        return files

    def _chart(self, name: str, task: str, args: tuple, dest: str, key_payload) -> None:
        """Run a chart task, or take its SVG and result from the cache when its inputs are unchanged."""
        key = self.cache.key(task, key_payload)
        hit, value = self.cache.get_chart(key, dest)
        if hit:
            future: Future = Future()
            future.set_result(value)
        else:
            if self.executor is None:
                self.executor = _executor()
            future = self.executor.submit(task, *args)
            future.add_done_callback(lambda f: None if f.exception() else self.cache.put_chart(key, dest, f.result()))
        self.chart_futures[name] = future
        self.chart_tasks[name] = (task, args)

    def _chart_result(self, name: str):
        """The chart task's result; if the worker process failed, the task is run here instead."""
        from .worker import TASKS, WorkerError

        try:
            return self.chart_futures[name].result()
        except WorkerError as exc:
            log.warning("helmbench: the chart worker failed (%s); drawing in this process", exc)
            task, args = self.chart_tasks[name]
            value = TASKS[task](*args)
            done: Future = Future()
            done.set_result(value)
            self.chart_futures[name] = done
            return value

    def _intervals(self, spec: pages.Page) -> None:
        """A model page shows the intervals its chart job computed: wait for that job."""
        m = spec.context.get("m")
        if m is not None and m.slug in self.chart_futures:
            m.pillar_ci, m.behaviour_ci = self._chart_result(m.slug)

    def on_page_markdown(self, markdown: str, page, config, files) -> str:
        spec = self.pages.get(page.file.src_uri)
        if spec is None:
            return markdown
        assert self.data is not None
        self._intervals(spec)
        if self.urls is None:
            self.urls = {f.src_uri: f.url for f in files}
        links = pages.Links(page.url, self.data.settings.datasette_url, self.urls)
        head, sections = render_sections(spec.template, {**spec.context, "data": self.data, "link": links})
        if spec.content_note:
            head = CONTENT_NOTE + head
        self.fragments[page.file.src_uri] = [head] + [html for _, html in sections]
        if spec.template == "case.html.j2":
            page.meta["template"] = CASE_TEMPLATE
        parts = [f"# {markdown_heading(spec.title)}", "", PLACEHOLDER.format(0), ""]
        for i, (heading, _) in enumerate(sections, start=1):
            parts += [f"## {markdown_heading(heading)}", "", PLACEHOLDER.format(i), ""]
        return "\n".join(parts)

    def on_page_content(self, html: str, page, config, files) -> str:
        """Fill in a searchable page's fragments now, so the search plugin indexes them."""
        spec = self.pages.get(page.file.src_uri)
        if spec is None or not spec.search:
            return html  # filled in on_post_page: the theme and the search plugin never scan them
        return self._fill(page.file.src_uri, html)

    def _shell_page(self, page) -> bool:
        return page.meta.get("template") == CASE_TEMPLATE and bool(PLAIN_TITLE.fullmatch(page.title or ""))

    def on_page_context(self, context, page, config, nav):
        """A case page like the verified shell: its whole HTML, without running the theme."""
        if self.shell is not None and self._shell_page(page) and _shell_signature(page) == self.shell[0]:
            html = self.shell[1].replace(SHELL_ANCHOR, _h1_anchor(page) or "").replace(SHELL_TITLE, page.title)
            html = html.replace(SHELL_CONTENT, page.content)
            context["helmbench_page"] = Markup(html)
        return context

    def _learn_shell(self, output: str, page) -> None:
        """From case pages the theme rendered: the shell, once two of them agree."""
        if self.shell is not None or not self._shell_page(page) or not page.content:
            return
        if output.count(page.content) != 1:
            return
        anchor = _h1_anchor(page)
        if anchor is None or not PLAIN_TITLE.fullmatch(anchor):
            return
        shell = output.replace(page.content, SHELL_CONTENT).replace(f'"#{anchor}"', f'"#{SHELL_ANCHOR}"')
        shell = shell.replace(page.title, SHELL_TITLE)
        sig = _shell_signature(page)
        cand = self.shell_candidate
        if (cand is not None and cand[0] == sig and cand[1] == shell and cand[2] not in page.title
                and page.title not in cand[2]):
            self.shell = (sig, shell)
        else:
            self.shell_candidate = (sig, shell, page.title)

    def on_post_page(self, output: str, page, config) -> str:
        """Fill in the fragments of a page left out of search, in the final HTML."""
        if self.shell is None:
            self._learn_shell(output, page)
        if page.file.src_uri in self.fragments:
            output = self._fill(page.file.src_uri, output)
        return self.with_csp(output)

    def with_csp(self, output: str) -> str:
        """Every HTML page of the site (hand-written and generated, and 404.html) carries the policy."""
        return csp.insert(output, self.csp) if self.csp else output

    def _fill(self, src_uri: str, html: str) -> str:
        frags = self.fragments.pop(src_uri)
        return PLACEHOLDER_RE.sub(lambda m: str(frags[int(m.group(1))]), html)

    def on_env(self, env, config, files):
        from jinja2 import ChoiceLoader, DictLoader

        from urllib.parse import urlsplit

        env.loader = ChoiceLoader([DictLoader({CASE_TEMPLATE: CASE_TEMPLATE_SOURCE}), env.loader])
        depths = {f.url.count("/") for f in files.documentation_pages()} | {0}
        urls = csp.base_urls(depths, urlsplit(config.site_url or "").path or "/")
        self.csp = csp.policy(csp.theme_script_hashes(env, config, urls))
        for name in list(self.chart_futures):
            self._chart_result(name)  # every chart is on disk before mkdocs copies files
        return env

    def _shutdown(self) -> None:
        if self.executor is not None:
            self.executor.shutdown(wait=True, cancel_futures=True)
            self.executor = None

    def on_post_build(self, config) -> None:
        self._shutdown()
        self.cache.prune()
        self.cache.mark_built()

    def on_build_error(self, error) -> None:
        self._shutdown()


__all__ = ["Builder"]
